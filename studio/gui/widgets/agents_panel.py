"""Edge agents: found by mDNS or added by URL; each one's models, versions and history, with rollback.

Reusable: the Packaging page shows it beside the build form, and the Devices page can add it as a section
(``devices_page.add_section(AgentsPanel(devices_page.jobs), "Edge agents")``). The agents are the shared
state's devices of kind "agent" (studio.core.state, saved in the workspace with the PATH of their token file,
never the token itself): every panel shows the same list, and a poll's result is the device's state that the
toolbar counts. A row's State says why an agent is down (refused, timeout, TLS, token, DNS: studio.gui.devices.
reasons), from the shared state when the panel has one, so it agrees with the Devices list and the toolbar: the
Devices page's poller is the one writer of a device's state; a refresh here fetches what an agent serves
(versions, history) and only a panel without a shared state keeps its own answer. Every network call runs as a
job off the GUI thread; a refresh asked while one for the same agents runs is run once more after it, never
cancelling it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.core.errors import InputError, StudioError
from studio.core.state import DeviceState, StudioState
from studio.core.workspace import DeviceEntry, Workspace
from studio.gui.devices.agents import AgentEntry, discover_all, refresh_one
from studio.gui.devices.reasons import status_text
from studio.gui.file_dialogs import start_dir
from studio.gui.state_qt import StateSignals
from studio.gui.theme import set_role
from studio.gui.widgets.agent_token_row import TokenRow
from studio.gui.widgets.confirm import ask_then
from studio.gui.widgets.field_error import FieldError
from studio.gui.widgets.flow import FlowLayout
from studio.gui.widgets.layout import muted_label


def _item(text: str, data: Any = None) -> QTableWidgetItem:
    it = QTableWidgetItem(text)
    it.setFlags(it.flags() & ~Qt.ItemFlag.ItemIsEditable)
    if data is not None:
        it.setData(Qt.ItemDataRole.UserRole, data)
    return it


NARROW_PX = 480  # below this the table drops its URL column


class AgentsPanel(QWidget):
    sig_agents_changed = Signal()
    sig_log = Signal(str)

    def __init__(self, jobs: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        if jobs is None:
            from studio.gui.jobs_qt import JobRunner

            jobs = JobRunner(self)
        self.jobs = jobs
        self.workspace: Workspace | None = None
        self.agents: dict[str, AgentEntry] = {}
        self.state: StudioState | None = None
        self._signals: StateSignals | None = None
        self._refreshing: dict[str, bool] = {}  # refresh key -> asked again while it ran
        self._build()

    # -- layout ----------------------------------------------------------------------------------------
    def _build(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        title = QLabel(self.tr("Edge agents"))
        set_role(title, "subheading")
        lay.addWidget(title)
        add = QHBoxLayout()
        self.url_edit = QLineEdit()
        self.url_edit.setPlaceholderText("http://board.local:8765")  # an example URL: not translated
        self.token_edit = QLineEdit()
        self.token_edit.setPlaceholderText(self.tr("token file"))
        browse = QPushButton("…")
        browse.setToolTip(self.tr("choose the agent's token file"))
        browse.clicked.connect(self._browse_token)
        self.add_btn = QPushButton(self.tr("Add"))
        self.add_btn.clicked.connect(self._on_add)
        self.discover_btn = QPushButton(self.tr("Discover"))
        self.discover_btn.setToolTip(self.tr("find agents by mDNS (_studio-agent._tcp)"))
        self.discover_btn.clicked.connect(self.discover)
        add.addWidget(self.url_edit, 3)
        add.addWidget(self.token_edit, 2)
        add.addWidget(browse)
        lay.addLayout(add)
        add_btns = FlowLayout(spacing=6)
        add_btns.add_widgets(self.add_btn, self.discover_btn)
        lay.addLayout(add_btns)
        self.error = FieldError(self)
        lay.addWidget(self.error)

        split = QSplitter(Qt.Orientation.Vertical)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels([self.tr("Agent"), self.tr("URL"), self.tr("Board"), self.tr("State")])
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.table.itemSelectionChanged.connect(self._show_selected)
        split.addWidget(self.table)

        detail = QWidget()
        dl = QVBoxLayout(detail)
        dl.setContentsMargins(0, 4, 0, 0)
        self.summary = muted_label(self.tr("Select an agent to see its models and versions."))
        dl.addWidget(self.summary)
        self.token_row = TokenRow()
        self.token_row.sig_save.connect(self._save_token)
        dl.addWidget(self.token_row)
        self.versions = QTableWidget(0, 6)
        self.versions.setHorizontalHeaderLabels([self.tr("Model"), self.tr("Version"), self.tr("Active"), self.tr("Board"), self.tr("Created"), self.tr("Signer")])
        self.versions.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.versions.horizontalHeader().setStretchLastSection(True)
        self.versions.verticalHeader().setVisible(False)
        self.versions.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.versions.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        dl.addWidget(self.versions)
        btns = FlowLayout(spacing=6)
        self.refresh_btn = QPushButton(self.tr("Refresh"))
        self.refresh_btn.clicked.connect(lambda: self.refresh())
        self.rollback_btn = QPushButton(self.tr("Roll back to previous"))
        self.rollback_btn.clicked.connect(self._confirm_rollback)
        self.activate_btn = QPushButton(self.tr("Activate selected version"))
        self.activate_btn.clicked.connect(self._activate_selected)
        self.remove_btn = QPushButton(self.tr("Remove agent"))
        set_role(self.remove_btn, "danger")
        self.remove_btn.clicked.connect(self._remove_selected)
        btns.add_widgets(self.refresh_btn, self.rollback_btn, self.activate_btn, self.remove_btn)
        dl.addLayout(btns)
        self.history = muted_label("")
        dl.addWidget(self.history)
        split.addWidget(detail)
        split.setSizes([120, 260])
        lay.addWidget(split, 1)
        self._update_buttons()

    # -- agents ----------------------------------------------------------------------------------------
    def bind_state(self, state: StudioState, signals: StateSignals) -> None:
        """Show (and change) the shared state's agents; called by the page that holds the panel."""
        if self._signals is not None:
            self._signals.sig_changed.disconnect(self._state_changed)
        self.state, self._signals = state, signals
        signals.sig_changed.connect(self._state_changed)
        self._sync_from_state()

    def set_workspace(self, workspace: Workspace | None) -> None:
        """A panel shown without a shared state (tests, embedding): a state of its own for ``workspace``."""
        self.workspace = workspace
        if self.state is None:
            own = StudioState()
            self.bind_state(own, StateSignals(own, self))
        if self.state.workspace is not workspace:
            self.state.set_workspace(workspace)
        self._sync_from_state()
        self.refresh()

    def _state_changed(self, topic: str, _payload: object) -> None:
        if topic in ("workspace", "devices"):
            self._sync_from_state()
        elif topic == "device_state":  # a poll (here or on Devices) found something: repaint the states
            self._paint_states()
        elif topic == "selection":  # e.g. a deploy chose this agent: show it here too
            self._follow_selection()

    def _follow_selection(self) -> None:
        """Select the state's selected device when it is one of these agents (and fetch its versions)."""
        d = self.state.selected_device if self.state is not None else None
        if d is None or d.url not in self.agents:
            return
        current = self.selected()
        if current is None or current.url != d.url:
            self.select(d.url)
        if self.agents[d.url].token_file:  # what it serves may have changed (a deploy is why it was chosen)
            self.refresh(d.url)

    def showEvent(self, event: Any) -> None:  # noqa: N802 (Qt override)
        """Shown again (another page may have deployed or rolled back meanwhile): fetch the selected agent."""
        super().showEvent(event)
        a = self.selected()
        if a is not None and a.token_file:
            self.refresh(a.url)

    def _sync_from_state(self) -> None:
        """Rebuild the list from the state's agents, keeping what was polled for the ones still there."""
        if self.state is None:
            return
        self.workspace = self.state.workspace
        old = self.agents
        self.agents = {}
        for d in self.state.devices("agent"):
            a = old.get(d.url) or AgentEntry(d.name, d.url, str(d.extra.get("token_file") or ""),
                                            str(d.extra.get("board") or ""))
            a.name, a.token_file = d.name, str(d.extra.get("token_file") or "")
            self.agents[d.url] = a
        self._fill_table()
        if set(self.agents) != set(old):
            self.sig_agents_changed.emit()

    def add_agent(self, url: str, token_file: str | Path = "", name: str | None = None,
                  board: str = "") -> AgentEntry:
        url = url.strip().rstrip("/")
        if not url:
            raise InputError(self.tr("enter the agent's URL"), offending="url",
                             hint=self.tr("e.g. {url}").format(url="http://board.local:8765"))
        if not url.startswith(("http://", "https://")):
            url = "http://" + url
        if token_file and not Path(token_file).is_file():
            raise InputError(self.tr("token file {path} does not exist").format(path=token_file), offending="token",
                             hint=self.tr("copy /etc/studio-agent/token from the board"))
        entry = AgentEntry(name or url.split("://", 1)[1], url, str(token_file), board)
        if self.state is None or self.state.workspace is None:
            self.agents[url] = entry
            self._fill_table()
            self.sig_agents_changed.emit()
        else:
            self.state.add_device(entry.to_device())  # every panel hears it and lists it
        self.select(url)
        self.refresh(url)
        return self.agents.get(url, entry)

    def select(self, url: str) -> None:
        for r in range(self.table.rowCount()):
            if self.table.item(r, 0).data(Qt.ItemDataRole.UserRole) == url:
                self.table.selectRow(r)

    def selected(self) -> AgentEntry | None:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        if not rows:
            return None
        return self.agents.get(self.table.item(rows[0].row(), 0).data(Qt.ItemDataRole.UserRole))

    def _browse_token(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self.tr("Agent token file"), start_dir(self.token_edit.text(), self.workspace))
        if path:
            self.token_edit.setText(path)

    def _on_add(self) -> None:
        self.error.clear_error()
        try:
            self.add_agent(self.url_edit.text(), self.token_edit.text().strip())
        except StudioError as exc:
            self.error.show_error(exc.message, self.url_edit if exc.offending == "url" else self.token_edit,
                                  hint=exc.hint)
            return
        self.url_edit.clear()

    def set_token(self, url: str, token_file: str) -> None:
        """Give the agent at ``url`` another token file, in place (same name, same workspace entry); the next
        poll checks it. Raises InputError for an empty, missing or empty file."""
        self.token_row.edit.setText(str(token_file))
        path = self.token_row.checked_path()
        a = self.agents.get(url)
        if a is None:
            raise InputError(self.tr("no agent at {url}").format(url=url), offending="url", hint=self.tr("add it first"))
        d = self.state.device(url) if self.state is not None and self.state.workspace is not None else None
        if d is not None:
            self.state.add_device(DeviceEntry(d.name, d.url, d.kind, d.protocol, {**d.extra, "token_file": path}))
        else:
            a.token_file = path
        self.sig_log.emit(self.tr("{name}: token file set to {path}").format(name=a.name, path=path))
        self.refresh(url)

    def _save_token(self, path: str) -> None:
        a = self.selected()
        if a is None:
            return
        self.error.clear_error()
        try:
            self.set_token(a.url, path)
        except StudioError as exc:
            self.error.show_error(exc.message, self.token_row.edit, hint=exc.hint)

    def _remove_selected(self) -> None:
        a = self.selected()
        if a is not None:
            ask_then(self, self.tr("Remove agent"), self.tr("Remove {name} ({url}) from the workspace? The board keeps "
                             "serving; add it again by URL or Discover.").format(name=a.name, url=a.url), self.tr("Remove"), lambda: self._remove(a))

    def _remove(self, a: AgentEntry) -> None:
        if self.state is not None and self.state.device(a.url) is not None:
            self.state.remove_device(a.url)
        else:
            self.agents.pop(a.url, None)
            self._fill_table()
            self.sig_agents_changed.emit()

    def _fill_table(self) -> None:
        keep = self.selected().url if self.selected() else None
        self.table.setRowCount(0)
        for a in self.agents.values():
            r = self.table.rowCount()
            self.table.insertRow(r)
            self.table.setItem(r, 0, _item(a.name, a.url))
            self.table.item(r, 0).setToolTip(a.url)
            self.table.setItem(r, 1, _item(a.url))
            self.table.setItem(r, 2, _item(a.board))
            self.table.setItem(r, 3, _item(""))
        self._paint_states()
        if keep:
            self.select(keep)
        elif self.state is not None and self.state.selected_device is not None:
            self.select(self.state.selected_device.url)
        self._show_selected()

    def device_state(self, a: AgentEntry) -> DeviceState:
        """The agent's state: the shared state's (every view shows it), else what this panel's refresh found."""
        if self.state is not None and self.state.device(a.url) is not None:
            return self.state.device_state(a.url)
        if a.state == "unknown":
            return DeviceState()
        return DeviceState(a.state, a.detail, a.board)

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 (Qt's name)
        """Narrow (Package's side panel at 1366 px): the URL column gives its room to State (the Agent cell's
        tooltip and the detail line keep the URL); four equal columns elided every cell to a few characters."""
        super().resizeEvent(event)
        self.table.setColumnHidden(1, self.width() < NARROW_PX)

    def state_text(self, url: str) -> str:
        """A row's State as shown: "● connected", "✖ disconnected: connection refused", ..."""
        ds = self.device_state(self.agents[url])
        mark = "●" if ds.ok else "…" if not ds.down else "✖"
        return f"{mark} {status_text(ds)}"

    def _paint_states(self) -> None:
        for r in range(self.table.rowCount()):
            first, cell = self.table.item(r, 0), self.table.item(r, 3)
            a = self.agents.get(first.data(Qt.ItemDataRole.UserRole)) if first is not None else None
            if a is None or cell is None:
                continue
            ds, text = self.device_state(a), self.state_text(a.url)
            if cell.text() != text:
                cell.setText(text)
            cell.setToolTip(ds.detail or a.url)
            board = self.table.item(r, 2)
            if board is not None and ds.board and board.text() != ds.board:
                board.setText(ds.board)

    # -- network (jobs) --------------------------------------------------------------------------------
    def discover(self) -> None:
        def done(found: Any) -> None:
            for a in found:
                if a.url in self.agents:
                    continue
                if self.state is not None and self.state.workspace is not None:
                    self.state.add_device(DeviceEntry(a.name, a.url, "agent",
                                                      extra={"board": a.board, "discovered": True}))
                else:
                    self.agents[a.url] = AgentEntry(a.name, a.url, "", a.board)
            self._fill_table()
            self.sig_log.emit(f"discovery: {len(found)} agent(s) found")
            self.sig_agents_changed.emit()

        self.jobs.start("agents-discover", self.tr("Discover edge agents"), discover_all, done, self._failed)

    def refresh(self, url: str | None = None) -> None:
        """Fetch what the agents (or the one at ``url``) serve; asked while the same refresh runs, it runs once
        more when that one ends (the running one may have read an old token file)."""
        targets = [self.agents[url]] if url and url in self.agents else list(self.agents.values())
        if not targets:
            return
        key = url if url and url in self.agents else "all"
        if key in self._refreshing:
            self._refreshing[key] = True
            return
        self._refreshing[key] = False

        def work(job: Any) -> Any:
            return {a.url: refresh_one(a) for a in targets}

        def done(res: Any) -> None:
            for u, (state, st) in res.items():
                a = self.agents.get(u)
                if a is None:
                    continue
                a.state, a.detail = state, st if isinstance(st, str) else ""
                if isinstance(st, dict):
                    a.status, a.board = st, st.get("board", a.board)
            self._fill_table()
            ended()

        def failed(err: StudioError) -> None:
            self._failed(err)
            ended()

        def ended() -> None:
            if self._refreshing.pop(key, False):
                self.refresh(None if key == "all" else key)

        self.jobs.start(f"agents-refresh-{id(self)}-{key}", self.tr("Refresh edge agents"), work, done, failed)  # per panel

    def rollback(self, version: str | None, model: str | None = None) -> None:
        a = self.selected()
        if a is None or not a.status:
            return
        model = model or self._selected_model() or next(iter(a.status.get("models", {})), None)
        if model is None:
            return

        def work(job: Any) -> Any:
            job.set_status(self.tr("rolling back {model} on {url}").format(model=model, url=a.url))
            return a.client().rollback(model, version)

        def done(res: Any) -> None:
            self.sig_log.emit(self.tr("{name}: now {version} (was {previous}) on {url}").format(
                name=res["name"], version=res["version"], previous=res["previous"], url=a.url))
            self.refresh(a.url)

        self.jobs.start("agents-rollback", self.tr("Roll back {model}").format(model=model), work, done, self._failed)

    def _selected_model(self) -> str | None:
        rows = self.versions.selectionModel().selectedRows() if self.versions.selectionModel() else []
        return self.versions.item(rows[0].row(), 0).text() if rows else None

    def _confirm_rollback(self) -> None:
        a = self.selected()
        if a is None:
            return
        model = self._selected_model() or next(iter((a.status or {}).get("models", {})), self.tr("the model"))
        ask_then(self, self.tr("Roll back"), self.tr("Roll {model} on {name} back to its previous version? Clients are "
                         "served by the previous version from then on.").format(model=model, name=a.name), self.tr("Roll back"), lambda: self.rollback(None))

    def _activate_selected(self) -> None:
        rows = self.versions.selectionModel().selectedRows()
        a = self.selected()
        if rows and a is not None:
            r = rows[0].row()
            version, model = self.versions.item(r, 1).text(), self.versions.item(r, 0).text()
            ask_then(self, self.tr("Activate version"), self.tr("Serve version {version} of {model} on {name} instead of the "
                             "active one?").format(version=version, model=model, name=a.name), self.tr("Activate"), lambda: self.rollback(version, model))

    def _failed(self, err: StudioError) -> None:
        self.error.show_error(err.message, hint=err.hint)
        self.sig_log.emit(f"error: {err.message}")

    # -- detail ----------------------------------------------------------------------------------------
    def _show_selected(self) -> None:
        a = self.selected()
        self.versions.setRowCount(0)
        self.token_row.workspace = self.workspace
        self.token_row.setEnabled(a is not None)
        self.token_row.show_token(a.token_file if a is not None else "")
        if a is None:
            self.summary.setText(self.tr("Select an agent to see its models and versions.") if self.agents else
                                 self.tr("No agents yet: add one by URL (with its token file) or press Discover."))
            self.history.setText("")
        elif not a.status:
            self.summary.setText(f"{a.url}: {status_text(self.device_state(a))}"
                                 + ("" if a.token_file else self.tr(" (add its token file to manage it)")))
        else:
            st = a.status
            sensors = st.get("sensors") or {}
            self.summary.setText(self.tr("{get} on {get2}, up {get3:.0f} s; "
                                         "temperature: {get4}; "
                                         "power: {get5}").format(get=st.get('name'), get2=st.get('board'), get3=st.get('uptime_s', 0), get4=sensors.get('temperature_source', '?'), get5=sensors.get('power_source', '?')))
            hist = []
            for name, m in st.get("models", {}).items():
                for v in reversed(m.get("versions", [])):
                    r = self.versions.rowCount()
                    self.versions.insertRow(r)
                    for c, text in enumerate([name, v["version"], self.tr("✔ active") if v.get("active") else "",
                                              v.get("board", ""), v.get("created", ""), v.get("signer_key_id", "")]):
                        self.versions.setItem(r, c, _item(str(text or "")))
                hist += [f"{h['time'][11:19]} {name} {h['event']} {h['version']}" for h in m.get("history", [])[-4:]]
            self.history.setText(self.tr("Recent: {events}").format(events="; ".join(hist[-6:])) if hist else "")
        self._update_buttons()

    def _update_buttons(self) -> None:
        a = self.selected()
        managed = bool(a and a.status)
        self.rollback_btn.setEnabled(managed and any(m.get("rollback_to") for m in a.status.get("models", {}).values())
                                     if managed and a else False)
        self.activate_btn.setEnabled(managed)
        self.remove_btn.setEnabled(a is not None)
        self.refresh_btn.setEnabled(bool(self.agents))

    def managed_agents(self) -> list[AgentEntry]:
        """Agents with a token file (the ones a bundle can be deployed to)."""
        return [a for a in self.agents.values() if a.token_file]
