"""uvicorn's HTTP protocol with write coalescing, for the agent's small inference responses.

It also bounds how long a request's headers may take (``HEADER_TIMEOUT_S`` from the first byte of a request or
of the connection): uvicorn cancels its keep-alive timer on any data, so a client sending one header byte at a
time held a connection (and its memory) forever.

uvicorn writes a response's status line and headers (on ``http.response.start``) and its body (on
``http.response.body``) as two ``transport.write`` calls: two ``send`` syscalls, two TCP segments on loopback
and two wake-ups of the client, for a response of a few hundred bytes. Here the writes made during one
event-loop step are joined and sent once, at the end of that step; nothing else about uvicorn changes.
"""

from __future__ import annotations

import asyncio
from typing import Any

HEADER_TIMEOUT_S = 10.0  # a request's line and headers must arrive within this (studio-agent --header-timeout)
_TIMEOUT_BODY = b'{"error": "request headers not received in time", "kind": "limit", "limit": "header_timeout"}'
_TIMEOUT_RESPONSE = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
                     b"content-length: " + str(len(_TIMEOUT_BODY)).encode() + b"\r\n\r\n" + _TIMEOUT_BODY)


class CoalescingTransport:
    """Wraps a transport: ``write`` calls made in one loop step leave as one write, just after it."""

    __slots__ = ("_transport", "_loop", "_pending")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not data:
            return
        if not self._pending:
            self._loop.call_soon(self._flush)
        self._pending.append(data)

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        if pending and not self._transport.is_closing():
            self._transport.write(pending[0] if len(pending) == 1 else b"".join(pending))

    def writelines(self, chunks: Any) -> None:
        for c in chunks:
            self.write(c)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def abort(self) -> None:
        self._pending = []
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:  # everything else: the real transport
        return getattr(self._transport, name)


def http_protocol_class(header_timeout: float = HEADER_TIMEOUT_S) -> type[asyncio.Protocol] | str:
    """uvicorn's httptools protocol with :class:`CoalescingTransport` and the header timeout; "auto" when
    httptools is missing."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # pragma: no cover - httptools is in the agent extra
        return "auto"

    class CoalescingHttpToolsProtocol(HttpToolsProtocol):
        header_timeout_s = header_timeout
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(CoalescingTransport(transport, self.loop))  # type: ignore[arg-type]
            self._arm()

        def _arm(self) -> None:
            if self._header_timer is None and self.header_timeout_s > 0:
                self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            if not self.transport.is_closing():
                self.transport.write(_TIMEOUT_RESPONSE)
                self.transport.close()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._arm()

        def on_headers_complete(self) -> None:
            self._disarm()
            super().on_headers_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return CoalescingHttpToolsProtocol
