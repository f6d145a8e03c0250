"""The inspector's Profile tab: per-node times from studio.profiling as a top-N table linked to the graph,
per-module times for HF exports, and the before/after comparison of a fix.

The panel only renders a ProfileReport / ProfileComparison (the page runs ``studio.profiling.api.profile``
as a job); rows carry profile node keys, the page maps them to graph names (``graph_names``). The helpers it
renders with live in profile_data (reading), profile_format (text, HTML, heat colours) and profile_tables
(the table models); they are re-exported here for the callers that import them from this module.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QAbstractTableModel, QItemSelectionModel, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QTableView,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from studio.gui.graph import palette
from studio.gui.inspector.dims_dialog import DimsDialog
from studio.gui.inspector.profile_data import graph_names, input_dims, load_saved, shapes_for
from studio.gui.inspector.profile_format import (
    comparison_html,
    fmt_ms,
    heat_colour,
    heat_legend_pixmap,
    node_time_html,
    status_label,
    status_text,
)
from studio.gui.inspector.profile_tables import ModuleTimesModel, NodeTimesModel, ShareBarDelegate

SHOW_CHOICES = ((QT_TRANSLATE_NOOP("ProfilePanel", "Top 10"), 10), (QT_TRANSLATE_NOOP("ProfilePanel", "Top 25"), 25),
                (QT_TRANSLATE_NOOP("ProfilePanel", "Top 100"), 100), (QT_TRANSLATE_NOOP("ProfilePanel", "All nodes"), -1))


# ---- dialog ------------------------------------------------------------------------------------------------

class ProfileShapesDialog(DimsDialog):
    """Values for the model's dynamic input dims, and how many runs to measure."""

    def __init__(self, stats_inputs: dict[str, Any], runs: int = 20, parent: QWidget | None = None) -> None:
        inputs = dict(stats_inputs or {})
        super().__init__(self.tr("Profile with ONNX Runtime"), 380,
                         self.tr("Some input dims are dynamic: choose the sizes to profile at. Per-node times are the mean "
                                 "and p95 over the measured runs, after warm-up runs."),
                         [(label, str(default)) for label, _name, _ax, default in input_dims(inputs)],
                         optional=False, parent=parent)
        self.stats_inputs = inputs
        self.runs = QSpinBox()
        self.runs.setRange(1, 10_000)
        self.runs.setValue(runs)
        self.form.addRow(self.tr("measured runs"), self.runs)
        self.ok_button.setText(self.tr("Profile"))

    def shapes(self) -> dict[str, list[int]]:
        return shapes_for(self.stats_inputs, self.values())


# ---- the panel ---------------------------------------------------------------------------------------------

