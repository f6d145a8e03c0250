"""The graph view's note when a model's names use characters no installed font has (drawn as boxes otherwise).

A child of the view, not of its viewport (the viewport's children scroll with the scene), kept at the bottom
left of the view; hidden while every character is covered.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtWidgets import QLabel, QWidget

from studio.gui.fonts import missing_font_hint, uncovered


class FontNote(QLabel):
    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.setStyleSheet("QLabel { background: rgba(255, 248, 225, 235); color: #5d4300; border: 1px solid "
                           "#e0c060; border-radius: 4px; padding: 3px 6px; }")
        self.missing: list[str] = []
        self.hide()

    def check(self, names: Iterable[str]) -> list[str]:
        """Look for characters no font draws in ``names``; show the note (with what to install) when any."""
        self.missing = uncovered(names)
        if self.missing:
            shown = " ".join(self.missing[:12]) + (" …" if len(self.missing) > 12 else "")
            self.setText(self.tr("{n} character(s) in this model's names have no installed font and "
                                 "show as boxes ({shown}): {missing_font_hint}").format(n=len(self.missing), shown=shown, missing_font_hint=missing_font_hint(self.missing)))
            self.setToolTip(self.text())
            self.place()
            self.show()
        else:
            self.hide()
        return self.missing

    def place(self) -> None:
        """Bottom left of the parent's viewport, at most its width less a margin."""
        view = self.parentWidget()
        vp = getattr(view, "viewport", None)
        area = vp().geometry() if vp is not None else view.rect()
        width = max(120, min(area.width() - 16, 640))
        self.setFixedWidth(width)
        self.adjustSize()
        self.move(area.left() + 8, area.bottom() - self.height() - 8)
        self.raise_()
