"""Inspector page: an ONNX model against every target at once, on a graph that highlights what will not run.

Loading and inspection run as JobRunner jobs (graph first, so the view appears while the targets are checked);
the page renders the InspectionReport from studio.inspect. Profile runs studio.profiling (ORT's per-node
profiler) as a job: its times colour both views as heat, fill the Profile tab and are saved with the workspace.

The state (model, graph, report, selected node, last fix) is a Qt-free studio.inspect.session.InspectSession
that widgets change through its setters; the page lays out the widgets of studio.gui.inspector; the flows there do the rest: ``SelectionSync`` (one selection everywhere), ``FixFlow``
(fix jobs), ``ProfileFlow``, ``VerifyFlow`` and ``OptimizeFlow`` (studio optimize in a window of its own).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QSplitter, QTabWidget, QVBoxLayout, QWidget

from studio.core.errors import JobCancelled, Problem, StudioError
from studio.gui.file_dialogs import start_dir
from studio.gui.graph.model import GraphData
from studio.gui.graph.view import GraphView
from studio.gui.inspector import details
from studio.gui.inspector.colour_modes import ColourModes
from studio.gui.inspector.findings import FindingsPanel
from studio.gui.inspector.fixes import FixFlow, make_fix_buttons
from studio.gui.inspector.graph_toolbar import GraphLegend, GraphToolbar
from studio.gui.inspector.header import InspectHeader
from studio.gui.inspector.model_loading import load_graph_job, resolve_model_file
from studio.gui.inspector.node_data_flow import NodeDataFlow
from studio.gui.inspector.optimize_flow import OptimizeFlow
from studio.gui.inspector.profile_flow import PROFILE_JOB, ProfileFlow
from studio.gui.inspector.selection_sync import SelectionSync
from studio.gui.inspector.session_attrs import SessionAttributes
from studio.gui.inspector.side_tabs import SideTabs
from studio.gui.inspector.target_strip import TargetStrip
from studio.gui.inspector.verify_panel import VerifyFlow
from studio.gui.jobs_qt import JobRunner
from studio.gui.page import Page
from studio.gui.targets import DEFAULT_TARGETS
from studio.gui.theme import current_theme
from studio.inspect.session import InspectSession


class InspectPage(SessionAttributes, Page):
    page_id = "inspect"
    title = "Inspect"
    scrolls_itself = True  # splitters share the height; the page fits 1280x720 as it is
    icon_name = "inspect"

    def __init__(self, jobs: JobRunner | None = None, parent: QWidget | None = None) -> None:
        super().__init__(jobs, parent)
        self.session = InspectSession()  # model, graph, report, selection, last fix (SessionAttributes reads them)
        self._followed: tuple[Any, str | None] = (None, None)  # the workspace model the page last followed
        self._pending_heat: tuple[dict[str, float], str] | None = None  # painted when the graph is laid out
        self.current_target: str = DEFAULT_TARGETS[0]
        self.theme = current_theme()  # "light" without the themed application (tests, embedding)
        self.selection = SelectionSync(self)
        self.fixer = FixFlow(self)
        self.profiler = ProfileFlow(self)
        self.colours = ColourModes(self)
        self.node_data = NodeDataFlow(self)
        self._build()
        self.session.subscribe("report", self.refresh_verdicts)

    # ---- layout ----------------------------------------------------------------------------------------
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(16, 12, 16, 10)
        outer.setSpacing(8)
        self.header = h = InspectHeader()
        self.model_label, self.status_label = h.model_label, h.status_label
        self.open_button, self.reinspect_button = h.open_button, h.reinspect_button
        self.profile_action, self.compile_button, self.serve_button = h.profile_action, h.compile_button, h.serve_button
        h.open_button.clicked.connect(lambda: self._choose_model())
        h.reinspect_button.clicked.connect(lambda: self.inspect_current())
        h.profile_action.clicked.connect(lambda: self.profile_current())
        h.compile_button.clicked.connect(lambda: self.open_in_compile())
        h.serve_button.clicked.connect(lambda: self.open_in_triton())
        outer.addWidget(h)
        self.error_label = QLabel("")
        self.error_label.setProperty("role", "error")
        self.error_label.setWordWrap(True)
        self.error_label.hide()
        outer.addWidget(self.error_label)
        self.target_strip = TargetStrip(DEFAULT_TARGETS)
        self.target_strip.sig_target_chosen.connect(self.choose_target)
        self.chips = self.target_strip.chips  # target -> TargetChip (the same dict)

        # graph views | side panels
        self.view = GraphView(theme=self.theme)
        self.view.sig_node_selected.connect(self.selection.on_graph_selected)
        self.view.sig_group_selected.connect(self.selection.on_group_selected)
        self.view.sig_layout_ready.connect(self._on_layout_ready)
        self.toolbar = GraphToolbar(self.view)
        self.toolbar.sig_load_node_data.connect(self.node_data.choose_and_load)
        self.toolbar.sig_export_node_data.connect(self.node_data.choose_and_export)
        self.toolbar.sig_colour_mode_changed.connect(lambda _m: self.apply_colour_mode())
        self.search_edit, self.match_label = self.toolbar.search_edit, self.toolbar.match_label
        self.color_mode = self.toolbar.color_mode
        self.legend = GraphLegend(self.theme)
        self.legend_labels, self.graph_info = self.legend.legend_labels, self.legend.graph_info
        self.heat_legend, self.heat_title = self.legend.heat_legend, self.legend.heat_title
        self.heat_min_label, self.heat_max_label = self.legend.heat_min_label, self.legend.heat_max_label
        self.heat_none_label = self.legend.heat_none_label
        graph_tab = QWidget()
        gl = QVBoxLayout(graph_tab)
        gl.setContentsMargins(0, 0, 0, 0)
        gl.setSpacing(0)
        gl.addWidget(self.toolbar)
        gl.addWidget(self.view, 1)
        gl.addWidget(self.legend)
        self.views = QTabWidget()
        self.views.setDocumentMode(True)
        self.views.addTab(graph_tab, self.tr("Graph"))
        self.netron_host = QWidget()
        QVBoxLayout(self.netron_host).setContentsMargins(0, 0, 0, 0)
        self.netron: Any = None  # studio.gui.inspector.netron_view.NetronView, created on first show
        self.views.addTab(self.netron_host, self.tr("Netron"))
        self.views.currentChanged.connect(self._on_view_tab)

        self.side = SideTabs(self.theme)
        self.node_panel, self.stats_panel = self.side.node_panel, self.side.stats_panel
        self.dynamic_panel, self.changes_panel = self.side.dynamic_panel, self.side.changes_panel
        self.changes_panel.anchorClicked.connect(self.fixer.link)  # its link opens the Diff page
        self.profile_panel = self.side.profile_panel
        self.profile_panel.sig_profile_requested.connect(lambda: self.profile_current())
        self.profile_panel.sig_compare_requested.connect(self.compare_with_original)
        self.profile_panel.sig_node_chosen.connect(self.selection.on_profile_node)
        self.profile_panel.sig_nodes_highlighted.connect(self.selection.on_profile_module)
        self.side.currentChanged.connect(self._on_side_tab)
        self.verifier = VerifyFlow(self, self.side.verify_panel)  # "Verify with the real toolchain" + Verify tab
        self.optimizer = OptimizeFlow(self)  # "Optimize…": studio optimize in a window of its own
        strip_row = QHBoxLayout()
        strip_row.addWidget(self.target_strip, 1)
        for b in (self.verifier.button, self.optimizer.button):
            strip_row.addWidget(b, 0, Qt.AlignmentFlag.AlignTop)
        outer.addLayout(strip_row)

        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.views)
        top.addWidget(self.side)
        top.setStretchFactor(0, 3)
        top.setStretchFactor(1, 1)
        top.setSizes([900, 380])
        self.top_splitter = top

        main = QSplitter(Qt.Orientation.Vertical)
        main.addWidget(top)
        self.fix_buttons = make_fix_buttons(self.request_fix)
        self.findings = FindingsPanel(self.fix_buttons)
        self.findings_label, self.all_targets_box = self.findings.findings_label, self.findings.all_targets_box
        self.findings_model, self.table = self.findings.findings_model, self.findings.table
        self.all_targets_box.toggled.connect(lambda _c: self._fill_findings())
        self.table.selectionModel().selectionChanged.connect(self.selection.on_finding_selected)
        main.addWidget(self.findings)
        main.setStretchFactor(0, 2)
        main.setStretchFactor(1, 1)
        main.setSizes([560, 300])  # at 1366x768 the findings show four rows, the graph the rest
        outer.addWidget(main, 1)

        QShortcut(QKeySequence.StandardKey.Find, self, activated=lambda: self.search_edit.setFocus())

    # ---- public state for other code and tests ----------------------------------------------------------
    @property
    def profile(self) -> Any:
        """The ProfileReport of the model shown (None: not profiled)."""
        return self.profiler.report

    @property
    def profile_comparison(self) -> Any:
        """The ProfileComparison of the last "Compare with original" for the model shown."""
        return self.profiler.comparison

    @property
    def profiles(self) -> Mapping[Path, Any]:
        """Resolved model path -> its latest profile taken in this session (read-only)."""
        return self.profiler.profiles

    @property
    def profile_keys(self) -> Mapping[str, str]:
        """Graph node name -> the key of its entry in the profile shown (read-only)."""
        return MappingProxyType(self.profiler.keys)

    @property
    def profile_runs(self) -> int:
        """Measured runs a Profile click asks for."""
        return self.profiler.runs

    @profile_runs.setter
    def profile_runs(self, runs: int) -> None:
        self.profiler.runs = runs

    # ---- context from the window -----------------------------------------------------------------------
    def context_changed(self) -> None:
        if self.target and self.target != self.current_target:
            self.set_target(self.target)
        followed = (self.workspace.root if self.workspace is not None else None, self.model_name)
        if self.workspace is not None and self.model_name and followed != self._followed:  # a changed model only:
            self._followed = followed  # a file opened here (File > Open, `studio gui A.onnx`) stays on a new target
            entry = self.workspace.model(self.model_name)
            if entry is not None and entry.kind == "onnx":
                try:
                    path = resolve_model_file(self.workspace.resolve(entry))
                except StudioError:
                    return
                if self.model_path is None or path.resolve() != self.model_path.resolve():
                    self.open_model(path)

    def open_payload(self, payload: object) -> None:
        """A model path (export wizard's "Open in inspector") or {"model": path, "node": name} (optionally
        "heat": {node: value} with "heat_label": painted once the graph is laid out)."""
        node: str | None = None
        model: Any = payload
        if isinstance(payload, dict):
            model = payload.get("model") or payload.get("path")
            node = payload.get("node")
            if payload.get("heat"):
                self._pending_heat = (dict(payload["heat"]), str(payload.get("heat_label") or "heat"))
            if payload.get("target"):
                self.choose_target(str(payload["target"]))
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
            if self._pending_heat is not None and self.view.ready:
                values, label = self._pending_heat
                self._pending_heat = None
                self.set_heat(values, label)
            return
        self.selection.pending_node = node
        self.open_model(path)

    def opened_path(self) -> str | None:
        return str(self.model_path) if self.model_path is not None else None

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
        path, _ = QFileDialog.getOpenFileName(self, self.tr("Open ONNX model"), start, self.tr("ONNX models (*.onnx);;All files (*)"))
        if path:
            self.open_model(Path(path))

    def open_model(self, path: Path | str) -> None:
        """Show ``path``'s graph and inspect it against every target (two jobs, neither on the GUI thread)."""
        try:
            p = resolve_model_file(path)
        except StudioError as err:
            self._show_error(err)
            return
        self.session.open(p)
        self._clear_error()
        self.model_label.setText(str(p))
        self.model_label.setToolTip(str(p))
        self.view.clear_state()
        self.view.set_graph(None)
        self.findings_model.set_findings([], self.theme)
        self.node_panel.clear()
        self.stats_panel.clear()
        self.dynamic_panel.clear()
        self.target_strip.set_summaries(None, self.theme)
        self.reinspect_button.setEnabled(True)
        self.profile_action.setEnabled(True)
        self.profile_panel.profile_button.setEnabled(True)
        self.profiler.load_for(p)
        self.compile_button.setEnabled(True)
        self.serve_button.setEnabled(True)
        self.verifier.reset()
        self.optimizer.reset()
        self.jobs.start("inspect.graph", self.tr("load graph {name}").format(name=p.name), lambda job: load_graph_job(p, job),
                        on_done=self._on_graph_loaded, on_failed=self.job_failed)
        self.inspect_current()
        if self.netron is not None:
            self.netron.load(p)

    def target_profile_dirs(self) -> list[Path] | None:
        """The workspace's own target profiles, checked besides the built-in ones."""
        if self.workspace is not None and self.workspace.targets_dir.is_dir():
            return [self.workspace.targets_dir]
        return None

    def inspect_current(self) -> None:
        if self.model_path is None:
            return
        path = self.model_path
        dirs = self.target_profile_dirs()
        self.status_label.setText(self.tr("inspecting…"))
        self.jobs.start("inspect.report", self.tr("inspect {name}").format(name=path.name),
                        lambda job: _inspect_job(path, dirs, job),
                        on_done=self._on_report, on_failed=self.job_failed)

    def _on_graph_loaded(self, graph: GraphData) -> None:
        self.session.set_graph(graph)
        self.view.set_graph(graph)
        self.profiler.reshow()
        self.legend.set_graph_size(sum(1 for n in graph.nodes if n.kind == "op"), len(graph.edges))

    def _on_layout_ready(self, geometry: Any) -> None:
        self.legend.set_layout_time(geometry.layout.seconds, geometry.layout.engine)
        self.selection.layout_ready()
        if self._pending_heat is not None:  # a payload's heat map (the compile page's per-layer error)
            values, label = self._pending_heat
            self._pending_heat = None
            self.set_heat(values, label)

    def _on_report(self, report: Any) -> None:
        self.verifier.prefill_shapes(report)  # dynamic dims at 1: what a static-shape toolchain builds at
        self.verifier.say_what_it_needs(report)
        self.status_label.setText(self.tr("inspected in {get:.2f} s").format(get=report.timings.get('total', 0)))
        for t in report.targets:
            self.target_strip.add_chip(t)
        self.view.set_dynamic(set(report.dynamic.tensors))
        self.stats_panel.setHtml(details.stats_html(report.stats, self.graph, report, self.theme))
        self.dynamic_panel.setHtml(details.dynamic_html(report, self.theme))
        for b in self.fix_buttons.values():
            b.setEnabled(True)
        self.session.set_report(report)  # its subscriber (refresh_verdicts): chips, colours, findings, Netron
        if not self.selected_node and self.side.currentWidget() is not self.changes_panel:
            self.side.setCurrentWidget(self.stats_panel)

    def job_failed(self, err: StudioError) -> None:
        """A job of this page failed: say why in place (a cancelled one says nothing)."""
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
        self.target_strip.add_chip(target)
        self.current_target = target
        self.target_strip.check(target)
        self._apply_target()

    def _apply_target(self) -> None:
        """Colours, counts and findings of the current target: the tool's verdicts where a verifier ran."""
        from studio.verify.effective import effective

        rep = self.report
        if rep is None:
            self._fill_findings()
            return
        eff = effective(rep, self.current_target)
        self.view.set_verdicts(eff.node_verdicts)
        self.legend.set_counts(eff.counts() if self.current_target in rep.targets else {})
        self._fill_findings()
        if self.selected_node and self.graph is not None:
            self.selection.show_node(self.selected_node)
        if self.netron is not None:
            self.netron.set_verdicts(self._verdicts_for_netron(), set(rep.dynamic.tensors))

    def _verdicts_for_netron(self) -> dict[str, str]:
        from studio.verify.effective import effective

        return {} if self.report is None else effective(self.report, self.current_target).node_verdicts

    def refresh_verdicts(self, *_topic_and_report: Any) -> None:
        """The session's report changed (a fresh inspection, or a verifier's answer folded in): chips, colours
        and findings follow."""
        if self.report is not None:
            self.target_strip.set_summaries(self.report, self.theme)
            self._apply_target()

    def _fill_findings(self) -> None:
        self.findings.show_findings(self.report, self.current_target, self.theme)
        if self.report is not None and self.selected_node:
            self.selection.select_rows_for(self.selected_node)

    # ---- selection and search --------------------------------------------------------------------------
    def focus_node(self, name: str) -> bool:
        """Select ``name`` everywhere (graph centred on it, its findings selected, its details shown)."""
        return self.selection.focus_node(name)

    def search(self, text: str) -> list[str]:
        """Select the first graph node matching ``text`` (name, op type or tensor); all matches' names."""
        return self.toolbar.search(text)

    def next_match(self) -> None:
        """The next search match (Enter in the search box), wrapping at the end."""
        self.toolbar.next_match()

    def previous_match(self) -> None:
        self.toolbar.previous_match()

    # ---- colours ---------------------------------------------------------------------------------------
    def set_heat(self, values: dict[str, float] | None, label: str = "heat") -> None:
        """Hook for per-op profiling: node name -> number (e.g. ms); enables the heat colour mode."""
        self.colours.set_heat(values, label)

    def apply_colour_mode(self) -> None:
        """Paint both views in the colour mode chosen in the toolbar and show its legend."""
        self.colours.apply()

    # ---- Netron tab ------------------------------------------------------------------------------------
    def _on_view_tab(self, index: int) -> None:
        if self.views.widget(index) is self.netron_host:
            self.ensure_netron()

    def ensure_netron(self) -> Any:
        """Create the Netron tab on first use (QtWebEngine is heavy); shows why when it cannot start."""
        if self.netron is None:
            from studio.gui.inspector.netron_view import NetronView

            self.netron = NetronView(theme=self.theme)
            self.netron.sig_node_clicked.connect(self.selection.on_netron_clicked)
            self.netron_host.layout().addWidget(self.netron)
            if self.model_path is not None:
                self.netron.load(self.model_path)
            if self.report is not None:
                self.netron.set_verdicts(self._verdicts_for_netron(), set(self.report.dynamic.tensors))
            self.apply_colour_mode()
        return self.netron

    # ---- fixes and profiles ----------------------------------------------------------------------------
    def request_fix(self, kind: str, params: dict[str, Any] | None = None) -> None:
        """Run a studio.optimize fix as a job, then re-inspect the result and show the difference."""
        self.fixer.request(kind, params)

    def profile_current(self, shapes: dict[str, list[int]] | None = None, runs: int | None = None,
                        ask: bool = True) -> None:
        """Profile the model shown with ONNX Runtime as a job; asks for sizes when inputs have dynamic dims."""
        self.profiler.profile_current(shapes, runs, ask)

    def compare_with_original(self) -> None:
        """Profile the fixed model exactly as its original was profiled, then show compare_profiles deltas."""
        self.profiler.compare_with_original()

    def _on_side_tab(self, _index: int) -> None:
        """The Profile and Verify tabs' tables need room: widen the side panel when it opens narrow."""
        if self.side.currentWidget() in (self.profile_panel, self.side.verify_panel):
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


def _inspect_job(path: Path, dirs: list[Path] | None, job: Any) -> Any:
    """Worker side: the inspector's first import too (0.1-0.2 s of module loading) stays off the GUI thread."""
    from studio.inspect.api import inspect_model

    return inspect_model(path, None, profile_dirs=dirs, job=job)


__all__ = ["InspectPage", "resolve_model_file", "load_graph_job", "PROFILE_JOB"]
