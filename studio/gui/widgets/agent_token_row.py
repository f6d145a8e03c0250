"""The selected agent's token file, editable in place: a rejected token is fixed by choosing the right file,
never by removing and re-adding the agent (which would lose its name and history in the workspace)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget

from studio.core.errors import InputError
from studio.gui.file_dialogs import start_dir


class TokenRow(QWidget):
    """Token file of one agent; ``sig_save(path)`` when the user applies a (checked) new one."""

    sig_save = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(QLabel(self.tr("Token file")))
        self.edit = QLineEdit()
        self.edit.setObjectName("agent_token_file")
        self.edit.setPlaceholderText(self.tr("the agent's token file (e.g. a copy of /etc/studio-agent/token)"))
        self.edit.returnPressed.connect(self._save)
        lay.addWidget(self.edit, 1)
        browse = QPushButton("…")
        browse.setToolTip(self.tr("choose the agent's token file"))
        browse.clicked.connect(self._browse)
        lay.addWidget(browse)
        self.save_btn = QPushButton(self.tr("Use this token"))
        self.save_btn.setToolTip(self.tr("save this token file for the selected agent; it is checked at the next poll"))
        self.save_btn.clicked.connect(self._save)
        lay.addWidget(self.save_btn)
        self.workspace = None

    def show_token(self, path: str) -> None:
        if not self.edit.hasFocus():
            self.edit.setText(path)

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self.tr("Agent token file"), start_dir(self.edit.text(), self.workspace))
        if path:
            self.edit.setText(path)
            self._save()

    def checked_path(self) -> str:
        """The field's path, or an InputError naming it (empty, missing or empty file)."""
        text = self.edit.text().strip()
        if not text:
            raise InputError(self.tr("enter the agent's token file"), offending="token",
                             hint=self.tr("copy /etc/studio-agent/token from the board"))
        p = Path(text).expanduser()
        if not p.is_file() or not p.read_text(errors="replace").strip():
            raise InputError(self.tr("token file {path} does not exist or is empty").format(path=text), offending="token",
                             hint=self.tr("copy /etc/studio-agent/token from the board"))
        return str(p)

    def _save(self) -> None:
        self.sig_save.emit(self.edit.text())
