"""The studio's main window: toolbar, page sidebar, stacked pages, Jobs and Log/Problems panels, status bar.

The window owns the workspace and the JobRunner; pages only see them through ``Page.set_context`` and
``Page.jobs``. Everything a page reports (problems, log lines, "open that in page X") flows through signals
connected here, so pages never need to know each other.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QSettings, QStringListModel, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QActionGroup,
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QKeySequence,
    QShortcut,
)
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QCompleter,
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMenu,
    QPlainTextEdit,
    QScrollArea,
    QSizePolicy,
    QStackedWidget,
    QStyle,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from studio.core.errors import InputError, Problem, StudioError
from studio.core.paths import config_dir
from studio.core.settings import Settings
from studio.core.state import StudioState
from studio.core.workspace import Workspace, WorkspaceCorrupt
from studio.gui.dialogs import PluginsDialog, ReportDialog, ShortcutsDialog
from studio.gui.file_dialogs import start_dir
from studio.gui.jobs_panel import JobsPanel
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
from studio.gui.theme import THEMES, apply_theme, current_theme, set_role

ORGANIZATION = "DeploymentStudio"
APPLICATION = "Deployment Studio"
_OPEN_OTHER = "__open_other__"


def qsettings() -> QSettings:
    """Window state store (organisation "DeploymentStudio"), kept in the studio's config folder."""
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(config_dir()))
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, "studio")


