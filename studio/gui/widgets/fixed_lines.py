"""A description that always takes the same height: a fixed number of lines, the rest elided (all in the tooltip).

Why: a target's or board's description above a page's buttons grew from one line to three when another target
was chosen, and the buttons below it jumped; with the height fixed they stay where the pointer left them.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent, QTextLayout
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from studio.gui.theme import set_role


class FixedLinesLabel(QLabel):
    """A word-wrapped plain-text label of exactly ``lines`` lines, whatever its text."""

    def __init__(self, lines: int = 2, role: str = "muted", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lines = lines
        self._full = ""
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(False)  # _fit breaks the lines itself: no height-for-width for a layout to follow
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        if role:
            set_role(self, role)
        self._fix_height()

    def text(self) -> str:  # noqa: D102  (the whole text, not the elided lines shown)
        return self._full

    def shown_text(self) -> str:
        """The lines as drawn (the last one elided when the text is longer)."""
        return super().text()

    def setText(self, text: str) -> None:  # noqa: N802
        self._full = text
        self.setToolTip(text if text else "")
        self._fit()

    def _fix_height(self) -> None:
        m = self.contentsMargins()
        self.setFixedHeight(self.fontMetrics().lineSpacing() * self.lines + m.top() + m.bottom() + 2)

    def setContentsMargins(self, *args: object) -> None:  # noqa: N802
        super().setContentsMargins(*args)  # type: ignore[arg-type]
        self._fix_height()

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(super().sizeHint().width(), self.height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(40, self.height())

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return False

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        """Break the text at the label's width; past ``lines`` lines, end the last one with an ellipsis."""
        m = self.contentsMargins()
        width = max(20, self.width() - m.left() - m.right())
        fm = self.fontMetrics()
        shown: list[str] = []
        for para in self._full.split("\n"):
            layout = QTextLayout(para, self.font())
            layout.beginLayout()
            while True:
                line = layout.createLine()
                if not line.isValid():
                    break
                line.setLineWidth(width)
                shown.append(para[line.textStart():line.textStart() + line.textLength()].rstrip())
            layout.endLayout()
            if not para:
                shown.append("")
        if len(shown) > self.lines:
            rest = " ".join(shown[self.lines - 1:])
            shown = shown[:self.lines - 1] + [fm.elidedText(rest, Qt.TextElideMode.ElideRight, width)]
        super().setText("\n".join(shown))


__all__ = ["FixedLinesLabel"]
