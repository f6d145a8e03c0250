"""One facade over Triton's HTTP and gRPC clients: health, metadata, repository control, stats, metrics, infer.

Every call is bounded by ``timeout`` and an unreachable server raises ConnectionFailed (never hangs).
tritonclient's HTTP client is not thread-safe, so each thread gets its own underlying client.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from studio.core.errors import ConnectionFailed, DependencyMissing, InputError, ModelError, StudioError
from studio.core.gevent_hub import import_gevent_client
from studio.triton.dtypes import numpy_to_v2
from studio.triton.metrics import MetricsSnapshot, snapshot


class ServerError(StudioError, kind="server"):
    """The server answered, but refused the request (unknown model, bad input, load failure)."""


@dataclass
class ModelState:
    name: str
    version: str
    state: str  # READY | UNAVAILABLE | LOADING | UNLOADING | "" (known but never loaded)
    reason: str = ""


@dataclass
class ModelStats:
    name: str
    version: str
    inference_count: int = 0
    execution_count: int = 0
    success_count: int = 0
    fail_count: int = 0
    last_inference_ms: int = 0
    avg_queue_us: float = 0.0
    avg_compute_input_us: float = 0.0
    avg_compute_infer_us: float = 0.0
    avg_compute_output_us: float = 0.0
    avg_request_us: float = 0.0
    batch_sizes: dict[int, int] = field(default_factory=dict)  # batch size -> executions

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ModelStats:
        inf = d.get("inference_stats", {})

        def cnt(key: str) -> int:
            return int((inf.get(key) or {}).get("count", 0) or 0)

        def avg(key: str) -> float:
            s = inf.get(key) or {}
            c = int(s.get("count", 0) or 0)
            return int(s.get("ns", 0) or 0) / c / 1000.0 if c else 0.0

        batches = {int(b.get("batch_size", 0)): int((b.get("compute_infer") or {}).get("count", 0) or 0)
                   for b in d.get("batch_stats", []) or []}
        return cls(name=d.get("name", ""), version=str(d.get("version", "")),
                   inference_count=int(d.get("inference_count", 0) or 0),
                   execution_count=int(d.get("execution_count", 0) or 0), success_count=cnt("success"),
                   fail_count=cnt("fail"), last_inference_ms=int(d.get("last_inference", 0) or 0),
                   avg_queue_us=avg("queue"), avg_compute_input_us=avg("compute_input"),
                   avg_compute_infer_us=avg("compute_infer"), avg_compute_output_us=avg("compute_output"),
                   avg_request_us=avg("success"), batch_sizes=batches)


@dataclass
class ServerInfo:
    name: str
    version: str
    extensions: list[str]
    live: bool
    ready: bool


def parse_url(url: str, protocol: str | None = None) -> tuple[str, str, bool]:
    """(host:port, protocol, tls) from ``http(s)://h:p``, ``grpc(s)://h:p`` or a bare ``h:p``."""
    url = url.strip()
    if "://" not in url:
        url = f"{protocol or 'http'}://{url}"
    u = urlparse(url)
    scheme = u.scheme.lower()
    if scheme not in ("http", "https", "grpc", "grpcs"):
        raise InputError(f"unsupported URL scheme {u.scheme!r} in {url}", offending=url,
                         hint="use http://, https://, grpc:// or grpcs://")
    if not u.hostname:
        raise InputError(f"no host in {url}", offending=url, hint="for example http://127.0.0.1:8000")
    proto = protocol or ("grpc" if scheme.startswith("grpc") else "http")
    tls = scheme in ("https", "grpcs")
    port = u.port or (8001 if proto == "grpc" else 8000)
    return f"{u.hostname}:{port}", proto, tls


_CONNECT_WORDS = ("connection refused", "unavailable", "failed to connect", "timed out", "timeout",
                  "connect failed", "deadline exceeded", "name or service not known", "no route to host",
                  "connection reset", "broken pipe", "socket closed", "errno 111", "errno 104",
                  "cannot assign requested address", "temporary failure in name resolution")


