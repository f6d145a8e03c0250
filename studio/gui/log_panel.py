"""The Log / Problems panel: every job's log lines, and one Problems list fed by all pages and jobs."""

from __future__ import annotations

import time

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QStyle,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.core.catalogue import _ as core_text
from studio.core.errors import Problem
from studio.gui.hints import gui_hint
from studio.gui.theme import set_role

# the fixed source words of log lines and problems (ids in the code, translated where shown); other sources are
# page titles (translated in the "Pages" context) or job titles (translated already)
_SOURCES = frozenset((QT_TRANSLATE_NOOP("LogPanel", "add model"), QT_TRANSLATE_NOOP("LogPanel", "compile"),
                      QT_TRANSLATE_NOOP("LogPanel", "deploy"), QT_TRANSLATE_NOOP("LogPanel", "inspector"),
                      QT_TRANSLATE_NOOP("LogPanel", "jobs"), QT_TRANSLATE_NOOP("LogPanel", "language"),
                      QT_TRANSLATE_NOOP("LogPanel", "package"), QT_TRANSLATE_NOOP("LogPanel", "settings"),
                      QT_TRANSLATE_NOOP("LogPanel", "studio"), QT_TRANSLATE_NOOP("LogPanel", "triton check"),
                      QT_TRANSLATE_NOOP("LogPanel", "triton serve"), QT_TRANSLATE_NOOP("LogPanel", "workspace")))


def source_word(source: str) -> str:
    """A log line's or problem's source as the current language says it."""
    if source in _SOURCES:
        return QCoreApplication.translate("LogPanel", source)
    return QCoreApplication.translate("Pages", source)


_ICONS = {"error": QStyle.StandardPixmap.SP_MessageBoxCritical,
          "warning": QStyle.StandardPixmap.SP_MessageBoxWarning,
          "info": QStyle.StandardPixmap.SP_MessageBoxInformation}


class LogPanel(QTabWidget):
    """Tabs "Log" and "Problems (n)"; activating a problem emits it so the window can open its page."""

    sig_problem_activated = Signal(object)  # Problem

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.problems: list[Problem] = []
        log_box = QWidget()
        lay = QVBoxLayout(log_box)
        lay.setContentsMargins(4, 4, 4, 4)
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(5000)
        self.log.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        set_role(self.log, "log")
        lay.addWidget(self.log)
        row = QHBoxLayout()
        row.addStretch(1)
        self.clear_log_btn = clear = QPushButton(self.tr("Clear log"))
        set_role(clear, "link")
        clear.clicked.connect(self.log.clear)
        row.addWidget(clear)
        lay.addLayout(row)

        prob_box = QWidget()
        play = QVBoxLayout(prob_box)
        play.setContentsMargins(4, 4, 4, 4)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels([self.tr("Problem"), self.tr("Source"), self.tr("Location")])
        self.tree.setRootIsDecorated(False)
        self.tree.setAlternatingRowColors(True)
        self.tree.setColumnWidth(0, 220)
        self.tree.itemActivated.connect(self._activated)
        self.tree.itemClicked.connect(self._activated)
        play.addWidget(self.tree)
        prow = QHBoxLayout()
        prow.addStretch(1)
        self.clear_problems_btn = pclear = QPushButton(self.tr("Clear problems"))
        set_role(pclear, "link")
        pclear.clicked.connect(self.clear_problems)
        prow.addWidget(pclear)
        play.addLayout(prow)
        self.addTab(log_box, self.tr("Log"))
        self.addTab(prob_box, self.tr("Problems"))

    def append_log(self, line: str, source: str | None = None) -> None:
        stamp = time.strftime("%H:%M:%S")
        prefix = f"[{source_word(source)}] " if source else ""
        for part in str(line).splitlines() or [""]:
            self.log.appendPlainText(f"{stamp} {prefix}{part}")

    def add_problem(self, problem: Problem) -> None:
        self.problems.append(problem)
        # the message in the interface language (the core's catalogue; the Problem keeps the core's English, which
        # the window de-duplicates by)
        message = core_text(problem.message)
        item = QTreeWidgetItem([message, source_word(problem.source), problem.location or ""])
        item.setIcon(0, self.style().standardIcon(_ICONS.get(problem.severity, _ICONS["info"])))
        tip = message + ("\n\n" + self.tr("hint: {hint}").format(hint=gui_hint(problem.hint, problem.page))
                                 if problem.hint else "")
        if problem.page:
            tip += "\n\n" + self.tr("click to open it in {page}").format(page=problem.page)
        for col in range(3):
            item.setToolTip(col, tip)
        item.setData(0, Qt.ItemDataRole.UserRole, len(self.problems) - 1)
        self.tree.insertTopLevelItem(0, item)
        self._retitle()

    def clear_problems(self) -> None:
        self.problems.clear()
        self.tree.clear()
        self._retitle()

    def show_problems(self) -> None:
        self.setCurrentIndex(1)

    def retranslate(self) -> None:
        self.clear_log_btn.setText(self.tr("Clear log"))
        self.clear_problems_btn.setText(self.tr("Clear problems"))
        self.tree.setHeaderLabels([self.tr("Problem"), self.tr("Source"), self.tr("Location")])
        self.setTabText(0, self.tr("Log"))
        self._retitle()

    def _retitle(self) -> None:
        n = len(self.problems)
        self.setTabText(1, self.tr("Problems ({n})").format(n=n) if n else self.tr("Problems"))

    def _activated(self, item: QTreeWidgetItem, _col: int = 0) -> None:
        idx = item.data(0, Qt.ItemDataRole.UserRole)
        if isinstance(idx, int) and 0 <= idx < len(self.problems):
            self.sig_problem_activated.emit(self.problems[idx])
