"""The tabs beside the inspector's graph: the selected node, model statistics, dynamic dims, what the last
fix changed (rich text from ``details``), the Profile tab and the Verify tab (real tools against the profiles).
"""

from __future__ import annotations

from PySide6.QtGui import QTextOption
from PySide6.QtWidgets import QFrame, QTabWidget, QTextBrowser, QWidget

from studio.gui.inspector.profile_panel import ProfilePanel
from studio.gui.inspector.verify_panel import VerifyPanel


def text_panel(placeholder: str) -> QTextBrowser:
    """A read-only rich-text panel; links are the page's to follow, not the browser's."""
    b = QTextBrowser()
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
