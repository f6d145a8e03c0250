"""Stands in for a page whose module failed to import or build, so the rest of the studio still opens."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from studio.gui.pages import LoadedPage
from studio.gui.theme import set_role


class BrokenPage(QWidget):
    """Says which page failed and why (the traceback, read-only)."""

    def __init__(self, loaded: LoadedPage, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.loaded = loaded
        lay = QVBoxLayout(self)
        lay.setContentsMargins(24, 20, 24, 20)
        head = QLabel(self.tr("The {title} page could not be loaded").format(title=loaded.title))
        set_role(head, "heading")
        sub = QLabel(self.tr("Module <code>{module}</code> raised an error. The rest of the studio works; fix the "
                             "error (or reinstall the package that provides it) and restart.").format(
                                 module=loaded.module))
        sub.setWordWrap(True)
        set_role(sub, "muted")
        self.text = QPlainTextEdit(loaded.error or "")
        self.text.setReadOnly(True)
        set_role(self.text, "log")
        lay.addWidget(head)
        lay.addWidget(sub)
        lay.addSpacing(8)
        lay.addWidget(self.text, 1)