class ProfilePanel(QWidget):
    """Summary, top-N node table, module table and comparison of the current model's profile."""

    sig_node_chosen = Signal(str)  # profile node key (a row was clicked)
    sig_nodes_highlighted = Signal(list)  # profile node keys of a module (a module row was clicked)
    sig_profile_requested = Signal()
    sig_compare_requested = Signal()

    def __init__(self, theme: str = "light", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.theme = theme
        self.report: Any = None
        self.comparison: Any = None
        self.names: dict[str, str] = {}
        self._syncing = False
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 8, 8, 4)
        lay.setSpacing(6)

        bar = QHBoxLayout()
        bar.setSpacing(6)
        self.profile_button = QPushButton(self.tr("Profile"))
        self.profile_button.setToolTip(self.tr("run ONNX Runtime's profiler on this model (per-node mean / p95 / share)"))
        self.profile_button.setEnabled(False)
        self.profile_button.clicked.connect(self.sig_profile_requested.emit)
        bar.addWidget(self.profile_button)
        self.compare_button = QPushButton(self.tr("Compare with original"))
        self.compare_button.setToolTip(self.tr("profile this fixed model with the original's inputs and show the deltas"))
        self.compare_button.hide()
        self.compare_button.clicked.connect(self.sig_compare_requested.emit)
        bar.addWidget(self.compare_button)
        bar.addStretch(1)
        bar.addWidget(QLabel(self.tr("Show")))
        self.show_combo = QComboBox()
        for label, n in SHOW_CHOICES:
            self.show_combo.addItem(self.tr(label), n)
        self.show_combo.setCurrentIndex(1)
        self.show_combo.currentIndexChanged.connect(lambda _i: self._fill_nodes())
        bar.addWidget(self.show_combo)
        lay.addLayout(bar)

        self.summary = QLabel(self.tr("No profile yet. <b>Profile</b> runs the model with ONNX Runtime's profiler and "
                                      "colours the graph by time."))
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.summary)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.nodes_model = NodeTimesModel(self)
        self.nodes_table = self._table(self.nodes_model, (150, 64, 84, 70, 96, 170, 120))
        self.share_delegate = ShareBarDelegate(theme, self.nodes_table)
        self.nodes_table.setItemDelegateForColumn(4, self.share_delegate)
        self.nodes_table.selectionModel().selectionChanged.connect(self._on_node_row)
        self.tabs.addTab(self.nodes_table, self.tr("Nodes"))
        self.modules_model = ModuleTimesModel(self)
        self.modules_table = self._table(self.modules_model, (190, 96, 92, 84, 54))
        self.modules_table.selectionModel().selectionChanged.connect(self._on_module_row)
        self.modules_note = QLabel("")
        self.modules_note.setWordWrap(True)
        self.modules_note.setProperty("role", "muted")
        mod_host = QWidget()
        ml = QVBoxLayout(mod_host)
        ml.setContentsMargins(0, 4, 0, 0)
        ml.addWidget(self.modules_note)
        ml.addWidget(self.modules_table, 1)
        self.tabs.addTab(mod_host, self.tr("Modules"))
        self.compare_view = QTextBrowser()
        self.compare_view.setFrameShape(QFrame.Shape.NoFrame)
        self.compare_view.setOpenLinks(False)
        self.compare_view.document().setDocumentMargin(6)
        self.compare_view.setPlaceholderText(self.tr("After a fix, “Compare with original” profiles the fixed model and "
                                                     "shows what got faster or slower here."))
        self.tabs.addTab(self.compare_view, self.tr("Compare"))
        lay.addWidget(self.tabs, 1)
        self._update_tabs()

    def _table(self, model: QAbstractTableModel, widths: tuple[int, ...]) -> QTableView:
        t = QTableView()
        t.setModel(model)
        t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        t.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        t.setAlternatingRowColors(True)
        t.setWordWrap(False)
        t.setShowGrid(False)
        t.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        t.verticalHeader().hide()
        t.verticalHeader().setDefaultSectionSize(22)
        hh = t.horizontalHeader()
        hh.setHighlightSections(False)
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        fm = hh.fontMetrics()
        for col, w in enumerate(widths):  # never narrower than the header's own label
            label = str(model.headerData(col, Qt.Orientation.Horizontal) or "")
            hh.resizeSection(col, max(w, fm.horizontalAdvance(label) + 30))
        hh.setStretchLastSection(True)
        return t

    # ---- content ---------------------------------------------------------------------------------------
    def set_report(self, rep: Any, names: dict[str, str] | None = None, stale: bool = False,
                   saved_to: Path | None = None, note: str = "") -> None:
        self.report = rep
        self.names = dict(names or {})
        if rep is None:
            self.summary.setText(self.tr("No profile yet. <b>Profile</b> runs the model with ONNX Runtime's profiler and "
                                         "colours the graph by time."))
            self.nodes_model.set_rows([], {}, self.theme)
            self.modules_model.set_rows([])
            self._update_tabs()
            return
        muted = palette.TEXT[self.theme][1]
        counts: dict[str, int] = {}
        for n in rep.nodes:
            counts[n.status] = counts.get(n.status, 0) + 1
        shapes = ", ".join(f"{escape(k)} [{'×'.join(str(d) for d in v)}]" for k, v in rep.input_shapes.items())
        per_run = self.tr("{ms} per run").format(
            ms=f"<span style='font-size:12pt; font-weight:600'>{fmt_ms(rep.run_mean_ms)} ms</span>")
        p95 = self.tr("(p95 {p95} ms) · node time {node} ms").format(p95=fmt_ms(rep.run_p95_ms),
                                                                      node=fmt_ms(rep.node_total_ms))
        statuses = ", ".join(f"{v:,} {status_label(k)}" for k, v in counts.items())
        runs = self.tr("{runs} runs after {warmup} warm-up").format(runs=rep.runs, warmup=rep.warmup)
        lines = [f"{per_run} <span style='color:{muted}'>{p95}</span>",
                 f"<span style='color:{muted}'>" + self.tr("{n} nodes: {statuses}").format(
                     n=f"{len(rep.nodes):,}", statuses=statuses) + "</span>",
                 f"<span style='color:{muted}'>" + " · ".join(x for x in (
                     shapes, runs, escape(rep.runtime)) if x) + "</span>"]
        if rep.custom_ops:
            lines.append(f"<span style='color:{muted}'>"
                         + self.tr("custom ops: {ops}").format(ops=escape(rep.custom_ops)) + "</span>")
        when = self.tr("taken {when}").format(when=escape(rep.created.replace('T', ' '))) if rep.created else ""
        if saved_to is not None:
            when += self.tr(" · saved to {name}").format(name=escape(saved_to.name))
        if note:
            when += f" · {escape(note)}"
        if when:
            lines.append(f"<span style='color:{muted}'>{when}</span>")
        warn = "#9a6700" if self.theme == "light" else "#d29922"
        if stale:
            lines.append(f"<span style='color:{warn}'>⚠ "
                         + self.tr("the model changed after this profile: run Profile again") + "</span>")
        for w in rep.warnings[:3]:
            lines.append(f"<span style='color:{warn}'>⚠ {escape(w)}</span>")
        self.summary.setText("<br>".join(lines))
        self._fill_nodes()
        self.modules_model.set_rows(rep.modules)
        if rep.modules:
            src = {"node names": self.tr("the exporter's node names"),
                   "metadata": self.tr("the exporter's scope metadata")}
            torch = (self.tr("PyTorch times from the HF model on the same inputs") if any(
                m.torch_mean_ms is not None for m in rep.modules)
                else self.tr("no PyTorch times (not an HF export folder)"))
            self.modules_note.setText(self.tr("Modules from {get}; {torch}. "
                                              "ONNX ms sums the module's nodes (inclusive). Click a module to ring its "
                                              "nodes.").format(get=src.get(rep.module_source, rep.module_source), torch=torch))
        self._update_tabs()

    def _fill_nodes(self) -> None:
        rep = self.report
        if rep is None:
            return
        n = self.show_combo.currentData()
        if n is not None and n > 0:
            rows = rep.top(int(n))
        else:
            rows = sorted(rep.nodes, key=lambda x: (-x.mean_ms, x.status != "measured"))
        self.nodes_model.set_rows(rows, self.names, self.theme)
        total = sum(1 for x in rep.nodes if x.mean_ms > 0)
        self.tabs.setTabText(0, self.tr("Nodes ({shown} of {total})").format(shown=f"{len(rows):,}",
                                                                                total=f"{len(rep.nodes):,}")
                             if len(rows) < len(rep.nodes) else self.tr("Nodes ({n})").format(n=f"{len(rows):,}"))
        self.nodes_table.setToolTip("" if total else self.tr("ORT reported no kernel times"))

    def set_comparison(self, c: Any) -> None:
        self.comparison = c
        self.compare_view.setHtml(comparison_html(c, self.theme) if c is not None else "")
        self._update_tabs()
        if c is not None:
            self.tabs.setCurrentWidget(self.compare_view)

    def set_compare_available(self, text: str | None) -> None:
        """Show the compare button (``text`` says against what) or hide it."""
        self.compare_button.setVisible(bool(text))
        if text:
            self.compare_button.setToolTip(text)

    def _update_tabs(self) -> None:
        rep = self.report
        self.tabs.setTabEnabled(1, bool(rep is not None and rep.modules))
        self.tabs.setTabText(1, self.tr("Modules ({n})").format(n=len(rep.modules)) if rep is not None and rep.modules
                             else self.tr("Modules"))
        self.tabs.setTabEnabled(2, self.comparison is not None)

    # ---- selection -------------------------------------------------------------------------------------
    def select_node(self, key: str | None) -> bool:
        """Select ``key``'s row (no signal); False when it is not among the rows shown."""
        sm = self.nodes_table.selectionModel()
        row = self.nodes_model.row_of(key) if key else None
        self._syncing = True
        try:
            sm.clearSelection()
            if row is None:
                return False
            ix = self.nodes_model.index(row, 0)
            sm.select(ix, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
            sm.setCurrentIndex(ix, QItemSelectionModel.SelectionFlag.NoUpdate)
            self.nodes_table.scrollTo(ix, QAbstractItemView.ScrollHint.EnsureVisible)
            return True
        finally:
            self._syncing = False

    def selected_key(self) -> str | None:
        rows = self.nodes_table.selectionModel().selectedRows()
        return self.nodes_model.rows[rows[0].row()].key if rows else None

    def _on_node_row(self, *_a: Any) -> None:
        if self._syncing:
            return
        key = self.selected_key()
        if key:
            self.sig_node_chosen.emit(key)

    def _on_module_row(self, *_a: Any) -> None:
        rows = self.modules_table.selectionModel().selectedRows()
        if rows:
            m = self.modules_model.rows[rows[0].row()]
            self.sig_nodes_highlighted.emit(list(m.onnx_nodes))


__all__ = ["ProfilePanel", "ProfileShapesDialog", "NodeTimesModel", "ModuleTimesModel", "graph_names",
           "status_text", "input_dims", "shapes_for", "load_saved", "comparison_html", "node_time_html",
           "heat_colour", "heat_legend_pixmap", "fmt_ms"]
