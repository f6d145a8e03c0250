"""Findings of an InspectionReport as a Qt table model (thousands of rows stay cheap: no item objects), the
table that shows them, and the findings area under the inspector's graph (heading, all-targets switch, fixes)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QCoreApplication,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QBrush, QColor, QFont, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from studio.core.catalogue import _ as core_text
from studio.gui.graph import palette
from studio.gui.widgets.flow import ElidedLabel, FlowLayout
from studio.gui.widgets.tables import RowsModel
from studio.inspect.render import finding_message

COLUMNS = (QT_TRANSLATE_NOOP("Columns", "Severity"), QT_TRANSLATE_NOOP("Columns", "Target"), QT_TRANSLATE_NOOP("Columns", "Rule"), QT_TRANSLATE_NOOP("Columns", "Node"), QT_TRANSLATE_NOOP("Columns", "Op"), QT_TRANSLATE_NOOP("Columns", "Message"), QT_TRANSLATE_NOOP("Columns", "Hint"))
SEVERITY_ORDER = {"error": 0, "warning": 1, "note": 2}
SEVERITY_MARKS = {"error": QT_TRANSLATE_NOOP("FindingsPanel", "● error"),
                  "warning": QT_TRANSLATE_NOOP("FindingsPanel", "▲ warning"),
                  "note": QT_TRANSLATE_NOOP("FindingsPanel", "○ note")}
SUMMARY_LABEL = {"pass": QT_TRANSLATE_NOOP("TargetChip", "PASS"), "risky": QT_TRANSLATE_NOOP("TargetChip", "RISKY"),
                 "fail": QT_TRANSLATE_NOOP("TargetChip", "FAIL"), "unknown": QT_TRANSLATE_NOOP("TargetChip", "UNKNOWN")}
_Index = QModelIndex | QPersistentModelIndex


class FindingsModel(RowsModel):
    """Rows are the findings for one target (plus the "*" ones that hold for all), worst first."""

    COLUMNS = COLUMNS

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[Any] = []  # studio.inspect.report.Finding
        self.overridden: dict[int, str] = {}  # id(finding) -> "TOOL VERSION: supported" (a verifier's answer)
        self._by_node: dict[str, list[int]] = {}
        self._theme = "light"
        self._bold = QFont()
        self._bold.setBold(True)

    def set_findings(self, findings: list[Any], theme: str = "light",
                     overridden: dict[int, str] | None = None) -> None:
        """``overridden``: id(finding) -> the tool's word on it (those rows say so, muted, after the others)."""
        self.beginResetModel()
        self._theme = theme
        self.overridden = dict(overridden or {})
        self.rows = sorted(findings, key=lambda f: (id(f) in self.overridden, SEVERITY_ORDER.get(f.severity, 3),
                                                    f.target == "*", f.rule, f.node or ""))
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

    def cell(self, f: Any, col: int, role: int) -> Any:
        tool = self.overridden.get(id(f))
        if role == Qt.ItemDataRole.DisplayRole:
            return (QCoreApplication.translate("FindingsPanel", "✓ overridden") if tool and col == 0 else
                    f"{finding_message(f)}  " + QCoreApplication.translate("FindingsPanel", "[overridden: {tool}]").format(
                        tool=tool) if tool and col == 5 else self._text(f, col))
        if role == Qt.ItemDataRole.ToolTipRole and tool and col in (0, 5):
            return QCoreApplication.translate("FindingsPanel", "the profile's finding; {tool}, and the tool wins").format(
                tool=tool) + f"\n\n{finding_message(f)}"
        if role == Qt.ItemDataRole.ForegroundRole and tool:
            return QBrush(QColor(palette.TEXT[self._theme][1]))
        if role == Qt.ItemDataRole.ToolTipRole:
            if col in (5, 6):
                return (f"{finding_message(f)}\n\n" + QCoreApplication.translate("FindingsPanel", "What to do: {hint}")
                        .format(hint=core_text(f.hint)) if f.hint else finding_message(f))
            if col == 3 and len(f.nodes) > 1:
                return "\n".join(f.nodes[:30]) + ("\n" + QCoreApplication.translate("FindingsPanel", "… {n} more").format(
                    n=len(f.nodes) - 30) if len(f.nodes) > 30 else "")
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
            mark = SEVERITY_MARKS.get(f.severity)
            return QCoreApplication.translate("FindingsPanel", mark) if mark else f.severity
        if col == 1:
            return QCoreApplication.translate("FindingsPanel", "all") if f.target == "*" else f.target
        if col == 2:
            return f.rule
        if col == 3:
            node = f.node or (f.tensor and QCoreApplication.translate("FindingsPanel", "tensor {name}").format(
                name=f.tensor)) or "—"
            return f"{node}  (+{f.count - 1})" if f.count > 1 else node
        if col == 4:
            return f.op_type or ""
        if col == 5:
            return finding_message(f)  # the core's words: its catalogue (studio.core.catalogue)
        if col == 6:
            return core_text(f.hint) if f.hint else ""
        return ""


