"""Destructive actions ask first (rollback, activate another version, unload, remove): a window-modal question
that does not block the event loop, so the polls and jobs behind it keep running."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

OBJECT_NAME = "confirm-destructive"


def ask_then(parent: QWidget, title: str, text: str, action: str, on_yes: Callable[[], object]) -> QMessageBox:
    """Show the question; ``on_yes`` runs only when the user presses ``action`` (Cancel is the default)."""
    box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.NoButton, parent)
    box.setObjectName(OBJECT_NAME)
    yes = box.addButton(action, QMessageBox.ButtonRole.DestructiveRole)
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

    def clicked(button: object) -> None:
        if button is yes:
            on_yes()

    box.buttonClicked.connect(clicked)
    box.open()
    return box


def pending(parent: QWidget) -> QMessageBox | None:
    """The question ``parent`` is showing, if any (tests and scripted use press its buttons)."""
    boxes = [b for b in parent.findChildren(QMessageBox, OBJECT_NAME) if b.isVisible()]
    return boxes[-1] if boxes else None


def press(box: QMessageBox, action: str) -> None:
    """Press the button labelled ``action`` (or "Cancel")."""
    for b in box.buttons():
        if b.text().replace("&", "") == action:
            b.click()
            return
    raise LookupError(f"no button '{action}' in '{box.text()}'")
