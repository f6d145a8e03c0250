"""Long jobs as plain functions taking a JobState (progress, status, cancel, partial results).

The inner algorithm only sees this object; the Qt adapter (studio.gui.jobs_qt) relays it through queued
signals, the CLI adapter (studio.cli.progress) draws a progress bar. Nothing here touches a widget.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from studio.core.errors import JobCancelled

Listener = Callable[[str, Any], None]


class ToolLine(str):
    """A line of a tool's own output relayed to a job's status or log (an exporter's warnings, pip's progress):
    shown as it came, never translated (studio.gui.jobs_qt.shown); the studio's own lines are plain ``str``."""


@dataclass
class JobState:
    """Shared state of one running job; thread-safe, cheap to update from the worker."""

    name: str = "job"
    min_interval: float = 0.05  # progress callbacks are throttled to this period (seconds)
    status: str = ""
    progress: float = 0.0  # 0..100
    partial: dict[str, Any] = field(default_factory=dict)
    log_lines: list[str] = field(default_factory=list)
    _cancel: threading.Event = field(default_factory=threading.Event, repr=False)
    _listeners: list[Listener] = field(default_factory=list, repr=False)
    _last_emit: float = field(default=0.0, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _interruptible: int | None = field(default=None, repr=False)  # thread id inside ``interruptible()``
    stage: StageProgress | None = None  # the stage running now (``Stages``), with its own fraction

    def subscribe(self, listener: Listener) -> None:
        """Register ``listener(event, value)``; events: status, progress, log, partial, stage (a StageProgress)."""
        self._listeners.append(listener)

    def _emit(self, event: str, value: Any) -> None:
        for listener in list(self._listeners):
            listener(event, value)

    def set_status(self, text: str) -> None:
        self.status = text
        self.log(text)
        self._emit("status", text)

    def set_progress(self, percent: float, *, force: bool = False) -> None:
        """Throttled: listeners hear at most one update per ``min_interval`` unless forced or at 100."""
        self.progress = max(0.0, min(100.0, float(percent)))
        now = time.monotonic()
        if force or self.progress >= 100.0 or now - self._last_emit >= self.min_interval:
            self._last_emit = now
            self._emit("progress", self.progress)

    def log(self, line: str) -> None:
        with self._lock:
            self.log_lines.append(line)
        self._emit("log", line)

    def set_partial(self, key: str, value: Any) -> None:
        """Publish a partial result (for example one validated output) before the job ends."""
        with self._lock:
            self.partial[key] = value
        self._emit("partial", (key, value))

    def cancel(self) -> None:
        self._cancel.set()
        thread = self._interruptible
        if thread is not None:  # a long call with no safe point inside (torch.onnx.export): interrupt it
            interrupt_thread(thread)

    @contextmanager
    def interruptible(self) -> Iterator[None]:
        """Around one long call that has no safe point inside (a trace, a generate()): a cancel raises JobCancelled
        in this thread at its next Python bytecode (as Ctrl+C would) instead of waiting for the call to return.
        What the call was writing is removed by the ``finally`` blocks between here and the job's top."""
        self._interruptible = threading.get_ident()
        try:
            self.check_cancelled()
            yield
        except BaseException:
            if self._cancel.is_set():  # whatever the interrupted code made of it (a caught and re-worded error)
                raise JobCancelled(f"{self.name} cancelled") from None
            raise
        finally:
            self._interruptible = None
        self.check_cancelled()

    @property
    def cancel_requested(self) -> bool:
        return self._cancel.is_set()

    def check_cancelled(self) -> None:
        """Raise JobCancelled at a safe point if the user asked to stop."""
        if self._cancel.is_set():
            raise JobCancelled(f"{self.name} cancelled")

    def step(self, done: int, total: int, status: str | None = None) -> None:
        """Convenience: progress from a count, then a cancel check."""
        if status:
            self.set_status(status)
        self.set_progress(100.0 * done / max(total, 1))
        self.check_cancelled()


@dataclass
class StageProgress:
    """Where a staged job is: stage ``index`` (1-based) of ``count``, named ``name``, ``fraction`` of it done."""

    name: str
    index: int
    count: int
    fraction: float = 0.0

    def text(self) -> str:
        return f"{self.name} {self.index}/{self.count} {100 * self.fraction:.0f}%"


class Stages:
    """Maps named stages of a job onto one 0..100 progress range, weighted by expected cost; each stage's own
    fraction goes to listeners as "stage" events (a StageProgress)."""

    def __init__(self, job: JobState, weights: dict[str, float]) -> None:
        self.job = job
        total = sum(weights.values()) or 1.0
        self._start: dict[str, float] = {}
        acc = 0.0
        for name, w in weights.items():
            self._start[name] = acc
            acc += 100.0 * w / total
        self._width = {n: 100.0 * w / total for n, w in weights.items()}
        self._order = list(weights)

    def _stage(self, name: str, fraction: float) -> None:
        st = StageProgress(name, self._order.index(name) + 1, len(self._order), max(0.0, min(1.0, fraction)))
        self.job.stage = st
        self.job._emit("stage", st)

    def begin(self, name: str, status: str | None = None) -> None:
        self.job.check_cancelled()
        self._stage(name, 0.0)
        self.job.set_status(status or name)
        self.job.set_progress(self._start[name], force=True)

    def within(self, name: str, fraction: float, *, check: bool = True) -> None:
        """``fraction`` of stage ``name`` done; ``check=False`` from a thread other than the job's own."""
        self._stage(name, fraction)
        self.job.set_progress(self._start[name] + self._width[name] * max(0.0, min(1.0, fraction)))
        if check:
            self.job.check_cancelled()

    @contextmanager
    def timed_guess(self, name: str, expected_s: float, *, cap: float = 0.95) -> Iterator[None]:
        """A fraction of stage ``name`` from the time it is expected to take (a call that reports nothing, such as
        a trace), capped at ``cap`` until it returns: a ticker thread, so the bar and its estimate keep moving."""
        done = threading.Event()
        t0 = time.monotonic()

        def tick() -> None:
            while not done.wait(0.5):
                self.within(name, min(cap, (time.monotonic() - t0) / max(expected_s, 1e-3)), check=False)

        th = threading.Thread(target=tick, name=f"progress:{name}", daemon=True)
        th.start()
        try:
            yield
        finally:
            done.set()
            th.join()


class Eta:
    """Time left from the progress so far: elapsed x (100 - p) / p over the job's whole range, once it is 1 % and
    1 s in (before that no figure is better than none), smoothed so one fast stage does not make it jump."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.t0 = clock()
        self.value: float | None = None

    def update(self, percent: float) -> float | None:
        elapsed = self.clock() - self.t0
        if percent < 1.0 or elapsed < 1.0:
            return self.value
        if percent >= 100.0:
            self.value = 0.0
            return self.value
        raw = elapsed * (100.0 - percent) / percent
        self.value = raw if self.value is None else 0.7 * self.value + 0.3 * raw
        return self.value


def format_eta(seconds: float | None) -> str:
    """``"about 3m 20s left"``; "" when there is no estimate yet."""
    if seconds is None:
        return ""
    s = int(round(seconds))
    if s >= 3600:
        return f"about {s // 3600}h {s % 3600 // 60:02d}m left"
    return f"about {s // 60}m {s % 60:02d}s left" if s >= 60 else f"about {s}s left"


def interrupt_thread(ident: int) -> None:
    """Raise JobCancelled in thread ``ident`` at its next Python bytecode (CPython's async exception)."""
    import ctypes

    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(JobCancelled))
