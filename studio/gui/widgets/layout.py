"""Layout pieces every page repeats: the heading with its one-line explanation, a path field with a button, a
column of labelled fields, a job's progress bar with its status line, a muted explanation."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import (
    QBoxLayout,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QWidget,
)

from studio.gui.theme import set_role


def muted_label(text: str = "") -> QLabel:
    """A word-wrapped label in the theme's muted colour: an explanation, a status line."""
    label = QLabel(text)
    label.setWordWrap(True)
    set_role(label, "muted")
    return label


def add_heading(layout: QBoxLayout, title: str, subtitle: str | None = None) -> tuple[QLabel, QLabel | None]:
    """Add a page heading and, when given, a muted word-wrapped explanation under it."""
    head = QLabel(title)
    set_role(head, "heading")
    layout.addWidget(head)
    sub = None
    if subtitle is not None:
        sub = muted_label(subtitle)
        layout.addWidget(sub)
    return head, sub


def browse_row(edit: QLineEdit, on_browse: Callable[[], object], button_text: str | None = None) -> QHBoxLayout:
    """``edit`` stretched beside a button that runs ``on_browse`` (a file or folder dialog)."""
    row = QHBoxLayout()
    button = QPushButton(button_text or QCoreApplication.translate("Layout", "Browse…"))
    button.clicked.connect(on_browse)
    row.addWidget(edit, 1)
    row.addWidget(button)
    return row


def form_column(*rows: tuple[str, QWidget]) -> QFormLayout:
    """A form of (label, field) rows, for one column of a row of forms."""
    form = QFormLayout()
    for label, field in rows:
        form.addRow(label, field)
    return form


def progress_and_status(layout: QBoxLayout, status: str = "") -> tuple[QProgressBar, QLabel]:
    """A job's progress bar (0-100 %, empty) and under it its muted, word-wrapped status line, added to ``layout``."""
    bar = QProgressBar()
    bar.setRange(0, 100)
    bar.setValue(0)
    layout.addWidget(bar)
    label = muted_label(status)
    layout.addWidget(label)
    return bar, label
