"""Step 4: the running export: live progress, stage status, elapsed time, log, Cancel."""

from __future__ import annotations

import time

from PySide6.QtCore import QT_TRANSLATE_NOOP, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QProgressBar, QPushButton, QWidget

from studio.gui.export_wizard.common import Step
from studio.gui.theme import set_role
from studio.gui.widgets.flow import ElidedLabel


class RunStep(Step):
    title = QT_TRANSLATE_NOOP("Step", "Exporting")
    nav_title = QT_TRANSLATE_NOOP("Step", "Run")
    sig_cancel = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(self.tr("The export runs in the background: you can switch pages and come back. Cancel stops it "
                                 "at the next safe point and leaves nothing half-written at the output path."), parent)
        self.what = ElidedLabel("")  # "model -> /long/output/path": elided, full text in the tooltip
        set_role(self.what, "subheading")
        self.body.addWidget(self.what)
        self.bar = QProgressBar()
        self.bar.setRange(0, 100)
        self.bar.setFormat("%p%")
        self.bar.setMinimumHeight(22)
        self.body.addWidget(self.bar)
        row = QHBoxLayout()
        self.status = ElidedLabel(self.tr("waiting to start…"))  # job status lines name long paths
        self.elapsed = QLabel("")
        set_role(self.elapsed, "muted")
        self.cancel_btn = QPushButton(self.tr("Cancel export"))
        set_role(self.cancel_btn, "danger")
        self.cancel_btn.clicked.connect(self.sig_cancel.emit)
        row.addWidget(self.status, 1)
        row.addWidget(self.elapsed)
        row.addSpacing(12)
        row.addWidget(self.cancel_btn)
        self.body.addLayout(row)
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(20000)
        self.log.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        set_role(self.log, "log")
        self.body.addWidget(self.log, 1)
        self._t0 = 0.0
        self._timer = QTimer(self)
        self._timer.setInterval(500)
        self._timer.timeout.connect(self._tick)
        self.running = False

    def start(self, what: str) -> None:
        self.what.setText(what)
        self.bar.setValue(0)
        self.status.setText(self.tr("starting…"))
        self.log.clear()
        self.cancel_btn.setEnabled(True)
        self.cancel_btn.setText(self.tr("Cancel export"))
        self._t0 = time.monotonic()
        self.running = True
        self._tick()
        self._timer.start()

    def set_progress(self, pct: float) -> None:
        self.bar.setValue(int(round(pct)))

    def set_status(self, text: str) -> None:
        self.status.setText(text)

    def append_log(self, line: str) -> None:
        self.log.appendPlainText(line)

    def cancelling(self) -> None:
        self.cancel_btn.setEnabled(False)
        self.cancel_btn.setText(self.tr("Cancelling…"))
        self.status.setText(self.tr("cancelling at the next safe point…"))

    def stop(self, final_status: str) -> None:
        self.running = False
        self._timer.stop()
        self._tick()
        self.status.setText(final_status)
        self.cancel_btn.setEnabled(False)

    def _tick(self) -> None:
        self.elapsed.setText(f"{time.monotonic() - self._t0:5.1f} s")
