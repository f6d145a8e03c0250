"""Small dialogs of the main window: keyboard shortcuts and a read-only report viewer (Plugins: plugins_dialog)."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.gui.plugins_dialog import PluginsDialog
from studio.gui.theme import set_role
from studio.gui.widgets.tables import readonly_table

__all__ = ["PluginsDialog", "ReportDialog", "ShortcutsDialog"]  # PluginsDialog lives in plugins_dialog.py


def _table(headers: list[str]) -> QTableWidget:
    t = readonly_table(headers, alternating=True)
    t.setWordWrap(True)
    return t


SHORTCUTS: list[tuple[str, str]] = [
    (QT_TRANSLATE_NOOP("Shortcuts", "Ctrl+1 … Ctrl+9"), QT_TRANSLATE_NOOP("Shortcuts", "Go to the n-th page of the sidebar")),
    (QT_TRANSLATE_NOOP("Shortcuts", "Ctrl+O"), QT_TRANSLATE_NOOP("Shortcuts", "Open a workspace")),
    (QT_TRANSLATE_NOOP("Shortcuts", "Ctrl+N"), QT_TRANSLATE_NOOP("Shortcuts", "New workspace")),
    (QT_TRANSLATE_NOOP("Shortcuts", "Ctrl+F"), QT_TRANSLATE_NOOP("Shortcuts", "Focus the global search (pages, models, targets)")),
    (QT_TRANSLATE_NOOP("Shortcuts", "Ctrl+Shift+L"), QT_TRANSLATE_NOOP("Shortcuts", "Toggle light / dark theme")),
    (QT_TRANSLATE_NOOP("Shortcuts", "Esc"), QT_TRANSLATE_NOOP("Shortcuts", "Cancel the current page's running job")),
    ("F1", QT_TRANSLATE_NOOP("Shortcuts", "Show this list")),
    (QT_TRANSLATE_NOOP("Shortcuts", "Ctrl+Q"), QT_TRANSLATE_NOOP("Shortcuts", "Quit (running jobs are cancelled first)")),
]


class ShortcutsDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Keyboard shortcuts"))
        self.resize(520, 330)
        lay = QVBoxLayout(self)
        self.table = _table([QT_TRANSLATE_NOOP("Columns", "Keys"), QT_TRANSLATE_NOOP("Columns", "Action")])
        for keys, action in SHORTCUTS:
            r = self.table.rowCount()
            self.table.insertRow(r)
            k = QTableWidgetItem(keys)
            k.setFont(self.font())
            self.table.setItem(r, 0, k)
            self.table.setItem(r, 1, QTableWidgetItem(QCoreApplication.translate("Shortcuts", action)))
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        lay.addWidget(self.table)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)


class ReportDialog(QDialog):
    """Shows a JSON (or text) report read-only, with a button to open the file with the system viewer."""

    def __init__(self, path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = Path(path)
        self.setWindowTitle(self.tr("Report - {name}").format(name=self.path.name))
        self.resize(760, 560)
        lay = QVBoxLayout(self)
        where = QLabel(str(self.path))
        where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        set_role(where, "muted")
        lay.addWidget(where)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        set_role(self.text, "log")
        try:
            raw = self.path.read_text(encoding="utf-8")
            try:
                raw = json.dumps(json.loads(raw), indent=2)
            except ValueError:
                pass
        except OSError as exc:
            raw = self.tr("cannot read {path}: {error}").format(path=self.path, error=exc)
        self.text.setPlainText(raw)
        lay.addWidget(self.text, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        ext = QPushButton(self.tr("Open with system viewer"))
        ext.clicked.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.path))))
        buttons.addButton(ext, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