class TritonClient:
    """Talk to one Triton server over HTTP or gRPC (optionally TLS, extra headers)."""

    def __init__(self, url: str, *, protocol: str | None = None, ssl: bool | None = None,
                 headers: dict[str, str] | None = None, timeout: float = 5.0, metrics_url: str | None = None,
                 root_certificates: str | None = None, insecure: bool = False) -> None:
        self.url = url
        self.address, self.protocol, tls = parse_url(url, protocol)
        self.ssl = tls if ssl is None else ssl
        self.headers = dict(headers or {})
        self.timeout = float(timeout)
        self.root_certificates = root_certificates
        self.insecure = insecure
        host = self.address.rsplit(":", 1)[0]
        self.metrics_url = metrics_url or f"{'https' if self.ssl else 'http'}://{host}:8002/metrics"
        self._local = threading.local()
        self._extensions: list[str] | None = None

    # -- plumbing ---------------------------------------------------------------------------------------
    @property
    def raw(self) -> Any:
        """This thread's tritonclient InferenceServerClient."""
        c = getattr(self._local, "client", None)
        if c is None:
            try:
                if self.protocol == "grpc":
                    import tritonclient.grpc as g

                    c = g.InferenceServerClient(self.address, ssl=self.ssl, root_certificates=self.root_certificates)
                else:
                    h = import_gevent_client("tritonclient.http")  # gevent: one import, this thread owns a hub
                    c = h.InferenceServerClient(self.address, ssl=self.ssl, connection_timeout=self.timeout,
                                                network_timeout=self.timeout, insecure=self.insecure)
            except ImportError as exc:
                raise DependencyMissing.for_module("tritonclient", "triton", "talking to Triton") from exc
            self._local.client = c
        return c

    def close(self) -> None:
        """Close this thread's connection (tritonclient's HTTP client must be closed on its own thread)."""
        c = getattr(self._local, "client", None)
        self._local.client = None
        if c is not None:
            try:
                c.close()
            except Exception:  # closing a broken connection is not worth an error
                pass

    def __enter__(self) -> TritonClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def module(self) -> Any:
        if self.protocol == "grpc":
            import tritonclient.grpc as g

            return g
        return import_gevent_client("tritonclient.http")

    def _kw(self) -> dict[str, Any]:
        kw: dict[str, Any] = {"headers": self.headers or None}
        if self.protocol == "grpc":
            kw["client_timeout"] = self.timeout
        return kw

    def _call(self, what: str, fn: Any, *args: Any, **kw: Any) -> Any:
        try:
            return fn(*args, **kw)
        except StudioError:
            raise
        except Exception as exc:
            text = str(exc)
            low = text.lower()
            answered = re.match(r"\[\d{3}\]", text.strip()) is not None  # an HTTP status: the server replied
            if not answered and (isinstance(exc, (OSError, TimeoutError)) or any(w in low for w in _CONNECT_WORDS)):
                self.close()  # a fresh connection next time (the server may come back)
                raise ConnectionFailed(f"Triton server at {self.url} did not answer ({what}): {text.strip()[:200]}",
                                       offending=self.url,
                                       hint="check the URL and port, that the server runs, and HTTP vs gRPC") \
                    from exc
            raise ServerError(f"{what} failed on {self.url}: {text.strip()[:500]}", offending=self.url) from exc

    # -- health and metadata ----------------------------------------------------------------------------
    def is_live(self) -> bool:
        return bool(self._call("liveness", self.raw.is_server_live, **self._kw()))

    def is_ready(self) -> bool:
        return bool(self._call("readiness", self.raw.is_server_ready, **self._kw()))

    def ping(self) -> None:
        """Raise ConnectionFailed unless the server answers its liveness probe."""
        if not self.is_live():
            raise ConnectionFailed(f"Triton server at {self.url} is not live", offending=self.url)

    def server_metadata(self) -> dict[str, Any]:
        kw = self._kw()
        if self.protocol == "grpc":
            kw["as_json"] = True
        md = self._call("server metadata", self.raw.get_server_metadata, **kw)
        self._extensions = list(md.get("extensions", []))
        return md

    def info(self) -> ServerInfo:
        md = self.server_metadata()
        return ServerInfo(md.get("name", ""), md.get("version", ""), list(md.get("extensions", [])),
                          self.is_live(), self.is_ready())

    def extensions(self) -> list[str]:
        if self._extensions is None:
            self.server_metadata()
        return self._extensions or []

    # -- repository ------------------------------------------------------------------------------------
    def repository_index(self) -> list[ModelState]:
        kw = self._kw()
        if self.protocol == "grpc":
            kw["as_json"] = True
        idx = self._call("repository index", self.raw.get_model_repository_index, **kw)
        rows = idx.get("models", []) if isinstance(idx, dict) else idx
        return [ModelState(r.get("name", ""), str(r.get("version", "")), r.get("state", ""), r.get("reason", ""))
                for r in rows]

    def model_ready(self, name: str, version: str = "") -> bool:
        return bool(self._call("model readiness", self.raw.is_model_ready, name, version, **self._kw()))

    def load(self, name: str, config: dict[str, Any] | str | None = None, files: dict[str, bytes] | None = None) -> None:
        """Load (or reload) a model; with ``config``/``files`` the server loads those instead of its repository."""
        cfg = json.dumps(config) if isinstance(config, dict) else config
        self._call(f"load of {name}", self.raw.load_model, name, config=cfg, files=files, **self._kw())

    def reload(self, name: str) -> None:
        """Triton reloads a loaded model when asked to load it again (picking up new versions)."""
        self.load(name)

    def unload(self, name: str, unload_dependents: bool = False) -> None:
        self._call(f"unload of {name}", self.raw.unload_model, name, unload_dependents=unload_dependents,
                   **self._kw())

    def upload_version(self, name: str, version: int, model_dir: Path | str,
                       config: dict[str, Any] | None = None) -> None:
        """Hot-load files of a local model folder as ``version`` through the repository load API (explicit mode).

        Sends ``model_dir/<any version>/*`` files as ``file:<version>/...`` with the model's config, plus
        files at the model root (e.g. studio_env.json); the server swaps to it without a restart.
        """
        model_dir = Path(model_dir)
        if not model_dir.is_dir():
            raise InputError(f"{model_dir} is not a model folder", offending=str(model_dir))
        src_versions = sorted((p for p in model_dir.iterdir() if p.is_dir() and p.name.isdigit()),
                              key=lambda p: int(p.name))
        if not src_versions:
            raise InputError(f"{model_dir} has no version folder to upload", offending=str(model_dir))
        src = src_versions[-1]
        files: dict[str, bytes] = {}
        for f in src.rglob("*"):
            if f.is_file():
                files[f"file:{version}/{f.relative_to(src).as_posix()}"] = f.read_bytes()
        for f in model_dir.iterdir():
            if f.is_file() and f.name != "config.pbtxt":
                files[f"file:{f.name}"] = f.read_bytes()
        if config is None:
            from studio.triton import config as tc

            config = tc.config_to_dict(tc.load_config(model_dir / "config.pbtxt"))
        config = dict(config)
        config.setdefault("name", name)
        self.load(name, config=config, files=files)

    def model_config(self, name: str, version: str = "") -> dict[str, Any]:
        kw = self._kw()
        if self.protocol == "grpc":
            kw["as_json"] = True
        cfg = self._call(f"config of {name}", self.raw.get_model_config, name, version, **kw)
        return cfg.get("config", cfg) if self.protocol == "grpc" else cfg

    def model_metadata(self, name: str, version: str = "") -> dict[str, Any]:
        kw = self._kw()
        if self.protocol == "grpc":
            kw["as_json"] = True
        return self._call(f"metadata of {name}", self.raw.get_model_metadata, name, version, **kw)

    def statistics(self, name: str = "", version: str = "") -> list[ModelStats]:
        kw = self._kw()
        if self.protocol == "grpc":
            kw["as_json"] = True
        st = self._call("statistics", self.raw.get_inference_statistics, name, version, **kw)
        return [ModelStats.from_json(d) for d in st.get("model_stats", [])]

    # -- metrics ---------------------------------------------------------------------------------------
    def metrics_text(self) -> str:
        req = urllib.request.Request(self.metrics_url, headers=self.headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:  # noqa: S310 - user-given server URL
                return r.read().decode("utf-8", errors="replace")
        except (urllib.error.URLError, OSError) as exc:
            raise ConnectionFailed(f"metrics endpoint {self.metrics_url} did not answer: {exc}",
                                   offending=self.metrics_url,
                                   hint="Triton serves metrics on its own port (--metrics-port, default 8002)") \
                from exc

    def metrics(self) -> MetricsSnapshot:
        return snapshot(self.metrics_text())

    # -- inference -------------------------------------------------------------------------------------
    def infer(self, name: str, inputs: dict[str, np.ndarray], outputs: list[str] | None = None,
              version: str = "", binary: bool | None = None) -> dict[str, np.ndarray]:
        """Run one request; BYTES go as binary tensors when the server has the extension, else base64 in JSON."""
        mod = self.module
        if binary is None:
            binary = self.protocol == "grpc" or "binary_tensor_data" in self.extensions()
        req = []
        for n, arr in inputs.items():
            arr = np.asarray(arr)
            dt = numpy_to_v2(arr.dtype)
            if dt == "BYTES":
                arr = _bytes_array(arr, json_safe=not binary)
            ii = mod.InferInput(n, list(arr.shape), dt)
            if self.protocol == "grpc":
                ii.set_data_from_numpy(arr)
            else:
                ii.set_data_from_numpy(arr, binary_data=binary)
            req.append(ii)
        outs = None
        if outputs:
            outs = [mod.InferRequestedOutput(o) if self.protocol == "grpc"
                    else mod.InferRequestedOutput(o, binary_data=binary) for o in outputs]
        kw = self._kw()
        if self.protocol == "http":
            kw.pop("headers")
            kw["headers"] = self.headers or None
        res = self._call(f"inference on {name}", self.raw.infer, name, req, model_version=version, outputs=outs, **kw)
        resp = res.get_response(as_json=True) if self.protocol == "grpc" else res.get_response()
        names = [o["name"] for o in resp.get("outputs", [])]
        return {n: res.as_numpy(n) for n in names}

    def wait_model_ready(self, name: str, timeout: float = 30.0, version: str = "") -> None:
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.model_ready(name, version):
                    return
            except ServerError:
                pass
            time.sleep(0.2)
        raise ModelError(f"model {name} was not ready on {self.url} within {timeout:.0f} s", offending=name,
                         hint="see the repository index for its state and reason")


def _bytes_array(arr: np.ndarray, json_safe: bool) -> np.ndarray:
    """Object array of bytes; for JSON, non-UTF-8 payloads are base64 text (the JSON protocol carries strings)."""
    flat = []
    for v in arr.reshape(-1):
        b = v if isinstance(v, bytes) else str(v).encode("utf-8")
        if json_safe:
            try:
                b.decode("utf-8")
            except UnicodeDecodeError:
                b = base64.b64encode(b)
        flat.append(b)
    return np.array(flat, dtype=object).reshape(arr.shape)


