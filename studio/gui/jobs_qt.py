"""Qt adapter for JobState: runs a job function on a worker thread and relays its events as queued signals.

Widgets are never touched from the worker: listeners on the worker side only emit signals, which Qt
delivers on the GUI thread. Starting a job of a kind that is already running cancels the old one.
"""

from __future__ import annotations

import itertools
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal

from studio.core import catalogue
from studio.core.errors import JobCancelled, StudioError
from studio.core.gevent_hub import release_thread_hub
from studio.core.jobs import JobState


def shown(text: object) -> str:
    """A core job's status or log line (or error message) in the interface language (the catalogue follows
    View > Language, studio.gui.i18n): a line the catalogue has no template for, a ToolLine (a tool's own
    output) and every line in English come back as they are."""
    return catalogue.job_text(text)


class _Worker(QThread):
    """Runs one job function. Events cross to the GUI thread as queued signals carrying the job id.

    Only bound methods are connected to these signals (no lambdas capturing the worker): PySide 6.11
    was seen to crash when a deleteLater'd thread still had lambda connections queued.
    """

    sig_event = Signal(int, str, object)  # job id, event, value
    sig_done = Signal(int, object)
    sig_failed = Signal(int, object)  # StudioError (JobCancelled for a cancel)

    def __init__(self, job_id: int, fn: Callable[[JobState], Any], job: JobState) -> None:
        super().__init__()
        self.job_id = job_id
        self.fn = fn
        self.job = job
        job.subscribe(self._relay)

    def _relay(self, event: str, value: Any) -> None:
        self.sig_event.emit(self.job_id, event, value)

    def run(self) -> None:
        try:
            result = self.fn(self.job)
        except StudioError as exc:  # includes JobCancelled
            self.sig_failed.emit(self.job_id, exc)
        except Exception as exc:  # an unexpected bug: keep the GUI alive and show it
            err = StudioError(QCoreApplication.translate("JobsPanel", "unexpected {error}").format(
                error=f"{type(exc).__name__}: {exc}"),
                              hint=QCoreApplication.translate("JobsPanel", "this is a bug in the studio; the raw log "
                                                                           "has the traceback"),
                              details={"traceback": traceback.format_exc()})
            self.sig_failed.emit(self.job_id, err)
        else:
            self.sig_done.emit(self.job_id, result)
        finally:
            release_thread_hub()  # tritonclient.http's gevent loop would outlive this thread


@dataclass
class JobHandle:
    """What the Jobs panel shows for one job."""

    id: int
    kind: str
    title: str
    state: JobState
    status: str = "running"  # running | done | failed | cancelled
    result: Any = None
    error: StudioError | None = None
    progress: float = 0.0
    last_status: str = ""  # as shown: in the interface language (JobState.status keeps the core's English)
    log: list[str] = field(default_factory=list)
    on_done: Callable[[Any], None] | None = field(default=None, repr=False)
    on_failed: Callable[[StudioError], None] | None = field(default=None, repr=False)


_LIVE_RUNNERS: set[JobRunner] = set()


class JobRunner(QObject):
    """Starts jobs on worker threads; one running job per ``kind``.

    A runner with running workers keeps itself alive (``_LIVE_RUNNERS``): a parentless runner collected while
    its QThreads run would destroy running threads and crash the process.
    """

    sig_started = Signal(object)  # JobHandle
    sig_progress = Signal(object, float)  # JobHandle, percent
    sig_status = Signal(object, str)
    sig_log = Signal(object, str)
    sig_partial = Signal(object, object)
    sig_stage = Signal(object, object)  # JobHandle, studio.core.jobs.StageProgress
    sig_finished = Signal(object)  # JobHandle (status done/failed/cancelled)

    _ids = itertools.count(1)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.handles: dict[int, JobHandle] = {}
        self._workers: dict[int, _Worker] = {}
        self._by_kind: dict[str, int] = {}

    def start(self, kind: str, title: str, fn: Callable[[JobState], Any],
              on_done: Callable[[Any], None] | None = None,
              on_failed: Callable[[StudioError], None] | None = None) -> JobHandle:
        old = self._by_kind.get(kind)
        if old is not None and self.handles[old].status == "running":
            self.cancel(old)
        job = JobState(name=title)
        handle = JobHandle(id=next(self._ids), kind=kind, title=title, state=job, on_done=on_done,
                           on_failed=on_failed)
        worker = _Worker(handle.id, fn, job)
        worker.sig_event.connect(self._on_event)
        worker.sig_done.connect(self._on_done)
        worker.sig_failed.connect(self._on_failed)
        worker.finished.connect(self._reap)
        self.handles[handle.id] = handle
        self._workers[handle.id] = worker
        self._by_kind[kind] = handle.id
        _LIVE_RUNNERS.add(self)
        self.sig_started.emit(handle)
        worker.start()
        return handle

    def cancel(self, job_id: int) -> None:
        h = self.handles.get(job_id)
        if h is not None:
            h.state.cancel()

    def running(self) -> list[JobHandle]:
        return [h for h in self.handles.values() if h.status == "running"]

    def threads_alive(self) -> int:
        """Worker threads still running (a job that reported done may still be unwinding its thread)."""
        return sum(1 for w in self._workers.values() if w.isRunning())

    def wait_all(self, timeout_ms: int = 30000) -> None:
        for w in list(self._workers.values()):
            w.wait(timeout_ms)

    def shutdown(self) -> None:
        """Cancel everything and wait for workers (on window close)."""
        for h in self.running():
            h.state.cancel()
        self.wait_all()

    def _on_event(self, job_id: int, event: str, value: Any) -> None:
        h = self.handles.get(job_id)
        if h is None:
            return
        if event == "progress":
            h.progress = float(value)
            self.sig_progress.emit(h, h.progress)
        elif event == "status":  # the one place the GUI hears a job's words: in the interface language from here
            h.last_status = shown(value)
            self.sig_status.emit(h, h.last_status)
        elif event == "log":
            line = shown(value)
            h.log.append(line)
            self.sig_log.emit(h, line)
        elif event == "partial":
            self.sig_partial.emit(h, value)
        elif event == "stage":
            self.sig_stage.emit(h, value)

    def _on_done(self, job_id: int, result: Any) -> None:
        h = self.handles[job_id]
        # a job that stopped early on a cancel and returned what it had (a load run's partial figures) was
        # cancelled, not done: its result still reaches on_done, but every view says "cancelled"
        self._finish(h, "cancelled" if h.state.cancel_requested else "done", result, None)

    def _on_failed(self, job_id: int, err: StudioError) -> None:
        status = "cancelled" if isinstance(err, JobCancelled) else "failed"
        self._finish(self.handles[job_id], status, None, err)

    def _finish(self, h: JobHandle, status: str, result: Any, err: StudioError | None) -> None:
        h.status, h.result, h.error = status, result, err
        if status == "done":
            h.progress = 100.0
        self.sig_finished.emit(h)
        if err is None and h.on_done:
            h.on_done(result)
        elif err is not None and h.on_failed:
            h.on_failed(err)

    def _reap(self) -> None:
        worker = self.sender()
        if isinstance(worker, _Worker):
            self._workers.pop(worker.job_id, None)
            worker.deleteLater()
        if not self._workers:
            _LIVE_RUNNERS.discard(self)
