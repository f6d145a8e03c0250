"""KServe v2 over HTTP for the load generator: metadata, request bodies, Triton statistics, a fast client.

The hot path is a hand-written HTTP/1.1 keep-alive client on asyncio streams: the request bytes are built
once and written as-is, the response is read by Content-Length. A general client (httpx, urllib) spends
more time in header handling than a trivial server spends answering.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from studio.core.errors import ConnectionFailed, InputError
from studio.core.reports import Report

KSERVE_DTYPES = {"BOOL": np.bool_, "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32,
                 "UINT64": np.uint64, "INT8": np.int8, "INT16": np.int16, "INT32": np.int32,
                 "INT64": np.int64, "FP16": np.float16, "FP32": np.float32, "FP64": np.float64}


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int
    base_path: str = ""

    @classmethod
    def parse(cls, url: str) -> Endpoint:
        if "://" not in url:
            url = "http://" + url
        parts = urlsplit(url)
        if parts.scheme != "http":
            raise InputError(f"unsupported URL scheme {parts.scheme!r}", offending=url,
                             hint="the load generator speaks plain HTTP to a KServe v2 server (http://HOST:PORT)")
        if not parts.hostname:
            raise InputError("URL has no host", offending=url, hint="use http://HOST:PORT")
        return cls(parts.hostname, parts.port or 80, parts.path.rstrip("/"))

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}{self.base_path}"


def http_get_json(url: str, timeout: float = 5.0) -> Any:
    """GET a JSON document; ConnectionFailed when the server cannot be reached."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - user-given server URL
            return json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        body = exc.read()[:300].decode("utf-8", "replace")
        raise ConnectionFailed(f"{url} answered HTTP {exc.code}: {body}", offending=url,
                               hint="check the model name and that it is loaded on the server") from exc
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise ConnectionFailed(f"cannot reach {url}: {getattr(exc, 'reason', exc)}", offending=url,
                               hint="is the server running, and is the URL the HTTP (not gRPC) port?") from exc
    except json.JSONDecodeError as exc:
        raise ConnectionFailed(f"{url} did not answer JSON", offending=url) from exc


def http_get_text(url: str, timeout: float = 5.0) -> str:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310
            return resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        raise ConnectionFailed(f"{url} answered HTTP {exc.code}", offending=url) from exc
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise ConnectionFailed(f"cannot reach {url}: {getattr(exc, 'reason', exc)}", offending=url) from exc


# -- model metadata and request bodies -----------------------------------------------------------

@dataclass
class TensorSpec:
    name: str
    datatype: str
    shape: list[int]


def model_metadata(ep: Endpoint, model: str) -> dict[str, Any]:
    return http_get_json(f"{ep.url}/v2/models/{model}")


def input_specs(meta: dict[str, Any], shape_overrides: dict[str, list[int]] | None = None,
                batch: int = 1) -> list[TensorSpec]:
    """Concrete input shapes from metadata: -1 becomes ``batch`` in the first dim, 1 elsewhere (or an override)."""
    specs: list[TensorSpec] = []
    overrides = shape_overrides or {}
    for inp in meta.get("inputs", []):
        name, dtype = inp["name"], inp["datatype"]
        if dtype not in KSERVE_DTYPES:
            raise InputError(f"input {name!r} has datatype {dtype}, which the generator cannot synthesise",
                             offending=name, hint="give the data with --input-data FILE")
        if name in overrides:
            shape = list(overrides[name])
        else:
            shape = [(batch if i == 0 else 1) if int(d) < 0 else int(d) for i, d in enumerate(inp["shape"])]
        specs.append(TensorSpec(name, dtype, shape))
    if not specs:
        raise InputError("the model's metadata lists no inputs", offending=meta.get("name"),
                         hint="give the data with --input-data FILE")
    return specs


def synth_tensor(spec: TensorSpec, rng: np.random.Generator) -> np.ndarray:
    dt = KSERVE_DTYPES[spec.datatype]
    if dt is np.bool_:
        return rng.integers(0, 2, size=spec.shape).astype(bool)
    if np.issubdtype(dt, np.integer):
        return rng.integers(0, 100, size=spec.shape).astype(dt)
    return rng.standard_normal(size=spec.shape).astype(dt)


def infer_body(tensors: dict[str, tuple[str, np.ndarray]]) -> bytes:
    """KServe v2 JSON request body from name -> (datatype, array)."""
    inputs = [{"name": n, "shape": list(a.shape), "datatype": dt, "data": a.reshape(-1).tolist()}
              for n, (dt, a) in tensors.items()]
    return json.dumps({"inputs": inputs}, separators=(",", ":")).encode()


