"""Long jobs as plain functions taking a JobState (progress, status, cancel, partial results).

The inner algorithm only sees this object; the Qt adapter (studio.gui.jobs_qt) relays it through queued
signals, the CLI adapter (studio.cli.progress) draws a progress bar. Nothing here touches a widget.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from studio.core.errors import JobCancelled

Listener = Callable[[str, Any], None]


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

    def subscribe(self, listener: Listener) -> None:
        """Register ``listener(event, value)``; events: status, progress, log, partial."""
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


class Stages:
    """Maps named stages of a job onto one 0..100 progress range, weighted by expected cost."""

    def __init__(self, job: JobState, weights: dict[str, float]) -> None:
        self.job = job
        total = sum(weights.values()) or 1.0
        self._start: dict[str, float] = {}
        acc = 0.0
        for name, w in weights.items():
            self._start[name] = acc
            acc += 100.0 * w / total
        self._width = {n: 100.0 * w / total for n, w in weights.items()}

    def begin(self, name: str, status: str | None = None) -> None:
        self.job.check_cancelled()
        self.job.set_status(status or name)
        self.job.set_progress(self._start[name], force=True)

    def within(self, name: str, fraction: float) -> None:
        self.job.set_progress(self._start[name] + self._width[name] * max(0.0, min(1.0, fraction)))
        self.job.check_cancelled()
