"""The window's status bar (current model, last job, passing messages, device states) and the toolbar's device
count, both drawn from the shared state so they can never disagree with the Devices tables."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QLabel, QStatusBar

from studio.core.state import StudioState
from studio.core.workspace import Workspace
from studio.gui.widgets.flow import ElidedLabel
from studio.gui.window.toolbar import devices_text


class StatusLine(QObject):
    def __init__(self, bar: QStatusBar, state: StudioState, devices_label: QLabel) -> None:
        super().__init__(bar)
        self.state, self.devices_label = state, devices_label
        self.model = QLabel(self.tr("no model"))
        # a job's title can be long ("verifiers for these targets: ..."): elided, with the full text as its tooltip
        self.job = ElidedLabel(self.tr("no jobs run yet"), min_width=120, mode=Qt.TextElideMode.ElideRight)
        self._job_text: str | None = None
        self.msg = ElidedLabel("", min_width=40, mode=Qt.TextElideMode.ElideRight)
        self.conn = QLabel(self.tr("no servers or agents"))
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
        text = self.tr("model: {name} ({kind})").format(name=m.name, kind=m.kind) if m else self.tr("no model selected")
        self.model.setText(text)
        self.model.setMinimumWidth(self.model.fontMetrics().horizontalAdvance(text) + 28)

    def show_job(self, text: str) -> None:
        self._job_text = text
        self.job.setText(self.tr("last job - {text}").format(text=text))

    def retranslate(self, ws: Workspace | None) -> None:
        self.show_model(ws)
        self.show_devices()
        if self._job_text is None:
            self.job.setText(self.tr("no jobs run yet"))
        else:
            self.show_job(self._job_text)

    def show_devices(self) -> None:
        """Toolbar count and status line from the same device states the tables show."""
        summary = self.state.summary()
        self.devices_label.setText(devices_text(summary.total, summary.ok, summary.down))
        if not summary.total:
            self.conn.setText(self.tr("no servers or agents"))
        else:
            self.conn.setText("  ·  ".join(f"{d.name}: {self.state.device_state(d.name).state}"
                                           for d in sorted(self.state.devices(), key=lambda d: d.name)))