def bodies_from_metadata(meta: dict[str, Any], shape_overrides: dict[str, list[int]] | None = None,
                         seed: int = 0, count: int = 1) -> list[bytes]:
    rng = np.random.default_rng(seed)
    specs = input_specs(meta, shape_overrides)
    return [infer_body({s.name: (s.datatype, synth_tensor(s, rng)) for s in specs}) for _ in range(count)]


def bodies_from_file(path: Path, meta: dict[str, Any] | None) -> list[bytes]:
    """Request bodies from a JSON file: a KServe v2 request ({"inputs": [...]}), a list of them, or
    perf_analyzer's input-data format ({"data": [{"INPUT0": [...] | {"content": [...], "shape": [...]}}]})."""
    try:
        doc = json.loads(Path(path).read_text())
    except FileNotFoundError as exc:
        raise InputError(f"input data file not found: {path}", offending=str(path)) from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"input data file is not valid JSON: {exc}", offending=str(path),
                         hint="use a KServe v2 request body or perf_analyzer's {\"data\": [...]} format") from exc
    if isinstance(doc, dict) and "inputs" in doc:
        return [json.dumps(doc, separators=(",", ":")).encode()]
    if isinstance(doc, list) and doc and all(isinstance(d, dict) and "inputs" in d for d in doc):
        return [json.dumps(d, separators=(",", ":")).encode() for d in doc]
    if isinstance(doc, dict) and isinstance(doc.get("data"), list) and doc["data"]:
        specs = {s["name"]: s for s in (meta or {}).get("inputs", [])}
        bodies = []
        for i, entry in enumerate(doc["data"]):
            tensors: dict[str, tuple[str, np.ndarray]] = {}
            for name, val in entry.items():
                if name not in specs:
                    raise InputError(f"input data entry {i} names {name!r}, which the model does not have",
                                     offending=f"{path}: data[{i}].{name}",
                                     hint=f"the model's inputs are: {', '.join(specs) or '(unknown)'}")
                dtype = specs[name]["datatype"]
                if isinstance(val, dict):
                    arr = np.asarray(val.get("content", []), dtype=KSERVE_DTYPES.get(dtype, np.float32))
                    shape = val.get("shape") or list(arr.shape)
                else:
                    arr = np.asarray(val, dtype=KSERVE_DTYPES.get(dtype, np.float32))
                    shape = [(1 if int(d) < 0 else int(d)) for d in specs[name]["shape"]]
                try:
                    arr = arr.reshape(shape)
                except ValueError as exc:
                    raise InputError(f"input {name!r} in entry {i} has {arr.size} values, shape {shape} "
                                     f"needs {int(np.prod(shape))}", offending=f"{path}: data[{i}].{name}",
                                     hint="give {\"content\": [...], \"shape\": [...]} for dynamic dims") from exc
                tensors[name] = (dtype, arr)
            bodies.append(infer_body(tensors))
        return bodies
    raise InputError("input data file has neither \"inputs\" nor \"data\"", offending=str(path),
                     hint="use a KServe v2 request body or perf_analyzer's {\"data\": [...]} format")


# -- Triton statistics (server-side queue / compute breakdown) -----------------------------------

@dataclass
class ServerStats(Report):
    """Cumulative counters of /v2/models/NAME/stats (summed over versions); subtract two for a delta."""

    schema_version: int = 1
    success_count: int = 0
    success_ns: int = 0
    fail_count: int = 0
    queue_ns: int = 0
    compute_input_ns: int = 0
    compute_infer_ns: int = 0
    compute_output_ns: int = 0
    inference_count: int = 0
    execution_count: int = 0

    def __sub__(self, other: ServerStats) -> ServerStats:
        vals = {k: getattr(self, k) - getattr(other, k) for k in self.__dataclass_fields__ if k != "schema_version"}
        return ServerStats(**vals)

    def breakdown_us(self) -> dict[str, float | None]:
        """Mean microseconds per successful request for each server-side stage."""
        n = self.success_count
        if n <= 0:
            return {"request_us": None, "queue_us": None, "compute_input_us": None, "compute_infer_us": None,
                    "compute_output_us": None}
        return {"request_us": self.success_ns / n / 1e3, "queue_us": self.queue_ns / n / 1e3,
                "compute_input_us": self.compute_input_ns / n / 1e3,
                "compute_infer_us": self.compute_infer_ns / n / 1e3,
                "compute_output_us": self.compute_output_ns / n / 1e3}


