"""CLI adapter for JobState: a one-line progress bar on stderr (only when stderr is a terminal or forced)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from studio.core.jobs import JobState


class ProgressBar:
    """Draws ``[#####.....]  42%  status`` on one line; in non-TTY mode prints status lines only."""

    def __init__(self, job: JobState, stream: TextIO | None = None, enabled: bool = True,
                 width: int = 30) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = self.stream.isatty()
        self.width = width
        self.status = ""
        self.start = time.monotonic()
        job.subscribe(self._on_event)

    def _on_event(self, event: str, value: Any) -> None:
        if not self.enabled:
            return
        if event == "status":
            self.status = str(value)
            if not self.tty:
                print(f"[{time.monotonic() - self.start:6.1f}s] {self.status}", file=self.stream, flush=True)
            else:
                self._draw(None)
        elif event == "progress" and self.tty:
            self._draw(float(value))

    def _draw(self, percent: float | None) -> None:
        pct = percent if percent is not None else getattr(self, "_pct", 0.0)
        self._pct = pct
        filled = int(self.width * pct / 100)
        line = f"\r[{'#' * filled}{'.' * (self.width - filled)}] {pct:5.1f}%  {self.status[:60]:<60}"
        self.stream.write(line)
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()


@contextmanager
def job_progress(name: str, enabled: bool = True) -> Iterator[JobState]:
    """A fresh JobState whose progress is drawn on stderr while the block runs (the bar is closed after)."""
    job = JobState(name=name)
    bar = ProgressBar(job, enabled=enabled)
    try:
        yield job
    finally:
        bar.close()
