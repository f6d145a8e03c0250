"""The window's status bar (current model, last job, passing messages, device states) and the toolbar's device
count, both drawn from the shared state so they can never disagree with the Devices tables."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QLabel, QStatusBar

from studio.core.state import StudioState
from studio.core.workspace import Workspace
from studio.gui.widgets.flow import ElidedLabel


class StatusLine(QObject):
    def __init__(self, bar: QStatusBar, state: StudioState, devices_label: QLabel) -> None:
        super().__init__(bar)
        self.state, self.devices_label = state, devices_label
        self.model = QLabel("no model")
        self.job = QLabel("no jobs run yet")
        self.msg = ElidedLabel("", min_width=40, mode=Qt.TextElideMode.ElideRight)
        self.conn = QLabel("no servers or agents")
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(lambda: self.msg.setText(""))
        bar.addWidget(self.model)
        bar.addWidget(self.job)
        bar.addWidget(self.msg, 1)
        bar.addPermanentWidget(self.conn)

    def flash(self, text: str, msec: int = 0) -> None:
        """A passing message (QStatusBar's own is drawn over the permanent labels)."""
        self.msg.setText(text)
        if msec > 0:
            self._timer.start(msec)
        else:
            self._timer.stop()

    def show_model(self, ws: Workspace | None) -> None:
        m = ws.model() if ws is not None else None
        text = f"model: {m.name} ({m.kind})" if m else "no model selected"
        self.model.setText(text)
        self.model.setMinimumWidth(self.model.fontMetrics().horizontalAdvance(text) + 28)

    def show_job(self, text: str) -> None:
        self.job.setText(f"last job - {text}")

    def show_devices(self) -> None:
        """Toolbar count and status line from the same device states the tables show."""
        summary = self.state.summary()
        self.devices_label.setText(summary.label())
        if not summary.total:
            self.conn.setText("no servers or agents")
        else:
            self.conn.setText("  ·  ".join(f"{d.name}: {self.state.device_state(d.name).state}"
                                           for d in sorted(self.state.devices(), key=lambda d: d.name)))
