"""Widgets in reference cycles die on the GUI thread, never in a worker that happened to trigger a collection."""

from __future__ import annotations

import gc
import threading

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMenu, QWidget

from studio.core.gc_pause import gc_paused
from studio.gui import gc_guard


class _Page(QWidget):
    """A Python subclass, as the studio's pages are (a plain QWidget's wrapper is deleted on the main thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.menu = QMenu(self)  # a child, as in the hang this guards against (~QMenu under a worker's collection)
        self.cycle = self  # only the cyclic collector can free it


def _garbage_widget(seen: list[str]) -> None:
    w = _Page()
    w.destroyed.connect(lambda *_: seen.append(threading.current_thread().name),
                        Qt.ConnectionType.DirectConnection)


def test_a_worker_allocating_never_collects_widgets(qapp) -> None:
    guard = gc_guard.install(qapp)
    assert gc_guard.install(qapp) is guard and not gc.isenabled()
    guard.collect_all()
    seen: list[str] = []
    _garbage_widget(seen)

    def churn() -> None:  # enough container allocations to cross every generation's threshold several times
        junk = []
        for i in range(300_000):
            junk.append([i])
            if len(junk) > 1000:
                junk.clear()
        with gc_paused():  # a worker's pause must leave the collector off
            pass

    t = threading.Thread(target=churn, name="worker")
    t.start()
    t.join()
    assert seen == [] and not gc.isenabled()
    guard.collect_all()
    assert seen == ["MainThread"]


def test_the_checks_collect_on_the_gui_thread(qapp, qtbot) -> None:
    guard = gc_guard.install(qapp)
    guard.collect_all()
    seen: list[str] = []
    _garbage_widget(seen)
    junk = [[i] for i in range(gc.get_threshold()[0] * 2)]  # over generation 0's threshold, kept alive
    assert guard.check() > 0 and seen == ["MainThread"] and len(junk) > 0
    # the timer's own checks: a young-generation sweep comes within SWEEP_EVERY ticks whatever the counts are
    later: list[str] = []
    _garbage_widget(later)
    qtbot.waitUntil(lambda: later == ["MainThread"],
                    timeout=gc_guard.INTERVAL_MS * (gc_guard.SWEEP_EVERY + 4))
    gc.enable()  # turned back on behind its back (a worker's pause that began before install): off again
    guard.check()
    assert not gc.isenabled()


def test_a_workers_explicit_collect_runs_on_the_gui_thread(qapp) -> None:
    """The export releasing PyTorch's weights calls studio.core.gc_pause.collect on its job's worker: in the GUI
    that is a request the GUI thread's collector honours, never a collection on the worker (the walkthrough's
    export deleted the previous test's widgets there: "Timers cannot be started from another thread")."""
    from studio.core import gc_pause

    guard = gc_guard.install(qapp)
    guard.collect_all()
    seen: list[str] = []
    _garbage_widget(seen)
    got: list[int] = []
    t = threading.Thread(target=lambda: got.append(gc_pause.collect()), name="export-worker")
    t.start()
    t.join()
    assert got == [0] and seen == []  # asked for, not run, on the worker
    guard.check()  # the next tick: a full collection on this thread
    assert seen == ["MainThread"] and not gc_pause.take_request()
