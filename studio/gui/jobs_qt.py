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

from PySide6.QtCore import QObject, QThread, Signal

from studio.core.errors import JobCancelled, StudioError
from studio.core.jobs import JobState


class _Relay(QObject):
    """Lives on the GUI thread; the worker emits into it and Qt queues the calls across threads."""

    sig_event = Signal(str, object)


class _Worker(QThread):
    sig_done = Signal(object)
    sig_failed = Signal(object)  # StudioError or a wrapped unexpected exception

    def __init__(self, fn: Callable[[JobState], Any], job: JobState) -> None:
        super().__init__()
        self.fn = fn
        self.job = job

    def run(self) -> None:
        try:
            result = self.fn(self.job)
        except JobCancelled as exc:
            self.sig_failed.emit(exc)
        except StudioError as exc:
            self.sig_failed.emit(exc)
        except Exception as exc:  # an unexpected bug: keep the GUI alive and show it
            err = StudioError(f"unexpected {type(exc).__name__}: {exc}",
                              hint="this is a bug in the studio; the raw log has the traceback",
                              details={"traceback": traceback.format_exc()})
            self.sig_failed.emit(err)
        else:
            self.sig_done.emit(result)


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
    last_status: str = ""
    log: list[str] = field(default_factory=list)


class JobRunner(QObject):
    """Starts jobs on worker threads; one running job per ``kind``."""

    sig_started = Signal(object)  # JobHandle
    sig_progress = Signal(object, float)  # JobHandle, percent
    sig_status = Signal(object, str)
    sig_log = Signal(object, str)
    sig_partial = Signal(object, object)
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
        handle = JobHandle(id=next(self._ids), kind=kind, title=title, state=job)
        relay = _Relay(self)
        relay.sig_event.connect(lambda ev, val, h=handle: self._on_event(h, ev, val))
        job.subscribe(lambda ev, val, r=relay: r.sig_event.emit(ev, val))
        worker = _Worker(fn, job)
        worker.sig_done.connect(lambda res, h=handle: self._finish(h, "done", res, None, on_done, on_failed))
        worker.sig_failed.connect(lambda err, h=handle: self._finish(
            h, "cancelled" if isinstance(err, JobCancelled) else "failed", None, err, on_done, on_failed))
        worker.finished.connect(lambda h=handle: self._reap(h))
        self.handles[handle.id] = handle
        self._workers[handle.id] = worker
        self._by_kind[kind] = handle.id
        self.sig_started.emit(handle)
        worker.start()
        return handle

    def cancel(self, job_id: int) -> None:
        h = self.handles.get(job_id)
        if h is not None:
            h.state.cancel()

    def running(self) -> list[JobHandle]:
        return [h for h in self.handles.values() if h.status == "running"]

    def wait_all(self, timeout_ms: int = 30000) -> None:
        for w in list(self._workers.values()):
            w.wait(timeout_ms)

    def shutdown(self) -> None:
        """Cancel everything and wait for workers (on window close)."""
        for h in self.running():
            h.state.cancel()
        self.wait_all()

    def _on_event(self, h: JobHandle, event: str, value: Any) -> None:
        if event == "progress":
            h.progress = float(value)
            self.sig_progress.emit(h, h.progress)
        elif event == "status":
            h.last_status = str(value)
            self.sig_status.emit(h, h.last_status)
        elif event == "log":
            h.log.append(str(value))
            self.sig_log.emit(h, str(value))
        elif event == "partial":
            self.sig_partial.emit(h, value)

    def _finish(self, h: JobHandle, status: str, result: Any, err: StudioError | None,
                on_done: Callable[[Any], None] | None, on_failed: Callable[[StudioError], None] | None) -> None:
        h.status, h.result, h.error = status, result, err
        if status == "done":
            h.progress = 100.0
        self.sig_finished.emit(h)
        if status == "done" and on_done:
            on_done(result)
        elif err is not None and on_failed:
            on_failed(err)

    def _reap(self, h: JobHandle) -> None:
        w = self._workers.pop(h.id, None)
        if w is not None:
            w.deleteLater()
