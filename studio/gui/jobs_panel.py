"""The right-hand Jobs panel: one row per job with progress, status, cancel and "Open report"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from studio.core.jobs import Eta, StageProgress, format_eta
from studio.gui.jobs_qt import JobHandle, JobRunner, shown
from studio.gui.theme import set_role
from studio.gui.widgets.layout import muted_label


def report_path_of(result: Any) -> Path | None:
    """Where a job's result keeps its report: ``report_path``, a dict key, or an output of kind "report"."""
    if result is None:
        return None
    cand = getattr(result, "report_path", None)
    if cand is None and isinstance(result, dict):
        cand = result.get("report_path") or result.get("report")
    if cand is None:
        for out in getattr(result, "outputs", None) or []:
            if getattr(out, "kind", None) == "report":
                cand = getattr(out, "path", None)
                break
    if cand is None:
        opts = getattr(result, "options", None)
        if isinstance(opts, dict) and opts.get("report"):
            cand = opts["report"]
    if cand and Path(str(cand)).is_file():
        return Path(str(cand))
    return None


def job_status_word(status: str) -> str:
    """A job's (or its result's) status in the current language; other statuses as they come."""
    translate = QCoreApplication.translate
    words = {"done": translate("JobRow", "done"), "failed": translate("JobRow", "failed"),
             "cancelled": translate("JobRow", "cancelled"), "running": translate("JobRow", "running"),
             "succeeded": translate("JobRow", "succeeded")}  # an export's or a compile's report status
    return words.get(status, status)


class JobRow(QFrame):
    sig_cancel = Signal(int)
    sig_open_report = Signal(object)  # Path

    def __init__(self, handle: JobHandle, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.handle = handle
        self.report: Path | None = None
        set_role(self, "card")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 8, 10, 8)
        lay.setSpacing(4)
        self.title = QLabel(handle.title)
        self.title.setStyleSheet("font-weight: 600;")
        self.title.setWordWrap(True)
        self.status = muted_label(self.tr("starting…"))
        self._said = False  # the job has set a status text of its own
        self.stage = muted_label("")
        self.stage.setVisible(False)
        self.eta = Eta()
        self.bar = QProgressBar()
        self.bar.setRange(0, 100)
        self.bar.setTextVisible(False)
        self.bar.setFixedHeight(8)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 2, 0, 0)
        self.state = QLabel(self.tr("running"))
        set_role(self.state, "muted")
        self.cancel_btn = QPushButton(self.tr("Cancel"))
        self.cancel_btn.setToolTip(self.tr("Ask the job to stop at its next safe point"))
        self.cancel_btn.clicked.connect(lambda: self.sig_cancel.emit(self.handle.id))
        self.report_btn = QPushButton(self.tr("Open report"))
        self.report_btn.setVisible(False)
        self.report_btn.clicked.connect(lambda: self.sig_open_report.emit(self.report))
        buttons.addWidget(self.state)
        buttons.addStretch(1)
        buttons.addWidget(self.report_btn)
        buttons.addWidget(self.cancel_btn)
        lay.addWidget(self.title)
        lay.addWidget(self.bar)
        lay.addWidget(self.status)
        lay.addWidget(self.stage)
        lay.addLayout(buttons)

    def set_progress(self, pct: float) -> None:
        self.bar.setValue(int(round(pct)))
        left = format_eta(self.eta.update(pct))
        self.state.setText(self.tr("running  {pct}%").format(pct=f"{pct:.0f}") + (f"  ·  {left}" if left else ""))

    def set_stage(self, stage: StageProgress) -> None:
        """The stage running now and how far into it (a staged job: export, inspect, ...)."""
        self.stage.setText(self.tr("stage {i} of {n}: {name}, {pct}% done").format(
            i=stage.index, n=stage.count, name=stage.name, pct=f"{100 * stage.fraction:.0f}"))
        self.stage.setVisible(True)

    def set_status(self, text: str) -> None:
        self._said = True
        self.status.setText(text)

    def finish(self) -> None:
        h = self.handle
        self.cancel_btn.setVisible(False)
        self.stage.setVisible(False)
        if not self._said:  # a job that never said what it was doing: no stale "starting…"
            self.status.setVisible(False)
        if h.status == "done":
            self.bar.setValue(100)
            self.report = report_path_of(h.result)
        elif h.status != "cancelled" and h.error is not None:
            self.status.setText(shown(h.error.message))
        self.retranslate()
        self.report_btn.setVisible(self.report is not None)

    def retranslate(self) -> None:
        """The texts this row made itself, in the current language (the job's own status lines stay)."""
        self.cancel_btn.setText(self.tr("Cancel"))
        self.cancel_btn.setToolTip(self.tr("Ask the job to stop at its next safe point"))
        self.report_btn.setText(self.tr("Open report"))
        h = self.handle
        if h.status == "running":
            return
        if h.status == "done":
            failed = getattr(h.result, "status", None) == "failed"  # finished normally, reported a failure
            self.state.setText(self.tr("finished: failed") if failed else self.tr("done"))
            set_role(self.state, "fail" if failed else "ok")
        elif h.status == "cancelled":
            self.state.setText(self.tr("cancelled"))
            set_role(self.state, "warn")
        else:
            self.state.setText(self.tr("failed"))
            set_role(self.state, "fail")


