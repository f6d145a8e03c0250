"""The one workspace state every page reads and writes (glue's hub): current model and its artifacts, target,
devices with their live states, the selected device. Qt-free and observable.

The first version's pages each kept their own copy (two agent lists, a toolbar count that disagreed with the
table, a Package field that never saw the export just made). Here a page changes the state and every
subscriber hears it at once; what is worth keeping is saved in the workspace (workspace.json) and restored on
reopen, while live device states are not.

Callbacks run synchronously on the thread that made the change; the GUI's adapter (studio.gui.state_qt)
re-emits them as Qt signals so widgets are only touched on the GUI thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studio.core.errors import InputError
from studio.core.observable import Callback, Subscribers
from studio.core.workspace import DeviceEntry, ModelEntry, Workspace

TOPICS = ("workspace", "model", "target", "artifacts", "devices", "device_state", "selection")
# What a model can carry besides its own file: the export's parts and companions, and what later steps made.
ARTIFACT_KINDS = ("onnx", "parts", "tokenizer", "processor", "export_report", "inspection", "repository",
                  "bundle", "compiled", "sample_image", "sample_audio", "fix_source")
# fix_source: on a fix's output (an entry of its own), the model it was made from: Diff's A
LIST_KINDS = ("repository", "bundle", "compiled")  # several of each over time; newest last
# Device states a poller may report; everything else is a failure reason shown as "down".
OK_STATES = ("ok",)
PENDING_STATES = ("not checked", "connecting")



@dataclass
class DeviceState:
    """What the last poll of a device found (not saved: a reopened workspace checks again)."""

    state: str = "not checked"  # ok | connecting | not checked | a failure (studio.core.device_failure)
    detail: str = ""
    board: str = ""
    models: tuple[str, ...] = ()  # the model names it serves, as the last poll listed them

    @property
    def ok(self) -> bool:
        return self.state in OK_STATES

    @property
    def down(self) -> bool:
        return self.state not in OK_STATES + PENDING_STATES


@dataclass
class DevicesSummary:
    total: int
    ok: int
    down: int

    def label(self) -> str:
        if not self.total:
            return "devices: none"
        return f"devices: {self.ok} ok" + (f", {self.down} down" if self.down else "") + f" of {self.total}"


class StudioState:
    """Observable workspace state: ``subscribe(topic, fn)``; each setter saves and notifies."""

    def __init__(self, workspace: Workspace | None = None) -> None:
        self._subs = Subscribers(TOPICS, "state")
        self._lock = threading.RLock()
        self.workspace: Workspace | None = None
        self._device_states: dict[str, DeviceState] = {}
        self._selected_device: str | None = None
        if workspace is not None:
            self.set_workspace(workspace)

    # -- observing -------------------------------------------------------------------------------------
    def subscribe(self, topic: str, fn: Callback) -> Callable[[], None]:
        """Call ``fn(topic, payload)`` on every change of ``topic`` ("*" for all); returns the unsubscribe."""
        return self._subs.subscribe(topic, fn)

    def _emit(self, topic: str, payload: Any = None) -> None:
        self._subs.emit(topic, payload)

    # -- workspace, model, target ----------------------------------------------------------------------
    def set_workspace(self, workspace: Workspace | None) -> None:
        with self._lock:
            self.workspace = workspace
            self._device_states = {}
            self._selected_device = None
        self._emit("workspace", workspace)
        self._emit("devices", self.devices())

    def _need_workspace(self) -> Workspace:
        if self.workspace is None:
            raise InputError("no workspace is open", offending="workspace",
                             hint="open or create one (File > Open workspace / New workspace)")
        return self.workspace

    @property
    def model_name(self) -> str | None:
        return self.workspace.current_model if self.workspace is not None else None

    @property
    def target(self) -> str | None:
        return self.workspace.current_target if self.workspace is not None else None

    def model(self, name: str | None = None) -> ModelEntry | None:
        return self.workspace.model(name) if self.workspace is not None else None

    def model_path(self, name: str | None = None) -> Path | None:
        m = self.model(name)
        return self.workspace.resolve(m) if m is not None and self.workspace is not None else None

    def set_model(self, name: str | None) -> None:
        ws = self._need_workspace()
        if name is not None and ws.model(name) is None:
            raise InputError(f"no model named '{name}' in the workspace", offending=name,
                             hint=f"models: {', '.join(m.name for m in ws.models) or 'none yet'}")
        if ws.current_model != name:
            ws.current_model = name
            ws.save()
            self._emit("model", name)

    def set_target(self, target: str | None) -> None:
        ws = self._need_workspace()
        if ws.current_target != target:
            ws.current_target = target
            ws.save()
            self._emit("target", target)

    def add_model(self, path: Path | str, **kw: Any) -> ModelEntry:
        """Register a model (``Workspace.add_model``) and tell every page; the new one becomes current."""
        entry = self._need_workspace().add_model(path, **kw)
        self._emit("model", entry.name)
        return entry

    # -- artifacts -------------------------------------------------------------------------------------
    def artifacts(self, name: str | None = None) -> dict[str, Any]:
        """The model's artifacts, paths absolute: {"onnx": ..., "parts": {part: path}, "bundle": [..], ...}."""
        m = self.model(name)
        if m is None or self.workspace is None:
            return {}
        return {k: self._abs(v) for k, v in m.artifacts.items()}

    def artifact(self, kind: str, name: str | None = None) -> Any:
        """One artifact: for list kinds the newest; None when the model has none."""
        value = self.artifacts(name).get(kind)
        if kind in LIST_KINDS:
            return value[-1] if value else None
        return value

    def record_artifact(self, kind: str, value: Any, name: str | None = None) -> None:
        """Remember what a step made for the model (saved in the workspace) and tell every page."""
        if kind not in ARTIFACT_KINDS:
            raise ValueError(f"unknown artifact kind {kind!r}; kinds: {', '.join(ARTIFACT_KINDS)}")
        ws = self._need_workspace()
        m = ws.model(name)
        if m is None:
            raise InputError(f"no model named '{name or ws.current_model}' to attach a {kind} to",
                             offending=str(name or ws.current_model), hint="add or select the model first")
        stored = self._rel(value)
        if kind in LIST_KINDS:
            items = [x for x in m.artifacts.get(kind, []) if x != stored] + [stored]
            m.artifacts[kind] = items[-20:]
        elif value is None:
            m.artifacts.pop(kind, None)
        else:
            m.artifacts[kind] = stored
        ws.save()
        self._emit("artifacts", (m.name, kind))

    def _rel(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: self._rel(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._rel(v) for v in value]
        if isinstance(value, Path) and self.workspace is not None:
            return self.workspace.relative(value)
        return value

    def _abs(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: self._abs(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._abs(v) for v in value]
        if isinstance(value, str) and self.workspace is not None and value and not value.startswith(
                ("http://", "https://")):
            p = Path(value)
            return str(p if p.is_absolute() else self.workspace.root / p)
        return value

    # -- devices ---------------------------------------------------------------------------------------
    def devices(self, kind: str | None = None) -> list[DeviceEntry]:
        ds = list(self.workspace.devices) if self.workspace is not None else []
        return [d for d in ds if kind is None or d.kind == kind]

    def device(self, key: str) -> DeviceEntry | None:
        """By name or URL."""
        return next((d for d in self.devices() if key in (d.name, d.url)), None)

    def add_device(self, entry: DeviceEntry, select: bool = False) -> DeviceEntry:
        """Add (or replace, by name or URL) a Triton server or edge agent; saved in the workspace."""
        ws = self._need_workspace()
        if not entry.url.startswith(("http://", "https://", "grpc://")):
            raise InputError(f"'{entry.url}' is not a device URL", offending="url",
                             hint="e.g. http://127.0.0.1:8000 (Triton) or http://board.local:8765 (agent)")
        with self._lock:
            ws.devices = [d for d in ws.devices if d.name != entry.name and d.url != entry.url] + [entry]
            ws.save()
        self._emit("devices", self.devices())
        if select:
            self.select_device(entry.name)
        return entry

    def remove_device(self, key: str) -> None:
        ws = self._need_workspace()
        d = self.device(key)
        if d is None:
            return
        with self._lock:
            ws.devices = [x for x in ws.devices if x is not d]
            ws.save()
            self._device_states.pop(d.name, None)
            if self._selected_device == d.name:
                self._selected_device = None
        self._emit("devices", self.devices())

    def set_device_state(self, key: str, state: str, detail: str = "", board: str = "",
                         models: tuple[str, ...] | list[str] | None = None) -> None:
        """What a poll found; pollers on worker threads may call it (subscribers hear it on that thread)."""
        d = self.device(key)
        name = d.name if d is not None else key
        old = self._device_states.get(name, DeviceState())
        new = DeviceState(state, detail, board or old.board, tuple(models) if models is not None else old.models)
        with self._lock:
            if self._device_states.get(name) == new:
                return
            self._device_states[name] = new
        self._emit("device_state", name)

    def device_state(self, key: str) -> DeviceState:
        d = self.device(key)
        return self._device_states.get(d.name if d is not None else key, DeviceState())

    def summary(self) -> DevicesSummary:
        """The one count the toolbar, the status bar and the tables all show."""
        states = [self.device_state(d.name) for d in self.devices()]
        return DevicesSummary(len(states), sum(s.ok for s in states), sum(s.down for s in states))

    @property
    def selected_device(self) -> DeviceEntry | None:
        return self.device(self._selected_device) if self._selected_device else None

    def server_pid(self, url: str) -> int | None:
        """The process id of a local server the studio started at ``url`` (the Triton page records it), if it
        still runs: Dashboards watch that process's memory and CPU, never the GUI's own."""
        d = next((x for x in self.devices() if x.url.rstrip("/") == url.rstrip("/")), None)
        pid = d.extra.get("pid") if d is not None and d.extra.get("local") else None
        if not isinstance(pid, int) or pid <= 0:
            return None
        try:
            import os

            os.kill(pid, 0)
        except OSError:
            return None
        return pid

    def metrics_url(self, key: str) -> str | None:
        """Where the device's Prometheus metrics are: the saved one, else the agent's /metrics (Triton's port
        differs from its HTTP port, so a Triton server without one saved has none to guess)."""
        d = self.device(key)
        if d is None:
            return None
        saved = d.extra.get("metrics_url")
        if saved:
            return str(saved)
        return d.url.rstrip("/") + "/metrics" if d.kind == "agent" else None

    def select_device(self, key: str | None) -> None:
        """The device pages act on next (Dashboards target it, test inference talks to it)."""
        d = self.device(key) if key else None
        name = d.name if d is not None else None
        if name != self._selected_device:
            self._selected_device = name
            self._emit("selection", name)
