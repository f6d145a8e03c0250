"""What the Devices page knows about one KServe v2 server (a Triton server or an edge agent) and the poll
that finds it out. Qt-free: the poll runs on a worker thread and only fills a ServerSnapshot."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from studio.core.device_failure import failure_of
from studio.core.errors import StudioError
from studio.core.workspace import DeviceEntry

POLL_MS = 2000
POLL_TIMEOUT = 5.0  # a busy 2-core box answers slowly while it loads models
TOKEN_REJECTED = (401, 403)


@dataclass
class ServerSpec:
    """One KServe v2 server: a Triton server the user added (devices of kind "triton") or an edge agent
    (kind "agent", added on Edge agents or by a deploy): both speak the same protocol, statistics included.
    An agent's ``token_file`` (the PATH, never the token) lets the poll check the token too."""

    name: str
    url: str
    protocol: str | None = None
    ssl: bool = False
    headers: dict[str, str] = field(default_factory=dict)
    metrics_url: str | None = None
    kind: str = "triton"
    token_file: str = ""

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
                   dict(d.extra.get("headers") or {}), metrics, d.kind,
                   str(d.extra.get("token_file") or "") if d.kind == "agent" else "")


@dataclass
class ServerSnapshot:
    name: str
    connected: bool = False
    error: str = ""
    failure: str = ""  # why it is down (studio.core.device_failure), named from the poll's own exception
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
    board: str = ""  # an agent's board, when its token let the poll read /agent/status
    generates: dict[str, bool] = field(default_factory=dict)  # ready model -> answers the generate extension
    spec: ServerSpec | None = None  # what was polled (address, token file): a snapshot of an older spec is stale

    @property
    def state(self) -> str:
        """The device state this poll stands for: "ok" or its failure."""
        return "ok" if self.connected else (self.failure or "down")


_TAKES_GENERATE: dict[tuple[str, str, str], bool] = {}  # (url, model, version) -> metadata's answer, read once


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
        snap.generates = _generation_models(spec, c, snap.models)
        snap.connected = True
        try:
            snap.metrics = c.metrics().describe()
        except StudioError as exc:
            snap.metrics_error = exc.message
    except StudioError as exc:
        snap.error, snap.failure = exc.message, failure_of(exc)
    except Exception as exc:  # keep polling whatever a broken server answers
        snap.error, snap.failure = f"{type(exc).__name__}: {exc}", failure_of(exc)
    finally:
        c.close()
    if snap.connected and spec.kind == "agent" and spec.token_file:
        _check_agent_token(spec, snap)
    return snap


def _generation_models(spec: ServerSpec, c: Any, models: list[Any]) -> dict[str, bool]:
    """Which ready models take generate requests; each model version's metadata is read once per server."""
    from studio.triton.generate_client import takes_generate

    out: dict[str, bool] = {}
    for m in models:
        if m.state != "READY":
            continue
        key = (spec.url, m.name, m.version)
        if key not in _TAKES_GENERATE:
            try:
                _TAKES_GENERATE[key] = takes_generate(c.model_metadata(m.name, m.version))
            except StudioError:
                continue  # unloaded between the index and now: asked again at the next poll
        out[m.name] = out.get(m.name, False) or _TAKES_GENERATE[key]
    return out


def _check_agent_token(spec: ServerSpec, snap: ServerSnapshot) -> None:
    """Inference needs no token but management does: an agent whose saved token it rejects is down (reason
    "token"), so this list, the Edge agents table and the toolbar agree."""
    from studio.package.client import AgentClient, read_token_file

    try:
        token = read_token_file(spec.token_file)
    except StudioError as exc:  # missing or empty: what the failure names is the token
        snap.connected, snap.error, snap.failure = False, exc.message, "token"
        return
    try:
        st = AgentClient(spec.url, token, timeout=POLL_TIMEOUT).status()
    except StudioError as exc:
        status = (exc.details or {}).get("status")
        if status in TOKEN_REJECTED:
            snap.connected, snap.error, snap.failure = False, f"{exc.message} (HTTP {status})", "token"
        return  # anything else (a 500, a slow answer) says nothing about the token: inference still works
    snap.board = str(st.get("board") or "")


def with_client(spec: ServerSpec, timeout: float, fn: Callable[[Any], Any]) -> Any:
    """Run ``fn(client)`` and close the connection on this (worker) thread."""
    with spec.client(timeout) as c:
        return fn(c)
