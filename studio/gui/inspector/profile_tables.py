"""Table models of the Profile tab: the slowest nodes of a profile, per-module times, and the share column's
heat bar. Rows carry profile node keys (``KEY_ROLE``); the page maps them to graph names.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QModelIndex, QPersistentModelIndex, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem

from studio.gui.graph import palette
from studio.gui.inspector.profile_format import fmt_ms, heat_colour, status_text
from studio.gui.widgets.tables import RowsModel

_Index = QModelIndex | QPersistentModelIndex
KEY_ROLE = Qt.ItemDataRole.UserRole + 1
SHARE_ROLE = Qt.ItemDataRole.UserRole + 2

NODE_COLUMNS = (QT_TRANSLATE_NOOP("Columns", "Node"), QT_TRANSLATE_NOOP("Columns", "Op"), QT_TRANSLATE_NOOP("Columns", "Mean ms"), QT_TRANSLATE_NOOP("Columns", "p95 ms"), QT_TRANSLATE_NOOP("Columns", "Share"), QT_TRANSLATE_NOOP("Columns", "Status"), QT_TRANSLATE_NOOP("Columns", "Module"))


class NodeTimesModel(RowsModel):
    """The slowest nodes (or every node, slowest first) of one profile."""

    COLUMNS = NODE_COLUMNS
    RIGHT_ALIGNED = frozenset({2, 3, 4})

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

    def cell(self, n: Any, col: int, role: int) -> Any:
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


MODULE_COLUMNS = (QT_TRANSLATE_NOOP("Columns", "Module"), QT_TRANSLATE_NOOP("Columns", "Type"), QT_TRANSLATE_NOOP("Columns", "PyTorch ms"), QT_TRANSLATE_NOOP("Columns", "ONNX ms"), QT_TRANSLATE_NOOP("Columns", "Nodes"))


class ModuleTimesModel(RowsModel):
    """Per torch module: PyTorch's inclusive time next to the summed ORT time of the nodes it exported to."""

    COLUMNS = MODULE_COLUMNS

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[Any] = []  # studio.profiling.report.ModuleTime

    def set_rows(self, rows: list[Any]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def cell(self, m: Any, col: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return (m.module, m.type, fmt_ms(m.torch_mean_ms), fmt_ms(m.onnx_mean_ms), f"{len(m.onnx_nodes):,}")[col]
        if role == Qt.ItemDataRole.TextAlignmentRole and col >= 2:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{m.module} {m.type}\n" + QCoreApplication.translate(
                "ProfilePanel", "{n} ONNX nodes, {share} of node time").format(n=len(m.onnx_nodes),
                                                                              share=f"{100 * m.share:.1f}%")
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


__all__ = ["KEY_ROLE", "SHARE_ROLE", "NODE_COLUMNS", "MODULE_COLUMNS", "NodeTimesModel", "ModuleTimesModel",
           "ShareBarDelegate"]
