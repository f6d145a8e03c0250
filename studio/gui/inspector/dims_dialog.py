"""The dialog that asks sizes for a model's dynamic input dims (Make dims static, Profile with ONNX Runtime):
an explanation, one positive-integer field per dim, an error line, OK / Cancel; OK checks the fields first."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget


class DimsDialog(QDialog):
    """``dims``: (label, default) per field. ``optional``: a field may stay empty (that dim stays dynamic), and
    at least one must be set; otherwise every field needs a value. ``self.form`` takes a subclass's extra rows."""

    def __init__(self, title: str, width: int, info: str, dims: list[tuple[str, str]], *, optional: bool,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setMinimumWidth(width)
        self.optional = optional
        lay = QVBoxLayout(self)
        text = QLabel(info)
        text.setWordWrap(True)
        text.setProperty("role", "muted")
        lay.addWidget(text)
        self.form = QFormLayout()
        self.fields: dict[str, QLineEdit] = {}
        for label, default in dims:
            edit = QLineEdit(default)
            if optional:
                edit.setPlaceholderText(self.tr("dynamic"))
            self.fields[label] = edit
            self.form.addRow(label, edit)
        lay.addLayout(self.form)
        self.error = QLabel("")
        self.error.setProperty("role", "error")
        self._buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = self._buttons.button(QDialogButtonBox.StandardButton.Ok)  # checks the fields, then accepts
        self._buttons.accepted.connect(self._accept)
        self._buttons.rejected.connect(self.reject)
        lay.addWidget(self.error)
        lay.addWidget(self._buttons)

    def values(self) -> dict[str, int]:
        """The sizes typed, by field label (empty fields left out)."""
        return {k: int(e.text().strip()) for k, e in self.fields.items() if e.text().strip().isdigit()}

    def _accept(self) -> None:
        for label, edit in self.fields.items():
            text = edit.text().strip()
            if (text or not self.optional) and (not text.isdigit() or int(text) < 1):
                self.error.setText(self.tr("{dim}: enter a positive integer (or leave it empty)").format(dim=label)
                                   if self.optional else self.tr("{dim}: enter a positive integer").format(dim=label))
                edit.setFocus()
                return
        if self.optional and not self.values():
            self.error.setText(self.tr("set at least one dim"))
            return
        self.accept()
