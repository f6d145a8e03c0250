"""Base class of every page in the main window's sidebar.

A page is a plain QWidget that works on the workspace's current model and target. The main window calls
``set_context`` when either changes; the page keeps its own state when the user switches away. Pages
report problems through ``sig_problem`` and start jobs through the window's JobRunner (``self.jobs``).

What several pages know (devices and their states, the model's artifacts, the selected device) lives in one
``StudioState`` (``self.state``), shared by every page of a window (``bind_state``); its changes arrive in
``state_changed(topic, payload)``. A page shown on its own has a state of its own, fed by ``set_context``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from studio.core.state import StudioState
from studio.gui.state_qt import StateSignals

if TYPE_CHECKING:
    from studio.core.errors import Problem
    from studio.core.workspace import Workspace
    from studio.gui.jobs_qt import JobRunner


class Page(QWidget):
    page_id: str = "page"
    title: str = "Page"
    icon_name: str = ""
    # False: the window puts the page in a vertical scroll area (a tall form scrolls on a short screen);
    # True: the page scrolls its own body and keeps controls such as a wizard's Back / Next always in view.
    scrolls_itself: bool = False

    sig_problem = Signal(object)  # studio.core.errors.Problem
    sig_log = Signal(str)
    sig_open_page = Signal(str, object)  # page_id, payload (e.g. a model path or node name)
    sig_workspace_changed = Signal()  # the page added/changed models or devices: the window refreshes its combos
    sig_connection = Signal(str, str)  # device or server name, state ("ok", "down", "connecting", ...)

    def __init__(self, jobs: JobRunner | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        if jobs is None:  # a page shown on its own (tests, embedding) runs its jobs on a runner of its own
            from studio.gui.jobs_qt import JobRunner

            jobs = JobRunner(self)
        self.jobs: JobRunner = jobs
        self.workspace: Workspace | None = None
        self.model_name: str | None = None
        self.target: str | None = None
        self._own_state = True
        self.state = StudioState()
        self.state_signals = StateSignals(self.state, self)
        self.state_signals.sig_changed.connect(self._on_state_changed)

    def bind_state(self, state: StudioState, signals: StateSignals) -> None:
        """Share the window's state (the main window calls this once, before the first ``set_context``)."""
        self.state_signals.sig_changed.disconnect(self._on_state_changed)
        self._own_state = False
        self.state, self.state_signals = state, signals
        signals.sig_changed.connect(self._on_state_changed)
        self.state_bound()

    def set_context(self, workspace: Workspace | None, model_name: str | None, target: str | None) -> None:
        """Called by the main window whenever workspace, current model or current target change."""
        self.workspace, self.model_name, self.target = workspace, model_name, target
        if self._own_state and self.state.workspace is not workspace:
            self.state.set_workspace(workspace)
        self.context_changed()

    def state_bound(self) -> None:
        """Override to hand the shared state to widgets the page built before it was bound."""

    def _on_state_changed(self, topic: str, payload: object) -> None:
        self.state_changed(topic, payload)

    def state_changed(self, topic: str, payload: object) -> None:
        """Override to follow the shared state (devices, device states, artifacts, selection)."""

    def context_changed(self) -> None:
        """Override to refresh what depends on the current model or target."""

    def open_payload(self, payload: object) -> None:
        """Override to act on ``sig_open_page`` from another page (for example a node to focus)."""

    def focus_problem(self, problem: Problem) -> None:
        """A click on one of this page's problems: show what it names. By default the location is a node or
        file opened like a payload; pages with forms override this so a click never rewrites a field."""
        if problem.location:
            self.open_payload(problem.location)

    def shutdown(self) -> None:
        """Called by the main window when it closes: stop timers, servers and threads the page owns."""
