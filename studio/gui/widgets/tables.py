"""Read-only result tables: one header row, no row numbers, whole rows selected, cells not editable."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QTableWidget, QTableWidgetItem


def readonly_table(headers: list[str], *, alternating: bool = False) -> QTableWidget:
    """An empty table with ``headers``; pages add their own column sizing on top."""
    t = QTableWidget(0, len(headers))
    t.setHorizontalHeaderLabels(headers)
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
