"""LayoutWorker: a graph's layout and geometry computed off the GUI thread, kept alive while it runs."""

from __future__ import annotations

from PySide6.QtCore import QThread, Signal

from studio.core.gc_pause import gc_paused
from studio.gui.graph.expansion import Expansion
from studio.gui.graph.geometry import GraphGeometry, build_geometry
from studio.gui.graph.layout import compute_layout
from studio.gui.graph.model import GraphData

# Running layout workers, kept alive here rather than by their view: a QThread destroyed while it runs aborts the
# process ("QThread: Destroyed while thread is still running"), and a view can be closed mid-layout.
RUNNING: set[LayoutWorker] = set()


class LayoutWorker(QThread):
    """Computes layout and geometry off the GUI thread; the result comes back through a queued signal."""

    sig_ready = Signal(int, object)  # generation, GraphGeometry
    sig_failed = Signal(int, str)

    def __init__(self, generation: int, graph: GraphData, expansion: Expansion | None = None,
                 build_groups: bool = False) -> None:
        super().__init__()  # no parent: a closed view must not destroy a running thread (see RUNNING)
        self.generation, self.graph, self.expansion = generation, graph, expansion
        self.expanded = expansion.snapshot() if expansion is not None else None
        self.build_groups = build_groups  # a new model: its hierarchy is built here too (0.3 s at 100k nodes)
        self.built: Expansion | None = None

    def run(self) -> None:
        try:
            with gc_paused():  # a big model's hierarchy, visible graph and geometry: many objects, no cycles
                geometry = self._layout()
        except Exception as exc:  # a layout bug must not take the window down; the view shows the message
            self.sig_failed.emit(self.generation, f"{type(exc).__name__}: {exc}")
        else:
            geometry.expansion = self.built
            self.sig_ready.emit(self.generation, geometry)
        finally:  # a worker kept in RUNNING a moment longer must not keep a 100k-node graph alive
            self.graph = self.expansion = self.built = self.expanded = None  # type: ignore[assignment]

    def _layout(self) -> GraphGeometry:
        if self.build_groups:
            self.expansion = self.built = Expansion.of(self.graph)
            self.expanded = self.expansion.snapshot()
        if self.expansion is not None:  # groups: the visible units, each open group laid out in its box
            vis = self.expansion.visible(self.expanded)
            return build_geometry(vis.graph, self.expansion.layout(vis))
        return build_geometry(self.graph, compute_layout(self.graph))


def forget_finished() -> None:
    """Drop finished workers from ``RUNNING``; one whose ``finished`` arrives before ``isFinished()`` holds
    goes at the next call (each layout start calls it), holding no graph by then (``run`` lets go of it)."""
    for w in list(RUNNING):
        try:
            done = w.isFinished()
        except RuntimeError:  # already deleted by its view's reap
            done = True
        if done:
            RUNNING.discard(w)
