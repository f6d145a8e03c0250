"""The tabs beside the inspector's graph: the selected node, model statistics, dynamic dims, what the last
fix changed (rich text from ``details``), the Profile tab and the Verify tab (real tools against the profiles).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QPaintEvent, QPalette, QTextOption
from PySide6.QtWidgets import QFrame, QTabWidget, QTextBrowser, QWidget

from studio.gui.inspector.profile_panel import ProfilePanel
from studio.gui.inspector.verify_panel import VerifyPanel


class TextPanel(QTextBrowser):
    """A QTextBrowser whose placeholder wraps: Qt draws a text edit's placeholder on one line, clipped at the
    panel's edge (the Node panel's at 1366x768, worse in Chinese)."""

    def __init__(self) -> None:
        super().__init__()
        self._placeholder = ""

    def setPlaceholderText(self, text: str) -> None:  # noqa: N802 (Qt override)
        self._placeholder = text or ""
        self.viewport().update()

    def placeholderText(self) -> str:  # noqa: N802 (Qt override)
        return self._placeholder

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        super().paintEvent(event)
        if self._placeholder and self.document().isEmpty():
            painter = QPainter(self.viewport())
            painter.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
            margin = int(self.document().documentMargin())
            rect = self.viewport().rect().adjusted(margin, margin, -margin, -margin)
            painter.drawText(rect, int(Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap), self._placeholder)
            painter.end()


def text_panel(placeholder: str) -> QTextBrowser:
    """A read-only rich-text panel; links are the page's to follow, not the browser's."""
    b = TextPanel()
    b.setOpenLinks(False)
    b.setFrameShape(QFrame.Shape.NoFrame)
    b.setPlaceholderText(placeholder)
    b.document().setDocumentMargin(10)
    # words break at their boundaries only (QTextEdit's default also breaks anywhere: "Parameter s", "pe ak")
    b.setWordWrapMode(QTextOption.WrapMode.WordWrap)
    return b


class SideTabs(QTabWidget):
    """Node, Statistics, Dynamic, Changes, Profile and Verify, in that order."""

    def __init__(self, theme: str = "light", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDocumentMode(True)
        self.node_panel = text_panel(self.tr("Select a node in the graph or a finding to see its details."))
        self.stats_panel = text_panel(self.tr("Statistics appear after inspection."))
        self.dynamic_panel = text_panel(self.tr("Dynamic dims appear after inspection."))
        self.changes_panel = text_panel(self.tr("Run a fix to see what it changes."))
        self.profile_panel = ProfilePanel(theme=theme)
        self.verify_panel = VerifyPanel()
        for panel, name in ((self.node_panel, self.tr("Node")), (self.stats_panel, self.tr("Statistics")),
                            (self.dynamic_panel, self.tr("Dynamic")), (self.changes_panel, self.tr("Changes")),
                            (self.profile_panel, self.tr("Profile")), (self.verify_panel, self.tr("Verify"))):
            self.addTab(panel, name)
        self.setMinimumWidth(240)


__all__ = ["SideTabs", "text_panel"]
