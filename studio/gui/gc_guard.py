"""Cyclic garbage collected on the GUI thread only.

Python's collector runs in whichever thread happens to allocate when a generation's threshold is crossed: a job's
worker thread, a poll thread, a layout worker. A Qt widget that ended up in a reference cycle (a closed page whose
slots hold it, a dialog and its callbacks) is then deleted from that thread. Qt widgets must die on the GUI
thread: seen here, ``~QObject`` on a worker held Qt's connection lock and waited for the GIL while the GUI thread
held the GIL and waited for that lock (a hang), and deletes off the GUI thread abort the process.

So the GUI turns automatic collection off and collects on a timer on its own thread, generation by generation with
Python's own thresholds (what pyqtgraph's ``GarbageCollector`` does for the same reason). Workers see the collector
off, so ``studio.core.gc_pause.gc_paused`` in a worker leaves it off, and library code's
``studio.core.gc_pause.collect`` on a worker becomes a request this collector honours at its next tick.
"""

from __future__ import annotations

import gc
import threading

from PySide6.QtCore import QCoreApplication, QObject, QTimer

from studio.core import gc_pause

INTERVAL_MS = 500
SWEEP_EVERY = 10  # ticks: a young-generation pass at least this often (5 s), whatever the counts say

_installed: MainThreadCollector | None = None


class MainThreadCollector(QObject):
    """Owns the timer; ``check`` is also called directly where no event loop runs for a while (tests)."""

    def __init__(self, parent: QObject, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self._thread = threading.current_thread()
        gc.disable()
        gc_pause.set_owner(self._thread)  # library code's collect() on a worker becomes a request to this thread
        self.collections = 0
        self._ticks = 0
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.check)
        self.timer.start(interval_ms)

    def check(self) -> int:
        """Collect the generations whose counts crossed their thresholds; returns objects found unreachable.

        Every ``SWEEP_EVERY`` calls the young generation is collected anyway: its count is allocations minus
        deallocations, so a burst of frees (a closed page's wrappers) can hold it under the threshold while a
        widget cycle waits (Python's own trigger has the same blind spot, but it also runs on every allocation)."""
        if threading.current_thread() is not self._thread:
            return 0  # never off the GUI thread: that is what this class exists to prevent
        if gc.isenabled():  # someone turned it back on (a gc_paused that began before install): off again
            gc.disable()
        self._ticks += 1
        if gc_pause.take_request():  # a worker asked for a full collection (the export releasing weights)
            self.collections += 1
            return gc.collect()
        t0, t1, t2 = gc.get_threshold()
        c0, c1, c2 = gc.get_count()
        if c0 <= t0 and self._ticks % SWEEP_EVERY:
            return 0
        generation = 2 if (c1 > t1 and c2 > t2) else 1 if c1 > t1 else 0
        self.collections += 1
        return gc.collect(generation)

    def collect_all(self) -> int:
        """A full collection now, on the GUI thread (between tests, before a window closes)."""
        if threading.current_thread() is not self._thread:
            return 0
        return gc.collect()


def install(app: QCoreApplication | None = None) -> MainThreadCollector:
    """Turn automatic collection off and collect on the GUI thread's timer; idempotent per application."""
    global _installed
    app = app or QCoreApplication.instance()
    if app is None:
        raise RuntimeError("gc_guard.install needs a QApplication")
    if _installed is not None:
        try:
            if _installed.parent() is app:
                return _installed
        except RuntimeError:  # the application it lived in is gone
            pass
    _installed = MainThreadCollector(app)
    return _installed


def installed() -> MainThreadCollector | None:
    return _installed
