"""The inspector's Profile tab: per-node times from studio.profiling as a top-N table linked to the graph,
per-module times for HF exports, and the before/after comparison of a fix.

The panel only renders a ProfileReport / ProfileComparison (the page runs ``studio.profiling.api.profile``
as a job); rows carry profile node keys, the page maps them to graph names (``graph_names``).
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    QRectF,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor, QLinearGradient, QPainter, QPen, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from studio.gui.graph import palette

_Index = QModelIndex | QPersistentModelIndex
KEY_ROLE = Qt.ItemDataRole.UserRole + 1
SHARE_ROLE = Qt.ItemDataRole.UserRole + 2
STATUS_LABEL = {"measured": "measured", "fused": "fused", "folded": "folded", "removed": "removed",
                "not-run": "not run"}
SHOW_CHOICES = (("Top 10", 10), ("Top 25", 25), ("Top 100", 100), ("All nodes", -1))


# ---- data helpers ------------------------------------------------------------------------------------------

def graph_names(rep: Any, graph: Any) -> dict[str, str]:
    """Profile node key -> graph node name. Both walk the main graph in order, but spell repeated names
    differently (``#i`` vs ``_i``), so the i-th op node of the graph is the i-th profiled node."""
    if graph is None:
        return {n.key: n.key for n in rep.nodes}
    ops = [n for n in graph.nodes if n.kind == "op"]
    out: dict[str, str] = {}
    for i, nt in enumerate(rep.nodes):
        if i < len(ops) and ops[i].op_type == nt.op_type:
            out[nt.key] = ops[i].name
        elif graph.index_of(nt.key) is not None:
            out[nt.key] = nt.key
    return out


def status_text(nt: Any, names: dict[str, str] | None = None) -> str:
    """'measured', 'fused into X', 'folded', ... as the table shows it."""
    if nt.status == "fused" and nt.fused_into:
        return f"fused into {(names or {}).get(nt.fused_into, nt.fused_into)}"
    text = STATUS_LABEL.get(nt.status, nt.status)
    if nt.status == "measured" and nt.ort_op:
        text += f" (as {nt.ort_op})"
    return text


def input_dims(stats_inputs: dict[str, Any]) -> list[tuple[str, str, int, int]]:
    """Dynamic dims of the graph inputs: (field label, input, axis, default) for each; named dims once."""
    from studio.gui.inspector.fixes import _DEFAULTS

    out: list[tuple[str, str, int, int]] = []
    seen: set[str] = set()
    for name, info in (stats_inputs or {}).items():
        for ax, d in enumerate(info.get("shape") or []):
            if isinstance(d, int) and d > 0:
                continue
            label = str(d) if isinstance(d, str) and d else f"{name}[{ax}]"
            if label in seen:
                continue
            seen.add(label)
            default = _DEFAULTS.get(label.lower(), 1 if ax == 0 else 8)
            out.append((label, name, ax, default))
    return out


def shapes_for(stats_inputs: dict[str, Any], values: dict[str, int]) -> dict[str, list[int]]:
    """Concrete input shapes from the declared ones and ``values`` for their dynamic dims (by label)."""
    shapes: dict[str, list[int]] = {}
    for name, info in (stats_inputs or {}).items():
        dims = info.get("shape")
        if dims is None:
            continue
        shape: list[int] = []
        for ax, d in enumerate(dims):
            if isinstance(d, int) and d > 0:
                shape.append(d)
                continue
            label = str(d) if isinstance(d, str) and d else f"{name}[{ax}]"
            if label not in values:
                break
            shape.append(int(values[label]))
        else:
            shapes[name] = shape
    return shapes


def load_saved(ws: Any, model: Path) -> tuple[Any, bool] | None:
    """The workspace's saved profile of ``model`` and whether the model changed after it was taken.

    Exports are all called model.onnx, so a profile whose recorded path is another file is not this one's.
    """
    from studio.core.errors import StudioError
    from studio.profiling.api import ProfileReport, workspace_profile_path

    if ws is None:
        return None
    path = workspace_profile_path(ws, model)
    if not path.is_file():
        return None
    try:
        rep = ProfileReport.load(path)
    except StudioError:
        return None
    recorded = Path(rep.model)
    if not recorded.is_absolute():
        recorded = Path(ws.root) / recorded if hasattr(ws, "root") else recorded
    try:
        same = recorded.resolve() == model.resolve()
    except OSError:
        same = False
    if not same:
        return None
    try:
        stale = model.stat().st_mtime > path.stat().st_mtime
    except OSError:
        stale = False
    return rep, stale


def fmt_ms(v: float | None) -> str:
    if v is None:
        return "—"
    if v >= 100:
        return f"{v:,.1f}"
    if v >= 1:
        return f"{v:.3f}"
    return f"{v:.4f}"


def heat_colour(value: float, top: float) -> str:
    """The ramp colour the graph uses for ``value`` on a scale up to ``top``."""
    ramp = palette.heat_ramp(10)
    if top <= 0:
        return ramp[0]
    return ramp[min(9, int(max(0.0, value) / top * 9.999))]


def heat_legend_pixmap(width: int = 140, height: int = 10) -> QPixmap:
    pm = QPixmap(width, height)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    grad = QLinearGradient(0, 0, width, 0)
    ramp = palette.heat_ramp(10)
    for i, c in enumerate(ramp):
        grad.setColorAt(i / (len(ramp) - 1), QColor(c))
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    p.setPen(QPen(QColor("#8c96a5"), 0.8))
    p.setBrush(QBrush(grad))
    p.drawRoundedRect(QRectF(0.5, 0.5, width - 1, height - 1), 3, 3)
    p.end()
    return pm


# ---- HTML fragments ----------------------------------------------------------------------------------------

def _muted(theme: str) -> str:
    return palette.TEXT[theme][1]


def node_time_html(nt: Any, rep: Any, theme: str = "light", names: dict[str, str] | None = None) -> str:
    """The node's profiled time for the Node details panel."""
    muted = _muted(theme)
    if nt.mean_ms > 0:
        colour = heat_colour(nt.share, max((n.share for n in rep.nodes), default=0.0))
        ink = "#ffffff" if QColor(colour).lightness() < 150 else palette.TEXT["light"][0]
        chip = (f"<span style='background:{colour}; color:{ink}; font-weight:600'>"
                f"&nbsp;{fmt_ms(nt.mean_ms)} ms&nbsp;</span>")
        line = (f"{chip} mean · {fmt_ms(nt.p95_ms)} ms p95 · <b>{100 * nt.share:.1f}%</b> of node time"
                f" · {nt.calls:g} kernel call(s) per run")
    else:
        line = f"<b>0 ms</b> · {escape(status_text(nt, names))}"
    extra = f"<br><span style='color:{muted}'>{escape(nt.reason)}</span>" if nt.reason else ""
    module = f"<br><span style='color:{muted}'>module {escape(nt.module)}</span>" if nt.module else ""
    return (f"<p style='margin:4px 0 2px 0'><span style='color:{muted}'>Profiled time "
            f"({rep.runs} runs):</span> {line}{extra}{module}</p>")


def comparison_html(c: Any, theme: str = "light", top: int = 15) -> str:
    """Before/after of a fix from studio.profiling's ProfileComparison: total, per scope and per node."""
    ok, bad = ("#1a7f37", "#cf222e") if theme == "light" else ("#3fb950", "#f85149")
    text, muted = palette.TEXT[theme]
    border = "#d0d7de" if theme == "light" else "#3a414b"

    def delta(d: float, before: float | None, after: float | None = 0.0) -> str:
        if abs(d) < 1e-9:
            return f"<span style='color:{muted}'>±0</span>"
        if after is None:
            note = " gone"
        elif before is None:
            note = " new"
        else:
            note = f" ({100 * d / before:+.0f}%)" if before else ""
        return f"<b style='color:{ok if d < 0 else bad}'>{d:+.4f}</b><span style='color:{muted}'>{note}</span>"

    out = [f"<style>body {{ color: {text}; }} table.t {{ border-collapse: collapse; }}"
           f" table.t td, table.t th {{ border-bottom: 1px solid {border}; padding: 2px 6px 2px 0; }}"
           f" table.t th {{ color: {muted}; text-align: left; font-weight: 600; }}"
           f" .mono {{ font-family: 'DejaVu Sans Mono', monospace; }}</style>"]
    out.append(f"<p style='font-weight:600; font-size:11pt; margin:0'>{escape(Path(c.before).name)} → "
               f"{escape(Path(c.after).name)}</p>")
    ratio = f" · ×{c.run_ratio:.2f}" if c.run_ratio else ""
    out.append(f"<p style='margin:4px 0'>Run time {fmt_ms(c.run_before_ms)} → <b>{fmt_ms(c.run_after_ms)} ms</b> "
               f"({delta(c.run_delta_ms, c.run_before_ms)} ms{ratio})<br>Node time {fmt_ms(c.node_total_before_ms)}"
               f" → {fmt_ms(c.node_total_after_ms)} ms · {len(c.only_before)} node(s) gone, "
               f"{len(c.only_after)} new</p>")
    for w in c.warnings:
        out.append(f"<p style='color:{bad}; margin:2px 0'>⚠ {escape(w)}</p>")
    for title, rows in (("By scope", c.scopes), ("By node", c.nodes)):
        out.append(f"<p style='font-weight:600; margin:8px 0 2px 0'>{title}</p><table class='t' width='100%'>"
                   "<tr><th>before ms</th><th>after ms</th><th>Δ ms</th><th>" +
                   ("scope" if title == "By scope" else "node") + "</th></tr>")
        for d in rows[:top]:
            op = d.op_before or d.op_after
            label = escape(d.key) + (f" <span style='color:{muted}'>{escape(op)}</span>" if op else "")
            out.append(f"<tr><td>{fmt_ms(d.before_ms)}</td><td>{fmt_ms(d.after_ms)}</td>"
                       f"<td>{delta(d.delta_ms, d.before_ms, d.after_ms)}</td><td class='mono'>{label}</td></tr>")
        out.append("</table>")
        if len(rows) > top:
            out.append(f"<p style='color:{muted}'>… {len(rows) - top} more</p>")
    return "".join(out)


# ---- table models ------------------------------------------------------------------------------------------

NODE_COLUMNS = ("Node", "Op", "Mean ms", "p95 ms", "Share", "Status", "Module")


class NodeTimesModel(QAbstractTableModel):
    """The slowest nodes (or every node, slowest first) of one profile."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[Any] = []  # studio.profiling.report.NodeTime
        self.names: dict[str, str] = {}
        self.top_share = 0.0
        self._row_of: dict[str, int] = {}
        self._theme = "light"

    def set_rows(self, rows: list[Any], names: dict[str, str], theme: str = "light") -> None:
        self.beginResetModel()
        self.rows, self.names, self._theme = list(rows), dict(names), theme
        self.top_share = max((r.share for r in self.rows), default=0.0)
        self._row_of = {r.key: i for i, r in enumerate(self.rows)}
        self.endResetModel()

    def row_of(self, key: str) -> int | None:
        return self._row_of.get(key)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(NODE_COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal:
            if role == Qt.ItemDataRole.DisplayRole:
                return NODE_COLUMNS[section]
            if role == Qt.ItemDataRole.TextAlignmentRole and 2 <= section <= 4:
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        n = self.rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return self.names.get(n.key, n.key)
            if col == 1:
                return n.op_type
            if col == 2:
                return fmt_ms(n.mean_ms)
            if col == 3:
                return fmt_ms(n.p95_ms) if n.mean_ms > 0 else "—"
            if col == 4:
                return f"{100 * n.share:.1f}%"
            if col == 5:
                return status_text(n, self.names)
            if col == 6:
                return n.module
        elif role == Qt.ItemDataRole.ToolTipRole:
            tip = f"{n.key}\n{n.op_type}: {status_text(n, self.names)}"
            return tip + (f"\n{n.reason}" if n.reason else "") + (f"\nmodule {n.module}" if n.module else "")
        elif role == Qt.ItemDataRole.TextAlignmentRole and 2 <= col <= 4:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        elif role == Qt.ItemDataRole.ForegroundRole and (n.mean_ms <= 0 and col != 0 or col in (1, 6)):
            return QBrush(QColor(palette.TEXT[self._theme][1]))
        elif role == KEY_ROLE:
            return n.key
        elif role == SHARE_ROLE:
            return n.share / self.top_share if self.top_share > 0 else 0.0
        return None


MODULE_COLUMNS = ("Module", "Type", "PyTorch ms", "ONNX ms", "Nodes")


class ModuleTimesModel(QAbstractTableModel):
    """Per torch module: PyTorch's inclusive time next to the summed ORT time of the nodes it exported to."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[Any] = []  # studio.profiling.report.ModuleTime

    def set_rows(self, rows: list[Any]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(MODULE_COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return MODULE_COLUMNS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        m = self.rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (m.module, m.type, fmt_ms(m.torch_mean_ms), fmt_ms(m.onnx_mean_ms), f"{len(m.onnx_nodes):,}")[col]
        if role == Qt.ItemDataRole.TextAlignmentRole and col >= 2:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{m.module} {m.type}\n{len(m.onnx_nodes)} ONNX nodes, {100 * m.share:.1f}% of node time"
        return None


class ShareBarDelegate(QStyledItemDelegate):
    """The share column: a heat-coloured bar (same ramp as the graph) left of the percentage."""

    TEXT_WIDTH = 44

    def __init__(self, theme: str = "light", parent: Any = None) -> None:
        super().__init__(parent)
        self.theme = theme

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        super().paint(painter, option, index)  # background, selection and the right-aligned percentage
        frac = float(index.data(SHARE_ROLE) or 0.0)
        r = option.rect.adjusted(4, 6, -self.TEXT_WIDTH - 2, -6)  # type: ignore[attr-defined]
        if frac > 0 and r.width() > 4:
            painter.save()
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(heat_colour(frac, 1.0)))
            painter.drawRoundedRect(QRectF(r.left(), r.top(), max(2.0, r.width() * frac), r.height()), 2, 2)
            painter.restore()

    def initStyleOption(self, option: QStyleOptionViewItem, index: _Index) -> None:
        super().initStyleOption(option, index)
        option.displayAlignment = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter  # type: ignore


# ---- dialog ------------------------------------------------------------------------------------------------

class ProfileShapesDialog(QDialog):
    """Values for the model's dynamic input dims, and how many runs to measure."""

    def __init__(self, stats_inputs: dict[str, Any], runs: int = 20, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Profile with ONNX Runtime")
        self.setMinimumWidth(380)
        self.stats_inputs = dict(stats_inputs or {})
        lay = QVBoxLayout(self)
        info = QLabel("Some input dims are dynamic: choose the sizes to profile at. Per-node times are the mean "
                      "and p95 over the measured runs, after warm-up runs.")
        info.setWordWrap(True)
        info.setProperty("role", "muted")
        lay.addWidget(info)
        form = QFormLayout()
        self.fields: dict[str, QLineEdit] = {}
        for label, _name, _ax, default in input_dims(self.stats_inputs):
            edit = QLineEdit(str(default))
            self.fields[label] = edit
            form.addRow(label, edit)
        self.runs = QSpinBox()
        self.runs.setRange(1, 10_000)
        self.runs.setValue(runs)
        form.addRow("measured runs", self.runs)
        lay.addLayout(form)
        self.error = QLabel("")
        self.error.setProperty("role", "error")
        lay.addWidget(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Profile")
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)

    def values(self) -> dict[str, int]:
        return {k: int(e.text().strip()) for k, e in self.fields.items() if e.text().strip().isdigit()}

    def shapes(self) -> dict[str, list[int]]:
        return shapes_for(self.stats_inputs, self.values())

    def _accept(self) -> None:
        for label, edit in self.fields.items():
            text = edit.text().strip()
            if not text.isdigit() or int(text) < 1:
                self.error.setText(f"{label}: enter a positive integer")
                edit.setFocus()
                return
        self.accept()


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
        self.profile_button = QPushButton("Profile")
        self.profile_button.setToolTip("run ONNX Runtime's profiler on this model (per-node mean / p95 / share)")
        self.profile_button.setEnabled(False)
        self.profile_button.clicked.connect(self.sig_profile_requested.emit)
        bar.addWidget(self.profile_button)
        self.compare_button = QPushButton("Compare with original")
        self.compare_button.setToolTip("profile this fixed model with the original's inputs and show the deltas")
        self.compare_button.hide()
        self.compare_button.clicked.connect(self.sig_compare_requested.emit)
        bar.addWidget(self.compare_button)
        bar.addStretch(1)
        bar.addWidget(QLabel("Show"))
        self.show_combo = QComboBox()
        for label, n in SHOW_CHOICES:
            self.show_combo.addItem(label, n)
        self.show_combo.setCurrentIndex(1)
        self.show_combo.currentIndexChanged.connect(lambda _i: self._fill_nodes())
        bar.addWidget(self.show_combo)
        lay.addLayout(bar)

        self.summary = QLabel("No profile yet. <b>Profile</b> runs the model with ONNX Runtime's profiler and "
                              "colours the graph by time.")
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
        self.tabs.addTab(self.nodes_table, "Nodes")
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
        self.tabs.addTab(mod_host, "Modules")
        self.compare_view = QTextBrowser()
        self.compare_view.setFrameShape(QFrame.Shape.NoFrame)
        self.compare_view.setOpenLinks(False)
        self.compare_view.document().setDocumentMargin(6)
        self.compare_view.setPlaceholderText("After a fix, “Compare with original” profiles the fixed model and "
                                             "shows what got faster or slower here.")
        self.tabs.addTab(self.compare_view, "Compare")
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
            self.summary.setText("No profile yet. <b>Profile</b> runs the model with ONNX Runtime's profiler and "
                                 "colours the graph by time.")
            self.nodes_model.set_rows([], {}, self.theme)
            self.modules_model.set_rows([])
            self._update_tabs()
            return
        muted = _muted(self.theme)
        counts: dict[str, int] = {}
        for n in rep.nodes:
            counts[n.status] = counts.get(n.status, 0) + 1
        shapes = ", ".join(f"{escape(k)} [{'×'.join(str(d) for d in v)}]" for k, v in rep.input_shapes.items())
        lines = [f"<span style='font-size:12pt; font-weight:600'>{fmt_ms(rep.run_mean_ms)} ms</span> per run "
                 f"<span style='color:{muted}'>(p95 {fmt_ms(rep.run_p95_ms)} ms) · node time "
                 f"{fmt_ms(rep.node_total_ms)} ms</span>",
                 f"<span style='color:{muted}'>{len(rep.nodes):,} nodes: " +
                 ", ".join(f"{v:,} {STATUS_LABEL.get(k, k)}" for k, v in counts.items()) + "</span>",
                 f"<span style='color:{muted}'>" + " · ".join(x for x in (
                     shapes, f"{rep.runs} runs after {rep.warmup} warm-up", escape(rep.runtime)) if x) + "</span>"]
        if rep.custom_ops:
            lines.append(f"<span style='color:{muted}'>custom ops: {escape(rep.custom_ops)}</span>")
        when = f"taken {escape(rep.created.replace('T', ' '))}" if rep.created else ""
        if saved_to is not None:
            when += f" · saved to {escape(saved_to.name)}"
        if note:
            when += f" · {escape(note)}"
        if when:
            lines.append(f"<span style='color:{muted}'>{when}</span>")
        warn = "#9a6700" if self.theme == "light" else "#d29922"
        if stale:
            lines.append(f"<span style='color:{warn}'>⚠ the model changed after this profile: run Profile again"
                         "</span>")
        for w in rep.warnings[:3]:
            lines.append(f"<span style='color:{warn}'>⚠ {escape(w)}</span>")
        self.summary.setText("<br>".join(lines))
        self._fill_nodes()
        self.modules_model.set_rows(rep.modules)
        if rep.modules:
            src = {"node names": "the exporter's node names", "metadata": "the exporter's scope metadata"}
            torch = ("PyTorch times from the HF model on the same inputs" if any(
                m.torch_mean_ms is not None for m in rep.modules) else "no PyTorch times (not an HF export folder)")
            self.modules_note.setText(f"Modules from {src.get(rep.module_source, rep.module_source)}; {torch}. "
                                      "ONNX ms sums the module's nodes (inclusive). Click a module to ring its "
                                      "nodes.")
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
        self.tabs.setTabText(0, f"Nodes ({len(rows):,} of {len(rep.nodes):,})" if len(rows) < len(rep.nodes)
                             else f"Nodes ({len(rows):,})")
        self.nodes_table.setToolTip("" if total else "ORT reported no kernel times")

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
        self.tabs.setTabText(1, f"Modules ({len(rep.modules)})" if rep is not None and rep.modules else "Modules")
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
