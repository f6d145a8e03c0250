"""Devices page: one list of the workspace's KServe v2 servers, Triton servers and edge agents alike
(health, models, statistics, metrics, test inference); the agents' own management (versions, rollback) is
in the Edge agents section.

Every network call runs off the GUI thread: each server has one poller thread for its whole life
(studio.gui.devices.pollers) that fills a ServerSnapshot every ``poll_ms`` and hands it over through a queued
signal; a device's row and state come from its own latest snapshot only; user actions (load, unload, upload, infer) run as
jobs. A server that stops answering shows as disconnected, with why (refused, timeout, TLS, token, DNS), and
is picked up again by the next poll.

The pieces live in studio.gui.devices: server_poll (ServerSpec, ServerSnapshot, poll_server), server_panel
(the selected server's view), inference_form (test inference), reasons (why a device is down).

Hook for other sections: ``DevicesPage.sections`` is a QTabWidget whose first tab is "Servers and agents";
``add_section(widget, title)`` adds another (the edge helper adds "Edge agents" there).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from studio.core.errors import StudioError
from studio.gui.devices.inference_form import InferenceForm, infer_once
from studio.gui.devices.pollers import DevicePollers
from studio.gui.devices.reasons import down_reason
from studio.gui.devices.server_form import AddServerForm
from studio.gui.devices.server_panel import ServerPanel
from studio.gui.devices.server_poll import (
    POLL_MS,
    POLL_TIMEOUT,
    ServerSnapshot,
    ServerSpec,
    poll_server,
    with_client,
)
from studio.gui.file_dialogs import start_dir
from studio.gui.page import Page
from studio.gui.widgets.confirm import ask_then

# the page's module-level names before the split, still importable from here
__all__ = ["POLL_MS", "POLL_TIMEOUT", "DevicesPage", "ServerSnapshot", "ServerSpec", "poll_server"]


class _Relay(QObject):
    """Lives on the GUI thread; poller threads emit into it (queued across threads)."""

    sig_snapshot = Signal(object)


class DevicesPage(Page):
    page_id = "devices"
    title = "Devices"
    scrolls_itself = True  # splitters share the height; the page fits 1280x720 as it is
    icon_name = "devices"

    def __init__(self, jobs: Any = None, parent: QWidget | None = None, poll_ms: int = POLL_MS) -> None:
        super().__init__(jobs, parent)
        self.servers: dict[str, ServerSpec] = {}
        self.snapshots: dict[str, ServerSnapshot] = {}
        self._shown_server: str | None = None  # whose test inference output the form shows
        self._relay = _Relay(self)
        self._relay.sig_snapshot.connect(self._on_snapshot)
        self._pollers = DevicePollers(self._deliver)
        self._build()
        self.timer = QTimer(self)
        self.timer.setInterval(poll_ms)
        self.timer.timeout.connect(self.poll_all)
        self.timer.start()

    # -- layout ----------------------------------------------------------------------------------------
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(8, 8, 8, 8)
        head = QLabel(self.tr("Devices"))
        head.setProperty("role", "heading")
        outer.addWidget(head)
        self.sections = QTabWidget()
        self.sections.setObjectName("devices_sections")
        outer.addWidget(self.sections, 1)
        self.triton_tab = QWidget()
        self.sections.addTab(self.triton_tab, self.tr("Servers and agents"))
        split = QSplitter(Qt.Orientation.Horizontal, self.triton_tab)
        lay = QHBoxLayout(self.triton_tab)
        lay.setContentsMargins(0, 4, 0, 0)
        lay.addWidget(split)

        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        self.server_list = QListWidget()
        self.server_list.currentItemChanged.connect(lambda *_: self._server_selected())
        ll.addWidget(QLabel(self.tr("Servers")))
        ll.addWidget(self.server_list, 1)
        self.add_form = a = AddServerForm()  # its widgets under the names they had on the page
        self.url_edit, self.name_edit, self.protocol_combo, self.tls_check = a.url_edit, a.name_edit, \
            a.protocol_combo, a.tls_check
        self.headers_edit, self.metrics_edit, self.add_error = a.headers_edit, a.metrics_edit, a.add_error
        self.add_btn, self.remove_btn = a.add_btn, a.remove_btn
        self.add_btn.clicked.connect(self._add_from_form)
        self.remove_btn.clicked.connect(self._remove_current)
        ll.addWidget(self.add_form)
        split.addWidget(left)

        self.panel = ServerPanel()
        p = self.panel  # its widgets under the names they had on the page
        self.status_label, self.info_label, self.ext_label = p.status_label, p.info_label, p.ext_label
        self.detail_tabs, self.models_table, self.config_view = p.detail_tabs, p.models_table, p.config_view
        self.stats_table, self.metrics_table, self.action_buttons = p.stats_table, p.metrics_table, p.action_buttons
        self.models_table.itemSelectionChanged.connect(self._model_selected)
        for action, b in self.action_buttons.items():
            b.clicked.connect(lambda _=False, a=action: self._model_action(a))

        self.inference = f = InferenceForm()
        self.infer_model, self.infer_text, self.infer_image, self.infer_audio = f.model, f.text, f.image, f.audio
        self.infer_tokenizer, self.infer_processor = f.tokenizer, f.processor
        self.infer_btn, self.infer_out = f.run_btn, f.out
        self.infer_btn.clicked.connect(self.run_test_inference)
        f.gen_btn.clicked.connect(self.run_test_generation)
        self.detail_tabs.addTab(f, self.tr("Test inference"))
        split.addWidget(self.panel)
        split.setSizes([360, 860])
        self._add_agents_section()

    def _add_agents_section(self) -> None:
        """Edge agents (discovered by mDNS or added by URL) live beside the Triton servers."""
        from studio.gui.widgets.agents_panel import AgentsPanel

        self.agents_panel = AgentsPanel(self.jobs)
        self.agents_panel.bind_state(self.state, self.state_signals)
        self.agents_panel.table.itemSelectionChanged.connect(self._agent_selected)
        self.agents_panel.sig_log.connect(self.sig_log)
        self.agents_panel.sig_agents_changed.connect(self.sig_workspace_changed)
        self.add_section(self.agents_panel, self.tr("Edge agents"))

    def add_section(self, widget: QWidget, title: str) -> int:
        """Hook for other device kinds (the edge helper adds "Edge agents" here)."""
        return self.sections.addTab(widget, title)

    # -- servers ---------------------------------------------------------------------------------------
    def state_bound(self) -> None:
        self.agents_panel.bind_state(self.state, self.state_signals)

    def context_changed(self) -> None:
        self.agents_panel.set_workspace(self.workspace)
        self._sync_servers()
        self._fill_inference()

    def state_changed(self, topic: str, payload: object) -> None:
        if topic in ("workspace", "devices"):
            self._sync_servers()
        if topic in ("workspace", "artifacts", "model"):
            self._fill_inference()

    def _fill_inference(self) -> None:
        """Test inference takes the tokenizer and processor the current model's export wrote, and the
        workspace's sample image / audio when the model takes one (empty fields only)."""
        self.inference.fill_from_state(self.state)

    def _sync_servers(self) -> None:
        """The list is the shared state's Triton servers and agents: add new ones, drop removed ones."""
        known = {d.name: d for d in self.state.devices() if d.kind in ("triton", "agent")}
        for d in known.values():
            spec = ServerSpec.from_device(d)
            if d.name not in self.servers:
                self._add(spec, save=False)
            elif self.servers[d.name] != spec:  # served again on new ports, a token fixed: a new poller for it
                self.servers[d.name] = spec
                self._pollers.set(spec)
                self.poll(d.name)
        for name in [n for n in self.servers if n not in known and self.state.workspace is not None]:
            self._drop(name)

    def _server_selected(self) -> None:
        if self.current_server() != self._shown_server:  # another server: the last one's answer or error goes
            self._shown_server = self.current_server()
            self.infer_out.clear()
        self._show_current()
        name = self.current_server()
        if name is not None and self.state.device(name) is not None:
            self.state.select_device(name)

    def _agent_selected(self) -> None:
        a = self.agents_panel.selected()
        if a is not None:
            self.state.select_device(a.url)

    def open_payload(self, payload: object) -> None:
        """A server URL, or {"url", "name"?, "metrics_url"?} (the Triton page's "Open in Devices"):
        selects that server, adding it (and saving it in the workspace) when it is not listed yet."""
        spec = payload if isinstance(payload, dict) else {"url": payload} if isinstance(payload, str) else {}
        url = str(spec.get("url") or "").strip()
        if not url:
            return
        self.sections.setCurrentWidget(self.triton_tab)
        name = spec.get("name")
        known = self.servers.get(name) if name else next((s for s in self.servers.values() if s.url == url), None)
        if known is not None and known.url == url:
            for i in range(self.server_list.count()):
                if self.server_list.item(i).data(Qt.ItemDataRole.UserRole) == known.name:
                    self.server_list.setCurrentRow(i)
            self.poll(known.name)
            return
        try:
            self.add_server(url, name=name, metrics_url=spec.get("metrics_url"))
        except StudioError as exc:
            self.add_error.setText(exc.message)

    def add_server(self, url: str, name: str | None = None, protocol: str | None = None, ssl: bool = False,
                   headers: dict[str, str] | None = None, metrics_url: str | None = None) -> ServerSpec:
        """Add (or replace) a server; raises InputError for a malformed URL."""
        from studio.triton.client import parse_url

        address, _proto, tls = parse_url(url, protocol)
        spec = ServerSpec(name or address, url.strip(), protocol, ssl or tls, dict(headers or {}), metrics_url or None)
        self._add(spec, save=True)
        return spec

    def _add(self, spec: ServerSpec, save: bool) -> None:
        self.servers[spec.name] = spec
        self._pollers.set(spec)
        if save and self.state.workspace is not None:
            entry, known = spec.to_device(), self.state.device(spec.name)
            if known is not None:  # keep what others recorded (a local server's pid, repo, gRPC URL; a token)
                entry.kind, entry.extra = known.kind, {**known.extra, **entry.extra}
            self.state.add_device(entry, select=True)
            self.sig_workspace_changed.emit()
        items = self.server_list.findItems(spec.name, Qt.MatchFlag.MatchStartsWith)
        item = next((i for i in items if i.data(Qt.ItemDataRole.UserRole) == spec.name), None)
        if item is None:
            item = QListWidgetItem()
            item.setData(Qt.ItemDataRole.UserRole, spec.name)
            self.server_list.addItem(item)
        self._paint_item(item, None)
        self.server_list.setCurrentItem(item)
        self.sig_connection.emit(spec.name, "connecting")
        self.poll(spec.name)

    def _add_from_form(self) -> None:
        try:
            self.add_server(**self.add_form.values())
        except StudioError as exc:
            self.add_error.setText(exc.message)
            return
        self.add_form.added()

    def _remove_current(self) -> None:
        name = self.current_server()
        if name is None:
            return
        self._drop(name)
        if self.state.workspace is not None:
            self.state.remove_device(name)
            self.sig_workspace_changed.emit()

    def _drop(self, name: str) -> None:
        self.servers.pop(name, None)
        self._pollers.drop(name)
        self.snapshots.pop(name, None)
        for i in range(self.server_list.count()):
            if self.server_list.item(i).data(Qt.ItemDataRole.UserRole) == name:
                self.server_list.takeItem(i)
                break
        self._show_current()

    def current_server(self) -> str | None:
        item = self.server_list.currentItem()
        return None if item is None else item.data(Qt.ItemDataRole.UserRole)

    # -- polling (worker threads) ----------------------------------------------------------------------
    def poll_all(self) -> None:
        for name in list(self.servers):
            self.poll(name)

    def polling(self, name: str) -> bool:
        """Whether a poll of device ``name`` is in flight (its row shows the last finished one)."""
        return self._pollers.busy(name)

    def poll(self, name: str) -> None:
        """Ask device ``name``'s poller for a poll now (a poll already on its way is the one answered)."""
        if name in self.servers:
            self._pollers.request(name)

    def _deliver(self, snap: ServerSnapshot) -> None:
        """On a poller's thread: hand the snapshot to the GUI thread (unless the page is gone)."""
        try:
            self._relay.sig_snapshot.emit(snap)
        except RuntimeError:  # the page (and its relay) was deleted while this poll ran
            pass

    def _on_snapshot(self, snap: ServerSnapshot) -> None:
        if snap.name not in self.servers or not self._pollers.current(snap):
            return  # a removed device, or the answer for its old address / token: its new poller answers next
        old = self.snapshots.get(snap.name)
        self.snapshots[snap.name] = snap
        state = snap.state
        if old is None or old.connected != snap.connected:
            # first: the window turns this into a state without detail, which the line below then completes
            self.sig_connection.emit(snap.name, state)
            self.sig_log.emit(f"{snap.name}: " + ("connected" if snap.connected else f"disconnected ({snap.error})"))
        if self.state.device(snap.name) is not None:
            self.state.set_device_state(snap.name, state, snap.error or "", snap.board,
                                        models=[m.name for m in snap.models] if snap.connected else None)
        for i in range(self.server_list.count()):
            item = self.server_list.item(i)
            if item.data(Qt.ItemDataRole.UserRole) == snap.name:
                self._paint_item(item, snap)
        if snap.name == self.current_server():
            self._show(snap)

    def _paint_item(self, item: QListWidgetItem, snap: ServerSnapshot | None) -> None:
        """One row: mark, name, kind and state; a server that is down says why (the tooltip has the detail)."""
        name = item.data(Qt.ItemDataRole.UserRole)
        spec = self.servers[name]
        if snap is None:
            state = QCoreApplication.translate("DeviceReasons", "connecting...")
        elif snap.connected:
            state = QCoreApplication.translate("DeviceReasons", "connected")
        else:
            state = QCoreApplication.translate("DeviceReasons", "disconnected: {reason}").format(
                reason=down_reason(snap.state, snap.error))
        mark = "\u25cb" if snap is None else ("\u25cf" if snap.connected else "\u2716")
        kind = "  " + self.tr("(edge agent)") if spec.kind == "agent" else ""
        item.setText(f"{mark} {name}  -  {state}\n    {spec.url}{kind}")  # the state before the fold
        item.setToolTip(snap.error if snap is not None and snap.error else spec.url)

    # -- showing ---------------------------------------------------------------------------------------
    def _show_current(self) -> None:
        name = self.current_server()
        snap = self.snapshots.get(name) if name else None
        if name is None:
            self.panel.show_none()
            return
        if snap is None:
            self.panel.show_connecting(name)
            return
        self._show(snap)

    def _show(self, snap: ServerSnapshot) -> None:
        self.panel.show_snapshot(snap, self.servers[snap.name], snap.state,
                                 self.timer.interval() / 1000)
        if snap.connected:
            self.inference.set_models(sorted({m.name for m in snap.models if m.state == "READY"}))
            self.inference.set_generates(snap.generates)

    def selected_model(self) -> str | None:
        return self.panel.selected_model()

    def _model_selected(self) -> None:
        m = self.selected_model()
        if m and self.infer_model.findText(m) >= 0:
            self.infer_model.setCurrentText(m)

    # -- actions (jobs) --------------------------------------------------------------------------------
    def _model_action(self, action: str, confirmed: bool = False) -> None:
        server, model = self.current_server(), self.selected_model()
        if server is None or model is None:
            self.sig_log.emit(self.tr("select a server and a model first"))
            return
        spec = self.servers[server]
        if action == "config":
            self._start(f"config:{server}", self.tr("config of {model}").format(model=model), lambda job: with_client(spec, 10, lambda c: c.model_config(model)),
                        lambda cfg: self.config_view.setPlainText(json.dumps(cfg, indent=2)))
            return
        if action == "upload":
            folder = QFileDialog.getExistingDirectory(self, self.tr("Model folder to upload as a new version of {model}").format(model=model),
                                                       start_dir(None, self.workspace, "models"))
            if not folder:
                return
            version, ok = QInputDialog.getInt(self, self.tr("Version"), self.tr("Version number"), 2, 1, 1_000_000)
            if not ok:
                return
            self.upload_version(model, Path(folder), version)
            return
        if action == "unload" and not confirmed:
            ask_then(self, self.tr("Unload model"), self.tr("Unload {model} on {server}? Requests to it fail until it is "
                             "loaded again.").format(model=model, server=server), self.tr("Unload"), lambda: self._model_action(action, confirmed=True))
            return
        self._start(f"{action}:{server}:{model}", f"{action} {model} on {server}",
                    lambda job: with_client(spec, 60, lambda c: getattr(c, action)(model)),
                    lambda _r: self.poll(server))

    def upload_version(self, model: str, folder: Path, version: int) -> None:
        server = self.current_server()
        if server is None:
            return
        spec = self.servers[server]
        self._start(f"upload:{server}:{model}", f"upload {folder.name} as {model} v{version}",
                    lambda job: with_client(spec, 120, lambda c: c.upload_version(model, version, folder)),
                    lambda _r: self.poll(server))

    def run_test_inference(self) -> None:
        server, model = self.current_server(), self.infer_model.currentText()
        if server is None or not model:
            self.infer_out.setPlainText(self.tr("select a connected server and a ready model first"))
            return
        spec, f = self.servers[server], self.inference
        args = (f.text.text() or None, f.image.path(), f.audio.path(), f.tokenizer.path(), f.processor.path())
        self.infer_out.setPlainText(self.tr("running..."))
        self._start(f"infer:{server}", self.tr("test inference on {model}").format(model=model), lambda job: infer_once(spec, model, *args),
                    f.show_result, lambda err: self.infer_out.setPlainText(err.render()))

    def run_test_generation(self) -> None:
        """The form's prompt (and image / audio) to the model's generate_stream; the answer streams in."""
        server, model = self.current_server(), self.infer_model.currentText()
        if server is None or not model:
            self.infer_out.setPlainText(self.tr("select a connected server and a ready model first"))
            return
        from studio.triton.generate_client import stream_generate

        spec, f = self.servers[server], self.inference
        try:
            body = f.generation_request()
        except StudioError as exc:
            self.infer_out.setPlainText(exc.render())
            return
        f.start_stream()
        self._start(f"generate:{server}", self.tr("generate on {model}").format(model=model),
                    lambda job: stream_generate(spec.url, model, body, f.sig_piece.emit, spec.headers),
                    f.show_answer, lambda err: self.infer_out.appendPlainText("\n" + err.render()))

    def _start(self, kind: str, title: str, fn: Any, on_done: Any, on_failed: Any = None) -> None:
        def failed(err: StudioError) -> None:
            self.sig_log.emit(f"{title}: {err.message}")
            if on_failed is not None:
                on_failed(err)
            else:
                self.config_view.setPlainText(err.render())

        self.jobs.start(f"{self.page_id}:{kind}", title, fn, on_done, failed)

    def shutdown(self) -> None:
        """Stop polling and wait for the pollers' threads (at most one poll's timeout): a poller left running
        destroys its gevent hub while the interpreter finalizes, which killed a restarted studio with SIGSEGV
        after its window had closed (tests/gui/test_device_polling.py, once in a loaded full run)."""
        from studio.gui.devices.server_poll import POLL_TIMEOUT

        self.timer.stop()
        self._pollers.stop_all(wait_s=POLL_TIMEOUT + 1.0)