class JobsPanel(QWidget):
    """Lists the runner's jobs, newest first; finished rows stay until cleared."""

    sig_open_report = Signal(object)

    def __init__(self, runner: JobRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.rows: dict[int, JobRow] = {}
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        head = QHBoxLayout()
        self.count = QLabel("")
        set_role(self.count, "muted")
        self.clear_btn = QPushButton(self.tr("Clear finished"))
        set_role(self.clear_btn, "link")
        self.clear_btn.clicked.connect(self.clear_finished)
        head.addWidget(self.count)
        head.addStretch(1)
        head.addWidget(self.clear_btn)
        lay.addLayout(head)
        self.empty = muted_label(self.tr("No jobs yet. Exports, inspections and builds show their progress here."))
        lay.addWidget(self.empty)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        inner = QWidget()
        self.list = QVBoxLayout(inner)
        self.list.setContentsMargins(0, 0, 0, 0)
        self.list.setSpacing(6)
        self.list.addStretch(1)
        scroll.setWidget(inner)
        scroll.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        lay.addWidget(scroll, 1)
        runner.sig_started.connect(self._started)
        runner.sig_progress.connect(lambda h, p: self._row(h) and self._row(h).set_progress(p))
        runner.sig_status.connect(lambda h, s: self._row(h) and self._row(h).set_status(s))
        runner.sig_stage.connect(lambda h, st: self._row(h) and self._row(h).set_stage(st))
        runner.sig_finished.connect(self._finished)

    def _row(self, h: JobHandle) -> JobRow | None:
        return self.rows.get(h.id)

    def _started(self, h: JobHandle) -> None:
        row = JobRow(h)
        row.sig_cancel.connect(self.runner.cancel)
        row.sig_open_report.connect(self.sig_open_report.emit)
        self.rows[h.id] = row
        self.list.insertWidget(0, row)
        self.empty.setVisible(False)
        self._recount()

    def _finished(self, h: JobHandle) -> None:
        row = self._row(h)
        if row is not None:
            row.finish()
        self._recount()

    def _recount(self) -> None:
        running = sum(1 for r in self.rows.values() if r.handle.status == "running")
        self.count.setText(self.tr("{running} running, {finished} finished").format(
            running=running, finished=len(self.rows) - running) if self.rows else "")

    def retranslate(self) -> None:
        self.clear_btn.setText(self.tr("Clear finished"))
        self.empty.setText(self.tr("No jobs yet. Exports, inspections and builds show their progress here."))
        for row in self.rows.values():
            row.retranslate()
        self._recount()

    def clear_finished(self) -> None:
        for jid, row in list(self.rows.items()):
            if row.handle.status != "running":
                row.setParent(None)
                row.deleteLater()
                del self.rows[jid]
        self.empty.setVisible(not self.rows)
        self._recount()
