"""The Fleet page's views: a table with a row per agent of a rollout (ring, state, version, gate values, reason)
and the timeline of events, both redrawn from a ``RolloutState`` (the engine's or the one read back from the
workspace); and, while the fleet has no rollout, its members from the fleet file. They keep no state of their
own."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QAbstractTableModel,
    QCoreApplication,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QListWidget, QTableView

from studio.fleet.render import event_line

COLUMNS = (QT_TRANSLATE_NOOP("Columns", "agent"), QT_TRANSLATE_NOOP("Columns", "url"), QT_TRANSLATE_NOOP("Columns", "ring"), QT_TRANSLATE_NOOP("Columns", "state"), QT_TRANSLATE_NOOP("Columns", "version"), QT_TRANSLATE_NOOP("Columns", "previous"), QT_TRANSLATE_NOOP("Columns", "requests"), QT_TRANSLATE_NOOP("Columns", "errors %"), QT_TRANSLATE_NOOP("Columns", "p95 ms"), QT_TRANSLATE_NOOP("Columns", "p99 ms"),
           QT_TRANSLATE_NOOP("Columns", "gate"), QT_TRANSLATE_NOOP("Columns", "reason"))
STATE_COLOUR = {"passed": "#2a7a2a", "updated": "#2a7a2a", "watching": "#1f5fa8", "deploying": "#1f5fa8",
                "down": "#c62828", "failed": "#c62828", "rollback_failed": "#c62828", "rolled_back": "#9a6a00",
                "skipped": "#9a6a00"}
_Index = QModelIndex | QPersistentModelIndex


def _gate_cells(g: dict[str, Any] | None) -> tuple[str, str, str, str, str]:
    if not g:
        return "", "", "", "", ""

    def num(key: str, fmt: str) -> str:
        v = g.get(key)
        return "" if v is None else format(v, fmt)

    return (num("requests", "d") if isinstance(g.get("requests"), int) else num("requests", ".0f"),
            num("error_pct", ".2f"), num("p95_ms", ".2f"), num("p99_ms", ".2f"), str(g.get("verdict", "")))


class AgentsModel(QAbstractTableModel):
    """One row per agent of the rollout, in the fleet file's order."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[Any] = []  # AgentRow
        self.ring_names: list[str] = []

    def set_state(self, state: Any | None) -> None:
        self.beginResetModel()
        self.rows = list(state.agents.values()) if state is not None else []
        self.ring_names = [r.name for r in state.rings] if state is not None else []
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008
        return len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:  # noqa: N802
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return QCoreApplication.translate("Columns", COLUMNS[section])
        return None

    def cell(self, row: int, col: int) -> str:
        a = self.rows[row]
        req, err, p95, p99, verdict = _gate_cells(a.gate)
        ring = "" if a.ring is None else f"{a.ring + 1} {self.ring_names[a.ring]}" if a.ring < len(
            self.ring_names) else str(a.ring + 1)
        values = (a.name, a.url, ring, a.state, a.version or "", a.previous or "", req, err, p95, p99, verdict,
                  a.reason)
        return values[col]

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return self.cell(index.row(), index.column())
        if role == Qt.ItemDataRole.ForegroundRole and COLUMNS[index.column()] in ("state", "gate"):
            a = self.rows[index.row()]
            key = a.state if COLUMNS[index.column()] == "state" else {"pass": "passed", "fail": "failed"}.get(
                (a.gate or {}).get("verdict", ""), "")
            colour = STATE_COLOUR.get(key)
            return QColor(colour) if colour else None
        return None


MEMBER_COLUMNS = (QT_TRANSLATE_NOOP("Columns", "agent"), QT_TRANSLATE_NOOP("Columns", "url"), QT_TRANSLATE_NOOP("Columns", "ring"), QT_TRANSLATE_NOOP("Columns", "labels"), QT_TRANSLATE_NOOP("Columns", "token"), QT_TRANSLATE_NOOP("Columns", "in Devices"))


class MembersModel(QAbstractTableModel):
    """The fleet file's agents (who a rollout would update), with their state in Devices: shown while the fleet
    has no rollout, so "Add connected agents" is seen to add them."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, ...]] = []
        self.fresh: set[str] = set()  # names just added (shown in bold)

    def set_members(self, agents: list[Any], device_state: dict[str, str], fresh: set[str] | None = None) -> None:
        """``agents``: AgentSpec list; ``device_state``: URL key -> the Devices state of the agent there."""
        from studio.fleet.fleet_file import url_key

        self.beginResetModel()
        self.fresh = set(fresh or ())
        self.rows = []
        for a in agents:
            labels = {k: v for k, v in a.labels.items() if k != "ring"}
            self.rows.append((a.name, a.url, a.labels.get("ring", ""),
                              ", ".join(f"{k}={v}" for k, v in sorted(labels.items())),
                              a.token_file or QCoreApplication.translate("FleetPage", "(the device's / the fleet's)"),
                              device_state.get(url_key(a.url), QCoreApplication.translate("FleetPage", "not in Devices"))))
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008
        return len(MEMBER_COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:  # noqa: N802
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return QCoreApplication.translate("Columns", MEMBER_COLUMNS[section])
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return row[index.column()]
        if role == Qt.ItemDataRole.FontRole and row[0] in self.fresh:
            from PySide6.QtGui import QFont

            f = QFont()
            f.setBold(True)
            return f
        if role == Qt.ItemDataRole.ForegroundRole and MEMBER_COLUMNS[index.column()] == "in Devices":
            return QColor("#2a7a2a" if row[-1] == "ok" else "#9a6a00")
        return None


def agents_table(model: QAbstractTableModel) -> QTableView:
    view = QTableView()
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.verticalHeader().setVisible(False)
    head = view.horizontalHeader()
    head.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    head.setStretchLastSection(True)
    return view


class Timeline(QListWidget):
    """The rollout's events, newest last, each with its wall-clock time."""

    def set_state(self, state: Any | None) -> None:
        events = list(state.events) if state is not None else []
        if self.count() == len(events) and events:
            return
        self.clear()
        for ev in events:
            self.addItem(event_line(ev))
        self.scrollToBottom()
