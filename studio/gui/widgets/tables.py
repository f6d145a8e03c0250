"""Read-only result tables: one header row, no row numbers, whole rows selected, cells not editable; and
``RowsModel``, the base of the flat table models (no item objects: thousands of rows stay cheap)."""

from __future__ import annotations

from typing import Any, ClassVar

from PySide6.QtCore import QAbstractTableModel, QCoreApplication, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

_Index = QModelIndex | QPersistentModelIndex
RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)  # numbers, and their headers


def readonly_table(headers: list[str], *, alternating: bool = False) -> QTableWidget:
    """An empty table with ``headers``; pages add their own column sizing on top."""
    t = QTableWidget(0, len(headers))
    t.setHorizontalHeaderLabels([QCoreApplication.translate("Columns", h) for h in headers])  # QT_TRANSLATE_NOOP'd
    t.verticalHeader().setVisible(False)
    t.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    t.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
    if alternating:
        t.setAlternatingRowColors(True)
    return t


def fill_table(table: QTableWidget, rows: list[list[Any]]) -> None:
    """Show ``rows`` (cells as str); existing items are updated in place so a live refresh keeps the selection."""
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, v in enumerate(row):
            item = table.item(r, c)
            if item is None:
                table.setItem(r, c, QTableWidgetItem(str(v)))
            elif item.text() != str(v):
                item.setText(str(v))


class RowsModel(QAbstractTableModel):
    """A flat model over ``self.rows`` under the header ``COLUMNS`` (``RIGHT_ALIGNED``: header sections aligned
    like the numbers below them): the counts, the header and ``data``; a subclass sets ``rows`` and answers
    ``cell(row, column, role)`` for one row object."""

    COLUMNS: ClassVar[tuple[str, ...]] = ()
    RIGHT_ALIGNED: ClassVar[frozenset[int]] = frozenset()
    rows: list[Any]

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal:
            if role == Qt.ItemDataRole.DisplayRole:
                return QCoreApplication.translate("Columns", self.COLUMNS[section])  # QT_TRANSLATE_NOOP'd
            if role == Qt.ItemDataRole.TextAlignmentRole and section in self.RIGHT_ALIGNED:
                return RIGHT
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        return self.cell(self.rows[index.row()], index.column(), role)

    def cell(self, row: Any, col: int, role: int) -> Any:
        raise NotImplementedError
