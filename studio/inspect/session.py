"""The inspector's state without Qt: the model it shows, its graph, the inspection report, the selected node and
the last fix, observable.

Why: the Inspect page's widgets (graph view, findings table, Node / Profile / Verify tabs, Netron, the fix and
node-data flows) used to read and write attributes of the page object, so every widget depended on the page
and a change made by one (a verifier's report, a click in the Profile table) reached the others only if the
code that made it remembered to call each of them. Here a widget changes the session and the subscribers hear
it, the glue pattern :class:`studio.core.state.StudioState` uses for the workspace (the current target is the
workspace's, not the inspector's). Callbacks run synchronously on the thread that made the change: in the GUI
the jobs hand their results to the GUI thread first, so widgets are only touched there.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from studio.core.observable import Callback, Subscribers

TOPICS = ("model", "graph", "report", "selection", "fix")


class InspectSession:
    """``subscribe(topic, fn)``; each setter notifies its topic's subscribers when the value changes."""

    def __init__(self) -> None:
        self._subs = Subscribers(TOPICS, "inspect session")
        self.model_path: Path | None = None
        self.graph: Any = None  # studio.gui.graph.model.GraphData (its builder is Qt-free)
        self.report: Any = None  # studio.inspect.report.InspectionReport
        self.selected_node: str | None = None
        self.last_fix: Any = None  # studio.gui.inspector.fixes.FixOutcome of the last fix

    def subscribe(self, topic: str, fn: Callback) -> Callable[[], None]:
        """Call ``fn(topic, value)`` on every change of ``topic`` ("*" for all); returns the unsubscribe."""
        return self._subs.subscribe(topic, fn)

    def _emit(self, topic: str, value: Any) -> None:
        self._subs.emit(topic, value)

    def open(self, path: Path | None) -> None:
        """A model to show: its graph, report and selection are gone until they are made for it. The last fix
        stays: a fix opens the model it wrote, and its before/after belongs to that model."""
        self.model_path = path
        self.graph = self.report = self.selected_node = None
        self._emit("model", path)

    def set_graph(self, graph: Any) -> None:
        if graph is not self.graph:
            self.graph = graph
            self._emit("graph", graph)

    def set_report(self, report: Any) -> None:
        """A new inspection report, or the same one with a verifier's answer folded in: notified either way."""
        self.report = report
        self._emit("report", report)

    def select(self, node: str | None) -> None:
        if node != self.selected_node:
            self.selected_node = node
            self._emit("selection", node)

    def set_fix(self, outcome: Any) -> None:
        self.last_fix = outcome
        self._emit("fix", outcome)
