"""Base class of every page in the main window's sidebar.

A page is a plain QWidget that works on the workspace's current model and target. The main window calls
``set_context`` when either changes; the page keeps its own state when the user switches away. Pages
report problems through ``sig_problem`` and start jobs through the window's JobRunner (``self.jobs``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
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

    def set_context(self, workspace: Workspace | None, model_name: str | None, target: str | None) -> None:
        """Called by the main window whenever workspace, current model or current target change."""
        self.workspace, self.model_name, self.target = workspace, model_name, target
        self.context_changed()

    def context_changed(self) -> None:
        """Override to refresh what depends on the current model or target."""

    def open_payload(self, payload: object) -> None:
        """Override to act on ``sig_open_page`` from another page (for example a node to focus)."""

    def shutdown(self) -> None:
        """Called by the main window when it closes: stop timers, servers and threads the page owns."""
