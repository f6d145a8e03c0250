"""CLI adapter for JobState: a one-line progress bar on stderr (only when stderr is a terminal or forced)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from studio.core.catalogue import job_text
from studio.core.jobs import Eta, JobState, StageProgress, format_eta


class ProgressBar:
    """Draws ``[#####.....]  42%  about 3m 10s left  parity 4/7 50%  status`` on one line; in non-TTY mode prints
    the status lines (with the stage and the estimate) only."""

    def __init__(self, job: JobState, stream: TextIO | None = None, enabled: bool = True,
                 width: int = 30) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = self.stream.isatty()
        self.width = width
        self.status = ""
        self.stage = ""
        self.start = time.monotonic()
        self.eta = Eta()
        self._pct = 0.0
        self._printed: dict[str, float] = {}  # piped output: the last quarter printed per stage
        job.subscribe(self._on_event)

    def _on_event(self, event: str, value: Any) -> None:
        if not self.enabled:
            return
        if event == "status":
            self.status = job_text(value)  # in the user's language (studio.core.catalogue)
            if not self.tty:
                left = format_eta(self.eta.value)
                print(f"[{time.monotonic() - self.start:6.1f}s] {self.status}" + (f"  ({left})" if left else ""),
                      file=self.stream, flush=True)
            else:
                self._draw(None)
        elif event == "stage":
            self.stage = value.text() if isinstance(value, StageProgress) else str(value)
            if self.tty:
                self._draw(None)
            elif isinstance(value, StageProgress) and 0 < value.fraction and \
                    value.fraction >= self._printed.get(value.name, 0.0) + 0.25:  # piped: a line per quarter
                self._printed[value.name] = value.fraction
                left = format_eta(self.eta.value)
                print(f"[{time.monotonic() - self.start:6.1f}s]   {self.stage}" + (f"  ({left})" if left else ""),
                      file=self.stream, flush=True)
        elif event == "progress":
            self._pct = float(value)
            self.eta.update(self._pct)
            if self.tty:
                self._draw(self._pct)

    def line(self) -> str:
        """The bar as it is drawn now (without the carriage return)."""
        filled = int(self.width * self._pct / 100)
        extra = "  ".join(x for x in (format_eta(self.eta.value), self.stage) if x)
        return f"[{'#' * filled}{'.' * (self.width - filled)}] {self._pct:5.1f}%  {extra}  {self.status[:50]:<50}"

    def _draw(self, percent: float | None) -> None:
        if percent is not None:
            self._pct = percent
        self.stream.write("\r" + self.line())
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
