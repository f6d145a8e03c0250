"""Inspector page: an ONNX model against every target at once, on a graph that highlights what will not run.

Loading and inspection run as JobRunner jobs (graph first, so the view appears while the targets are
checked); the page only renders the InspectionReport from studio.inspect and starts studio.optimize fixes.
The native graph view and the Netron tab share one selection with the findings table and the node panel.
Profile runs studio.profiling (ONNX Runtime's per-node profiler) as a job: its times colour both views as heat,
fill the Profile tab (top-N nodes linked to the graph, per-module times, before/after a fix) and are saved
with the workspace, so reopening the model shows them again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt, QTimer
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableView,
    QTabWidget,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.errors import InputError, JobCancelled, Problem, StudioError
from studio.gui.file_dialogs import start_dir
from studio.gui.graph import palette
from studio.gui.graph.model import GraphData
from studio.gui.graph.view import GraphView
from studio.gui.inspector import details
from studio.gui.inspector.findings import FindingsModel
from studio.gui.inspector.profile_panel import (
    ProfilePanel,
    ProfileShapesDialog,
    fmt_ms,
    graph_names,
    heat_legend_pixmap,
    input_dims,
    load_saved,
    node_time_html,
)
from studio.gui.jobs_qt import JobRunner
from studio.gui.page import Page
from studio.gui.targets import DEFAULT_TARGETS
from studio.gui.widgets.flow import ElidedLabel, FlowLayout

SUMMARY_LABEL = {"pass": "PASS", "risky": "RISKY", "fail": "FAIL", "unknown": "UNKNOWN"}
PROFILE_JOB = "inspect:profile"


def resolve_model_file(path: Path | str) -> Path:
    """An .onnx file, or an export folder holding one (model.onnx first); InputError otherwise."""
    p = Path(path).expanduser()
    if p.is_dir():
        cands = [p / "model.onnx"] + sorted(p.glob("*.onnx")) + sorted(p.glob("onnx/*.onnx"))
        for c in cands:
            if c.is_file():
                return c
        raise InputError(f"no .onnx file in folder {p}", offending=str(p),
                         hint="choose the exported .onnx file, or export the model first")
    if not p.is_file():
        raise InputError(f"model file not found: {p}", offending=str(p), hint="check the path")
    return p


def load_graph_job(path: Path, job: Any) -> GraphData:
    """Worker side: read the graph without external weights, infer shapes for the labels, build the view data."""
    import onnx

    from studio.gui.graph.model import graph_from_onnx

    job.set_status(f"reading {path.name}")
    job.set_progress(5, force=True)
    try:
        proto = onnx.load(str(path), load_external_data=False)
    except Exception as exc:  # onnx raises DecodeError, OSError, ...: all mean "not a readable model"
        raise InputError(f"cannot read {path.name} as an ONNX model: {type(exc).__name__}: {exc}"[:400],
                         offending=str(path), hint="is the file complete and really an .onnx model?") from exc
    job.check_cancelled()
    job.set_status("inferring shapes for the graph labels")
    job.set_progress(35, force=True)
    try:
        proto = onnx.shape_inference.infer_shapes(proto, strict_mode=False)
    except Exception as exc:  # labels then show only declared shapes; the report says why inference failed
        job.log(f"shape inference failed ({type(exc).__name__}); showing declared shapes only")
    job.check_cancelled()
    job.set_status("building the graph")
    job.set_progress(70, force=True)
    graph = graph_from_onnx(proto)
    job.set_progress(100, force=True)
    return graph


class _TargetChip(QToolButton):
    """One target in the summary strip: id, overall verdict and counts; click to switch to it."""

    def __init__(self, target: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.target = target
        self.setCheckable(True)
        self.setAutoRaise(False)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.setMinimumWidth(122)
        self.set_summary(None)

    def set_summary(self, summary: Any, theme: str = "light") -> None:
        if summary is None:
            self.setText(f"{self.target}\n—")
            self._style("none", theme)
            self.setToolTip(f"{self.target}: not inspected yet")
            return
        c = summary.counts
        if summary.verdict == "fail":
            line = f"FAIL · {c.get('unsupported', 0)} unsupp."
        elif summary.verdict == "risky":
            line = f"RISKY · {c.get('risky', 0)} risky"
        elif summary.verdict == "unknown":
            line = "UNKNOWN · no op list" if c.get("unknown", 0) else "UNKNOWN"
        else:
            line = "PASS"
        self.setText(f"{self.target}\n{line}")
        self._style(details.SUMMARY_TO_VERDICT.get(summary.verdict, "unknown"), theme)
        self.setToolTip(f"{summary.name}\n{summary.source}\nnodes: " +
                        ", ".join(f"{k} {v}" for k, v in c.items()))

    def _style(self, verdict: str, theme: str) -> None:
        solid, fill, border = palette.verdict_colors(theme)[verdict]
        text = palette.TEXT[theme][0]
        self.setStyleSheet(
            f"QToolButton {{ background: {fill}; color: {text}; border: 1px solid {fill};"
            f" border-left: 4px solid {solid}; border-radius: 5px; padding: 3px 8px; text-align: left;"
            f" font-size: 9pt; }}"
            f" QToolButton:checked {{ border: 2px solid {palette.SELECTION[theme]};"
            f" border-left: 4px solid {solid}; }}"
            f" QToolButton:hover {{ border-color: {border}; }}")


class InspectPage(Page):
    page_id = "inspect"
    title = "Inspect"
    scrolls_itself = True  # splitters share the height; the page fits 1280x720 as it is
    icon_name = "inspect"

    def __init__(self, jobs: JobRunner | None = None, parent: QWidget | None = None) -> None:
        super().__init__(jobs, parent)
        self.model_path: Path | None = None
        self.graph: GraphData | None = None
        self.report: Any = None  # studio.inspect.report.InspectionReport
        self.last_fix: Any = None  # studio.gui.inspector.fixes.FixOutcome of the last fix
        self.current_target: str = DEFAULT_TARGETS[0]
        self.selected_node: str | None = None
        self._pending_node: str | None = None
        self._syncing = False
        self._theme = _theme()
        self._heat: dict[str, float] | None = None
        self.profile: Any = None  # studio.profiling.report.ProfileReport of the model shown
        self.profile_comparison: Any = None  # ProfileComparison of the last "Compare with original"
        self._profile_names: dict[str, str] = {}  # profile node key -> graph node name
        self._profile_keys: dict[str, str] = {}  # graph node name -> profile node key
        self._profiles: dict[Path, Any] = {}  # resolved model path -> its latest profile (this session)
        self._profile_stale = False
        self._profile_saved_to: Path | None = None
        self.profile_runs = 20
        self._build()

    # ---- layout ----------------------------------------------------------------------------------------
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(16, 12, 16, 10)
        outer.setSpacing(8)

        head = QHBoxLayout()
        head.setSpacing(8)
        title = QLabel("Inspector")
        title.setProperty("role", "heading")
        head.addWidget(title)
        self.model_label = ElidedLabel("no model", min_width=160)
        self.model_label.setProperty("role", "muted")
        head.addWidget(self.model_label, 1)
        self.status_label = ElidedLabel("", min_width=90, mode=Qt.TextElideMode.ElideRight)
        self.status_label.setProperty("role", "muted")
        head.addWidget(self.status_label, 1)
        actions = FlowLayout(spacing=6)
        self.open_button = QPushButton("Open model…")
        self.open_button.clicked.connect(self._choose_model)
        actions.addWidget(self.open_button)
        self.reinspect_button = QPushButton("Re-inspect")
        self.reinspect_button.setEnabled(False)
        self.reinspect_button.clicked.connect(lambda: self.inspect_current())
        actions.addWidget(self.reinspect_button)
        self.profile_action = QPushButton("Profile")
        self.profile_action.setToolTip("per-node times with ONNX Runtime's profiler: heat colours on the graph, "
                                       "the slowest nodes in the Profile tab (saved with the workspace)")
        self.profile_action.setEnabled(False)
        self.profile_action.clicked.connect(lambda: self.profile_current())
        actions.addWidget(self.profile_action)
        self.compile_button = QPushButton("Compile")
        self.compile_button.setToolTip("open this model on the Compile page, for the board of the current target")
        self.compile_button.setEnabled(False)
        self.compile_button.clicked.connect(self.open_in_compile)
        actions.addWidget(self.compile_button)
        self.serve_button = QPushButton("Serve on Triton")
        self.serve_button.setToolTip("build a Triton model repository from this model on the Triton page")
        self.serve_button.setEnabled(False)
        self.serve_button.clicked.connect(self.open_in_triton)
        actions.addWidget(self.serve_button)
        target_label = QLabel("Target")
        self.target_combo = QComboBox()
        self.target_combo.setMinimumWidth(130)
        for t in DEFAULT_TARGETS:
            self.target_combo.addItem(t, t)
        self.target_combo.currentIndexChanged.connect(lambda _i: self.set_target(self.target_combo.currentData()))
        target_box = QWidget()
        tb = QHBoxLayout(target_box)
        tb.setContentsMargins(8, 0, 0, 0)
        tb.addWidget(target_label)
        tb.addWidget(self.target_combo)
        actions.addWidget(target_box)
        head.addLayout(actions)
        outer.addLayout(head)

        self.error_label = QLabel("")
        self.error_label.setProperty("role", "error")
        self.error_label.setWordWrap(True)
        self.error_label.hide()
        outer.addWidget(self.error_label)

        strip_host = QWidget()
        self.strip = QHBoxLayout(strip_host)
        self.strip.setContentsMargins(0, 0, 0, 0)
        self.strip.setSpacing(6)
        self.chips: dict[str, _TargetChip] = {}
        for t in DEFAULT_TARGETS:
            self._add_chip(t)
        self.strip.addStretch(1)
        scroller = QScrollArea()
        scroller.setWidget(strip_host)
        scroller.setWidgetResizable(True)
        scroller.setFrameShape(QFrame.Shape.NoFrame)
        scroller.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroller.setFixedHeight(50)
        outer.addWidget(scroller)

        # graph views | side panels
        self.view = GraphView(theme=self._theme)
        self.view.sig_node_selected.connect(self._on_graph_selected)
        self.view.sig_layout_ready.connect(self._on_layout_ready)
        graph_tab = QWidget()
        gl = QVBoxLayout(graph_tab)
        gl.setContentsMargins(0, 0, 0, 0)
        gl.setSpacing(0)
        gl.addWidget(self._graph_toolbar())
        gl.addWidget(self.view, 1)
        gl.addWidget(self._legend())
        self.views = QTabWidget()
        self.views.setDocumentMode(True)
        self.views.addTab(graph_tab, "Graph")
        self.netron_host = QWidget()
        QVBoxLayout(self.netron_host).setContentsMargins(0, 0, 0, 0)
        self.netron: Any = None  # studio.gui.inspector.netron_view.NetronView, created on first show
        self.views.addTab(self.netron_host, "Netron")
        self.views.currentChanged.connect(self._on_view_tab)

        self.side = QTabWidget()
        self.side.setDocumentMode(True)
        self.node_panel = self._browser("Select a node in the graph or a finding to see its details.")
        self.stats_panel = self._browser("Statistics appear after inspection.")
        self.dynamic_panel = self._browser("Dynamic dims appear after inspection.")
        self.changes_panel = self._browser("Run a fix to see what it changes.")
        self.profile_panel = ProfilePanel(theme=self._theme)
        self.profile_panel.sig_profile_requested.connect(lambda: self.profile_current())
        self.profile_panel.sig_compare_requested.connect(self.compare_with_original)
        self.profile_panel.sig_node_chosen.connect(self._on_profile_node)
        self.profile_panel.sig_nodes_highlighted.connect(self._on_profile_module)
        self.side.addTab(self.node_panel, "Node")
        self.side.addTab(self.stats_panel, "Statistics")
        self.side.addTab(self.dynamic_panel, "Dynamic")
        self.side.addTab(self.changes_panel, "Changes")
        self.side.addTab(self.profile_panel, "Profile")
        self.side.setMinimumWidth(240)
        self.side.currentChanged.connect(self._on_side_tab)

        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.views)
        top.addWidget(self.side)
        top.setStretchFactor(0, 3)
        top.setStretchFactor(1, 1)
        top.setSizes([900, 380])
        self.top_splitter = top

        bottom = QWidget()
        bl = QVBoxLayout(bottom)
        bl.setContentsMargins(0, 6, 0, 0)
        bl.setSpacing(4)
        fh = FlowLayout(spacing=6)
        self.findings_label = QLabel("Findings")
        self.findings_label.setProperty("role", "subheading")
        fh.addWidget(self.findings_label)
        self.all_targets_box = QCheckBox("all targets")
        self.all_targets_box.toggled.connect(lambda _c: self._fill_findings())
        fh.addWidget(self.all_targets_box)
        fh.addWidget(QLabel("   Fix:"))
        self.fix_buttons: dict[str, QPushButton] = {}
        for kind, label, tip in (("static", "Static dims…", "fix chosen dims (batch=1, sequence=64) and "
                                  "re-infer shapes"),
                                 ("simplify", "Simplify", "fold constants and simplify with onnxslim"),
                                 ("fp16", "FP16", "convert weights and compute to float16 (parity checked)"),
                                 ("int8", "INT8", "dynamic INT8 quantization (parity checked)")):
            b = QPushButton(label)
            b.setToolTip(tip)
            b.setEnabled(False)
            b.clicked.connect(lambda _c=False, k=kind: self.request_fix(k))
            self.fix_buttons[kind] = b
            fh.addWidget(b)
        bl.addLayout(fh)
        self.findings_model = FindingsModel(self)
        self.table = QTableView()
        self.table.setModel(self.findings_model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.table.setShowGrid(False)
        hh = self.table.horizontalHeader()
        hh.setStretchLastSection(True)
        for col, width in enumerate((92, 96, 150, 190, 110, 430)):
            hh.resizeSection(col, width)
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.selectionModel().selectionChanged.connect(self._on_finding_selected)
        bl.addWidget(self.table, 1)

        main = QSplitter(Qt.Orientation.Vertical)
        main.addWidget(top)
        main.addWidget(bottom)
        main.setStretchFactor(0, 3)
        main.setStretchFactor(1, 1)
        main.setSizes([620, 240])
        outer.addWidget(main, 1)

        QShortcut(QKeySequence.StandardKey.Find, self, activated=lambda: self.search_edit.setFocus())

    def _graph_toolbar(self) -> QWidget:
        bar = QWidget()
        bar.setObjectName("graphToolbar")
        h = QHBoxLayout(bar)
        h.setContentsMargins(6, 6, 6, 6)
        h.setSpacing(6)
        self.search_edit = QLineEdit()
        self.search_edit.setPlaceholderText("Search node, op type or tensor  (Enter: next match)")
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.returnPressed.connect(self._search_enter)
        self.search_edit.textChanged.connect(lambda _t: self._search_timer.start())
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(250)
        self._search_timer.timeout.connect(lambda: self.search(self.search_edit.text()))
        h.addWidget(self.search_edit, 1)
        self.match_label = QLabel("")
        self.match_label.setProperty("role", "muted")
        self.match_label.setMinimumWidth(70)
        h.addWidget(self.match_label)
        prev_b, next_b = QToolButton(), QToolButton()
        prev_b.setText("▲")
        prev_b.setToolTip("Previous match (Shift+Enter)")
        next_b.setText("▼")
        next_b.setToolTip("Next match (Enter)")
        prev_b.clicked.connect(lambda: self._step_match(-1))
        next_b.clicked.connect(lambda: self._step_match(1))
        h.addWidget(prev_b)
        h.addWidget(next_b)
        h.addSpacing(10)
        self.color_mode = QComboBox()
        self.color_mode.addItem("Colour: verdict", "verdict")
        self.color_mode.addItem("Colour: heat", "heat")
        self.color_mode.addItem("Colour: time (profile)", "profile")
        self.color_mode.model().item(1).setEnabled(False)
        self.color_mode.model().item(2).setEnabled(False)
        self.color_mode.setToolTip("Verdicts for the current target, or heat by a per-node measure: the profiled "
                                   "time of each node (run Profile first)")
        self.color_mode.currentIndexChanged.connect(lambda _i: self._apply_colour_mode())
        h.addWidget(self.color_mode)
        fit = QToolButton()
        fit.setText("Fit")
        fit.setToolTip("Show the whole graph (F)")
        fit.clicked.connect(self.view.fit_all)
        zoom_in, zoom_out = QToolButton(), QToolButton()
        zoom_in.setText("+")
        zoom_out.setText("−")
        zoom_in.clicked.connect(lambda: self.view.zoom_by(1.25))
        zoom_out.clicked.connect(lambda: self.view.zoom_by(0.8))
        for b in (zoom_out, zoom_in, fit):
            h.addWidget(b)
        return bar

    def _legend(self) -> QWidget:
        w = QWidget()
        h = FlowLayout(w, spacing=14, margins=4)
        self.legend_labels: dict[str, QLabel] = {}
        colors = palette.verdict_colors(self._theme)
        for v in ("supported", "risky", "unsupported", "unknown"):
            lab = QLabel()
            lab.setTextFormat(Qt.TextFormat.RichText)
            self.legend_labels[v] = lab
            lab.setText(f"<span style='color:{colors[v][0]}; font-size:12pt'>■</span> {v}")
            h.addWidget(lab)
        dyn = QLabel(f"<span style='color:{palette.DYNAMIC[self._theme]}; font-size:12pt'>━</span> dynamic tensor"
                     f"&nbsp;&nbsp;<span style='color:{palette.DYNAMIC[self._theme]}'>●</span> produces one")
        h.addWidget(dyn)
        # heat scale (shown instead of the verdict counts while colouring by time)
        self.heat_legend = QWidget()
        hl = QHBoxLayout(self.heat_legend)
        hl.setContentsMargins(0, 0, 0, 0)
        hl.setSpacing(6)
        self.heat_title = QLabel("time per node")
        hl.addWidget(self.heat_title)
        self.heat_min_label = QLabel("0 ms")
        self.heat_min_label.setProperty("role", "muted")
        hl.addWidget(self.heat_min_label)
        bar = QLabel()
        bar.setPixmap(heat_legend_pixmap(120, 10))
        hl.addWidget(bar)
        self.heat_max_label = QLabel("")
        self.heat_max_label.setProperty("role", "muted")
        hl.addWidget(self.heat_max_label)
        none = palette.verdict_colors(self._theme)["none"][0]
        self.heat_none_label = QLabel(f"<span style='color:{none}; font-size:12pt'>■</span> no kernel time")
        self.heat_none_label.setToolTip("fused, constant-folded or removed by ONNX Runtime's optimizer: a fused "
                                        "node's time is counted on the node it was fused into")
        hl.addWidget(self.heat_none_label)
        self.heat_legend.hide()
        h.addWidget(self.heat_legend)
        self._verdict_legend = list(self.legend_labels.values()) + [dyn]
        self.graph_info = QLabel("")
        self.graph_info.setProperty("role", "muted")
        h.addWidget(self.graph_info)
        return w

    def _browser(self, placeholder: str) -> QTextBrowser:
        b = QTextBrowser()
        b.setOpenLinks(False)
        b.setFrameShape(QFrame.Shape.NoFrame)
        b.setPlaceholderText(placeholder)
        b.document().setDocumentMargin(10)
        return b

    def _add_chip(self, target: str) -> None:
        chip = _TargetChip(target)
        chip.clicked.connect(lambda _c=False, t=target: self.set_target(t))
        self.chips[target] = chip
        self.strip.insertWidget(len(self.chips) - 1, chip)

    # ---- context from the window -----------------------------------------------------------------------
    def context_changed(self) -> None:
        if self.target and self.target != self.current_target:
            self.set_target(self.target)
        if self.workspace is not None and self.model_name:
            entry = self.workspace.model(self.model_name)
            if entry is not None and entry.kind == "onnx":
                try:
                    path = resolve_model_file(self.workspace.resolve(entry))
                except StudioError:
                    return
                if self.model_path is None or path.resolve() != self.model_path.resolve():
                    self.open_model(path)

    def open_payload(self, payload: object) -> None:
        """A model path (export wizard's "Open in inspector") or {"model": path, "node": name}."""
        node: str | None = None
        model: Any = payload
        if isinstance(payload, dict):
            model = payload.get("model") or payload.get("path")
            node = payload.get("node")
            if payload.get("target"):
                self.set_target(str(payload["target"]))
        if model is None and node:
            self.focus_node(node)
            return
        if model is None:
            return
        try:
            path = resolve_model_file(model)
        except StudioError as err:
            self._show_error(err)
            return
        if self.model_path is not None and path.resolve() == self.model_path.resolve() and self.graph is not None:
            if node:
                self.focus_node(node)
            return
        self._pending_node = node
        self.open_model(path)

    def open_in_compile(self) -> None:
        """One click to the Compile page with this model and the current target (mapped to a board there)."""
        if self.model_path is not None:
            self.sig_open_page.emit("compile", {"model": str(self.model_path), "target": self.current_target})

    def open_in_triton(self) -> None:
        if self.model_path is not None:
            self.sig_open_page.emit("triton", str(self.model_path))

    # ---- loading and inspecting ------------------------------------------------------------------------
    def _choose_model(self) -> None:
        start = start_dir(self.model_path, self.workspace, "models")
        path, _ = QFileDialog.getOpenFileName(self, "Open ONNX model", start, "ONNX models (*.onnx);;All files (*)")
        if path:
            self.open_model(Path(path))

    def open_model(self, path: Path | str) -> None:
        """Show ``path``'s graph and inspect it against every target (two jobs, neither on the GUI thread)."""
        try:
            p = resolve_model_file(path)
        except StudioError as err:
            self._show_error(err)
            return
        self.model_path = p
        self.graph = None
        self.report = None
        self.selected_node = None
        self._clear_error()
        self.model_label.setText(str(p))
        self.model_label.setToolTip(str(p))
        self.view.clear_state()
        self.view.set_graph(None)
        self.findings_model.set_findings([], self._theme)
        self.node_panel.clear()
        self.stats_panel.clear()
        self.dynamic_panel.clear()
        for chip in self.chips.values():
            chip.set_summary(None, self._theme)
        self.reinspect_button.setEnabled(True)
        self.profile_action.setEnabled(True)
        self.profile_panel.profile_button.setEnabled(True)
        self._load_profile_for(p)
        self.compile_button.setEnabled(True)
        self.serve_button.setEnabled(True)
        self.jobs.start("inspect.graph", f"load graph {p.name}", lambda job: load_graph_job(p, job),
                        on_done=self._on_graph_loaded, on_failed=self._on_job_failed)
        self.inspect_current()
        if self.netron is not None:
            self.netron.load(p)

    def _profile_dirs(self) -> list[Path] | None:
        if self.workspace is not None and self.workspace.targets_dir.is_dir():
            return [self.workspace.targets_dir]
        return None

    def inspect_current(self) -> None:
        if self.model_path is None:
            return
        from studio.inspect.api import inspect_model

        path = self.model_path
        dirs = self._profile_dirs()
        self.status_label.setText("inspecting…")
        self.jobs.start("inspect.report", f"inspect {path.name}",
                        lambda job: inspect_model(path, None, profile_dirs=dirs, job=job),
                        on_done=self._on_report, on_failed=self._on_job_failed)

    def _on_graph_loaded(self, graph: GraphData) -> None:
        self.graph = graph
        self.view.set_graph(graph)
        if self.profile is not None:  # profile keys spell repeated names differently: map them now
            self._show_profile(self.profile, stale=self._profile_stale, saved_to=self._profile_saved_to)
        self.graph_info.setText(f"{sum(1 for n in graph.nodes if n.kind == 'op'):,} nodes · "
                                f"{len(graph.edges):,} edges")

    def _on_layout_ready(self, geometry: Any) -> None:
        lay = geometry.layout
        self.graph_info.setText(self.graph_info.text().split("  ·  layout")[0] +
                                f"  ·  layout {lay.seconds:.2f} s ({lay.engine})")
        if self._pending_node:
            node, self._pending_node = self._pending_node, None
            self.focus_node(node)
        elif self.selected_node:
            self.view.select(self.selected_node, center=True, animate=False)

    def _on_report(self, report: Any) -> None:
        self.report = report
        self.status_label.setText(f"inspected in {report.timings.get('total', 0):.2f} s")
        ids = list(report.targets)
        for t in ids:
            if t not in self.chips:
                self._add_chip(t)
            if self.target_combo.findData(t) < 0:
                self.target_combo.addItem(t, t)
        for t, chip in self.chips.items():
            chip.set_summary(report.targets.get(t), self._theme)
        self.view.set_dynamic(set(report.dynamic.tensors))
        self.stats_panel.setHtml(details.stats_html(report.stats, self.graph, report, self._theme))
        self.dynamic_panel.setHtml(details.dynamic_html(report, self._theme))
        for b in self.fix_buttons.values():
            b.setEnabled(True)
        self._apply_target()
        if not self.selected_node and self.side.currentWidget() is not self.changes_panel:
            self.side.setCurrentWidget(self.stats_panel)
        if self.netron is not None:
            self.netron.set_verdicts(self._verdicts_for_netron(), set(report.dynamic.tensors))

    def _on_job_failed(self, err: StudioError) -> None:
        if isinstance(err, JobCancelled):
            return
        self.status_label.setText("")
        self._show_error(err)

    def _show_error(self, err: StudioError) -> None:
        text = err.message
        if err.offending and err.offending not in text:
            text = f"{err.offending}: {text}"
        text += f" — {err.hint}" if err.hint else ""
        self.error_label.setText(text)
        self.error_label.show()
        self.sig_problem.emit(Problem(severity="error", message=err.message, source="inspector", page=self.page_id,
                                      location=err.offending, hint=err.hint))

    def _clear_error(self) -> None:
        self.error_label.hide()
        self.error_label.clear()

    # ---- target ----------------------------------------------------------------------------------------
    def set_target(self, target: str | None) -> None:
        if not target:
            return
        if target not in self.chips:
            self._add_chip(target)
        if self.target_combo.findData(target) < 0:
            self.target_combo.addItem(target, target)
        self.current_target = target
        self.target_combo.blockSignals(True)
        self.target_combo.setCurrentIndex(self.target_combo.findData(target))
        self.target_combo.blockSignals(False)
        for t, chip in self.chips.items():
            chip.setChecked(t == target)
        self._apply_target()

    def _apply_target(self) -> None:
        rep = self.report
        if rep is None:
            self._fill_findings()
            return
        verdicts = rep.node_verdicts.get(self.current_target, {})
        self.view.set_verdicts(verdicts)
        counts = rep.targets[self.current_target].counts if self.current_target in rep.targets else {}
        colors = palette.verdict_colors(self._theme)
        for v, lab in self.legend_labels.items():
            lab.setText(f"<span style='color:{colors[v][0]}; font-size:12pt'>■</span> {v} "
                        f"<b>{counts.get(v, 0):,}</b>")
        self._fill_findings()
        if self.selected_node and self.graph is not None:
            self._show_node(self.selected_node)
        if self.netron is not None:
            self.netron.set_verdicts(self._verdicts_for_netron(), set(rep.dynamic.tensors))

    def _verdicts_for_netron(self) -> dict[str, str]:
        if self.report is None:
            return {}
        return dict(self.report.node_verdicts.get(self.current_target, {}))

    # ---- findings <-> graph ----------------------------------------------------------------------------
    def _fill_findings(self) -> None:
        rep = self.report
        if rep is None:
            self.findings_model.set_findings([], self._theme)
            self.findings_label.setText("Findings")
            return
        found = list(rep.findings) if self.all_targets_box.isChecked() else rep.findings_for(self.current_target)
        self.findings_model.set_findings(found, self._theme)
        summary = rep.targets.get(self.current_target)
        where = "all targets" if self.all_targets_box.isChecked() else self.current_target
        verdict = f" — {SUMMARY_LABEL.get(summary.verdict, '')}" if summary and not \
            self.all_targets_box.isChecked() else ""
        self.findings_label.setText(f"Findings for {where} ({len(found):,}){verdict}")
        if self.selected_node:
            self._select_rows_for(self.selected_node)

    def _on_finding_selected(self, _sel: QItemSelection, _desel: QItemSelection) -> None:
        if self._syncing:
            return
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return
        f = self.findings_model.finding(rows[0].row())
        node = f.node
        if not node and f.tensor and self.graph is not None:
            src = self.graph.producer(f.tensor)
            node = self.graph.nodes[src].name if src is not None else None
        if node:
            self._syncing = True
            try:
                self.view.highlight(f.nodes if len(f.nodes) > 1 else [])
                self.view.select(node, center=True)
                self._show_node(node)
                if self.netron is not None:
                    self.netron.select(self._graph_name(node))
            finally:
                self._syncing = False

    def _on_graph_selected(self, name: str) -> None:
        if self._syncing:
            return
        self._syncing = True
        try:
            if not name:
                self.selected_node = None
                self.table.clearSelection()
                self.profile_panel.select_node(None)
                return
            self._show_node(name)
            self._select_rows_for(name)
            if self.netron is not None:
                self.netron.select(name)
        finally:
            self._syncing = False

    def _node_key(self, name: str) -> str:
        """The report's key for a node shown here (main-graph keys are names)."""
        return name

    def _graph_name(self, key: str) -> str:
        if self.graph is None:
            return key
        idx = self.graph.index_of(key)
        return self.graph.nodes[idx].name if idx is not None else key

    def _select_rows_for(self, name: str) -> None:
        rows = self.findings_model.rows_for_node(self._node_key(name))
        if self.graph is not None:  # a node owning a nested body also answers for the nodes inside it
            idx = self.graph.index_of(name)
            if idx is not None:
                for nested in self.graph.nodes[idx].subgraph_nodes:
                    rows += self.findings_model.rows_for_node(nested)
        was = self._syncing
        self._syncing = True
        try:
            sm = self.table.selectionModel()
            sm.clearSelection()
            sel = QItemSelection()
            for r in sorted(set(rows)):
                sel.select(self.findings_model.index(r, 0),
                           self.findings_model.index(r, self.findings_model.columnCount() - 1))
            if rows:
                sm.select(sel, QItemSelectionModel.SelectionFlag.Select)
                self.table.scrollTo(self.findings_model.index(min(rows), 0),
                                    QAbstractItemView.ScrollHint.PositionAtCenter)
        finally:
            self._syncing = was

    def focus_node(self, name: str) -> bool:
        """Select ``name`` everywhere (graph centred on it, its findings selected, its details shown)."""
        if self.graph is None or not self.view.ready:
            self._pending_node = name
            return False
        ok = self.view.select(name, center=True, animate=False)
        if ok:
            shown = self._graph_name(name)
            self._show_node(shown)
            self._select_rows_for(shown)
            if self.netron is not None:
                self.netron.select(shown)
        return ok

    def _show_node(self, name: str) -> None:
        if self.graph is None:
            return
        idx = self.graph.index_of(name)
        if idx is None:
            return
        node = self.graph.nodes[idx]
        self.selected_node = node.name
        timing = ""
        pkey = self._profile_keys.get(node.name)
        nt = self.profile.node(pkey) if self.profile is not None and pkey else None
        if nt is not None:
            timing = node_time_html(nt, self.profile, self._theme, self._profile_names)
        self.node_panel.setHtml(details.node_details_html(self.graph, node, self.report, self.current_target,
                                                          self._theme, node_key=self._node_key(node.name),
                                                          extra_html=timing))
        self.profile_panel.select_node(pkey)
        if self.side.currentWidget() not in (self.node_panel, self.changes_panel, self.profile_panel):
            self.side.setCurrentWidget(self.node_panel)

    # ---- search ----------------------------------------------------------------------------------------
    def search(self, text: str) -> list[str]:
        names = self.view.search(text)
        if not text.strip():
            self.match_label.setText("")
        elif not names:
            self.match_label.setText("no match")
        else:
            pos, total = self.view.match_position
            self.match_label.setText(f"{pos} / {total}")
        return names

    def _search_enter(self) -> None:
        if self._search_timer.isActive():
            self._search_timer.stop()
            self.search(self.search_edit.text())
        else:
            self._step_match(1)

    def _step_match(self, step: int) -> None:
        if self.view.next_match(step) is not None:
            pos, total = self.view.match_position
            self.match_label.setText(f"{pos} / {total}")

    # ---- colours ---------------------------------------------------------------------------------------
    def set_heat(self, values: dict[str, float] | None, label: str = "heat") -> None:
        """Hook for per-op profiling: node name -> number (e.g. ms); enables the heat colour mode."""
        self._heat = dict(values) if values else None
        item = self.color_mode.model().item(1)
        item.setEnabled(bool(values))
        self.color_mode.setItemText(1, f"Colour: {label}")
        if values:
            self.color_mode.setCurrentIndex(1)
        else:
            self.color_mode.setCurrentIndex(0)
        self._apply_colour_mode()

    def _apply_colour_mode(self) -> None:
        mode = self.color_mode.currentData()
        values: dict[str, float] | None = None
        netron_values: dict[str, float] | None = None
        if mode == "heat" and self._heat:
            values = netron_values = self._heat
        elif mode == "profile" and self.profile is not None:
            values = self._profile_heat()
            # Netron keeps its own op-category colours where nothing is painted: give every node a colour
            netron_values = {self._profile_names.get(n.key, n.key): n.share for n in self.profile.nodes}
        self.view.set_heat(values)
        if self.netron is not None:
            self.netron.set_heat(netron_values)
        profile_mode = mode == "profile" and values is not None
        for w in self._verdict_legend:
            w.setVisible(values is None)
        self.heat_legend.setVisible(values is not None)
        if values is not None:
            if profile_mode:
                top = max((n.mean_ms for n in self.profile.nodes), default=0.0)
                self.heat_title.setText("time per node")
                self.heat_min_label.setText("0 ms")
                self.heat_max_label.setText(f"{fmt_ms(top)} ms")
            else:
                top_v = max(values.values(), default=0.0)
                self.heat_title.setText(self.color_mode.currentText().replace("Colour: ", ""))
                self.heat_min_label.setText("0")
                self.heat_max_label.setText(f"{top_v:g}")
            self.heat_none_label.setVisible(profile_mode)

    def _profile_heat(self) -> dict[str, float]:
        """Graph node name -> share of node time; nodes without kernel time are left out (drawn neutral)."""
        assert self.profile is not None
        return {self._profile_names.get(n.key, n.key): n.share for n in self.profile.nodes if n.mean_ms > 0}

    # ---- Netron tab ------------------------------------------------------------------------------------
    def _on_view_tab(self, index: int) -> None:
        if self.views.widget(index) is self.netron_host:
            self.ensure_netron()

    def ensure_netron(self) -> Any:
        """Create the Netron tab on first use (QtWebEngine is heavy); shows why when it cannot start."""
        if self.netron is None:
            from studio.gui.inspector.netron_view import NetronView

            self.netron = NetronView(theme=self._theme)
            self.netron.sig_node_clicked.connect(self._on_netron_clicked)
            self.netron_host.layout().addWidget(self.netron)
            if self.model_path is not None:
                self.netron.load(self.model_path)
            if self.report is not None:
                self.netron.set_verdicts(self._verdicts_for_netron(), set(self.report.dynamic.tensors))
            self._apply_colour_mode()
        return self.netron

    def _on_netron_clicked(self, name: str) -> None:
        if self.graph is not None and self.graph.index_of(name) is not None:
            self.view.select(name, center=True)
            self._on_graph_selected(name)

    # ---- fixes -----------------------------------------------------------------------------------------
    def request_fix(self, kind: str, params: dict[str, Any] | None = None) -> None:
        """Run a studio.optimize fix as a job, then re-inspect the result and show the difference."""
        from studio.gui.inspector.fixes import StaticDimsDialog, run_fix

        if self.model_path is None or self.report is None:
            return
        if kind == "static" and params is None:
            dlg = StaticDimsDialog(self.report, self)
            if dlg.exec() != StaticDimsDialog.DialogCode.Accepted:
                return
            params = {"dims": dlg.dims()}
        src = self.model_path
        before = self.report
        self.status_label.setText(f"running fix: {kind}…")
        for b in self.fix_buttons.values():
            b.setEnabled(False)
        dirs = self._profile_dirs()
        self.jobs.start("inspect.fix", f"fix {kind}: {src.name}",
                        lambda job: run_fix(kind, src, params or {}, job, dirs),
                        on_done=lambda out, b=before: self._on_fix_done(out, b),
                        on_failed=self._on_fix_failed)

    def _on_fix_failed(self, err: StudioError) -> None:
        for b in self.fix_buttons.values():
            b.setEnabled(self.report is not None)
        self._on_job_failed(err)

    def _on_fix_done(self, outcome: Any, before: Any) -> None:
        """Show what the fix changed (optimize's parity + inspection diff), then open the fixed model."""
        self.sig_log.emit(f"fix {outcome.kind}: wrote {outcome.path}")
        self.last_fix = outcome
        main = outcome.main
        if main is not None and main.diff is not None:
            self.changes_panel.setHtml(details.changes_html(
                f"{outcome.source.name} → {outcome.path.name}", main.diff, self._theme, main.steps, main.parity))
        if self.workspace is not None:
            try:
                self.workspace.add_model(outcome.path, kind="onnx", source=f"{outcome.kind} fix of {before.model}")
                self.workspace.save()
                self.sig_workspace_changed.emit()
            except Exception as exc:  # the fixed file exists either way; the workspace is a convenience
                self.sig_log.emit(f"could not add {outcome.path} to the workspace: {exc}")
        self.open_model(outcome.path)
        self._update_compare_button()
        self.side.setCurrentWidget(self.changes_panel)

    # ---- per-op profiling ------------------------------------------------------------------------------
    def profile_current(self, shapes: dict[str, list[int]] | None = None, runs: int | None = None,
                        ask: bool = True) -> None:
        """Profile the model shown with ONNX Runtime as a job; asks for sizes when inputs have dynamic dims."""
        if self.model_path is None:
            return
        stats_inputs = dict(self.report.stats.inputs or {}) if self.report is not None else {}
        if shapes is None and ask and input_dims(stats_inputs):
            dlg = ProfileShapesDialog(stats_inputs, runs or self.profile_runs, self)
            if dlg.exec() != ProfileShapesDialog.DialogCode.Accepted:
                return
            shapes, runs = dlg.shapes(), dlg.runs.value()
        self._start_profile(self.model_path, shapes, runs or self.profile_runs)

    def _start_profile(self, path: Path, shapes: dict[str, list[int]] | None, runs: int, warmup: int = 3,
                       optimization: str = "all", before: Any = None) -> None:
        from studio.profiling.api import profile

        self.status_label.setText("profiling…")
        self.profile_action.setEnabled(False)
        self.profile_panel.profile_button.setEnabled(False)
        self.profile_panel.compare_button.setEnabled(False)
        self.jobs.start(PROFILE_JOB, f"profile {path.name}",
                        lambda job: profile(path, shapes=shapes or None, runs=runs, warmup=warmup,
                                            optimization=optimization, job=job),
                        on_done=lambda rep, p=path, b=before: self._on_profiled(rep, p, b),
                        on_failed=self._on_profile_failed)

    def _on_profile_failed(self, err: StudioError) -> None:
        self.profile_action.setEnabled(self.model_path is not None)
        self.profile_panel.profile_button.setEnabled(self.model_path is not None)
        self.profile_panel.compare_button.setEnabled(True)
        self._on_job_failed(err)

    def _on_profiled(self, rep: Any, path: Path, before: Any = None) -> None:
        self.profile_action.setEnabled(True)
        self.profile_panel.profile_button.setEnabled(True)
        self.profile_panel.compare_button.setEnabled(True)
        self._profiles[path.resolve()] = rep
        saved: Path | None = None
        if self.workspace is not None:
            from studio.profiling.api import save_to_workspace

            try:
                saved = save_to_workspace(rep, self.workspace)
                self.sig_log.emit(f"profile of {path.name} saved to {saved}")
            except (OSError, StudioError) as exc:
                self.sig_log.emit(f"could not save the profile of {path.name}: {exc}")
        if self.model_path is None or path.resolve() != self.model_path.resolve():
            return  # another model was opened meanwhile: kept for it, not shown
        self.status_label.setText(f"profiled: {fmt_ms(rep.run_mean_ms)} ms per run")
        self._show_profile(rep, saved_to=saved)
        if before is not None:
            from studio.profiling.api import compare_profiles

            self.profile_comparison = compare_profiles(before, rep)
            self.profile_panel.set_comparison(self.profile_comparison)
        self.color_mode.setCurrentIndex(self.color_mode.findData("profile"))
        self.side.setCurrentWidget(self.profile_panel)

    def _show_profile(self, rep: Any, stale: bool = False, saved_to: Path | None = None) -> None:
        self.profile = rep
        self._profile_stale, self._profile_saved_to = stale, saved_to
        self._profile_names = graph_names(rep, self.graph) if rep is not None else {}
        self._profile_keys = {v: k for k, v in self._profile_names.items()}
        note = "not saved (no workspace open)" if rep is not None and self.workspace is None else ""
        self.profile_panel.set_report(rep, self._profile_names, stale=stale, saved_to=saved_to, note=note)
        item = self.color_mode.model().item(2)
        item.setEnabled(rep is not None)
        if rep is None and self.color_mode.currentData() == "profile":
            self.color_mode.setCurrentIndex(0)
        self._apply_colour_mode()
        if self.selected_node:
            self._show_node(self.selected_node)

    def _load_profile_for(self, path: Path) -> None:
        """A new model is shown: its profile from this session, else the one saved in the workspace."""
        self.profile_comparison = None
        self.profile_panel.set_comparison(None)
        rep = self._profiles.get(path.resolve())
        stale, saved_to = False, None
        if rep is None:
            found = load_saved(self.workspace, path)
            if found is not None:
                from studio.profiling.api import workspace_profile_path

                rep, stale = found
                saved_to = workspace_profile_path(self.workspace, path)
                self.sig_log.emit(f"loaded the saved profile of {path.name} from {saved_to}")
        self._show_profile(rep, stale=stale, saved_to=saved_to)
        self._update_compare_button()

    def _original_profile(self) -> Any:
        """The profile of the model the last fix started from, when the fixed model is the one shown."""
        fix = self.last_fix
        if fix is None or self.model_path is None or fix.path.resolve() != self.model_path.resolve():
            return None
        rep = self._profiles.get(fix.source.resolve())
        if rep is None:
            found = load_saved(self.workspace, fix.source)
            rep = found[0] if found is not None else None
        return rep

    def _update_compare_button(self) -> None:
        before = self._original_profile()
        if before is None:
            self.profile_panel.set_compare_available(None)
            return
        self.profile_panel.set_compare_available(
            f"profile {self.model_path.name if self.model_path else ''} with the inputs of the original's "
            f"profile ({Path(before.model).name}, {before.runs} runs) and show the deltas")

    def compare_with_original(self) -> None:
        """Profile the fixed model exactly as its original was profiled, then show compare_profiles deltas."""
        before = self._original_profile()
        if before is None or self.model_path is None:
            return
        self._start_profile(self.model_path, dict(before.input_shapes), before.runs, before.warmup,
                            before.optimization, before=before)

    def _on_profile_node(self, key: str) -> None:
        """A Node-table row was clicked: centre and select that node in the graph (and Netron, findings)."""
        name = self._profile_names.get(key, key)
        if self.graph is None or self.graph.index_of(name) is None:
            return
        self._syncing = True
        try:
            self.view.highlight([])
            self.view.select(name, center=True)
            self._show_node(name)
            self._select_rows_for(name)
            if self.netron is not None:
                self.netron.select(name)
        finally:
            self._syncing = False

    def _on_profile_module(self, keys: list[str]) -> None:
        """A module row: ring the module's nodes and bring its slowest one into view."""
        names = [self._profile_names.get(k, k) for k in keys]
        self.view.highlight(names)
        if self.profile is not None and keys:
            slowest = max(keys, key=lambda k: getattr(self.profile.node(k), "mean_ms", 0.0))
            name = self._profile_names.get(slowest, slowest)
            if self.graph is not None and self.graph.index_of(name) is not None:
                self.view.select(name, center=True)
                self._show_node(name)

    def _on_side_tab(self, _index: int) -> None:
        """The Profile tab's tables need room: widen the side panel when it opens narrow."""
        if self.side.currentWidget() is self.profile_panel:
            sizes = self.top_splitter.sizes()
            if len(sizes) == 2 and 0 < sizes[1] < 520 and sum(sizes) > 1100:
                self.top_splitter.setSizes([sum(sizes) - 520, 520])

    def shutdown(self) -> None:
        """Window closing: stop the profiler and other jobs of this page and the Netron server."""
        for h in self.jobs.running() if self.jobs is not None else []:
            if h.kind.startswith("inspect"):
                h.state.cancel()
        if self.netron is not None:
            self.netron.shutdown()


def _theme() -> str:
    try:
        from studio.gui.theme import current_theme

        return current_theme()
    except Exception:  # a page can be shown without the themed application (tests, embedding)
        return "light"


__all__ = ["InspectPage", "resolve_model_file", "load_graph_job"]
