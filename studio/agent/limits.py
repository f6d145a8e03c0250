"""What one inference request may cost the agent: body size, decompressed size and ratio, read time, and the
requests in flight per model. Each limit has a safe default, a ``studio-agent`` flag, and its own answer.

Measured before these existed (a real agent on loopback): a 1 MB gzip body inflating to 1 GiB took 6.5 s of
CPU before its 400, a 300 MB JSON body was read whole, and a slow client held a request open without end. Now a
body is read in chunks up to ``max_body_bytes`` (413), decompressed in bounded steps that stop at
``max_decompressed_bytes`` or ``max_ratio`` (413; an unknown Content-Encoding is 415), each body chunk must
arrive within ``read_timeout_s`` (408), and a model with ``max_inflight`` requests running answers 503 with
Retry-After. Headers are bounded by the HTTP protocol (``http_protocol.HEADER_TIMEOUT_S``).
"""

from __future__ import annotations

import asyncio
import threading
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

MIB = 1 << 20
_STEP = 1 << 20  # decompressed bytes per step: the check runs between steps, never after the whole body


@dataclass(frozen=True)
class Limits:
    max_body_bytes: int = 64 * MIB  # a 224x224 image batch of 64 in FP32 is 38 MiB
    max_decompressed_bytes: int = 256 * MIB
    max_ratio: float = 200.0  # decompressed / compressed; zeros compress ~1000x, real tensors well under 20x
    read_timeout_s: float = 30.0  # between two body chunks
    max_inflight: int = 64  # per model, running or queued; more answer 503
    retry_after_s: int = 1
    max_generations: int = 2  # generate / generate_stream running per model (each holds a KV cache); more: 503

    def describe(self) -> dict[str, Any]:
        return {"max_body_bytes": self.max_body_bytes, "max_decompressed_bytes": self.max_decompressed_bytes,
                "max_ratio": self.max_ratio, "read_timeout_s": self.read_timeout_s,
                "max_inflight": self.max_inflight, "max_generations": self.max_generations}


class LimitExceeded(Exception):
    """A request over a limit: the HTTP status, the message and the headers to answer with."""

    def __init__(self, status: int, message: str, reason: str, headers: list[tuple[bytes, bytes]] | None = None,
                 drain: bool = True) -> None:
        super().__init__(message)
        self.status, self.message, self.reason = status, message, reason
        self.headers = headers or []
        self.drain = drain  # read (and drop) the rest of the body so the connection stays usable


async def read_body(receive: Callable[[], Awaitable[dict]], limits: Limits, declared: bytes | None) -> bytes | None:
    """The request body, or None when the client went away; LimitExceeded over ``max_body_bytes`` or when a
    chunk takes longer than ``read_timeout_s``."""
    cap = limits.max_body_bytes
    if declared is not None and declared.isdigit() and int(declared) > cap:
        raise LimitExceeded(413, f"request body of {int(declared)} bytes exceeds this agent's limit of {cap} "
                                 "bytes (--max-request-mb)", "body_too_large", drain=False)
    chunks: list[bytes] = []
    size, more = 0, True
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    timed_out = False

    def expire() -> None:  # one timer per request, moved on at each chunk (wait_for would make a task each)
        nonlocal timed_out
        timed_out = True
        if task is not None:
            task.cancel()

    timer = loop.call_later(limits.read_timeout_s, expire)
    try:
        while more:
            try:
                msg = await receive()
            except asyncio.CancelledError:
                if timed_out:
                    if task is not None and hasattr(task, "uncancel"):
                        task.uncancel()  # the cancel was ours, not the server's: the task goes on to answer
                    raise LimitExceeded(408, f"request body not received within {limits.read_timeout_s:g} s "
                                             "(--read-timeout)", "read_timeout", drain=False) from None
                raise
            if msg["type"] == "http.disconnect":
                return None
            if msg.get("more_body", False):
                timer.cancel()
                timer = loop.call_later(limits.read_timeout_s, expire)
            body = msg.get("body", b"")
            size += len(body)
            if size > cap:
                raise LimitExceeded(413, f"request body exceeds this agent's limit of {cap} bytes "
                                         "(--max-request-mb)", "body_too_large", drain=False)
            chunks.append(body)
            more = msg.get("more_body", False)
    finally:
        timer.cancel()
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def decompress(body: bytes, encoding: bytes | None, limits: Limits) -> bytes:
    """gzip / deflate / identity in bounded steps; 413 past the size or ratio cap, 415 for other encodings."""
    if encoding in (None, b"", b"identity"):
        return body
    if encoding == b"gzip":
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif encoding == b"deflate":
        d = zlib.decompressobj()
    else:
        raise LimitExceeded(415, f"Content-Encoding {encoding.decode('latin-1')!r} is not supported",
                            "bad_encoding", headers=[(b"accept-encoding", b"gzip, deflate")])
    cap = min(limits.max_decompressed_bytes, int(max(len(body), 1) * limits.max_ratio))
    out: list[bytes] = []
    size, data = 0, body
    while True:
        chunk = d.decompress(data, _STEP)
        size += len(chunk)
        if size > cap:
            which = ("ratio " + f"{limits.max_ratio:g}:1") if cap < limits.max_decompressed_bytes else \
                f"{limits.max_decompressed_bytes} bytes"
            raise LimitExceeded(413, f"{encoding.decode()} body inflates past this agent's limit ({which}; "
                                     f"{len(body)} bytes compressed)", "inflate_too_large")
        out.append(chunk)
        data = d.unconsumed_tail
        if not data:
            break
    tail = d.flush()
    if size + len(tail) > cap:
        raise LimitExceeded(413, "compressed body inflates past this agent's limit", "inflate_too_large")
    if not d.eof:
        raise zlib.error("compressed body is truncated")
    return b"".join(out) + tail


class InflightGate:
    """Requests in flight per model name (only names the agent serves get a counter), HTTP and gRPC."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._n: dict[str, int] = {}
        self._lock = threading.Lock()  # HTTP (event loop) and gRPC (its threads) share the count

    def enter(self, name: str) -> None:
        with self._lock:
            n = self._n.get(name, 0)
            if n >= self.limits.max_inflight:
                raise LimitExceeded(503, f"model '{name}' has {n} requests in flight, this agent's limit "
                                         "(--max-inflight); retry shortly", "overloaded",
                                    [(b"retry-after", str(self.limits.retry_after_s).encode())])
            self._n[name] = n + 1

    def leave(self, name: str) -> None:
        with self._lock:
            self._n[name] = max(0, self._n.get(name, 1) - 1)

    def count(self, name: str) -> int:
        return self._n.get(name, 0)