class FindingsTable(QTableView):
    """The findings list: whole rows, several at once (a node's findings are selected together)."""

    COLUMN_WIDTHS = (92, 96, 150, 190, 110, 430)

    def __init__(self, model: FindingsModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.findings_model = model
        self.setModel(model)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(24)
        self.setShowGrid(False)
        hh = self.horizontalHeader()
        hh.setStretchLastSection(True)
        for col, width in enumerate(self.COLUMN_WIDTHS):
            hh.resizeSection(col, width)
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)

    def select_rows(self, rows: list[int]) -> None:
        """Select exactly ``rows`` (none clears) and scroll the first of them to the middle."""
        model = self.findings_model
        sm = self.selectionModel()
        sm.clearSelection()
        sel = QItemSelection()
        for r in sorted(set(rows)):
            sel.select(model.index(r, 0), model.index(r, model.columnCount() - 1))
        if rows:
            sm.select(sel, QItemSelectionModel.SelectionFlag.Select)
            self.scrollTo(model.index(min(rows), 0), QAbstractItemView.ScrollHint.PositionAtCenter)


QWIDGETSIZE_MAX = 16777215  # Qt's "no maximum"


class FindingsPanel(QWidget):
    """Heading with counts and verdict, the all-targets switch, the fix buttons, and the findings table."""

    def __init__(self, fix_buttons: dict[str, QPushButton], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        bl = QVBoxLayout(self)
        bl.setContentsMargins(0, 6, 0, 0)
        bl.setSpacing(4)
        fh = FlowLayout(spacing=6)
        # one line at its full width where there is room; a tool's long verdict is elided (whole in the tooltip)
        # and never widens the window (a word-wrapped label asked for half its width and wrapped at 1920 px)
        self.findings_label = ElidedLabel(self.tr("Findings"), min_width=120, mode=Qt.TextElideMode.ElideRight)
        self.findings_label.setProperty("role", "subheading")
        fh.addWidget(self.findings_label)
        self.all_targets_box = QCheckBox(self.tr("all targets"))
        fh.addWidget(self.all_targets_box)
        fh.addWidget(QLabel(self.tr("   Fix:")))
        self.fix_buttons = fix_buttons
        for b in fix_buttons.values():
            fh.addWidget(b)
        bl.addLayout(fh)
        self.findings_model = FindingsModel(self)
        self.table = FindingsTable(self.findings_model)
        bl.addWidget(self.table, 1)

    def show_findings(self, report: Any, target: str, theme: str = "light") -> None:
        """The findings of ``target`` (or of every target, when switched on) from ``report`` (None: none); a
        finding whose nodes a tool accepted is kept, marked as overridden by that tool, and listed last."""
        from studio.verify.effective import effective

        if report is None:
            self.findings_model.set_findings([], theme)
            self.findings_label.setText(self.tr("Findings"))
            return
        every = self.all_targets_box.isChecked()
        found = list(report.findings) if every else report.findings_for(target)
        effs = {t: effective(report, t) for t in ({f.target for f in found} | {target}) - {"*"}}
        over = {id(f): effs[f.target if f.target != "*" else target].overrides_finding(f) for f in found}
        self.findings_model.set_findings(found, theme, {k: v for k, v in over.items() if v})
        summary, eff = report.targets.get(target), effs[target]
        where = self.tr("all targets") if every else target
        verdict = ""
        tip = ""
        if summary and not every:
            if eff.verified and eff.model is not None:  # the verdict's word and its tool; the whole line on hover
                word = eff.model.verdict.replace("-", " ").upper()
                verdict = " — " + self.tr("{verdict} (verified: {tool})").format(
                    verdict=word, tool=eff.model.by.split(" (")[0])
                tip = eff.model.headline()
            else:
                label = SUMMARY_LABEL.get(summary.verdict)
                verdict = f" — {QCoreApplication.translate('TargetChip', label) if label else ''}"
        n_over = sum(1 for v in over.values() if v)
        overridden = self.tr(", {n} overridden by the tool").format(n=n_over) if n_over else ""
        self.findings_label.setText(self.tr("Findings for {where} ({n:,}{overridden}){verdict}").format(where=where, n=len(found), overridden=overridden, verdict=verdict))
        self.findings_label.setToolTip(tip or self.findings_label.full_text())
        self._fit_splitter(bool(found))

    def _fit_splitter(self, any_found: bool) -> None:
        """No findings: the panel is capped at its heading plus the table's header (recomputed as its width changes
        the heading's wrapping), so the splitter gives the graph above the rest; a cap on the table alone left the
        panel its old share, drawn as a blank band under the heading (seen at 1366x768 and 1920x1080).
        Findings again: no cap, and back to a third."""
        from PySide6.QtWidgets import QSplitter

        if not any_found:
            self.table.setMaximumHeight(self.table.minimumSizeHint().height())
            self._shrunk = True
            self._cap_height()
            return
        self.table.setMaximumHeight(QWIDGETSIZE_MAX)
        self.setMaximumHeight(QWIDGETSIZE_MAX)
        split = self.parentWidget()
        if getattr(self, "_shrunk", False) and isinstance(split, QSplitter) and split.count() == 2:
            total = sum(split.sizes())
            if total > 0:
                split.setSizes([total * 2 // 3, total - total * 2 // 3])
        self._shrunk = False

    def _cap_height(self, grow_only: bool = False) -> None:
        """``grow_only`` on a resize: a narrower panel may wrap the heading row and need more, but a cap that also
        shrank fed back (the page's scroll bar came and went, the width with it) and looped the event queue."""
        lay = self.layout()
        width = max(self.width(), 1)
        need = lay.totalHeightForWidth(width) if lay.hasHeightForWidth() else lay.totalSizeHint().height()
        need = max(need, lay.totalMinimumSize().height())
        if need > 0 and (need > self.maximumHeight() if grow_only else need != self.maximumHeight()):
            self.setMaximumHeight(need)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        if getattr(self, "_shrunk", False):
            self._cap_height(grow_only=True)
