"""Fleet: staged rollouts of one bundle to many edge agents, ring by ring, gated by an SLA tier.

The page is a face over ``studio.fleet`` (the same calls as `studio fleet ...`): fleets are the workspace's fleet
files, agents join one from the connected agents in Devices (the shared state) or by URL; a rollout runs as a job
whose engine events come back to the GUI thread by a queued signal, and the state shown is always the engine's
(or the one saved in the workspace: a rollout interrupted by a closed studio is shown as it stopped, with Resume).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from studio.core.errors import Problem, StudioError
from studio.gui.file_dialogs import start_dir
from studio.gui.fleet.views import AgentsModel, MembersModel, Timeline, agents_table
from studio.gui.page import Page
from studio.gui.widgets.field_error import FieldError
from studio.gui.widgets.layout import add_heading, browse_row, form_column

DEFAULT_PLAN = "canary:1,25%,100%"
FIELD_OF = {"--plan": "plan", "--watch": "watch", "--on-down": "on_down", "--probe-rps": "probe"}


class _Bridge(QObject):
    """Engine listener -> GUI thread (the engine calls it on the job's worker thread)."""

    sig_state = Signal(object, object)  # FleetEvent, RolloutState


class FleetPage(Page):
    page_id = "fleet"
    title = "Fleet"

    def __init__(self, jobs: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(jobs, parent)
        self.rollout: Any | None = None  # the RolloutState shown (the running engine's, or the saved one)
        self._filled_bundle = ""  # the bundle path the page put in the field (it follows the newest build)
        self._fresh: set[str] = set()  # members just added (bold until the fleet changes)
        self._bridge = _Bridge(self)
        self._bridge.sig_state.connect(self._on_engine_state, Qt.ConnectionType.QueuedConnection)
        self._build()

    # -- layout ----------------------------------------------------------------------------------------
    def _build(self) -> None:
        root = QVBoxLayout(self)
        root.setContentsMargins(12, 10, 12, 10)
        add_heading(root, self.tr("Fleet — staged rollouts to many agents, gated by live metrics"))
        top = QHBoxLayout()
        self.fleet_combo = QComboBox()
        self.fleet_combo.setMinimumWidth(180)
        self.fleet_combo.currentTextChanged.connect(self._fleet_switched)
        self.new_edit = QLineEdit()
        self.new_edit.setPlaceholderText(self.tr("new fleet name"))
        self.new_edit.setMaximumWidth(160)
        self.token_edit = QLineEdit()
        self.token_edit.setPlaceholderText(self.tr("fleet token file (optional)"))
        self.token_edit.setToolTip(self.tr("the management token file of agents that have none in Devices (kept by path)"))
        self.token_edit.setMaximumWidth(200)
        self.create_btn = new_btn = QPushButton(self.tr("Create"))
        new_btn.clicked.connect(self._create_fleet)
        self.add_connected_btn = QPushButton(self.tr("Add connected agents"))
        self.add_connected_btn.setToolTip(self.tr("every edge agent in Devices joins the fleet (its token file by reference)"))
        self.add_connected_btn.clicked.connect(self.add_connected_agents)
        self.ring_edit = QLineEdit()
        self.ring_edit.setPlaceholderText(self.tr("ring label (optional)"))
        self.ring_edit.setMaximumWidth(150)
        for w in (QLabel(self.tr("Fleet")), self.fleet_combo, self.new_edit, self.token_edit, new_btn, self.add_connected_btn,
                  self.ring_edit):
            top.addWidget(w)
        top.addStretch(1)
        root.addLayout(top)

        form = QHBoxLayout()
        self.bundle_edit = QLineEdit()
        self.bundle_edit.setPlaceholderText(self.tr("signed bundle (.tar): the current model's newest by default"))
        bundle_box = QWidget()
        bundle_box.setLayout(browse_row(self.bundle_edit, self._choose_bundle))
        self.plan_edit = QLineEdit(DEFAULT_PLAN)
        self.plan_edit.setToolTip(self.tr("rings: a count of agents or a percentage of the fleet, increasing; "
                                          "or 'rings' for the fleet file's ring labels in order"))
        form.addLayout(form_column((self.tr("Bundle"), bundle_box), (self.tr("Plan"), self.plan_edit)), 3)
        self.gate_combo = QComboBox()
        self.watch_edit = QLineEdit("60s")
        self.watch_edit.setToolTip(self.tr("how long each ring is watched before it is promoted (500ms, 60s, 2m)"))
        form.addLayout(form_column((self.tr("Gate (SLA tier)"), self.gate_combo), (self.tr("Watch"), self.watch_edit)), 2)
        self.on_down = QComboBox()
        self.on_down.addItem(self.tr("skip"), "skip")  # the rollout's --on-down values are the data
        self.on_down.addItem(self.tr("block"), "block")
        self.on_down.setToolTip(self.tr("an agent that is down: skipped (reported), or the rollout blocks until it is back"))
        self.probe = QDoubleSpinBox()
        self.probe.setRange(0, 10_000)
        self.probe.setValue(5)
        self.probe.setSuffix(self.tr(" req/s"))
        self.probe.setToolTip(self.tr("probe requests per agent during the watch (0: only real traffic is judged)"))
        form.addLayout(form_column((self.tr("Agent down"), self.on_down), (self.tr("Probe traffic"), self.probe)), 2)
        root.addLayout(form)
        self.field_error = FieldError()
        root.addWidget(self.field_error)

        bar = QHBoxLayout()
        self.start_btn = QPushButton(self.tr("Start rollout"))
        self.start_btn.clicked.connect(self.start_rollout)
        self.pause_btn = QPushButton(self.tr("Pause"))
        self.pause_btn.clicked.connect(self.pause)
        self.resume_btn = QPushButton(self.tr("Resume"))
        self.resume_btn.clicked.connect(self.resume)
        self.abort_btn = QPushButton(self.tr("Abort and roll back"))
        self.abort_btn.clicked.connect(self.abort)
        for b in (self.start_btn, self.pause_btn, self.resume_btn, self.abort_btn):
            bar.addWidget(b)
        self.status_label = QLabel(self.tr("No rollout yet."))
        self.status_label.setWordWrap(True)
        bar.addWidget(self.status_label, 1)
        root.addLayout(bar)

        self.members_label = QLabel("")  # who is in the fleet, and what "Add connected agents" just did
        self.members_label.setWordWrap(True)
        self.members_label.setTextFormat(Qt.TextFormat.RichText)
        root.addWidget(self.members_label)
        split = QSplitter(Qt.Orientation.Vertical)
        self.agents_model = AgentsModel()
        self.members_model = MembersModel()
        self.table = agents_table(self.members_model)  # the rollout's rows once there is one (_show_state)
        split.addWidget(self.table)
        self.timeline = Timeline()
        split.addWidget(self.timeline)
        split.setSizes([300, 160])
        root.addWidget(split, 1)
        self._update_buttons()

    # -- workspace -------------------------------------------------------------------------------------
    def context_changed(self) -> None:
        self._fill_tiers()
        self._fill_fleets()
        self._follow_bundle()
        self.refresh()

    def state_changed(self, topic: str, payload: object) -> None:
        if topic in ("artifacts", "model", "workspace"):
            self._follow_bundle()  # a bundle just built (Package page) is the one to roll out
        if topic in ("devices", "device_state") and self.rollout is None:
            self._show_members()

    def _follow_bundle(self) -> None:
        """The current model's newest bundle (the workspace state's ``bundle`` artifact) in the Bundle field,
        unless the user typed or chose another one there."""
        newest = self.state.artifact("bundle") if self.state.model_name else None
        current = self.bundle_edit.text().strip()
        if not newest or current not in ("", self._filled_bundle):
            return  # nothing built yet, or a path the user chose
        if current != str(newest):
            self.bundle_edit.setText(str(newest))
        self._filled_bundle = str(newest)

    def _fill_tiers(self) -> None:
        if self.gate_combo.count():
            return
        from studio.telemetry.sla import load_tiers

        try:
            tiers, _ = load_tiers()
        except StudioError as exc:
            self._show(exc)
            return
        self.gate_combo.addItems(list(tiers))

    def _fleet_switched(self, _name: str) -> None:
        self._feedback, self._fresh = "", set()
        self.refresh()

    def _fill_fleets(self, select: str | None = None) -> None:
        names = self.fleet_names()
        current = select or self.fleet_combo.currentText()
        self.fleet_combo.blockSignals(True)
        self.fleet_combo.clear()
        self.fleet_combo.addItems(names)
        if current in names:
            self.fleet_combo.setCurrentText(current)
        self.fleet_combo.blockSignals(False)

    def fleet_names(self) -> list[str]:
        if self.workspace is None:
            return []
        from studio.fleet.fleet_file import fleets_dir

        d = fleets_dir(self.workspace)
        return sorted(p.stem for p in d.glob("*.yaml")) if d.is_dir() else []

    def _create_fleet(self) -> None:
        from studio.fleet.fleet_file import fleet_path, new_fleet

        name = self.new_edit.text().strip()
        try:
            ws = self._need_ws()
            token = self.token_edit.text().strip()
            if token and not Path(token).is_file():
                raise StudioError(self.tr("token file {path} does not exist").format(path=token), offending="token file",
                                  hint=self.tr("copy /etc/studio-agent/token from a board, or leave it empty"))
            new_fleet(fleet_path(ws, name), name, token_file=ws.relative(Path(token)) if token else None)
        except StudioError as exc:
            self.field_error.show_error(exc.message, self.token_edit if exc.offending == "token file" else
                                        self.new_edit, hint=exc.hint)
            return
        self.field_error.clear_error()
        self.new_edit.clear()
        self._fill_fleets(select=name)
        self.refresh()

    def add_connected_agents(self) -> int:
        """Every agent the shared state knows (Devices) joins the current fleet; returns how many were added.
        The members table shows them (the new ones in bold) and the line above it says what was added."""
        from html import escape

        from studio.fleet.fleet_file import agent_name, default_name, fleet_path, load_fleet, url_key
        from studio.fleet.schema import AgentSpec

        try:
            fleet = load_fleet(fleet_path(self._need_ws(), self._fleet_name()))
            known = {url_key(a.url) for a in fleet.agents}
            ring = self.ring_edit.text().strip()
            agents = self.state.devices("agent")
            if not agents:
                raise StudioError(self.tr("no edge agent in Devices to add"), offending="Add connected agents",
                                  hint=self.tr("add or discover agents on the Devices page, then come back"))
            added = 0
            names: list[str] = []
            already = 0
            for dev in agents:
                if url_key(dev.url) in known:
                    already += 1
                    continue
                labels = {**({"board": str(dev.extra["board"])} if dev.extra.get("board") else {}),
                          **({"ring": ring} if ring else {})}
                name = agent_name(dev.name) if dev.name else default_name(dev.url)
                fleet.spec.agents.append(AgentSpec(name=name, url=dev.url, labels=labels,
                                                   token_file=dev.extra.get("token_file") or None))
                known.add(url_key(dev.url))
                names.append(f"{name} ({dev.url})")
                self._fresh.add(name)
                added += 1
            fleet.save()
        except StudioError as exc:
            self._show(exc)
            return 0
        self.field_error.clear_error()
        listed = ", ".join(names[:4]) + (self.tr(" and {n} more (in bold below)").format(n=len(names) - 4)
                                         if len(names) > 4 else "")
        bold = f"<b>{escape(fleet.name)}</b>"
        added_text = (self.tr("Added 1 agent to fleet {fleet}: {agents}") if added == 1 else
                      self.tr("Added {n} agents to fleet {fleet}: {agents}"))
        what = (added_text.format(n=added, fleet=bold, agents=escape(listed)) if added
                else self.tr("No agent added to fleet {fleet}").format(fleet=bold))
        if already:
            what += (self.tr("; {n} connected agents were already members").format(n=already) if already != 1 else
                     self.tr("; 1 connected agent was already a member"))
        self._feedback = what
        self.sig_log.emit(self.tr("{n} agent(s) added to fleet {fleet}").format(n=added, fleet=fleet.name)
                          + (f": {', '.join(names)}" if names else "")
                          + (self.tr(" ({n} already members)").format(n=already) if already else ""))
        self.refresh()
        return added

    # -- rollout ---------------------------------------------------------------------------------------
    def start_rollout(self) -> None:
        from studio.fleet.api import start_rollout

        try:
            ws, fleet = self._need_ws(), self._fleet_name()
            bundle = self.bundle_edit.text().strip()
            if not bundle:
                raise StudioError(self.tr("choose the bundle to roll out"), offending="bundle",
                                  hint=self.tr("build one on the Package page, or Browse… for a .tar"))
            args = dict(plan=self.plan_edit.text().strip(), gate=self.gate_combo.currentText(),
                        watch=self.watch_edit.text().strip(), on_down=self.on_down.currentData(),
                        probe_rps=self.probe.value())
            engine = start_rollout(ws, fleet, Path(bundle), replace=True, **args)  # checked before a deploy
        except StudioError as exc:
            self._show(exc)
            return
        self.field_error.clear_error()
        self._run(engine, self.tr("Roll out {bundle} to {fleet}").format(bundle=Path(bundle).name, fleet=fleet))

    def resume(self) -> None:
        from studio.fleet.api import resume_rollout

        try:
            engine = resume_rollout(self._need_ws(), self._fleet_name())
        except StudioError as exc:
            self._show(exc)
            return
        self._run(engine, self.tr("Resume rollout to {fleet}").format(fleet=self._fleet_name()))

    def _run(self, engine: Any, title: str) -> None:
        engine.subscribe(self._bridge.sig_state.emit)
        self.rollout = engine.state
        self._show_state()

        def work(job: Any) -> Any:
            engine.job = job
            return engine.run()

        self.handle = self.jobs.start(f"fleet:{self._fleet_name()}", title, work,
                                      on_done=self._on_done, on_failed=self._show)
        self._update_buttons(running=True)

    def pause(self) -> None:
        from studio.fleet.api import pause_rollout

        self._steer(pause_rollout)

    def abort(self) -> None:
        from studio.fleet.api import abort_rollout

        self._steer(lambda ws, fleet: abort_rollout(ws, fleet)[0])

    def _steer(self, fn: Any) -> None:
        try:
            self.sig_log.emit(str(fn(self._need_ws(), self._fleet_name())))
        except StudioError as exc:
            self._show(exc)
        self.refresh()

    def _on_engine_state(self, _event: Any, state: Any) -> None:
        self.rollout = state
        self._show_state()

    def _on_done(self, state: Any) -> None:
        self.rollout = state
        self._show_state()
        self._update_buttons(running=False)
        self.sig_log.emit(self.tr("rollout to {fleet}: {status}").format(fleet=state.fleet, status=state.status))

    # -- view ------------------------------------------------------------------------------------------
    def refresh(self) -> None:
        """The saved rollout of the selected fleet (what a restarted studio shows), unless one is running here."""
        if self._running():
            return
        from studio.fleet.api import load_rollout

        self.rollout = None
        if self.workspace is not None and self.fleet_combo.currentText():
            try:
                state, store = load_rollout(self.workspace, self.fleet_combo.currentText())
                self.rollout = state if store.exists() else None
            except StudioError:
                self.rollout = None
        self._show_state()
        self._update_buttons()

    def _show_members(self) -> None:
        """The fleet file's agents in the table (no rollout yet), with their state in Devices."""
        from html import escape

        from studio.fleet.fleet_file import fleet_path, load_fleet, url_key

        members: list[Any] = []
        name = self.fleet_combo.currentText()
        if self.workspace is not None and name:
            try:
                members = load_fleet(fleet_path(self.workspace, name)).agents
            except StudioError as exc:
                self.members_label.setText(self.tr("<span style='color:#c62828'>{escape}</span>").format(escape=escape(exc.message)))
                return
        states = {url_key(d.url): self.state.device_state(d.name).state for d in self.state.devices("agent")}
        self.members_model.set_members(members, states, self._fresh)
        if self.table.model() is not self.members_model:
            self.table.setModel(self.members_model)
        count = (self.tr("Fleet {fleet}: 1 member") if len(members) == 1 else
                 self.tr("Fleet {fleet}: {n} members")).format(fleet=f"<b>{escape(name)}</b>", n=len(members))
        connected = sum(1 for a in members if states.get(url_key(a.url)) == "ok")
        head = (count + (self.tr(", {n} connected").format(n=connected) if members else
                         self.tr(" — add the connected agents (Devices) with “Add connected agents”")) if name else "")
        feedback = getattr(self, "_feedback", "")
        self.members_label.setText(f"{feedback}<br>{head}" if feedback and head else feedback or head)

    def _show_state(self) -> None:
        from studio.fleet.api import interrupted

        st = self.rollout
        self.agents_model.set_state(st)
        self.timeline.set_state(st)
        if st is None:
            self._show_members()
        elif self.table.model() is not self.agents_model:
            self.table.setModel(self.agents_model)
            self.members_label.setText(self.tr("Rollout of fleet <b>{fleet}</b>: one row per agent it updates").format(fleet=st.fleet))
        if st is None:
            self.status_label.setText(self.tr("No rollout yet for this fleet.") if self.fleet_combo.count() else
                                      self.tr("Create a fleet, then add the connected agents to it."))
            return
        ring = st.rings[st.ring].name if st.ring < len(st.rings) else self.tr("all rings")
        status = self.tr("interrupted (the studio running it is gone): Resume goes on") if interrupted(st) and \
            not self._running() else st.status
        self.status_label.setText(self.tr("<b>{bundle_name} {bundle_version}</b> to {fleet}: {status} — ring "
                                          "{min}/{n} ({ring}), gate {tier}, "
                                          "watch {watch_s:g} s").format(bundle_name=st.bundle_name, bundle_version=st.bundle_version, fleet=st.fleet, status=status, min=min(st.ring + 1, len(st.rings)), n=len(st.rings), ring=ring, tier=st.tier, watch_s=st.watch_s))

    def _running(self) -> bool:
        h = getattr(self, "handle", None)
        return h is not None and h.status == "running"

    def _update_buttons(self, running: bool | None = None) -> None:
        running = self._running() if running is None else running
        st = self.rollout
        self.start_btn.setEnabled(not running)
        self.pause_btn.setEnabled(running)
        self.resume_btn.setEnabled(not running and st is not None and not st.finished)
        self.abort_btn.setEnabled(st is not None and (running or not st.finished))

    def _choose_bundle(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self.tr("Bundle to roll out"),
                                              start_dir(self.bundle_edit.text(), self.workspace, "bundles"),
                                              self.tr("Bundles (*.tar)"))
        if path:
            self.bundle_edit.setText(path)

    def _fleet_name(self) -> str:
        name = self.fleet_combo.currentText()
        if not name:
            raise StudioError(self.tr("no fleet chosen"), offending="fleet", hint=self.tr("create one (name, Create) first"))
        return name

    def _need_ws(self) -> Any:
        if self.workspace is None:
            raise StudioError(self.tr("open a workspace first"), offending="workspace")
        return self.workspace

    def _show(self, exc: StudioError) -> None:
        widgets = {"bundle": self.bundle_edit, "--plan": self.plan_edit, "--watch": self.watch_edit,
                   "fleet": self.fleet_combo}
        where = next((w for k, w in widgets.items() if k and exc.offending and k in str(exc.offending)),
                     self.bundle_edit if exc.offending and str(exc.offending).endswith(".tar") else None)
        self.field_error.show_error(exc.message, *([where] if where else []), hint=exc.hint)
        self.sig_problem.emit(Problem("error", exc.message, source=self.title, page=self.page_id,
                                      location=exc.offending or "", hint=exc.hint or ""))
