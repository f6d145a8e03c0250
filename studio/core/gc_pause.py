"""Cyclic GC paused while a big graph's many small objects are built (no reference cycles are made there).

With 100k nodes the collector's repeated scans of the growing heap cost a third of the work (diff's reader and
matcher, the graph view's ONNX -> view data and hierarchy). ``gc.disable`` is process-wide: nested or concurrent
uses are safe (the outermost one that found it enabled turns it back on; at worst the collector runs early).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
