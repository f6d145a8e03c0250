"""The inspector page's header row: title, the model shown, the status line, the actions (open, re-inspect,
profile, compile, serve). The actions that need a model start disabled; the page wires and enables them.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from studio.gui.widgets.flow import ElidedLabel, FlowLayout


def _button(text: str, tip: str = "", enabled: bool = False) -> QPushButton:
    b = QPushButton(text)
    if tip:
        b.setToolTip(tip)
    b.setEnabled(enabled)
    return b


class InspectHeader(QWidget):
    """Title, model and status labels and the action buttons, in one row that wraps its actions. The target is
    picked on the chips below and in the toolbar (the workspace's one current target), not here."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        head = QHBoxLayout(self)
        head.setContentsMargins(0, 0, 0, 0)
        head.setSpacing(8)
        title = QLabel(self.tr("Inspector"))
        title.setProperty("role", "heading")
        head.addWidget(title)
        self.model_label = ElidedLabel(self.tr("no model"), min_width=160)
        self.model_label.setProperty("role", "muted")
        head.addWidget(self.model_label, 1)
        self.status_label = ElidedLabel("", min_width=90, mode=Qt.TextElideMode.ElideRight)
        self.status_label.setProperty("role", "muted")
        head.addWidget(self.status_label, 1)
        actions = FlowLayout(spacing=6)
        # short words: the title, the model and the five actions share one row at 1366 px (the graph gets the row)
        self.open_button = _button(self.tr("Open…"), self.tr("open an ONNX model (or an export folder) in the Inspector"), enabled=True)
        self.reinspect_button = _button(self.tr("Re-inspect"))
        self.profile_action = _button(self.tr("Profile"), self.tr("per-node times with ONNX Runtime's profiler: heat colours on the "
                                              "graph, the slowest nodes in the Profile tab (saved with the workspace)"))
        self.compile_button = _button(self.tr("Compile"), self.tr("open this model on the Compile page, for the board of the "
                                              "current target"))
        self.serve_button = _button(self.tr("Serve"), self.tr("serve this model on Triton: build a model repository from it on "
                                            "the Triton page"))
        for b in (self.open_button, self.reinspect_button, self.profile_action, self.compile_button,
                  self.serve_button):
            actions.addWidget(b)
        head.addLayout(actions)


__all__ = ["InspectHeader"]
