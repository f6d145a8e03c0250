"""The load generator's HTTP/1.1 keep-alive client: prebuilt request bytes out, responses parsed by httptools.

Responses are parsed by ``httptools.HttpResponseParser`` (llhttp, the parser Node.js and uvicorn use) straight
from ``data_received``: Content-Length and chunked bodies (chunk extensions, trailers), bodies that run to the
connection's end, ``Connection: close`` and HTTP/1.0, interim 1xx responses; anything else is a clean
:class:`ProtocolError`. One future per request is resolved when its response is complete (cheaper than
StreamReader's readuntil/readexactly, which wake the task several times), or, closed loop, the next request is
written from the completion callback itself (:meth:`FastConnection.pump`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

try:  # the telemetry extra installs it; a core install imports kserve (build_request) without needing it
    import httptools
except ImportError:  # pragma: no cover - exercised by tests/install's core venv
    httptools = None

if TYPE_CHECKING:
    from studio.telemetry.kserve import Endpoint


class ProtocolError(Exception):
    """The server's bytes are not an HTTP/1.1 response."""


class _ResponseProtocol(asyncio.Protocol):
    """One connection's responses, parsed as they arrive; each complete response resolves ``waiter`` with
    (status, bytes received) or goes to ``pump``.

    Bytes are counted per ``data_received`` chunk, which is exact with one request in flight per connection
    (how the load generator drives every connection)."""

    def __init__(self) -> None:
        if httptools is None:
            from studio.core.errors import InstallError

            raise InstallError("the load generator needs httptools", offending="httptools",
                               hint="pip install 'deployment-studio[telemetry]'")
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.waiter: asyncio.Future[tuple[int, int]] | None = None
        self.closed = False  # connection_lost ran
        self.ended = False  # a response ended the connection, or the bytes were not HTTP: nothing more is read
        self.status = 0
        self.closing = False  # the current response ends the connection (Connection: close, HTTP/1.0, EOF body)
        self.sized = False  # the current response declared its length (Content-Length or Transfer-Encoding)
        self.in_body = False  # the current response's headers are complete, the response is not
        self.received = 0  # bytes received since the last complete response
        self.ready: tuple[int, int, bool] | None = None  # a response complete before anything waited for it
        self.t_done = 0.0  # perf_counter() when the last response was complete (not when its task resumed)
        # closed-loop pump: called with (status, bytes, t_done, more) per response; returns the next request or
        # None (more=False: the connection is closing, record only)
        self.pump: Callable[[int, int, float, bool], bytes | None] | None = None
        self.pump_write: Callable[[bytes], None] | None = None  # how the pump's next request is written

    # -- asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.ended:
            return
        self.received += len(data)
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserCallbackError as exc:  # one of ours (the pump's callback) raised
            self._fail(exc.__context__ if isinstance(exc.__context__, Exception) else exc)
        except (httptools.HttpParserError, httptools.HttpParserUpgrade) as exc:
            self._fail(ProtocolError(f"malformed HTTP response: {exc or type(exc).__name__}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.transport = None
        if self.in_body and not self.sized and not self.ended:  # a body that runs to the connection's end
            self.in_body, self.ended = False, True
            self._complete(False)
            return
        w, self.waiter = self.waiter, None
        if w is not None and not w.done():
            w.set_exception(exc or ConnectionResetError("server closed the connection mid-request"))

    # -- httptools callbacks (no on_body: the body is counted, never copied)
    def on_header(self, name: bytes, value: bytes) -> None:
        if len(name) in (14, 17) and name.lower() in (b"content-length", b"transfer-encoding"):
            self.sized = True

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        self.closing = not self.parser.should_keep_alive()
        self.in_body = True

    def on_message_complete(self) -> None:
        self.in_body = self.sized = False
        if self.status < 200:  # 100 Continue, 103 Early Hints: the response proper follows
            return
        if self.closing:
            self.ended = True
            if self.transport is not None:
                self.transport.close()
        self._complete(not self.closing and self.transport is not None)

    # --
    def _complete(self, more: bool) -> None:
        nbytes, self.received = self.received, 0
        self.t_done = time.perf_counter()
        self._hand(self.status, nbytes, more)

    def _hand(self, status: int, nbytes: int, more: bool) -> None:
        if self.pump is not None:
            nxt = self.pump(status, nbytes, self.t_done, more)
            if nxt is not None:  # next request straight from the callback: no task wake-up
                if self.pump_write is not None:
                    self.pump_write(nxt)
                elif self.transport is not None:
                    self.transport.write(nxt)
                return
        w, self.waiter = self.waiter, None
        if w is None:
            self.ready = (status, nbytes, more)
        elif not w.done():
            w.set_result((status, nbytes))

    def deliver_ready(self) -> None:
        """Hand over a response that was complete before its request was armed (the server answered early)."""
        ready, self.ready = self.ready, None
        if ready is not None:
            self.t_done = time.perf_counter()
            self._hand(*ready)

    def _fail(self, exc: Exception) -> None:
        self.ended = True
        self.in_body = False
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
        return proto, fut

    async def request(self, raw: bytes) -> tuple[int, int]:
        """Send ``raw`` (a whole request); returns (status, bytes received). Reconnects when closed."""
        proto, fut = await self._arm()
        proto.transport.write(raw)
        proto.deliver_ready()
        status, received = await fut
        self.t_done = proto.t_done
        if proto.closed or proto.ended:
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
            proto.deliver_ready()
            await fut
        finally:
            proto.pump = proto.pump_write = None
        if proto.closed or proto.ended:
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
