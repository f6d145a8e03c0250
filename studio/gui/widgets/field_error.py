"""Input errors shown in place: a red line under the offending field, never a dialog."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QScrollArea, QWidget

from studio.gui.hints import gui_hint
from studio.gui.theme import set_role


class FieldError(QLabel):
    """Hidden until ``show_error``; marks the offending widget (``invalid`` property, styled red by the QSS)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        set_role(self, "error")
        self.setWordWrap(True)
        self.setVisible(False)
        self._marked: list[QWidget] = []

    def show_error(self, message: str, *widgets: QWidget, hint: str | None = None) -> None:
        self.clear_error()
        hint = gui_hint(hint, self._page_id())
        self.setText(message + ("\n" + self.tr("hint: {hint}").format(hint=hint) if hint else ""))
        self.setVisible(True)
        for w in widgets:
            w.setProperty("invalid", True)
            w.style().unpolish(w)
            w.style().polish(w)
            self._marked.append(w)
        QTimer.singleShot(0, self, self.scroll_into_view)  # once laid out: an error below the fold is scrolled to

    def scroll_into_view(self) -> None:
        """Scroll every scroll area this error sits in so the error (and the field above it) shows."""
        w = self.parentWidget()
        while w is not None:
            if isinstance(w, QScrollArea) and self.isVisible():
                w.ensureWidgetVisible(self._marked[0] if self._marked else self, 20, 40)
                w.ensureWidgetVisible(self, 20, 20)
            w = w.parentWidget()

    def clear_error(self) -> None:
        self.setText("")
        self.setVisible(False)
        for w in self._marked:
            w.setProperty("invalid", False)
            w.style().unpolish(w)
            w.style().polish(w)
        self._marked.clear()

    @property
    def has_error(self) -> bool:
        return self.isVisibleTo(self.parentWidget()) if self.parentWidget() else bool(self.text())

    def _page_id(self) -> str | None:
        w = self.parentWidget()
        while w is not None and not isinstance(getattr(type(w), "page_id", None), str):
            w = w.parentWidget()
        return type(w).page_id if w is not None else None
