"""The diff view's table: one row per added, removed or changed node (and graph input/output/initializer).

A row names the node in each model, so a click can select it in both graph views; the table is a view of the
DiffReport (studio.diff), nothing here compares models.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt
from PySide6.QtGui import QColor

from studio.gui.graph import palette
from studio.gui.widgets.tables import RowsModel

HEADERS = (QT_TRANSLATE_NOOP("Columns", "Change"), QT_TRANSLATE_NOOP("Columns", "In A (before)"), QT_TRANSLATE_NOOP("Columns", "In B (after)"), QT_TRANSLATE_NOOP("Columns", "Op"), QT_TRANSLATE_NOOP("Columns", "What changed"))
# the diff's colours are the verdict palette's: green added, amber op changed, lavender shape only, red removed
STATUS_COLOUR = {"added": "supported", "changed": "risky", "shape only": "unknown", "removed": "unsupported"}
STATUS_WORD = {"added": QT_TRANSLATE_NOOP("Diff", "added (B only)"), "removed": QT_TRANSLATE_NOOP("Diff", "removed (A only)"), "changed": QT_TRANSLATE_NOOP("Diff", "changed"),
               "shape only": QT_TRANSLATE_NOOP("Diff", "shape only")}


def status_of(node: Any) -> str:
    """A node change's class as the page colours it: added, removed, changed (op, attributes, wiring) or
    shape only (the same op on differently shaped tensors)."""
    return "shape only" if getattr(node, "shape_only", False) else node.status


def _short(v: Any) -> str:
    text = "?" if v is None else ("×".join("?" if d is None else str(d) for d in v) if isinstance(v, list)
                                  else str(v))
    return text if len(text) <= 60 else text[:57] + "..."


def change_text(node: Any) -> str:
    """``shape of output 0: 1×?×32 → 1×8×32; attribute axis: 1 → 2`` (what a reader scans for)."""
    parts = [f"{c.kind} {c.what}: {_short(c.a)} → {_short(c.b)}" if c.what else f"{c.kind}: {_short(c.a)} → "
             f"{_short(c.b)}" for c in node.changes[:4]]
    more = len(node.changes) - 4
    return "; ".join(parts) + (QCoreApplication.translate("Diff", "; +{n} more").format(n=more) if more > 0 else "")


class ChangesModel(RowsModel):
    COLUMNS = HEADERS

    def __init__(self, theme: str = "light") -> None:
        super().__init__()
        self.theme = theme
        self.rows: list[tuple[str, str | None, str | None, str, str]] = []

    def set_report(self, report: Any | None) -> None:
        self.beginResetModel()
        self.rows = []
        if report is not None:
            for n in report.nodes:
                op = n.op_a if n.op_a == n.op_b or not n.op_b else (n.op_b if not n.op_a else f"{n.op_a} → {n.op_b}")
                self.rows.append((status_of(n), n.a, n.b, op, change_text(n) if n.status == "changed" else ""))
            for t in report.tensors:
                what = ""
                if t.status == "changed":
                    what = "; ".join(x for x in (
                        f"dtype: {t.dtype_a} → {t.dtype_b}" if t.dtype_a != t.dtype_b else "",
                        f"shape: {_short(t.shape_a)} → {_short(t.shape_b)}" if t.shape_a != t.shape_b else "") if x)
                self.rows.append((t.status, t.name if t.status != "added" else None,
                                  t.name if t.status != "removed" else None,
                                  QCoreApplication.translate("Diff", "graph {section}").format(section=t.section), what))
        self.endResetModel()

    def cell(self, row: Any, col: int, role: int) -> Any:
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            value = QCoreApplication.translate("Diff", STATUS_WORD.get(row[0], row[0])) if col == 0 else row[col]
            return "—" if value is None else value
        if role == Qt.ItemDataRole.ForegroundRole and col == 0:
            return QColor(palette.verdict_colors(self.theme)[STATUS_COLOUR[row[0]]][0])
        return None

    def nodes_of(self, row: int) -> tuple[str | None, str | None]:
        """(name in A, name in B) of a row (None on the side where it does not exist)."""
        _status, a, b, _op, _what = self.rows[row]
        return a, b