def parse_stats(doc: dict[str, Any]) -> ServerStats:
    st = ServerStats()
    for ms in doc.get("model_stats", []):
        inf = ms.get("inference_stats", {})

        def part(key: str, inf: dict[str, Any] = inf) -> tuple[int, int]:
            d = inf.get(key) or {}
            return int(d.get("count", 0)), int(d.get("ns", 0))

        c, ns = part("success")
        st.success_count += c
        st.success_ns += ns
        st.fail_count += part("fail")[0]
        st.queue_ns += part("queue")[1]
        st.compute_input_ns += part("compute_input")[1]
        st.compute_infer_ns += part("compute_infer")[1]
        st.compute_output_ns += part("compute_output")[1]
        st.inference_count += int(ms.get("inference_count", 0))
        st.execution_count += int(ms.get("execution_count", 0))
    return st


def fetch_stats(ep: Endpoint, model: str, timeout: float = 5.0) -> ServerStats | None:
    """Server statistics, or None when the server does not offer the endpoint (not every KServe server does)."""
    try:
        return parse_stats(http_get_json(f"{ep.url}/v2/models/{model}/stats", timeout=timeout))
    except ConnectionFailed:
        return None


# -- the fast client -------------------------------------------------------------------------------

class ProtocolError(Exception):
    pass


@dataclass
class HttpResult:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


