"""Devices page: one list of the workspace's KServe v2 servers, Triton servers and edge agents alike
(health, models, statistics, metrics, test inference); the agents' own management (versions, rollback) is
in the Edge agents section.

Every network call runs off the GUI thread: a poller thread per server fills a ServerSnapshot every
``poll_ms`` and hands it over through a queued signal; user actions (load, unload, upload, infer) run as
jobs. A server that stops answering shows as disconnected and is picked up again by the next poll.

Hook for other sections: ``DevicesPage.sections`` is a QTabWidget whose first tab is "Servers and agents";
``add_section(widget, title)`` adds another (the edge helper adds "Edge agents" there).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTableWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from studio.core.errors import StudioError
from studio.core.state import failure_state
from studio.core.workspace import DeviceEntry
from studio.gui.file_dialogs import start_dir
from studio.gui.page import Page
from studio.gui.widgets.confirm import ask_then
from studio.gui.widgets.tables import fill_table, readonly_table

POLL_MS = 2000
POLL_TIMEOUT = 5.0  # a busy 2-core box answers slowly while it loads models


@dataclass
class ServerSpec:
    """One KServe v2 server: a Triton server the user added (devices of kind "triton") or an edge agent
    (kind "agent", added on Edge agents or by a deploy): both speak the same protocol, statistics included."""

    name: str
    url: str
    protocol: str | None = None
    ssl: bool = False
    headers: dict[str, str] = field(default_factory=dict)
    metrics_url: str | None = None
    kind: str = "triton"

    def client(self, timeout: float = POLL_TIMEOUT) -> Any:
        from studio.triton.client import TritonClient

        return TritonClient(self.url, protocol=self.protocol, ssl=self.ssl or None, headers=self.headers,
                            timeout=timeout, metrics_url=self.metrics_url)

    def to_device(self) -> DeviceEntry:
        return DeviceEntry(name=self.name, url=self.url, kind="triton", protocol=self.protocol or "auto",
                           extra={"ssl": self.ssl, "headers": self.headers, "metrics_url": self.metrics_url})

    @classmethod
    def from_device(cls, d: DeviceEntry) -> ServerSpec:
        metrics = d.extra.get("metrics_url") or (d.url.rstrip("/") + "/metrics" if d.kind == "agent" else None)
        return cls(d.name, d.url, None if d.protocol in ("", "auto") else d.protocol, bool(d.extra.get("ssl")),
                   dict(d.extra.get("headers") or {}), metrics, d.kind)


@dataclass
class ServerSnapshot:
    name: str
    connected: bool = False
    error: str = ""
    live: bool = False
    ready: bool = False
    server: str = ""
    version: str = ""
    extensions: list[str] = field(default_factory=list)
    models: list[Any] = field(default_factory=list)  # ModelState
    stats: list[Any] = field(default_factory=list)  # ModelStats
    metrics: dict[str, str] = field(default_factory=dict)
    metrics_error: str = ""
    at: float = 0.0


def poll_server(spec: ServerSpec) -> ServerSnapshot:
    """Everything the panel shows about one server (runs on a worker thread)."""
    snap = ServerSnapshot(spec.name, at=time.time())
    c = spec.client()
    try:
        md = c.server_metadata()
        snap.server, snap.version, snap.extensions = md.get("name", ""), md.get("version", ""), \
            list(md.get("extensions", []))
        snap.live, snap.ready = c.is_live(), c.is_ready()
        snap.models = c.repository_index()
        snap.stats = c.statistics()
        snap.connected = True
        try:
            snap.metrics = c.metrics().describe()
        except StudioError as exc:
            snap.metrics_error = exc.message
    except StudioError as exc:
        snap.error = exc.message
    except Exception as exc:  # keep polling whatever a broken server answers
        snap.error = f"{type(exc).__name__}: {exc}"
    finally:
        c.close()
    return snap


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
        self._inflight: set[str] = set()
        self._relay = _Relay(self)
        self._relay.sig_snapshot.connect(self._on_snapshot)
        self._build()
        self.timer = QTimer(self)
        self.timer.setInterval(poll_ms)
        self.timer.timeout.connect(self.poll_all)
        self.timer.start()

    # -- layout ----------------------------------------------------------------------------------------
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(8, 8, 8, 8)
        head = QLabel("Devices")
        head.setProperty("role", "heading")
        outer.addWidget(head)
        self.sections = QTabWidget()
        self.sections.setObjectName("devices_sections")
        outer.addWidget(self.sections, 1)
        self.triton_tab = QWidget()
        self.sections.addTab(self.triton_tab, "Servers and agents")
        split = QSplitter(Qt.Orientation.Horizontal, self.triton_tab)
        lay = QHBoxLayout(self.triton_tab)
        lay.setContentsMargins(0, 4, 0, 0)
        lay.addWidget(split)

        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        self.server_list = QListWidget()
        self.server_list.currentItemChanged.connect(lambda *_: self._server_selected())
        ll.addWidget(QLabel("Servers"))
        ll.addWidget(self.server_list, 1)
        form_box = QGroupBox("Add a server")
        form = QFormLayout(form_box)
        self.url_edit = QLineEdit()
        self.url_edit.setPlaceholderText("http://127.0.0.1:8000 or grpc://host:8001")
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("(from the URL)")
        self.protocol_combo = QComboBox()
        self.protocol_combo.addItems(["auto", "http", "grpc"])
        self.tls_check = QCheckBox("TLS")
        self.headers_edit = QLineEdit()
        self.headers_edit.setPlaceholderText("Key=Value; Key2=Value2")
        self.metrics_edit = QLineEdit()
        self.metrics_edit.setPlaceholderText("http://host:8002/metrics")
        form.addRow("URL", self.url_edit)
        form.addRow("Name", self.name_edit)
        row = QHBoxLayout()
        row.addWidget(self.protocol_combo)
        row.addWidget(self.tls_check)
        form.addRow("Protocol", row)
        form.addRow("Headers", self.headers_edit)
        form.addRow("Metrics", self.metrics_edit)
        self.add_error = QLabel("")
        self.add_error.setProperty("role", "error")
        self.add_error.setWordWrap(True)
        form.addRow(self.add_error)
        btns = QHBoxLayout()
        self.add_btn = QPushButton("Add")
        self.add_btn.setProperty("role", "primary")
        self.add_btn.clicked.connect(self._add_from_form)
        self.remove_btn = QPushButton("Remove selected")
        self.remove_btn.clicked.connect(self._remove_current)
        btns.addWidget(self.add_btn)
        btns.addWidget(self.remove_btn)
        form.addRow(btns)
        ll.addWidget(form_box)
        split.addWidget(left)

        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(4, 0, 0, 0)
        self.status_label = QLabel("add a server to watch it")
        self.status_label.setProperty("role", "subheading")
        self.info_label = QLabel("")
        self.info_label.setProperty("role", "muted")
        self.ext_label = QLabel("")
        self.ext_label.setProperty("role", "muted")
        self.ext_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        rl.addWidget(self.status_label)
        rl.addWidget(self.info_label)
        rl.addWidget(self.ext_label)
        self.detail_tabs = QTabWidget()
        rl.addWidget(self.detail_tabs, 1)

        models_w = QWidget()
        ml = QVBoxLayout(models_w)
        self.models_table = _table(["model", "version", "state", "reason"])
        self.models_table.itemSelectionChanged.connect(self._model_selected)
        ml.addWidget(self.models_table, 1)
        mb = QHBoxLayout()
        self.action_buttons: dict[str, QPushButton] = {}
        for action, label in (("load", "Load"), ("unload", "Unload"), ("reload", "Reload"),
                              ("upload", "Upload version..."), ("config", "Show config")):
            b = QPushButton(label)
            b.clicked.connect(lambda _=False, a=action: self._model_action(a))
            self.action_buttons[action] = b
            mb.addWidget(b)
        mb.addStretch(1)
        ml.addLayout(mb)
        self.config_view = QPlainTextEdit()
        self.config_view.setReadOnly(True)
        self.config_view.setProperty("role", "log")
        self.config_view.setPlaceholderText("select a model and press Show config")
        ml.addWidget(self.config_view, 1)
        self.detail_tabs.addTab(models_w, "Models")

        stats_w = QWidget()
        sl = QVBoxLayout(stats_w)
        self.stats_table = _table(["model", "ver", "inferences", "executions", "success", "fail", "queue us",
                                   "input us", "infer us", "output us", "batch sizes"])
        sl.addWidget(self.stats_table, 2)
        self.metrics_table = _table(["metric", "value"])
        sl.addWidget(QLabel("Server metrics (Prometheus)"))
        sl.addWidget(self.metrics_table, 1)
        self.detail_tabs.addTab(stats_w, "Statistics and metrics")

        inf_w = QWidget()
        il = QFormLayout(inf_w)
        self.infer_model = QComboBox()
        self.infer_text = QLineEdit()
        self.infer_text.setPlaceholderText("text (tokenised with the tokenizer below, or sent as BYTES)")
        self.infer_image = _PathEdit("image file", "Images (*.png *.jpg *.jpeg *.bmp)")
        self.infer_audio = _PathEdit("audio file", "Audio (*.wav *.npy)")
        self.infer_tokenizer = _PathEdit("tokenizer.json (for models taking token ids)", "tokenizer.json (*.json)")
        self.infer_processor = _PathEdit("preprocessor_config.json (image mean/std)", "JSON (*.json)")
        self.infer_btn = QPushButton("Run inference")
        self.infer_btn.setProperty("role", "primary")
        self.infer_btn.clicked.connect(self.run_test_inference)
        self.infer_out = QPlainTextEdit()
        self.infer_out.setReadOnly(True)
        self.infer_out.setProperty("role", "log")
        il.addRow("Model", self.infer_model)
        il.addRow("Text", self.infer_text)
        il.addRow("Image", self.infer_image)
        il.addRow("Audio", self.infer_audio)
        il.addRow("Tokenizer", self.infer_tokenizer)
        il.addRow("Processor", self.infer_processor)
        il.addRow(self.infer_btn)
        il.addRow("Outputs", self.infer_out)
        self.detail_tabs.addTab(inf_w, "Test inference")
        split.addWidget(right)
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
        self.add_section(self.agents_panel, "Edge agents")

    def add_section(self, widget: QWidget, title: str) -> int:
        """Hook for other device kinds (the edge helper adds "Edge agents" here)."""
        return self.sections.addTab(widget, title)

    # -- servers ---------------------------------------------------------------------------------------
    def state_bound(self) -> None:
        self.agents_panel.bind_state(self.state, self.state_signals)

    def context_changed(self) -> None:
        self.agents_panel.set_workspace(self.workspace)
        self._sync_servers()
        self._fill_preprocessing()

    def state_changed(self, topic: str, payload: object) -> None:
        if topic in ("workspace", "devices"):
            self._sync_servers()
        elif topic in ("artifacts", "model"):
            self._fill_preprocessing()

    def _fill_preprocessing(self) -> None:
        """Test inference takes the tokenizer and processor the current model's export wrote (empty fields only)."""
        for kind, edit, file in (("tokenizer", self.infer_tokenizer, "tokenizer.json"),
                                 ("processor", self.infer_processor, "preprocessor_config.json")):
            folder = self.state.artifact(kind)
            if folder and not edit.edit.text().strip() and (Path(folder) / file).is_file():
                edit.edit.setText(str(Path(folder) / file))

    def _sync_servers(self) -> None:
        """The list is the shared state's Triton servers and agents: add new ones, drop removed ones."""
        known = {d.name: d for d in self.state.devices() if d.kind in ("triton", "agent")}
        for d in known.values():
            if d.name not in self.servers:
                self._add(ServerSpec.from_device(d), save=False)
        for name in [n for n in self.servers if n not in known and self.state.workspace is not None]:
            self._drop(name)

    def _server_selected(self) -> None:
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
        if save and self.state.workspace is not None:
            self.state.add_device(spec.to_device(), select=True)
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
        headers = {}
        for part in self.headers_edit.text().split(";"):
            if part.strip():
                if "=" not in part:
                    self.add_error.setText(f"header '{part.strip()}' is not Key=Value")
                    return
                k, v = part.split("=", 1)
                headers[k.strip()] = v.strip()
        proto = self.protocol_combo.currentText()
        try:
            self.add_server(self.url_edit.text(), self.name_edit.text().strip() or None,
                            None if proto == "auto" else proto, self.tls_check.isChecked(), headers,
                            self.metrics_edit.text().strip() or None)
        except StudioError as exc:
            self.add_error.setText(exc.message)
            return
        self.add_error.setText("")
        self.url_edit.clear()
        self.name_edit.clear()

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

    def poll(self, name: str) -> None:
        if name in self._inflight or name not in self.servers:
            return
        self._inflight.add(name)
        spec = self.servers[name]
        relay = self._relay
        threading.Thread(target=lambda: relay.sig_snapshot.emit(poll_server(spec)), name=f"poll-{name}",
                         daemon=True).start()

    def _on_snapshot(self, snap: ServerSnapshot) -> None:
        self._inflight.discard(snap.name)
        if snap.name not in self.servers:
            return
        old = self.snapshots.get(snap.name)
        self.snapshots[snap.name] = snap
        if self.state.device(snap.name) is not None:
            self.state.set_device_state(snap.name, "ok" if snap.connected else failure_state(snap.error),
                                        snap.error or "",
                                        models=[m.name for m in snap.models] if snap.connected else None)
        if old is None or old.connected != snap.connected:
            self.sig_connection.emit(snap.name, "ok" if snap.connected else "down")
            self.sig_log.emit(f"{snap.name}: " + ("connected" if snap.connected else f"disconnected ({snap.error})"))
        for i in range(self.server_list.count()):
            item = self.server_list.item(i)
            if item.data(Qt.ItemDataRole.UserRole) == snap.name:
                self._paint_item(item, snap)
        if snap.name == self.current_server():
            self._show(snap)

    def _paint_item(self, item: QListWidgetItem, snap: ServerSnapshot | None) -> None:
        name = item.data(Qt.ItemDataRole.UserRole)
        spec = self.servers[name]
        state = "connecting..." if snap is None else ("connected" if snap.connected else "disconnected")
        mark = "\u25cb" if snap is None else ("\u25cf" if snap.connected else "\u2716")
        kind = "  (edge agent)" if spec.kind == "agent" else ""
        item.setText(f"{mark} {name}{kind}  -  {state}\n    {spec.url}")
        item.setToolTip(snap.error if snap is not None and snap.error else spec.url)

    # -- showing ---------------------------------------------------------------------------------------
    def _show_current(self) -> None:
        name = self.current_server()
        snap = self.snapshots.get(name) if name else None
        if name is None:
            self.status_label.setText("add a server to watch it")
            self.info_label.setText("")
            return
        if snap is None:
            self.status_label.setText(f"{name}: connecting...")
            return
        self._show(snap)

    def _show(self, snap: ServerSnapshot) -> None:
        spec = self.servers[snap.name]
        if not snap.connected:
            self.status_label.setText(f"\u2716 {snap.name}: disconnected")
            self.status_label.setProperty("role", "fail")
            self.info_label.setText(f"{spec.url}: {snap.error}\nretrying every {self.timer.interval() / 1000:.0f} s")
            self.ext_label.setText("")
            _restyle(self.status_label)
            return
        self.status_label.setText(f"\u25cf {snap.name}: live {'yes' if snap.live else 'no'}, "
                                  f"ready {'yes' if snap.ready else 'no'}  -  {snap.server} {snap.version}")
        self.status_label.setProperty("role", "ok" if snap.ready else "warn")
        _restyle(self.status_label)
        self.info_label.setText(f"{spec.url}  ({spec.protocol or 'auto'}{', TLS' if spec.ssl else ''})")
        ext = f"{len(snap.extensions)} extensions: {', '.join(snap.extensions)}"
        width = max(200, self.detail_tabs.width())
        self.ext_label.setText(self.ext_label.fontMetrics().elidedText(ext, Qt.TextElideMode.ElideRight, width))
        self.ext_label.setToolTip(ext)
        selected = self.selected_model()
        fill_table(self.models_table, [[m.name, m.version or "-", m.state or "not loaded", m.reason] for m in snap.models])
        if selected:
            for r in range(self.models_table.rowCount()):
                if self.models_table.item(r, 0).text() == selected:
                    self.models_table.blockSignals(True)
                    self.models_table.selectRow(r)
                    self.models_table.blockSignals(False)
                    break
        fill_table(self.stats_table, [[s.name, s.version, s.inference_count, s.execution_count, s.success_count,
                                  s.fail_count, f"{s.avg_queue_us:.0f}", f"{s.avg_compute_input_us:.0f}",
                                  f"{s.avg_compute_infer_us:.0f}", f"{s.avg_compute_output_us:.0f}",
                                  ", ".join(f"{b}x{n}" for b, n in sorted(s.batch_sizes.items()))]
                                 for s in snap.stats])
        metric_rows = [[k, v] for k, v in snap.metrics.items()] or [["metrics", snap.metrics_error or "not available"]]
        fill_table(self.metrics_table, metric_rows)
        names = sorted({m.name for m in snap.models if m.state == "READY"})
        if names != [self.infer_model.itemText(i) for i in range(self.infer_model.count())]:
            cur = self.infer_model.currentText()
            self.infer_model.clear()
            self.infer_model.addItems(names)
            if cur in names:
                self.infer_model.setCurrentText(cur)

    def selected_model(self) -> str | None:
        rows = self.models_table.selectionModel().selectedRows()
        return self.models_table.item(rows[0].row(), 0).text() if rows else None

    def _model_selected(self) -> None:
        m = self.selected_model()
        if m and self.infer_model.findText(m) >= 0:
            self.infer_model.setCurrentText(m)

    # -- actions (jobs) --------------------------------------------------------------------------------
    def _model_action(self, action: str, confirmed: bool = False) -> None:
        server, model = self.current_server(), self.selected_model()
        if server is None or model is None:
            self.sig_log.emit("select a server and a model first")
            return
        spec = self.servers[server]
        if action == "config":
            self._start(f"config:{server}", f"config of {model}", lambda job: _with_client(spec, 10, lambda c: c.model_config(model)),
                        lambda cfg: self.config_view.setPlainText(json.dumps(cfg, indent=2)))
            return
        if action == "upload":
            folder = QFileDialog.getExistingDirectory(self, f"Model folder to upload as a new version of {model}",
                                                       start_dir(None, self.workspace, "models"))
            if not folder:
                return
            version, ok = QInputDialog.getInt(self, "Version", "Version number", 2, 1, 1_000_000)
            if not ok:
                return
            self.upload_version(model, Path(folder), version)
            return
        if action == "unload" and not confirmed:
            ask_then(self, "Unload model", f"Unload {model} on {server}? Requests to it fail until it is "
                     "loaded again.", "Unload", lambda: self._model_action(action, confirmed=True))
            return
        self._start(f"{action}:{server}:{model}", f"{action} {model} on {server}",
                    lambda job: _with_client(spec, 60, lambda c: getattr(c, action)(model)),
                    lambda _r: self.poll(server))

    def upload_version(self, model: str, folder: Path, version: int) -> None:
        server = self.current_server()
        if server is None:
            return
        spec = self.servers[server]
        self._start(f"upload:{server}:{model}", f"upload {folder.name} as {model} v{version}",
                    lambda job: _with_client(spec, 120, lambda c: c.upload_version(model, version, folder)),
                    lambda _r: self.poll(server))

    def run_test_inference(self) -> None:
        server, model = self.current_server(), self.infer_model.currentText()
        if server is None or not model:
            self.infer_out.setPlainText("select a connected server and a ready model first")
            return
        spec = self.servers[server]
        text = self.infer_text.text() or None
        image, audio = self.infer_image.path(), self.infer_audio.path()
        tok, proc = self.infer_tokenizer.path(), self.infer_processor.path()

        def work(job: Any) -> dict[str, Any]:
            from studio.triton.client import prepare_inputs

            with spec.client(30) as c:
                feed = prepare_inputs(c.model_config(model), text=text, image=image, audio=audio, tokenizer=tok,
                                      processor=proc)
                t0 = time.perf_counter()
                out = c.infer(model, feed)
            return {"inputs": {k: (list(v.shape), str(v.dtype)) for k, v in feed.items()}, "outputs": out,
                    "ms": (time.perf_counter() - t0) * 1000}

        self.infer_out.setPlainText("running...")
        self._start(f"infer:{server}", f"test inference on {model}", work, self._show_inference,
                    lambda err: self.infer_out.setPlainText(err.render()))

    def _show_inference(self, res: dict[str, Any]) -> None:
        lines = [f"{res['ms']:.1f} ms round trip", "inputs:"]
        lines += [f"  {k}: shape {s} {d}" for k, (s, d) in res["inputs"].items()]
        lines.append("outputs:")
        for k, v in res["outputs"].items():
            lines.append(f"  {k}: shape {list(v.shape)} {v.dtype}")
            lines.append("    " + np.array2string(v, threshold=24, precision=4).replace("\n", "\n    "))
        self.infer_out.setPlainText("\n".join(lines))

    def _start(self, kind: str, title: str, fn: Any, on_done: Any, on_failed: Any = None) -> None:
        def failed(err: StudioError) -> None:
            self.sig_log.emit(f"{title}: {err.message}")
            if on_failed is not None:
                on_failed(err)
            else:
                self.config_view.setPlainText(err.render())

        self.jobs.start(f"{self.page_id}:{kind}", title, fn, on_done, failed)

    def shutdown(self) -> None:
        self.timer.stop()


def _with_client(spec: ServerSpec, timeout: float, fn: Any) -> Any:
    """Run ``fn(client)`` and close the connection on this (worker) thread."""
    with spec.client(timeout) as c:
        return fn(c)


class _PathEdit(QWidget):
    def __init__(self, placeholder: str, filt: str) -> None:
        super().__init__()
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.edit = QLineEdit()
        self.edit.setPlaceholderText(placeholder)
        b = QPushButton("Browse...")
        b.clicked.connect(lambda: self._browse(filt))
        lay.addWidget(self.edit, 1)
        lay.addWidget(b)

    def _browse(self, filt: str) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a file", start_dir(None, self.workspace), filt)
        if path:
            self.edit.setText(path)

    def path(self) -> str | None:
        return self.edit.text().strip() or None


def _table(headers: list[str]) -> QTableWidget:
    t = readonly_table(headers)
    t.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
    t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    t.horizontalHeader().setStretchLastSection(True)
    return t


def _restyle(w: QWidget) -> None:
    w.style().unpolish(w)
    w.style().polish(w)
