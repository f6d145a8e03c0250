"""The repository check's findings: one row per finding (severity, file, field, message, hint) and a detail line.

A row's selection is announced as the finding itself (``sig_finding``), so the page can show its file and
mark its field; ``select_location`` is the way back from the Problems list (``finding_location``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.gui.theme import colors, set_role


def finding_location(f: Any) -> str:
    """How a finding is named in the Problems list (and how a click on it finds its way back here)."""
    return f"{f.file} [{f.field}]"


class CheckPanel(QWidget):
    """Findings of the last ``check_repo`` (``report``, a studio.triton.repo_check.CheckReport)."""

    sig_finding = Signal(object)  # the selected finding (studio.triton.repo_check.Finding)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.report: Any = None
        fl = QVBoxLayout(self)
        fl.setContentsMargins(0, 4, 0, 0)
        self.findings_label = QLabel(self.tr("Check: not run yet"))
        set_role(self.findings_label, "subheading")
        fl.addWidget(self.findings_label)
        self.findings_table = QTableWidget(0, 5)
        self.findings_table.setHorizontalHeaderLabels([self.tr("Severity"), self.tr("File"), self.tr("Field"), self.tr("Message"), self.tr("Hint")])
        self.findings_table.verticalHeader().setVisible(False)
        self.findings_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.findings_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.findings_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.findings_table.setWordWrap(False)
        hh = self.findings_table.horizontalHeader()
        for c in range(3):
            hh.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        hh.setSectionResizeMode(4, QHeaderView.ResizeMode.Interactive)
        hh.resizeSection(4, 180)
        hh.setStretchLastSection(False)
        self.findings_table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.findings_table.itemSelectionChanged.connect(self._selected)
        fl.addWidget(self.findings_table, 1)
        self.finding_detail = QLabel("")
        self.finding_detail.setWordWrap(True)
        self.finding_detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.finding_detail.setMinimumHeight(self.finding_detail.fontMetrics().lineSpacing() * 3 + 4)
        self.finding_detail.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        fl.addWidget(self.finding_detail)

    def show_check(self, report: Any) -> None:
        """Fill the table from a CheckReport (files shown relative to its repository)."""
        self.report = report
        c = colors()
        t = self.findings_table
        t.blockSignals(True)
        t.setRowCount(len(report.findings))
        repo = Path(report.repo)
        for r, f in enumerate(report.findings):
            try:
                shown = str(Path(f.file).relative_to(repo))
            except ValueError:
                shown = f.file
            cells = [self._severity(f.severity), shown, f.field, f.message, f.hint]
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(f"{f.message}\n\n" + self.tr("hint: {hint}").format(hint=f.hint) if f.hint else f.message)
                if col == 0:
                    item.setForeground(c["fail"] if f.severity == "error" else c["warn"] if f.severity == "warning"
                                       else c["muted"])
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                t.setItem(r, col, item)
        t.blockSignals(False)
        n_err = len(report.errors)
        n_warn = sum(1 for f in report.findings if f.severity == "warning")
        models = ", ".join(f"{m.name} v{','.join(map(str, m.versions)) or '-'}" for m in report.models)
        self.findings_label.setText(self.tr("Check: {value}: {n_err} error(s), "
                                            "{n_warn} warning(s)  ·  {value2}").format(value=self.tr("OK") if report.ok else self.tr("FAILED"), n_err=n_err, n_warn=n_warn,
                                                    value2=models or self.tr("no models")))
        set_role(self.findings_label, "ok" if report.ok else "fail")
        self.finding_detail.setText("" if report.findings else self.tr("No findings: every config matches its model."))

    def _severity(self, severity: str) -> str:
        """A finding's severity id as the reader's language says it."""
        return {"error": self.tr("error"), "warning": self.tr("warning"), "info": self.tr("info")}.get(severity,
                                                                                                    severity)

    def select_location(self, text: str) -> bool:
        """Select the finding a Problems entry names (``finding_location``); False when none matches."""
        if self.report is None:
            return False
        for i, f in enumerate(self.report.findings):
            if finding_location(f) == text:
                self.findings_table.selectRow(i)
                return True
        return False

    def _selected(self) -> None:
        rows = self.findings_table.selectionModel().selectedRows()
        if not rows or self.report is None:
            return
        f = self.report.findings[rows[0].row()]
        self.finding_detail.setText(f"{self._severity(f.severity)}: {f.message}"
                                    + ("\n" + self.tr("hint: {hint}").format(hint=f.hint) if f.hint else ""))
        self.sig_finding.emit(f)