class _ResponseProtocol(asyncio.Protocol):
    """Parses HTTP/1.1 responses straight from ``data_received`` and resolves one future per request
    (cheaper than StreamReader's readuntil/readexactly, which wake the task several times)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.waiter: asyncio.Future[tuple[int, int]] | None = None
        self.closed = False
        self._eof_body: tuple[int, int] | None = None  # (status, header bytes) of a body running to EOF
        self.t_done = 0.0  # perf_counter() when the last response was complete (not when its task resumed)
        # closed-loop pump: called with (status, bytes, t_done, more) per response; returns the next request or
        # None (more=False: the connection is closing, record only)
        self.pump: Callable[[int, int, float, bool], bytes | None] | None = None
        self.pump_write: Callable[[bytes], None] | None = None  # how the pump's next request is written

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if self.waiter is not None:
            self._try_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.transport = None
        w, self.waiter = self.waiter, None
        if w is not None and not w.done():
            if self._eof_body is not None:
                self.t_done = time.perf_counter()
                if self.pump is not None:
                    self.pump(self._eof_body[0], len(self.buf), self.t_done, False)
                w.set_result((self._eof_body[0], len(self.buf)))
            else:
                w.set_exception(exc or ConnectionResetError("server closed the connection mid-request"))

    def _try_complete(self) -> None:
        buf = self.buf
        i = buf.find(b"\r\n\r\n")
        if i < 0:
            return
        head = bytes(buf[:i + 4])
        if not head.startswith(b"HTTP/"):
            self._fail(ProtocolError("bad status line"))
            return
        try:
            status = int(head[9:12])
        except ValueError:
            self._fail(ProtocolError("bad status line"))
            return
        j = head.find(b"\r\nContent-Length:")  # the usual spelling first: skips lower-casing the head
        lower = head if j >= 0 else head.lower()
        if j < 0:
            j = lower.find(b"\r\ncontent-length:")
        if j >= 0:
            k = lower.find(b"\r\n", j + 2)
            total = i + 4 + int(head[j + 17:k])
            if len(buf) < total:
                return
        elif b"\r\ntransfer-encoding: chunked" in lower:
            pos = i + 4
            while True:
                e = buf.find(b"\r\n", pos)
                if e < 0:
                    return
                size = int(bytes(buf[pos:e]).split(b";")[0], 16)
                pos = e + 2 + size + 2
                if len(buf) < pos:
                    return
                if size == 0:
                    break
            total = pos
        elif status in (204, 304):
            total = i + 4
        else:
            self._eof_body = (status, i + 4)  # completes in connection_lost
            return
        del buf[:total]
        self.t_done = t_done = time.perf_counter()
        closing = b"\r\nconnection: close" in (lower if lower is not head else head.lower())
        if closing and self.transport is not None:
            self.transport.close()
        if self.pump is not None:
            nxt = self.pump(status, total, t_done, not closing and self.transport is not None)
            if nxt is not None:  # next request straight from the callback: no task wake-up
                if self.pump_write is not None:
                    self.pump_write(nxt)
                elif self.transport is not None:
                    self.transport.write(nxt)
                return
        w, self.waiter = self.waiter, None
        if w is not None and not w.done():
            w.set_result((status, total))

    def _fail(self, exc: Exception) -> None:
        w, self.waiter = self.waiter, None
        if self.transport is not None:
            self.transport.abort()
        if w is not None and not w.done():
            w.set_exception(exc)


class FastConnection:
    """One keep-alive HTTP/1.1 connection; ``request`` writes prebuilt bytes and awaits one response.

    ``t_sent`` / ``t_done`` (perf_counter) bracket the last request: taken when it was issued and when its
    response was complete in ``data_received``, so the latency excludes the event loop's delay in resuming
    the waiting task (which grows with the number of connections on one loop, and is client cost, not
    server latency; wrk times at the same point)."""

    def __init__(self, ep: Endpoint, timeout: float = 30.0) -> None:
        self.ep = ep
        self.timeout = timeout
        self.proto: _ResponseProtocol | None = None
        self.t_sent = self.t_done = 0.0

    async def connect(self) -> None:
        loop = asyncio.get_running_loop()
        _t, proto = await asyncio.wait_for(
            loop.create_connection(_ResponseProtocol, self.ep.host, self.ep.port), timeout=self.timeout)
        self.proto = proto

    @property
    def connected(self) -> bool:
        return self.proto is not None and not self.proto.closed

    def abort(self) -> None:
        """Cut the connection now (timeout watchdog): the pending request fails."""
        if self.proto is not None and self.proto.transport is not None:
            self.proto.transport.abort()

    def close(self) -> None:
        if self.proto is not None and self.proto.transport is not None:
            self.proto.transport.close()
        self.proto = None

    async def _arm(self) -> tuple[Any, asyncio.Future[tuple[int, int]]]:
        """Stamp the send time, (re)connect, and give the protocol a fresh future for the next response."""
        self.t_sent = time.perf_counter()
        if not self.connected:
            await self.connect()
        proto = self.proto
        assert proto is not None and proto.transport is not None
        fut: asyncio.Future[tuple[int, int]] = asyncio.get_running_loop().create_future()
        proto.waiter = fut
        proto._eof_body = None
        return proto, fut

    async def request(self, raw: bytes) -> tuple[int, int]:
        """Send ``raw`` (a whole request); returns (status, bytes received). Reconnects when closed."""
        proto, fut = await self._arm()
        proto.transport.write(raw)
        if proto.buf:
            proto._try_complete()
        status, received = await fut
        self.t_done = proto.t_done
        if proto.closed:
            self.proto = None
        return status, received

    async def pump(self, first: bytes, on_response: Callable[[int, int, float, bool], bytes | None],
                   batch: WriteBatch | None = None) -> None:
        """Closed loop on this connection without a task wake-up per request: write ``first``; for each
        complete response ``on_response(status, bytes received, t_done, more)`` records it and, when ``more``
        (the connection stays open), returns the next request's bytes (written at once from the protocol
        callback) or None to stop. Returns when stopped
        or when the server closed the connection (call again to reconnect); raises on connection errors,
        the request in flight then being the failed one. With ``batch``, the next requests are written at
        the end of the event-loop iteration (see :class:`WriteBatch`)."""
        proto, fut = await self._arm()
        proto.pump = on_response
        proto.pump_write = None if batch is None else (lambda data: batch.add(self, data))
        try:
            proto.transport.write(first)
            if proto.buf:
                proto._try_complete()
            await fut
        finally:
            proto.pump = proto.pump_write = None
        if proto.closed:
            self.proto = None


class WriteBatch:
    """Requests to write at the end of the current event-loop iteration, not from inside a response callback.

    When responses on several connections arrive together, the loop runs their callbacks one after the
    other; writing the next request from inside each (a syscall that also wakes the server) would delay
    the next connection's completion time stamp by that much and inflate its latency. Deferred, every
    response is time-stamped first and the requests leave together, each stamped as it is written (wrk's
    event loop does the same: it writes when the socket is next reported writable)."""

    def __init__(self) -> None:
        self._pending: list[tuple[FastConnection, bytes]] = []

    def add(self, conn: FastConnection, data: bytes) -> None:
        if not self._pending:
            asyncio.get_running_loop().call_soon(self._flush)
        self._pending.append((conn, data))

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        for conn, data in pending:
            proto = conn.proto
            conn.t_sent = time.perf_counter()
            if proto is not None and proto.transport is not None and not proto.closed:
                proto.transport.write(data)  # a lost connection fails the pump's request: counted there


def build_request(ep: Endpoint, method: str, path: str, body: bytes = b"",
                  content_type: str = "application/json") -> bytes:
    head = (f"{method} {ep.base_path}{path} HTTP/1.1\r\nHost: {ep.host}:{ep.port}\r\n"
            f"Connection: keep-alive\r\nUser-Agent: studio-bench\r\n")
    if body or method in ("POST", "PUT"):
        head += f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + body
