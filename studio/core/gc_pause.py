"""The cyclic garbage collector from library code: paused while a big graph's many small objects are built, and
collected only on the thread that owns collection when a GUI runs.

Pausing: with 100k nodes the collector's repeated scans of the growing heap cost a third of the work (diff's
reader and matcher, the graph view's ONNX -> view data and hierarchy). ``gc.disable`` is process-wide: nested or
concurrent uses are safe (the outermost one that found it enabled turns it back on; at worst the collector runs
early).

Owning: the GUI (studio.gui.gc_guard) turns automatic collection off and collects on its own thread, because a
collection on a job's worker deletes Qt widgets caught in cycles off the GUI thread (Qt warns "Timers cannot be
started from another thread", hangs or aborts). ``collect`` is what library code calls instead of ``gc.collect``
(the export releasing PyTorch's weights): on the owner's thread, or with no owner (the CLI), it collects now;
elsewhere it asks the owner to collect at its next check.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_owner: threading.Thread | None = None
_requested = threading.Event()


@contextmanager
def gc_paused() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def set_owner(thread: threading.Thread | None) -> None:
    """The thread that alone runs cyclic collections from now on (None: any thread, the default)."""
    global _owner
    _owner = thread


def collect() -> int:
    """A full collection now when this thread may run one; else a request the owner honours (returns 0)."""
    if _owner is None or threading.current_thread() is _owner:
        return gc.collect()
    _requested.set()
    return 0


def take_request() -> bool:
    """True once after a ``collect`` was asked for off the owner's thread (the owner's check calls this)."""
    if _requested.is_set():
        _requested.clear()
        return True
    return False