class BrokenPage(QWidget):
    """Stands in for a page whose module failed to import or build: says which and why."""

    def __init__(self, loaded: LoadedPage, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.loaded = loaded
        lay = QVBoxLayout(self)
        lay.setContentsMargins(24, 20, 24, 20)
        head = QLabel(f"The {loaded.title} page could not be loaded")
        set_role(head, "heading")
        sub = QLabel(f"Module <code>{loaded.module}</code> raised an error. The rest of the studio works; "
                     "fix the error (or reinstall the package that provides it) and restart.")
        sub.setWordWrap(True)
        set_role(sub, "muted")
        self.text = QPlainTextEdit(loaded.error or "")
        self.text.setReadOnly(True)
        set_role(self.text, "log")
        lay.addWidget(head)
        lay.addWidget(sub)
        lay.addSpacing(8)
        lay.addWidget(self.text, 1)


class MainWindow(QMainWindow):
    sig_workspace_changed = Signal(object)  # Workspace | None

    def __init__(self, workspace: Workspace | None = None, settings: Settings | None = None,
                 page_specs: list[tuple[str, str]] | None = None, restore_state: bool = True) -> None:
        super().__init__()
        self.settings = settings or Settings.load()
        self.workspace: Workspace | None = None
        self.target: str | None = "ort-cpu"
        self.state = StudioState()  # the one workspace state every page shares (studio.core.state)
        self.state_signals = StateSignals(self.state, self)
        self.jobs = JobRunner(self)
        self._dialogs: list[QWidget] = []
        self._recent_problems: list[tuple[tuple[str, str, str | None], float]] = []  # add_problem's dedup window
        self.setWindowTitle(APPLICATION)
        self.setObjectName("MainWindow")
        self.setAcceptDrops(True)
        self.resize(first_run_size(available_geometry(self)))

        self.pages: list[LoadedPage] = load_pages(self.jobs, page_specs)
        self._build_toolbar()
        self._build_center()
        self._build_docks()
        self._build_status()
        self._build_menus()
        self._build_shortcuts()
        self._wire_jobs()
        self.state_signals.sig_changed.connect(self._state_changed)
        for lp in self.pages:
            if lp.page is not None:
                lp.page.bind_state(self.state, self.state_signals)
                self._wire_page(lp.page)
            else:
                self.log_panel.add_problem(Problem("error", f"{lp.title} page failed to load: "
                                                   f"{(lp.error or '').splitlines()[0]}", source="studio",
                                                   page=lp.page_id, hint=f"see {lp.module}"))
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
        tb = QToolBar("Main toolbar")
        tb.setObjectName("main-toolbar")
        tb.setMovable(False)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, tb)
        self.ws_combo = QComboBox()
        self.ws_combo.setMinimumWidth(150)
        self.ws_combo.setToolTip("Workspace: recent workspaces (File > Open workspace for another)")
        self.ws_combo.activated.connect(self._ws_combo_activated)
        self.model_combo = QComboBox()
        self.model_combo.setMinimumWidth(170)
        self.model_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.model_combo.setToolTip("Current model: every page acts on it")
        self.model_combo.currentIndexChanged.connect(self._model_combo_changed)
        self.target_combo = QComboBox()
        self.target_combo.setMinimumWidth(110)
        self.target_combo.setToolTip("Current target accelerator")
        self.target_combo.currentIndexChanged.connect(self._target_combo_changed)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search pages, models, targets")
        self.search.setToolTip("Jump to a page, model or target (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.search.setMinimumWidth(230)
        self.search.setMaximumWidth(420)
        self._search_model = QStringListModel(self)
        comp = QCompleter(self._search_model, self)
        comp.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        comp.setFilterMode(Qt.MatchFlag.MatchContains)
        comp.activated.connect(self.run_search)
        self.search.setCompleter(comp)
        self.search.returnPressed.connect(lambda: self.run_search(self.search.text()))
        self.devices_label = QLabel("devices: none")
        self.devices_label.setToolTip("Triton servers and edge agents of the workspace")
        for label, w in (("Workspace", self.ws_combo), ("Model", self.model_combo), ("Target", self.target_combo)):
            tb.addWidget(QLabel(label))
            tb.addWidget(w)
        tb.addSeparator()
        tb.addWidget(self.search)
        spacer = QWidget()
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        tb.addWidget(spacer)
        tb.addWidget(self.devices_label)

    def _build_center(self) -> None:
        self.sidebar = QListWidget()
        self.sidebar.setObjectName("sidebar")
        self.sidebar.setFixedWidth(172)
        self.stack = QStackedWidget()
        warn_icon = self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
        for i, lp in enumerate(self.pages):
            widget: QWidget = lp.page if lp.page is not None else BrokenPage(lp)
            scrolls = lp.page is not None and lp.page.scrolls_itself
            self.stack.addWidget(widget if scrolls else PageScroller(widget))
            key = f"Ctrl+{i + 1}" if i < 9 else ""
            item = QListWidgetItem(lp.title if lp.ok else f"{lp.title}  (error)")
            item.setToolTip(f"{lp.title}  {key}" if lp.ok else f"{lp.title} failed to load:\n{lp.error}")
            if not lp.ok:
                item.setIcon(warn_icon)
            self.sidebar.addItem(item)
        self.sidebar.currentRowChanged.connect(self._page_selected)
        central = QWidget()
        row = QHBoxLayout(central)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(self.sidebar)
        row.addWidget(self.stack, 1)
        self.setCentralWidget(central)

    def _build_docks(self) -> None:
        self.jobs_panel = JobsPanel(self.jobs)
        self.jobs_panel.sig_open_report.connect(self.open_report)
        self.log_panel = LogPanel()
        self.log_panel.sig_problem_activated.connect(self.open_problem)
        self.jobs_dock = QDockWidget("Jobs", self)
        self.jobs_dock.setObjectName("jobs-dock")
        self.jobs_dock.setWidget(self.jobs_panel)
        self.log_dock = QDockWidget("Log / Problems", self)
        self.log_dock.setObjectName("log-dock")
        self.log_dock.setWidget(self.log_panel)
        for d in (self.jobs_dock, self.log_dock):
            d.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                          | QDockWidget.DockWidgetFeature.DockWidgetClosable)
            d.setMinimumWidth(240)
            self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, d)
        self.splitDockWidget(self.jobs_dock, self.log_dock, Qt.Orientation.Vertical)
        self.resizeDocks([self.jobs_dock], [dock_width(self.width())], Qt.Orientation.Horizontal)

    def _build_status(self) -> None:
        self.status = StatusLine(self.statusBar(), self.state, self.devices_label)
        self.status_model, self.status_job = self.status.model, self.status.job
        self.status_msg, self.status_conn = self.status.msg, self.status.conn

    def _build_menus(self) -> None:
        mb = self.menuBar()
        f = mb.addMenu("&File")
        self.act_new_ws = f.addAction("New workspace…", self.new_workspace_dialog)
        self.act_new_ws.setShortcut(QKeySequence("Ctrl+N"))
        self.act_open_ws = f.addAction("Open workspace…", self.open_workspace_dialog)
        self.act_open_ws.setShortcut(QKeySequence("Ctrl+O"))
        self.recent_menu = QMenu("Recent workspaces", self)
        f.addMenu(self.recent_menu)
        f.addSeparator()
        f.addAction("Add model folder…", self.add_model_folder_dialog)
        f.addAction("Add ONNX file…", self.add_onnx_dialog)
        f.addSeparator()
        quit_act = f.addAction("Quit", self.close)
        quit_act.setShortcut(QKeySequence("Ctrl+Q"))
        v = mb.addMenu("&View")
        group = QActionGroup(self)
        self.theme_actions: dict[str, QAction] = {}
        for name in THEMES:
            act = v.addAction(f"{name.title()} theme", lambda n=name: self.set_theme(n))
            act.setCheckable(True)
            group.addAction(act)
            self.theme_actions[name] = act
        toggle = v.addAction("Toggle theme", self.toggle_theme)
        toggle.setShortcut(QKeySequence("Ctrl+Shift+L"))
        v.addSeparator()
        v.addAction(self.jobs_dock.toggleViewAction())
        v.addAction(self.log_dock.toggleViewAction())
        v.addSeparator()
        v.addAction("Plugins…", self.show_plugins)
        h = mb.addMenu("&Help")
        sc = h.addAction("Keyboard shortcuts", self.show_shortcuts)
        sc.setShortcut(QKeySequence("F1"))
        h.addAction("About Deployment Studio", self._about)
        self._sync_theme_actions()

    def _build_shortcuts(self) -> None:
        self._shortcuts: list[QShortcut] = []
        for i in range(9):
            s = QShortcut(QKeySequence(f"Ctrl+{i + 1}"), self)
            s.activated.connect(lambda i=i: self.go_to_index(i))
            self._shortcuts.append(s)
        for keys, slot in (("Ctrl+F", self.focus_search), ("Esc", self.cancel_current_job)):
            s = QShortcut(QKeySequence(keys), self)
            s.activated.connect(slot)
            self._shortcuts.append(s)

    def _wire_jobs(self) -> None:
        self.jobs.sig_log.connect(lambda h, line: self.log_panel.append_log(line, source=h.title))
        self.jobs.sig_finished.connect(self._job_finished)

    def _wire_page(self, page: Page) -> None:
        page.sig_problem.connect(self.add_problem)
        page.sig_log.connect(lambda line, p=page: self.log_panel.append_log(line, source=p.title))
        page.sig_open_page.connect(self.open_page)
        page.sig_workspace_changed.connect(self._page_changed_workspace)
        page.sig_connection.connect(self.set_connection_state)

    # -- workspace -------------------------------------------------------------------------------------
    def set_workspace(self, workspace: Workspace | None, remember: bool = True) -> None:
        self.workspace = workspace
        self.state.set_workspace(workspace)
        if workspace is not None:
            self.target = workspace.current_target or self.target
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

    def open_workspace(self, path: Path | str) -> Workspace | None:
        """Open an existing workspace folder; a bad folder becomes a Problem, not a crash."""
        try:
            ws = Workspace.open(path)
        except WorkspaceCorrupt as exc:  # the studio still opens: keep the bad file, start from the models there
            ws, backup = Workspace.recover(path)
            self.add_problem(Problem("warning", f"{exc.message}. Kept it as {backup.name} and started a new "
                                     f"workspace file with the {len(ws.models)} model(s) found in models/",
                                     source="workspace", location=str(backup),
                                     hint="devices and artifacts from the old file are in the backup"))
        except StudioError as exc:
            self.report_error(exc, source="workspace")
            self.refresh_workspaces()
            return None
        self.set_workspace(ws)
        self.flash(f"opened workspace {ws.root}", 5000)
        return ws

    def create_workspace(self, path: Path | str) -> Workspace | None:
        try:
            ws = Workspace.create(path)
        except StudioError as exc:
            self.report_error(exc, source="workspace")
            return None
        self.set_workspace(ws)
        return ws

    def start_demo(self, root: Path | str) -> JobHandle | None:
        """Open the demo workspace at once and fill it with the sample models as a job."""
        from studio.core.demo import create_demo_workspace

        root = Path(root)
        ws = self.create_workspace(root)
        if ws is None:
            return None
        ws.name = "demo"
        ws.save()
        self.set_workspace(ws)

        def done(result: Workspace) -> None:
            keep_model = self.workspace.current_model if self.workspace is not None else None
            if keep_model and result.model(keep_model) is not None:
                result.current_model = keep_model
            self.set_workspace(result)

        return self.jobs.start("demo", "Preparing demo workspace",
                               lambda job: create_demo_workspace(root, job), on_done=done)

    def new_workspace_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "New workspace: choose an empty folder",
                                                start_dir(None, None))
        if path:
            self.create_workspace(path)

    def open_workspace_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open workspace folder", start_dir(None, None))
        if path:
            self.open_workspace(path)

    def add_model_folder_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Add a HuggingFace model folder or ONNX export folder",
                                                start_dir(None, self.workspace, "models"))
        if path:
            self.add_model_paths([Path(path)])

    def add_onnx_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Add an ONNX model", start_dir(None, self.workspace, "models"), "ONNX models (*.onnx)")
        if path:
            self.add_model_paths([Path(path)])

    def add_model_paths(self, paths: list[Path]) -> list[str]:
        """Register dropped or chosen model folders / .onnx files and select the last one added."""
        if self.workspace is None:
            self.report_error(InputError("no workspace is open to add models to",
                                         hint="open or create a workspace first (File > New workspace)"),
                              source="add model")
            return []
        added: list[str] = []
        for p in paths:
            try:
                entry = self.workspace.add_model(Path(p), make_current=True)
            except StudioError as exc:
                self.report_error(exc, source="add model")
                continue
            added.append(entry.name)
            self.log_panel.append_log(f"added model {entry.name} ({entry.kind}) from {p}", source="workspace")
        if added:
            self.refresh_models()
            self._propagate()
            self.flash(f"added {', '.join(added)}", 5000)
        return added

    # -- combos ----------------------------------------------------------------------------------------
    def refresh_workspaces(self) -> None:
        self.ws_combo.blockSignals(True)
        self.ws_combo.clear()
        paths = list(self.settings.recent_workspaces)
        current = str(self.workspace.root) if self.workspace is not None else None
        if current and current not in paths:
            paths.insert(0, current)
        for p in paths:
            self.ws_combo.addItem(Path(p).name or p, p)
            self.ws_combo.setItemData(self.ws_combo.count() - 1, p, Qt.ItemDataRole.ToolTipRole)
        if current is None:
            self.ws_combo.insertItem(0, "(no workspace)", None)
        self.ws_combo.addItem("Open another workspace…", _OPEN_OTHER)
        self.ws_combo.setCurrentIndex(max(0, self.ws_combo.findData(current)) if current else 0)
        self.ws_combo.blockSignals(False)
        self.recent_menu.clear()
        for p in self.settings.recent_workspaces:
            self.recent_menu.addAction(p, lambda p=p: self.open_workspace(p))
        self.recent_menu.setEnabled(bool(self.settings.recent_workspaces))

    def refresh_models(self) -> None:
        ws = self.workspace
        self.model_combo.blockSignals(True)
        self.model_combo.clear()
        if ws is None or not ws.models:
            self.model_combo.addItem("(no models)" if ws is not None else "(no workspace)", None)
            self.model_combo.setEnabled(False)
        else:
            self.model_combo.setEnabled(True)
            for m in ws.models:
                self.model_combo.addItem(f"{m.name}  [{m.kind}]", m.name)
                self.model_combo.setItemData(self.model_combo.count() - 1,
                                             f"{ws.resolve(m)}\n{m.source}".strip(), Qt.ItemDataRole.ToolTipRole)
            idx = self.model_combo.findData(ws.current_model)
            self.model_combo.setCurrentIndex(max(idx, 0))
            if idx < 0:
                ws.current_model = self.model_combo.currentData()
        self.model_combo.blockSignals(False)
        self._update_status_model()
        self._update_search_items()

    def refresh_targets(self) -> None:
        extra = [self.workspace.targets_dir] if self.workspace is not None else []
        self.target_combo.blockSignals(True)
        self.target_combo.clear()
        for t in target_ids(extra):
            self.target_combo.addItem(t, t)
        self.target_combo.blockSignals(False)
        self._select_target(self.target)
        self._update_search_items()

    def _select_target(self, target: str | None) -> None:
        idx = self.target_combo.findData(target)
        self.target_combo.blockSignals(True)
        self.target_combo.setCurrentIndex(idx if idx >= 0 else 0)
        self.target_combo.blockSignals(False)
        self.target = self.target_combo.currentData()

    def _ws_combo_activated(self, index: int) -> None:
        data = self.ws_combo.itemData(index)
        if data == _OPEN_OTHER:
            self.refresh_workspaces()
            self.open_workspace_dialog()
        elif data and (self.workspace is None or str(self.workspace.root) != data):
            self.open_workspace(data)

    def _model_combo_changed(self, _index: int) -> None:
        name = self.model_combo.currentData()
        if self.workspace is not None and name:
            self.workspace.current_model = name
            self.workspace.save()
        self._update_status_model()
        self._propagate()

    def _target_combo_changed(self, _index: int) -> None:
        self.target = self.target_combo.currentData()
        if self.workspace is not None:
            self.workspace.current_target = self.target
            self.workspace.save()
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
                self.add_problem(Problem("error", f"{lp.title} page failed to update: {exc}", source=lp.title,
                                         page=lp.page_id))

    # -- pages -----------------------------------------------------------------------------------------
    def page(self, page_id: str) -> Page | None:
        return next((lp.page for lp in self.pages if lp.page_id == page_id and lp.page is not None), None)

    def page_index(self, page_id: str) -> int:
        return next((i for i, lp in enumerate(self.pages) if lp.page_id == page_id), -1)

    def current_widget(self) -> QWidget | None:
        """The page shown (or its BrokenPage), without the scroll area the window may hold it in."""
        area = self.stack.currentWidget()
        return area.widget() if isinstance(area, QScrollArea) else area

    def current_page(self) -> Page | None:
        w = self.current_widget()
        return w if isinstance(w, Page) else None

    def go_to_index(self, index: int) -> None:
        if 0 <= index < self.sidebar.count():
            self.sidebar.setCurrentRow(index)

    def go_to_page(self, page_id: str) -> bool:
        idx = self.page_index(page_id)
        if idx < 0:
            return False
        self.sidebar.setCurrentRow(idx)
        return True

    def open_page(self, page_id: str, payload: object = None) -> bool:
        """Switch to ``page_id`` and hand it ``payload``; says so in the status bar when it is not installed."""
        if not self.go_to_page(page_id):
            self.flash(f"the {page_id} page is not available in this installation", 6000)
            self.log_panel.append_log(f"cannot open page '{page_id}' (not installed); payload: {payload}",
                                      source="studio")
            return False
        page = self.page(page_id)
        if page is not None and payload is not None:
            try:
                page.open_payload(payload)
            except Exception as exc:
                self.add_problem(Problem("error", f"{page.title} could not open {payload}: {exc}",
                                         source=page.title, page=page_id))
        return True

    def open_problem(self, problem: Problem) -> None:
        """Show the page and the node, field or file the problem names; never change what a form holds."""
        if not problem.page or not self.go_to_page(problem.page):
            return
        page = self.page(problem.page)
        if page is not None:
            try:
                page.focus_problem(problem)
            except Exception as exc:
                self.log_panel.append_log(f"{page.title} could not show the problem: {exc}", source="studio")

    def _page_selected(self, row: int) -> None:
        if 0 <= row < self.stack.count():
            self.stack.setCurrentIndex(row)

    def cancel_current_job(self) -> bool:
        """Esc: cancel the running job(s) started by the page on screen."""
        page = self.current_page()
        if page is None:
            return False
        cancelled = False
        for h in self.jobs.running():
            if h.kind == page.page_id or h.kind.startswith(page.page_id + ":"):
                self.jobs.cancel(h.id)
                cancelled = True
        if cancelled:
            self.flash(f"cancelling {page.title} job…", 4000)
        return cancelled

    # -- search ----------------------------------------------------------------------------------------
    def _update_search_items(self) -> None:
        items = [f"Page: {lp.title}" for lp in self.pages]
        if self.workspace is not None:
            items += [f"Model: {m.name}" for m in self.workspace.models]
        items += [f"Target: {self.target_combo.itemData(i)}" for i in range(self.target_combo.count())]
        self._search_model.setStringList(items)

    def focus_search(self) -> None:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    def run_search(self, text: str) -> bool:
        """Jump to the page, model or target the text names (a completion or a unique substring)."""
        text = text.strip()
        if not text:
            return False
        kind, _, value = text.partition(": ")
        if not value:
            q = text.lower()
            hits = [s for s in self._search_model.stringList() if q in s.lower()]
            exact = [s for s in hits if s.split(": ", 1)[1].lower() == q]
            pick = exact[0] if exact else hits[0] if len(hits) == 1 else None
            if pick is None:
                self.flash(f"no unique match for '{text}'" if hits else f"nothing named '{text}'",
                                             4000)
                return False
            kind, _, value = pick.partition(": ")
        ok = False
        if kind == "Page":
            idx = next((i for i, lp in enumerate(self.pages) if lp.title == value), -1)
            ok = idx >= 0
            self.go_to_index(idx)
        elif kind == "Model":
            ok = self.model_combo.findData(value) >= 0
            self.select_model(value)
        elif kind == "Target":
            ok = self.target_combo.findData(value) >= 0
            self.select_target(value)
        if ok:
            self.search.clear()
        return ok

    # -- jobs, problems, status ------------------------------------------------------------------------
    def _job_finished(self, h: JobHandle) -> None:
        result_status = getattr(h.result, "status", None) if h.status == "done" else None
        text = f"{h.title}: {result_status or h.status}"
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
            self.flash(problem.message, 6000)

    def report_error(self, exc: StudioError, source: str) -> None:
        self.add_problem(Problem("error", exc.message, source=source, location=exc.offending, hint=exc.hint))
        self.log_panel.append_log(exc.render(), source=source)

    def set_connection_state(self, name: str, state: str) -> None:
        """A page's poll result (``sig_connection``): it becomes the device's state in the shared state."""
        self.state.set_device_state(name, state)

    def _state_changed(self, topic: str, _payload: object) -> None:
        if topic in ("workspace", "devices", "device_state"):
            self._update_devices_label()
        elif topic == "model":  # a page added or chose a model through the state: the toolbar and pages follow
            self.refresh_models()
            self._propagate()
        elif topic == "target" and self.workspace is not None:
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

    def _about(self) -> None:
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
            self.log_panel.append_log(f"could not save settings: {exc}", source="settings")

    # -- drag and drop ---------------------------------------------------------------------------------
    @staticmethod
    def _droppable(event: QDragEnterEvent | QDropEvent) -> list[Path]:
        md = event.mimeData()
        if not md.hasUrls():
            return []
        paths = [Path(u.toLocalFile()) for u in md.urls() if u.isLocalFile()]
        return [p for p in paths if p.is_dir() or p.suffix.lower() == ".onnx"]

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 (Qt override)
        if self._droppable(event):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:  # noqa: N802,ANN001
        event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        paths = self._droppable(event)
        if paths:
            event.acceptProposedAction()
            self.add_model_paths(paths)
        else:
            event.ignore()

    # -- window state ----------------------------------------------------------------------------------
    def save_window_state(self) -> None:
        s = qsettings()
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState())
        s.setValue("window/page", self.pages[self.sidebar.currentRow()].page_id
                   if 0 <= self.sidebar.currentRow() < len(self.pages) else "")
        s.sync()

    def restore_window_state(self) -> bool:
        s = qsettings()
        geo = s.value("window/geometry")
        restored = False
        if geo is not None:
            restored = self.restoreGeometry(geo)
        state = s.value("window/state")
        if state is not None:
            self.restoreState(state)
        page = s.value("window/page")
        if isinstance(page, str) and page:
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
            self.flash(f"cancelling {len(running)} job(s)…")
            QApplication.processEvents()
        for lp in self.pages:  # pages stop what they own (local servers, pollers) before the jobs are cancelled
            if lp.page is not None:
                try:
                    lp.page.shutdown()
                except Exception as exc:  # one page failing to shut down must not keep the others running
                    self.log_panel.append_log(f"{lp.title} page shutdown failed: {exc}", source="studio")
        self.jobs.shutdown()
        super().closeEvent(event)

