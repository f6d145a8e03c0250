"""The Plugins dialog: every plugin, each contribution it declares, and their states with errors in view.

It reads the registry's records only; "Check all" imports every contribution now (what first use would do),
so a plugin whose code fails to import shows its error here before anyone trips over it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.core.plugins import Contribution, Plugin
from studio.gui.theme import colors, set_role
from studio.gui.widgets.tables import readonly_table

_COLOUR = {"ok": "ok", "loaded": "ok", "available": "ok", "declared": "muted", "unavailable": "warn",
           "error": "fail"}
# the states as the table says them (the ids stay in PluginRow.state)
_STATE_WORDS = {"ok": QT_TRANSLATE_NOOP("PluginsDialog", "ok"), "loaded": QT_TRANSLATE_NOOP("PluginsDialog", "loaded"),
                "available": QT_TRANSLATE_NOOP("PluginsDialog", "available"),
                "declared": QT_TRANSLATE_NOOP("PluginsDialog", "declared"),
                "unavailable": QT_TRANSLATE_NOOP("PluginsDialog", "unavailable"),
                "error": QT_TRANSLATE_NOOP("PluginsDialog", "error")}
translate = QCoreApplication.translate


def state_word(state: str) -> str:
    return translate("PluginsDialog", _STATE_WORDS[state]) if state in _STATE_WORDS else state


@dataclass
class PluginRow:
    """One table row: a plugin (contribution None) or one of its contributions."""

    plugin: Plugin
    contribution: Contribution | None
    state: str
    reason: str
    others: list[str] = field(default_factory=list)  # declared-only kinds: the rest of the names, one row

    @property
    def label(self) -> str:
        c = self.contribution
        if c is None:
            return self.plugin.name
        return f"{c.kind}: " + ", ".join([c.name, *self.others])

    def details(self) -> str:
        """The full text for the details pane: where it comes from, and the whole error."""
        p, c = self.plugin, self.contribution
        lines = [translate("PluginsDialog", "plugin: {name}").format(name=p.name),
                 translate("PluginsDialog", "distribution: {name} {version}").format(
                     name=p.distribution or "?", version=p.version).rstrip(),
                 translate("PluginsDialog", "entry point: {entry}").format(entry=p.entry_point)]
        if c is not None:
            lines += [translate("PluginsDialog", "contribution: {kind} '{name}'").format(kind=c.kind, name=c.name),
                      translate("PluginsDialog", "module: {module}").format(module=c.module or "-")]
            if c.help:
                lines.append(translate("PluginsDialog", "help: {text}").format(text=c.help))
        elif p.description:
            lines.append(translate("PluginsDialog", "description: {text}").format(text=p.description))
        lines.append(translate("PluginsDialog", "state: {state}").format(state=state_word(self.state))
                     + (f": {self.reason}" if self.reason else ""))
        detail = (c.detail if c is not None and c.detail else "") or (p.detail if self.state == "error" else "")
        if detail:
            lines += ["", detail.rstrip()]
        return "\n".join(lines)


class PluginsDialog(QDialog):
    """Every plugin registered under ``studio.plugins`` with its contributions; a broken one shows its error.

    It shows this process's registry as it is (what the window already loaded, what failed); ``refresh``
    rediscovers the entry points first (plugins installed since start-up appear, load states start over)."""

    def __init__(self, parent: QWidget | None = None, refresh: bool = False) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Plugins"))
        self.resize(900, 520)
        lay = QVBoxLayout(self)
        intro = QLabel(self.tr("Plugins registered through the <code>studio.plugins</code> entry-point group and what each "
                               "contributes. A contribution is imported only when first used (<i>Check all</i> imports "
                               "them now); one that fails is listed with its error and the rest of the studio works."))
        intro.setWordWrap(True)
        set_role(intro, "muted")
        lay.addWidget(intro)
        self.table = readonly_table([QT_TRANSLATE_NOOP("Columns", "Plugin"), QT_TRANSLATE_NOOP("Columns", "Contribution (or distribution)"), QT_TRANSLATE_NOOP("Columns", "State"), QT_TRANSLATE_NOOP("Columns", "Details")], alternating=True)
        self.table.setWordWrap(True)
        hh = self.table.horizontalHeader()
        for col, mode in enumerate([QHeaderView.ResizeMode.ResizeToContents, QHeaderView.ResizeMode.Interactive,
                                    QHeaderView.ResizeMode.Interactive, QHeaderView.ResizeMode.Stretch]):
            hh.setSectionResizeMode(col, mode)
        self.table.setColumnWidth(1, 220)
        self.table.setColumnWidth(2, 110)
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        set_role(self.details, "log")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.details)
        split.setSizes([360, 120])
        self.empty = QLabel(self.tr("No plugins are registered in this environment."))
        lay.addWidget(self.empty)
        lay.addWidget(split, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.check_button = QPushButton(self.tr("Check all"))
        self.check_button.setToolTip(self.tr("Import every plugin contribution now and show what fails"))
        self.check_button.clicked.connect(lambda: self.reload(check=True))
        buttons.addButton(self.check_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self.table.itemSelectionChanged.connect(self._show_details)
        self.plugins: list[Plugin] = []
        self.rows: list[PluginRow] = []
        self.reload(refresh=refresh)

    def reload(self, refresh: bool = False, check: bool = False) -> None:
        """Re-read the registry (``refresh``: rediscover entry points; ``check``: import every contribution)."""
        from studio.core.commands import plugin_commands
        from studio.core.plugins import check_all, discover

        self.plugins = discover(refresh=refresh)
        plugin_commands()  # marks plugin commands that would shadow a built-in one
        if check:
            check_all()
        self.rows = []
        for p in self.plugins:
            state, reason = p.state()
            self.rows.append(PluginRow(p, None, state, reason))
            declared: dict[str, PluginRow] = {}
            for c in p.contributions:
                cstate, why = c.state()
                if cstate == "declared" and c.kind in declared:  # listed-only kinds take one row each
                    declared[c.kind].others.append(c.name)
                    continue
                row = PluginRow(p, c, cstate, why)
                if cstate == "declared":
                    declared[c.kind] = row
                self.rows.append(row)
        self._fill()

    def _fill(self) -> None:
        c = colors()
        bold = QFont(self.font())
        bold.setBold(True)
        self.table.setRowCount(0)
        for row in self.rows:
            r = self.table.rowCount()
            self.table.insertRow(r)
            contrib = row.contribution
            if contrib is None:
                where = f"{row.plugin.distribution} {row.plugin.version}".strip()
                cells = [row.plugin.name, where + (self.tr(" (built-in)") if row.plugin.builtin else ""),
                         state_word(row.state), row.reason or row.plugin.description]
            else:
                cells = ["", row.label, state_word(row.state), row.reason or contrib.help]
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if contrib is None and col == 0:
                    item.setFont(bold)
                if col == 2:
                    item.setForeground(c[_COLOUR.get(row.state, "text")])
                    item.setToolTip(row.reason or state_word(row.state))
                if col == 3 and row.state == "error":
                    item.setForeground(c["fail"])
                    item.setToolTip(row.reason)
                self.table.setItem(r, col, item)
        self.table.resizeRowsToContents()
        self.empty.setVisible(not self.plugins)
        first_error = next((i for i, row in enumerate(self.rows) if row.state == "error"), None)
        if first_error is not None:
            self.table.selectRow(first_error)
        self._show_details()

    def _show_details(self) -> None:
        r = self.table.currentRow()
        self.details.setPlainText(self.rows[r].details() if 0 <= r < len(self.rows) else "")

    def row(self, plugin: str, kind: str | None = None, name: str | None = None) -> PluginRow | None:
        """The row of a plugin (kind None) or of one of its contributions."""
        for row in self.rows:
            c = row.contribution
            if row.plugin.name == plugin and ((kind is None and c is None)
                                              or (c is not None and c.kind == kind and c.name == name)):
                return row
        return None

    def state_text(self, plugin: str, kind: str | None = None, name: str | None = None) -> str:
        """What the State and Details columns show for that row (empty when there is no such row)."""
        for r, row in enumerate(self.rows):
            if row is self.row(plugin, kind, name):
                return f"{self.table.item(r, 2).text()}: {self.table.item(r, 3).text()}"
        return ""
