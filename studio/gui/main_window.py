"""The studio's main window: toolbar, page sidebar, stacked pages, Jobs and Log/Problems panels, status bar.

The window owns the workspace, the shared state (studio.core.state) and the JobRunner; pages see them through
``Page.bind_state`` / ``set_context`` and ``Page.jobs``. Everything a page reports (problems, log lines, "open
that in page X") flows through signals connected here, so pages never need to know each other. The toolbar,
menus, search and window-state pieces live in :mod:`studio.gui.window`.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QCoreApplication, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QStackedWidget,
    QStyle,
    QWidget,
)

from studio.core.catalogue import _ as core_text
from studio.core.errors import Problem, StudioError
from studio.core.settings import Settings
from studio.core.state import StudioState
from studio.core.workspace import Workspace
from studio.gui import i18n
from studio.gui.dialogs import PluginsDialog, ReportDialog, ShortcutsDialog
from studio.gui.jobs_panel import JobsPanel, job_status_word
from studio.gui.jobs_qt import JobHandle, JobRunner
from studio.gui.log_panel import LogPanel
from studio.gui.page import Page
from studio.gui.pages import LoadedPage, load_pages
from studio.gui.screen_fit import (
    PageScroller,
    available_geometry,
    clamp_to_screen,
    dock_width,
    first_run_size,
)
from studio.gui.state_qt import StateSignals
from studio.gui.status_bar import StatusLine
from studio.gui.targets import target_ids
from studio.gui.theme import apply_theme, current_theme
from studio.gui.window import window_state
from studio.gui.window.broken_page import BrokenPage
from studio.gui.window.language import LanguageSwitch, page_title, sidebar_text
from studio.gui.window.menus import build_menus, build_shortcuts
from studio.gui.window.navigation import PageNavigation
from studio.gui.window.toolbar import OPEN_OTHER, ContextToolbar
from studio.gui.window.window_state import APPLICATION, ORGANIZATION, qsettings
from studio.gui.window.workspace_actions import WorkspaceActions

__all__ = ["APPLICATION", "ORGANIZATION", "BrokenPage", "MainWindow", "qsettings"]
translate = QCoreApplication.translate


class MainWindow(LanguageSwitch, WorkspaceActions, PageNavigation, QMainWindow):
    sig_workspace_changed = Signal(object)  # Workspace | None

    def __init__(self, workspace: Workspace | None = None, settings: Settings | None = None,
                 page_specs: list[tuple[str, str]] | None = None, restore_state: bool = True) -> None:
        super().__init__()
        self.settings = settings or Settings.load()
        self.workspace: Workspace | None = None
        self._target: str | None = "ort-cpu"  # the current target while no workspace is open
        self.state = StudioState()  # the one workspace state every page shares (studio.core.state)
        self.state_signals = StateSignals(self.state, self)
        self.jobs = JobRunner(self)
        self._dialogs: list[QWidget] = []
        self._recent_problems: list[tuple[tuple[str, str, str | None], float]] = []  # add_problem's dedup window
        self.setWindowTitle(APPLICATION)
        self.setObjectName("MainWindow")
        self.setAcceptDrops(True)
        self.resize(first_run_size(available_geometry(self)))

        self._page_specs = page_specs
        self._drawn_language = i18n.current()  # the language the texts were made in (LanguageSwitch)
        self.pages: list[LoadedPage] = load_pages(self.jobs, page_specs)
        self._build_toolbar()
        self._build_center()
        self._build_docks()
        self._build_status()
        self._build_menus()
        self._build_shortcuts()
        self._wire_jobs()
        self.state_signals.sig_changed.connect(self._state_changed)
        self._bind_pages()
        if self.sidebar.count():
            self.sidebar.setCurrentRow(0)
        self.refresh_workspaces()
        self.refresh_targets()
        self.set_workspace(workspace, remember=workspace is not None)
        if restore_state:
            self.restore_window_state()
        clamp_to_screen(self)

    # -- building --------------------------------------------------------------------------------------
    def _build_toolbar(self) -> None:
        self.toolbar = tb = ContextToolbar(self)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, tb)
        self.ws_combo, self.model_combo, self.target_combo = tb.ws_combo, tb.model_combo, tb.target_combo
        self.search, self.devices_label = tb.search, tb.devices_label
        self.ws_combo.activated.connect(self._ws_combo_activated)
        self.model_combo.currentIndexChanged.connect(self._model_combo_changed)
        self.target_combo.currentIndexChanged.connect(self._target_combo_changed)
        tb.completer.activated.connect(self.run_search)
        self.search.returnPressed.connect(lambda: self.run_search(self.search.text()))

    def _build_center(self) -> None:
        self.sidebar = QListWidget()
        self.sidebar.setObjectName("sidebar")
        self.sidebar.setFixedWidth(172)
        self.stack = QStackedWidget()
        self._fill_pages()
        self.sidebar.currentRowChanged.connect(self._page_selected)
        central = QWidget()
        row = QHBoxLayout(central)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(self.sidebar)
        row.addWidget(self.stack, 1)
        self.setCentralWidget(central)

    def _fill_pages(self) -> None:
        """The pages into the stack and their titles into the sidebar (again after a language switch)."""
        warn_icon = self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
        for i, lp in enumerate(self.pages):
            widget: QWidget = lp.page if lp.page is not None else BrokenPage(lp)
            scrolls = lp.page is not None and lp.page.scrolls_itself
            self.stack.addWidget(widget if scrolls else PageScroller(widget))
            key = f"Ctrl+{i + 1}" if i < 9 else ""
            item = QListWidgetItem(sidebar_text(lp))
            item.setToolTip(f"{sidebar_text(lp)}  {key}" if lp.ok else self.tr("{page} failed to load:\n{error}").format(
                page=page_title(lp.title), error=lp.error))
            if not lp.ok:
                item.setIcon(warn_icon)
            self.sidebar.blockSignals(True)
            self.sidebar.addItem(item)
            self.sidebar.blockSignals(False)

    def _bind_pages(self) -> None:
        for lp in self.pages:
            if lp.page is not None:
                lp.page.bind_state(self.state, self.state_signals)
                self._wire_page(lp.page)
            else:
                self.log_panel.add_problem(Problem("error", self.tr("{page} page failed to load: {error}").format(
                    page=page_title(lp.title), error=(lp.error or "").splitlines()[0]), source="studio",
                                                   page=lp.page_id, hint=self.tr("see {module}").format(module=lp.module)))

    def _build_docks(self) -> None:
        self.jobs_panel = JobsPanel(self.jobs)
        self.jobs_panel.sig_open_report.connect(self.open_report)
        self.log_panel = LogPanel()
        self.log_panel.sig_problem_activated.connect(self.open_problem)
        self.jobs_dock = QDockWidget(translate("MainWindow", "Jobs"), self)
        self.jobs_dock.setObjectName("jobs-dock")
        self.jobs_dock.setWidget(self.jobs_panel)
        self.log_dock = QDockWidget(translate("MainWindow", "Log / Problems"), self)
        self.log_dock.setObjectName("log-dock")
        self.log_dock.setWidget(self.log_panel)
        for d in (self.jobs_dock, self.log_dock):
            d.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                          | QDockWidget.DockWidgetFeature.DockWidgetClosable)
            d.setMinimumWidth(240)
            self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, d)
            d.visibilityChanged.connect(self._dock_shown)
        self.splitDockWidget(self.jobs_dock, self.log_dock, Qt.Orientation.Vertical)
        self.resizeDocks([self.jobs_dock], [dock_width(self.width())], Qt.Orientation.Horizontal)

    def _dock_shown(self, visible: bool) -> None:
        """A dock shown again (View menu) comes back at its old width: never wider than the screen allows."""
        if visible:
            QTimer.singleShot(0, self, self._fit_docks)

    def _fit_docks(self) -> None:
        docks = [d for d in (self.jobs_dock, self.log_dock) if d.isVisible() and not d.isFloating()]
        if docks:
            self.resizeDocks(docks, [dock_width(self.width())] * len(docks), Qt.Orientation.Horizontal)
        clamp_to_screen(self)

    def _build_status(self) -> None:
        self.status = StatusLine(self.statusBar(), self.state, self.devices_label)
        self.status_model, self.status_job = self.status.model, self.status.job
        self.status_msg, self.status_conn = self.status.msg, self.status.conn

    def _build_menus(self) -> None:
        build_menus(self)
        self._sync_theme_actions()

    def _build_shortcuts(self) -> None:
        self._shortcuts = build_shortcuts(self)

    def _wire_jobs(self) -> None:
        self.jobs.sig_log.connect(lambda h, line: self.log_panel.append_log(line, source=h.title))
        self.jobs.sig_finished.connect(self._job_finished)

    def _wire_page(self, page: Page) -> None:
        page.sig_problem.connect(self.add_problem)
        page.sig_log.connect(lambda line, p=page: self.log_panel.append_log(line, source=page_title(p.title)))
        page.sig_open_page.connect(self.open_page)
        page.sig_workspace_changed.connect(self._page_changed_workspace)
        page.sig_connection.connect(self.set_connection_state)

    # -- workspace -------------------------------------------------------------------------------------
    def set_workspace(self, workspace: Workspace | None, remember: bool = True) -> None:
        self.workspace = workspace
        self.state.set_workspace(workspace)
        if workspace is not None:
            if not workspace.current_target:
                workspace.current_target = self._target
            if remember:
                self.settings.remember_workspace(workspace.root)
                self._save_settings()
            self.setWindowTitle(f"{workspace.name} - {APPLICATION}")
        else:
            self.setWindowTitle(APPLICATION)
        self.refresh_workspaces()
        self.refresh_models()
        self._select_target(self.target)
        self._update_devices_label()
        self._propagate()
        self.sig_workspace_changed.emit(workspace)

    # -- combos ----------------------------------------------------------------------------------------
    def refresh_workspaces(self) -> None:
        current = str(self.workspace.root) if self.workspace is not None else None
        self.toolbar.fill_workspaces(list(self.settings.recent_workspaces), current, self.recent_menu,
                                     self.open_workspace)

    def refresh_models(self) -> None:
        shown = self.toolbar.fill_models(self.workspace)
        if self.workspace is not None and shown and self.workspace.current_model != shown:
            self.workspace.current_model = shown  # the saved one is gone: the first model becomes current
        self._update_status_model()
        self._update_search_items()

    def refresh_targets(self) -> None:
        self.toolbar.fill_targets(target_ids([self.workspace.targets_dir] if self.workspace is not None else []))
        self._select_target(self.target)
        self._update_search_items()

    @property
    def target(self) -> str | None:
        """The current target: the workspace's (owned by the StudioState), else the last one shown."""
        return self.state.target if self.workspace is not None else self._target

    def _select_target(self, target: str | None) -> None:
        """Show ``target`` in the toolbar (an id no longer listed shows the first; that one becomes current)."""
        shown = self.toolbar.show_target(target)
        self._target = shown
        if self.workspace is not None and shown != self.workspace.current_target:
            self.workspace.current_target = shown
            self.workspace.save()

    def _ws_combo_activated(self, index: int) -> None:
        data = self.ws_combo.itemData(index)
        if data == OPEN_OTHER:
            self.refresh_workspaces()
            self.open_workspace_dialog()
        elif data and (self.workspace is None or str(self.workspace.root) != data):
            self.open_workspace(data)

    def _model_combo_changed(self, _index: int) -> None:
        name = self.model_combo.currentData()
        if self.workspace is not None and name and name != self.workspace.current_model:
            self.state.set_model(name)  # every page and the status bar follow (_state_changed)
            return
        self._update_status_model()
        self._propagate()

    def _target_combo_changed(self, _index: int) -> None:
        target = self.target_combo.currentData()
        if self.workspace is not None:
            self.state.set_target(target)  # every page follows (_state_changed)
            return
        self._target = target
        self._propagate()

    def select_model(self, name: str) -> None:
        idx = self.model_combo.findData(name)
        if idx >= 0:
            self.model_combo.setCurrentIndex(idx)

    def select_target(self, target: str) -> None:
        idx = self.target_combo.findData(target)
        if idx >= 0:
            self.target_combo.setCurrentIndex(idx)

    def _page_changed_workspace(self) -> None:
        self.refresh_models()
        self._update_devices_label()
        self._propagate()

    def _propagate(self) -> None:
        model = self.workspace.current_model if self.workspace is not None else None
        for lp in self.pages:
            if lp.page is None:
                continue
            try:
                lp.page.set_context(self.workspace, model, self.target)
            except Exception as exc:  # a page bug must not stop the others from updating
                self.add_problem(Problem("error", self.tr("{page} page failed to update: {error}").format(
                    page=page_title(lp.title), error=exc), source=lp.title,
                                         page=lp.page_id))

    # -- jobs, problems, status ------------------------------------------------------------------------
    def _job_finished(self, h: JobHandle) -> None:
        result_status = getattr(h.result, "status", None) if h.status == "done" else None
        text = f"{h.title}: {job_status_word(result_status or h.status)}"
        self.status.show_job(text)
        self.log_panel.append_log(text, source="jobs")
        if h.status == "failed" and h.error is not None:
            page_id = h.kind.split(":", 1)[0]
            self.add_problem(Problem("error", h.error.message, source=h.title,
                                     page=page_id if self.page(page_id) is not None else None,
                                     location=h.error.offending, hint=h.error.hint))
            tb = h.error.details.get("traceback") if isinstance(h.error.details, dict) else None
            if tb:
                self.log_panel.append_log(tb, source=h.title)

    def add_problem(self, problem: Problem) -> None:
        """One entry per failure: the job's own report and the page's report of the same error are one."""
        key = (problem.severity, problem.message, problem.page)
        now = time.monotonic()
        self._recent_problems = [(k, t) for k, t in self._recent_problems if now - t < 10]
        if any(k == key for k, _t in self._recent_problems):
            return
        self._recent_problems.append((key, now))
        self.log_panel.add_problem(problem)
        if problem.severity == "error":
            self.flash(core_text(problem.message), 6000)

    def report_error(self, exc: StudioError, source: str) -> None:
        self.add_problem(Problem("error", exc.message, source=source, location=exc.offending, hint=exc.hint))
        self.log_panel.append_log(exc.render(), source=source)

    def set_connection_state(self, name: str, state: str) -> None:
        """A page's poll result (``sig_connection``): it becomes the device's state in the shared state."""
        self.state.set_device_state(name, state)

    def _state_changed(self, topic: str, _payload: object) -> None:
        if topic in ("workspace", "devices", "device_state"):
            self._update_devices_label()
        elif topic == "model":  # the toolbar or a page chose a model through the state (pages follow it there)
            self.refresh_models()
        elif topic == "target" and self.workspace is not None:  # likewise the target
            self._select_target(self.workspace.current_target)

    def _update_devices_label(self) -> None:
        self.status.show_devices()

    def flash(self, text: str, msec: int = 0) -> None:
        self.status.flash(text, msec)

    def _update_status_model(self) -> None:
        self.status.show_model(self.workspace)

    def open_report(self, path: Path | None) -> None:
        if path is None:
            return
        dlg = ReportDialog(Path(path), self)
        self._dialogs.append(dlg)
        dlg.finished.connect(lambda _r, d=dlg: self._dialogs.remove(d) if d in self._dialogs else None)
        dlg.show()

    def show_plugins(self) -> PluginsDialog:
        dlg = PluginsDialog(self)
        dlg.show()
        self._dialogs.append(dlg)
        return dlg

    def show_shortcuts(self) -> ShortcutsDialog:
        dlg = ShortcutsDialog(self)
        dlg.show()
        self._dialogs.append(dlg)
        return dlg

    def about(self) -> None:
        from studio import __version__

        self.flash(f"Deployment Studio {__version__}", 5000)

    # -- theme -----------------------------------------------------------------------------------------
    def set_theme(self, name: str) -> None:
        app = QApplication.instance()
        if app is not None:
            name = apply_theme(app, name)
        self.settings.theme = name
        self._save_settings()
        self._sync_theme_actions()

    def toggle_theme(self) -> None:
        self.set_theme("dark" if current_theme() == "light" else "light")

    def _sync_theme_actions(self) -> None:
        act = getattr(self, "theme_actions", {}).get(current_theme())
        if act is not None:
            act.setChecked(True)

    def _save_settings(self) -> None:
        try:
            self.settings.save()
        except OSError as exc:
            self.log_panel.append_log(self.tr("could not save settings: {error}").format(error=exc), source="settings")

    # -- window state ----------------------------------------------------------------------------------
    def save_window_state(self) -> None:
        row = self.sidebar.currentRow()
        window_state.save_window_state(self, self.pages[row].page_id if 0 <= row < len(self.pages) else "")

    def restore_window_state(self) -> bool:
        restored, page = window_state.restore_window_state(self)
        if page:
            self.go_to_page(page)
        return restored

    def showEvent(self, event) -> None:  # noqa: N802, ANN001
        super().showEvent(event)
        clamp_to_screen(self)
        QTimer.singleShot(300, self._clamp_framed)  # again once the window manager has added its frame

    def _clamp_framed(self) -> None:
        clamp_to_screen(self)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        self.save_window_state()
        running = self.jobs.running()
        if running:
            self.flash(translate("MainWindow", "cancelling {n} job(s)…").format(n=len(running)))
            QApplication.processEvents()
        for lp in self.pages:  # pages stop what they own (local servers, pollers) before the jobs are cancelled
            if lp.page is not None:
                try:
                    lp.page.shutdown()
                except Exception as exc:  # one page failing to shut down must not keep the others running
                    self.log_panel.append_log(self.tr("{page} page shutdown failed: {error}").format(
                        page=page_title(lp.title), error=exc), source="studio")
        self.jobs.shutdown()
        super().closeEvent(event)

