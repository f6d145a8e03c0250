"""Findings of an InspectionReport as a Qt table model (thousands of rows stay cheap: no item objects)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from studio.gui.graph import palette

COLUMNS = ("Severity", "Target", "Rule", "Node", "Op", "Message", "Hint")
SEVERITY_ORDER = {"error": 0, "warning": 1, "note": 2}
_Index = QModelIndex | QPersistentModelIndex


class FindingsModel(QAbstractTableModel):
    """Rows are the findings for one target (plus the "*" ones that hold for all), worst first."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[Any] = []  # studio.inspect.report.Finding
        self._by_node: dict[str, list[int]] = {}
        self._theme = "light"
        self._bold = QFont()
        self._bold.setBold(True)

    def set_findings(self, findings: list[Any], theme: str = "light") -> None:
        self.beginResetModel()
        self._theme = theme
        self.rows = sorted(findings, key=lambda f: (SEVERITY_ORDER.get(f.severity, 3), f.target == "*",
                                                    f.rule, f.node or ""))
        self._by_node = {}
        for r, f in enumerate(self.rows):
            for key in (f.nodes or ([f.node] if f.node else [])):
                self._by_node.setdefault(key, []).append(r)
        self.endResetModel()

    def rows_for_node(self, node_key: str) -> list[int]:
        """Rows whose finding names ``node_key`` (grouped findings name several nodes)."""
        return list(self._by_node.get(node_key, []))

    def finding(self, row: int) -> Any:
        return self.rows[row]

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        f = self.rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(f, col)
        if role == Qt.ItemDataRole.ToolTipRole:
            if col in (5, 6):
                return f"{f.message}\n\nWhat to do: {f.hint}" if f.hint else f.message
            if col == 3 and len(f.nodes) > 1:
                return "\n".join(f.nodes[:30]) + (f"\n… {len(f.nodes) - 30} more" if len(f.nodes) > 30 else "")
            return None
        if role == Qt.ItemDataRole.ForegroundRole and col == 0:
            solid = palette.verdict_colors(self._theme)[f.verdict if f.verdict in palette.VERDICT_INDEX
                                                        else "unknown"][2]
            return QBrush(QColor(solid))
        if role == Qt.ItemDataRole.FontRole and col == 0:
            return self._bold
        if role == Qt.ItemDataRole.UserRole:
            return f
        return None

    @staticmethod
    def _text(f: Any, col: int) -> str:
        if col == 0:
            return {"error": "● error", "warning": "▲ warning", "note": "○ note"}.get(f.severity, f.severity)
        if col == 1:
            return "all" if f.target == "*" else f.target
        if col == 2:
            return f.rule
        if col == 3:
            node = f.node or (f.tensor and f"tensor {f.tensor}") or "—"
            return f"{node}  (+{f.count - 1})" if f.count > 1 else node
        if col == 4:
            return f.op_type or ""
        if col == 5:
            return f.message
        if col == 6:
            return f.hint
        return ""
