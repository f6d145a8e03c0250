"""Base class of every page in the main window's sidebar.

A page is a plain QWidget that works on the workspace's current model and target, which the StudioState owns:
``self.model_name`` and ``self.target`` read it, and a page that lets the user pick either writes it back with
``choose_model`` / ``choose_target`` (every page and the toolbar follow: one current target, never a page's own
copy). The main window calls ``set_context`` when the workspace, model or target change; the page keeps its
own state when the user switches away. Pages report problems through ``sig_problem`` and start jobs through
the window's JobRunner (``self.jobs``).

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
        self._ctx_model: str | None = None  # a page on its own: what set_context gave it
        self._ctx_target: str | None = None
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

    @property
    def model_name(self) -> str | None:
        """The workspace's current model (the shared state's; a page on its own: what set_context gave it)."""
        return self._ctx_model if self._own_state else self.state.model_name

    @property
    def target(self) -> str | None:
        """The workspace's current target, the one every page acts on."""
        if self._own_state:
            return self._ctx_target
        return self.state.target

    def choose_target(self, target: str | None) -> None:
        """The user picked ``target`` on this page: it becomes the workspace's current target everywhere."""
        if not target or target == self.target:
            return
        if self._own_state or self.state.workspace is None:
            self._ctx_target = target
            self.context_changed()
        else:
            self.state.set_target(target)  # the window hears it and calls set_context on every page

    def choose_model(self, name: str | None) -> None:
        """The user picked model ``name`` on this page: it becomes the workspace's current model everywhere."""
        if not name or name == self.model_name:
            return
        if self._own_state or self.state.workspace is None:
            self._ctx_model = name
            self.context_changed()
        else:
            self.state.set_model(name)

    def set_context(self, workspace: Workspace | None, model_name: str | None, target: str | None) -> None:
        """Called by the main window whenever workspace, current model or current target change."""
        self.workspace, self._ctx_model, self._ctx_target = workspace, model_name, target
        if self._own_state and self.state.workspace is not workspace:
            self.state.set_workspace(workspace)
        self.context_changed()

    def state_bound(self) -> None:
        """Override to hand the shared state to widgets the page built before it was bound."""

    def _on_state_changed(self, topic: str, payload: object) -> None:
        if topic in ("model", "target") and not self._own_state:
            self.context_changed()  # the current model or target changed, whoever chose it
        self.state_changed(topic, payload)

    def state_changed(self, topic: str, payload: object) -> None:
        """Override to follow the shared state (devices, device states, artifacts, selection)."""

    def context_changed(self) -> None:
        """Override to refresh what depends on the current model or target."""

    def open_payload(self, payload: object) -> None:
        """Override to act on ``sig_open_page`` from another page (for example a node to focus)."""

    def opened_path(self) -> str | None:
        """The file or folder the page shows (a path opened in it), for whoever handed it one."""
        return None

    def focus_problem(self, problem: Problem) -> None:
        """A click on one of this page's problems: show what it names. By default the location is a node or
        file opened like a payload; pages with forms override this so a click never rewrites a field."""
        if problem.location:
            self.open_payload(problem.location)

    def shutdown(self) -> None:
        """Called by the main window when it closes: stop timers, servers and threads the page owns."""
