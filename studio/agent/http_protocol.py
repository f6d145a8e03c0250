"""uvicorn's HTTP protocol with write coalescing, for the agent's small inference responses.

uvicorn writes a response's status line and headers (on ``http.response.start``) and its body (on
``http.response.body``) as two ``transport.write`` calls: two ``send`` syscalls, two TCP segments on loopback
and two wake-ups of the client, for a response of a few hundred bytes. Here the writes made during one
event-loop step are joined and sent once, at the end of that step; nothing else about uvicorn changes.
"""

from __future__ import annotations

import asyncio
from typing import Any


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


def http_protocol_class() -> type[asyncio.Protocol] | str:
    """uvicorn's httptools protocol with :class:`CoalescingTransport`; "auto" when httptools is missing."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # pragma: no cover - httptools is in the agent extra
        return "auto"

    class CoalescingHttpToolsProtocol(HttpToolsProtocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(CoalescingTransport(transport, self.loop))  # type: ignore[arg-type]

    return CoalescingHttpToolsProtocol
