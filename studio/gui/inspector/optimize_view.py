"""The Optimize window's two views of the candidates: a scatter (accuracy against the objective, the budget as a
line, the Pareto front and the chosen variant marked) and a table (one row per candidate, every figure with the
tool that produced it in its tooltip). Both take ``studio.tune.report.Candidate`` objects as the search publishes
them (``job.partial["candidate"]``) and the final ``TuneReport``; a click on either selects the candidate in both.
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

COLUMNS = (QT_TRANSLATE_NOOP("Columns", "Part"), QT_TRANSLATE_NOOP("Columns", "Id"), QT_TRANSLATE_NOOP("Columns", "Precision"), QT_TRANSLATE_NOOP("Columns", "Graph changes"), QT_TRANSLATE_NOOP("Columns", "Status"), QT_TRANSLATE_NOOP("Columns", "Tool verdict"), "NPU", QT_TRANSLATE_NOOP("Columns", "Accuracy"), QT_TRANSLATE_NOOP("Columns", "Size"),
           QT_TRANSLATE_NOOP("Columns", "Latency"))
ID_ROLE = Qt.ItemDataRole.UserRole + 1
OBJECTIVE_AXIS = {"npu-coverage": QT_TRANSLATE_NOOP("CandidateScatter", "nodes on the device (%)"),
                  "size": QT_TRANSLATE_NOOP("CandidateScatter", "size (KiB)"),
                  "host-latency": QT_TRANSLATE_NOOP("CandidateScatter", "host latency (ms)")}
COLORS = {"chosen": "#e8710a", "pareto": "#1967d2", "met": "#188038", "other": "#9aa0a6"}


def objective_x(c: Any, objective: str) -> float | None:
    """The candidate's objective on the scatter's axis unit (percent, KiB, ms)."""
    v = c.objective_value(objective)
    if v is None:
        return None
    return 100.0 * v if objective == "npu-coverage" else v / 1024.0 if objective == "size" else float(v)


def fmt_size(n: Any) -> str:
    return "-" if not n else f"{n / 1024:.1f} KiB" if n < 1024 * 1024 else f"{n / 1024 / 1024:.2f} MiB"


def fmt_acc(v: float | None, metric: str) -> str:
    return "-" if v is None else f"{v:.3g}" if metric == "max-abs" else f"{v:.6f}"


class CandidateTable(QTableWidget):
    """One row per candidate, updated in place as each is judged; ``sig_chosen`` carries the clicked id."""

    sig_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.setHorizontalHeaderLabels([QCoreApplication.translate("Columns", c) for c in COLUMNS])
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.verticalHeader().hide()
        h = self.horizontalHeader()
        h.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)  # the full recipe is in the tooltip and the details
        self.rows: dict[str, int] = {}
        self.setColumnHidden(0, True)
        self.itemSelectionChanged.connect(self._on_select)

    def clear_rows(self) -> None:
        self.setRowCount(0)
        self.rows.clear()
        self.setColumnHidden(0, True)  # the Part column shows once a second part appears


    def put(self, c: Any, metric: str) -> None:
        row = self.rows.get(c.id)
        if row is None:
            row = self.rowCount()
            self.insertRow(row)
            self.rows[c.id] = row
            if row and self.isColumnHidden(0) and self.item(0, 0) is not None and self.item(0, 0).text() != c.part:
                self.setColumnHidden(0, False)
        j = c.judged or {}
        verdict = (j.get("verdict") or {}).get("verdict") or ""
        cov = j.get("coverage")
        acc = c.accuracy_value(metric) if c.accuracy else None
        mark = " ★" if c.chosen else " ◆" if c.pareto else ""
        changes, _sep, prec = c.label.partition(" | ")
        cells = [c.part, c.id + mark, prec, changes, c.status, verdict, "-" if cov is None else f"{100 * cov:.0f}%",
                 fmt_acc(acc, metric), fmt_size(j.get("size_bytes")),
                 "-" if c.latency_ms is None else f"{c.latency_ms:.3f} ms"]
        tips = ["", self.tr("★ chosen, ◆ on the Pareto front"), c.label, "\n".join([c.label, *(c.recipe.get("notes") or [])]),
                j.get("error", "")[:600], (j.get("verdict") or {}).get("by", "") or j.get("tool", ""),
                j.get("tool", ""), (c.accuracy or {}).get("by", ""), j.get("size_by", ""), c.latency_by]
        for col, (text, tip) in enumerate(zip(cells, tips, strict=True)):
            item = QTableWidgetItem(str(text))
            item.setData(ID_ROLE, c.id)
            if tip:
                item.setToolTip(tip)
            if c.chosen:
                f = item.font()
                f.setBold(True)
                item.setFont(f)
            if col == 4 and c.status in ("failed", "crashed", "error"):
                item.setForeground(QColor("#c5221f"))
            if col == 7 and c.accuracy is not None:
                item.setForeground(QColor(COLORS["met"] if c.meets_budget else "#c5221f"))
            self.setItem(row, col, item)

    def select_id(self, cid: str) -> None:
        row = self.rows.get(cid)
        if row is not None and self.currentRow() != row:
            self.selectRow(row)

    def selected_id(self) -> str | None:
        items = self.selectedItems()
        return items[0].data(ID_ROLE) if items else None

    def _on_select(self) -> None:
        cid = self.selected_id()
        if cid:
            self.sig_chosen.emit(cid)


class CandidateScatter(QWidget):
    """Accuracy (y) against the objective (x) of every judged candidate; the budget as a dashed line. A QWidget
    holding the plot (never name an attribute "metric": QPaintDevice.metric() is a virtual Qt calls)."""

    sig_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.plot = pg.PlotWidget(background="w")
        lay.addWidget(self.plot, 1)
        legend = QLabel(self.tr("<span style='color:{value}'>★</span> chosen · "
                                "<span style='color:{value2}'>●</span> Pareto front · "
                                "<span style='color:{value3}'>●</span> meets the budget · "
                                "<span style='color:{value4}'>●</span> misses it · dashed: the budget").format(value=COLORS['chosen'], value2=COLORS['pareto'], value3=COLORS['met'], value4=COLORS['other']))
        legend.setWordWrap(True)
        legend.setProperty("role", "muted")
        lay.addWidget(legend)
        self.setMinimumSize(260, 200)
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.points = pg.ScatterPlotItem(size=11, hoverable=True, tip=None)
        self.points.sigClicked.connect(self._on_click)
        self.plot.addItem(self.points)
        self.budget_line = pg.InfiniteLine(angle=0, pen=pg.mkPen("#c5221f", style=Qt.PenStyle.DashLine))
        self.budget_line.hide()
        self.plot.addItem(self.budget_line)
        self.selected: str | None = None
        self.candidates: dict[str, Any] = {}
        self.acc_metric, self.objective = "cosine", "npu-coverage"

    def setup(self, metric: str, objective: str, budget: float | None) -> None:
        self.acc_metric, self.objective = metric, objective
        self.candidates.clear()
        self.points.clear()
        self.plot.setLabel("left", f"{metric} vs FP32")
        self.plot.setLabel("bottom", self.tr(OBJECTIVE_AXIS[objective]) if objective in OBJECTIVE_AXIS else objective)
        if budget is not None:
            self.budget_line.setValue(budget)
            self.budget_line.show()
        else:
            self.budget_line.hide()

    def put(self, c: Any) -> None:
        self.candidates[c.id] = c
        self.redraw()

    def redraw(self) -> None:
        spots = []
        for c in self.candidates.values():
            x = objective_x(c, self.objective)
            y = c.accuracy_value(self.acc_metric) if c.accuracy else None
            if x is None or y is None or y != y:
                continue
            kind = "chosen" if c.chosen else "pareto" if c.pareto else "met" if c.meets_budget else "other"
            sel = c.id == self.selected
            spots.append({"pos": (x, y), "data": c.id, "brush": pg.mkBrush(COLORS[kind]),
                          "symbol": "star" if c.chosen else "o", "size": 16 if c.chosen or sel else 11,
                          "pen": pg.mkPen("#202124", width=2.5 if sel else 0.5)})
        self.points.setData(spots)

    def select_id(self, cid: str) -> None:
        if self.selected != cid:
            self.selected = cid
            self.redraw()

    def _on_click(self, _item: Any, points: Any, *_: Any) -> None:
        if len(points):
            self.sig_chosen.emit(str(points[0].data()))


__all__ = ["CandidateScatter", "CandidateTable", "objective_x"]
