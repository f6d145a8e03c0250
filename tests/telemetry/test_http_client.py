"""The load generator's HTTP client (studio.telemetry.http_client, parsing on httptools) against a real asyncio
HTTP server on loopback: Content-Length and chunked bodies (extensions, trailers, the spellings the old
hand-written parser missed), keep-alive across responses, bodies to EOF, Connection: close, and a malformed
response giving a clean ProtocolError."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from studio.telemetry.http_client import FastConnection, ProtocolError, build_request
from studio.telemetry.kserve import Endpoint

pytestmark = [pytest.mark.timeout(60)]

Script = list[bytes | list[bytes] | None]  # per request: the response, its pieces written apart, or close


class ScriptedServer:
    """Answers the n-th request with ``script[n]``: bytes at once, a list of pieces written with a pause
    between them (so the client parses them across reads), or None to close without answering. After a
    response that says ``Connection: close`` or has no length, the server closes the connection."""

    def __init__(self, script: Script) -> None:
        self.script = list(script)
        self.requests = 0
        self.connections = 0
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> Endpoint:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return Endpoint.parse(f"http://127.0.0.1:{port}")

    async def __aexit__(self, *exc: Any) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while self.script:
                await reader.readuntil(b"\r\n\r\n")
                self.requests += 1
                resp = self.script.pop(0)
                if resp is None:
                    break
                pieces = resp if isinstance(resp, list) else [resp]
                for piece in pieces:
                    writer.write(piece)
                    await writer.drain()
                    if len(pieces) > 1:
                        await asyncio.sleep(0.01)
                if ends_connection(b"".join(pieces)):
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def ends_connection(resp: bytes) -> bool:
    """Whether the last response in ``resp`` closes the connection after it (as the client must see it)."""
    head = resp[resp.rfind(b"HTTP/1."):].split(b"\r\n\r\n", 1)[0].lower()
    if b"connection: close" in head or head.startswith(b"http/1.0"):
        return True
    return not (b"content-length" in head or b"chunked" in head or head.startswith(b"http/1.1 204"))


def run(script: Script, body: Callable[[Endpoint], Awaitable[Any]]) -> tuple[Any, ScriptedServer]:
    async def main() -> Any:
        srv = ScriptedServer(script)
        async with srv as ep:
            return await asyncio.wait_for(body(ep), 10), srv

    return asyncio.run(main())


def get(ep: Endpoint) -> bytes:
    return build_request(ep, "GET", "/v2/health/ready")


OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
CHUNKED = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n"
           b"5;name=value\r\nhello\r\n6;a;b=\"q\"\r\n world\r\n0\r\nX-Checksum: abc\r\nX-Other: 1\r\n\r\n")


def test_content_length_and_keep_alive_across_responses() -> None:
    big = b"HTTP/1.1 200 OK\r\ncontent-length: 70000\r\n\r\n" + b"x" * 70000  # several reads

    async def body(ep: Endpoint) -> list[tuple[int, int]]:
        conn = FastConnection(ep)
        got = [await conn.request(get(ep)) for _ in range(3)]
        return got + [await conn.request(get(ep))]

    missing = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
    got, srv = run([OK, big, OK, missing], body)
    assert got == [(200, len(OK)), (200, len(big)), (200, len(OK)), (404, len(missing))]
    assert srv.connections == 1  # all four on one keep-alive connection


@pytest.mark.parametrize("te", [b"Transfer-Encoding: chunked", b"transfer-encoding:chunked",
                                b"Transfer-Encoding: gzip, chunked", b"TRANSFER-ENCODING:  Chunked"])
def test_chunked_variants_with_extensions_and_trailers(te: bytes) -> None:
    """The old parser knew only 'transfer-encoding: chunked' (one space, chunked alone) and waited for EOF
    on the others; chunk extensions and trailers must not end the body early or leak into the next one."""
    resp = CHUNKED.replace(b"Transfer-Encoding: chunked", te)

    async def body(ep: Endpoint) -> list[tuple[int, int]]:
        conn = FastConnection(ep)
        return [await conn.request(get(ep)), await conn.request(get(ep))]

    got, srv = run([resp, OK], body)
    assert got == [(200, len(resp)), (200, len(OK))] and srv.connections == 1


def test_chunked_response_split_across_reads() -> None:
    """Every byte in its own write: the size line, extension, data, CRLF and trailers all straddle reads."""
    pieces = [CHUNKED[i:i + 1] for i in range(len(CHUNKED))]

    async def body(ep: Endpoint) -> list[tuple[int, int]]:
        conn = FastConnection(ep)
        return [await conn.request(get(ep)), await conn.request(get(ep))]

    got, _ = run([[b"".join(pieces[:40]), *pieces[40:]], OK], body)
    assert got == [(200, len(CHUNKED)), (200, len(OK))]


def test_no_body_interim_and_eof_responses() -> None:
    interim = b"HTTP/1.1 100 Continue\r\n\r\n" + OK
    eof = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end"

    async def body(ep: Endpoint) -> list[Any]:
        conn = FastConnection(ep)
        got: list[Any] = [await conn.request(get(ep)), await conn.request(get(ep))]
        got.append(await conn.request(get(ep)))
        got.append(conn.connected)
        got.append(await conn.request(get(ep)))  # reconnects after the EOF body
        return got

    empty = b"HTTP/1.1 204 No Content\r\n\r\n"
    got, srv = run([empty, interim, eof, OK], body)
    assert got == [(204, len(empty)), (200, len(interim)), (200, len(eof)), False, (200, len(OK))]
    assert srv.connections == 2


def test_connection_close_is_honoured_and_the_next_request_reconnects() -> None:
    close = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
    http10 = b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}"  # HTTP/1.0 without keep-alive closes too

    async def body(ep: Endpoint) -> list[tuple[int, int]]:
        conn = FastConnection(ep)
        return [await conn.request(get(ep)) for _ in range(3)]

    got, srv = run([close, http10, OK], body)
    assert got == [(200, len(close)), (200, len(http10)), (200, len(OK))]
    assert srv.connections == 3


def test_pump_runs_a_closed_loop_over_keep_alive_responses() -> None:
    async def body(ep: Endpoint) -> list[tuple[int, int, bool]]:
        conn = FastConnection(ep)
        seen: list[tuple[int, int, bool]] = []

        def on_response(status: int, nbytes: int, t_done: float, more: bool) -> bytes | None:
            seen.append((status, nbytes, more))
            return get(ep) if len(seen) < 4 else None

        await conn.pump(get(ep), on_response)
        return seen

    got, srv = run([OK, CHUNKED, [OK[:10], OK[10:]], OK], body)
    assert got == [(200, len(OK), True), (200, len(CHUNKED), True), (200, len(OK), True), (200, len(OK), True)]
    assert srv.requests == 4 and srv.connections == 1


@pytest.mark.parametrize("bad", [
    b"garbage\r\n\r\n",  # not a status line
    b"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n",  # bad status code
    b"HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n",  # bad length
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",  # bad chunk size
    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",  # conflicting lengths
])
def test_a_malformed_response_is_a_clean_protocol_error(bad: bytes) -> None:
    async def body(ep: Endpoint) -> tuple[str, tuple[int, int]]:
        conn = FastConnection(ep)
        with pytest.raises(ProtocolError) as err:
            await conn.request(get(ep))
        conn.close()
        return str(err.value), await conn.request(get(ep))  # a fresh connection works

    (msg, after), _ = run([bad, OK], body)
    assert msg.startswith("malformed HTTP response: ") and len(msg) > len("malformed HTTP response: ")
    assert after == (200, len(OK))


def test_a_truncated_body_is_a_lost_connection_not_a_response() -> None:
    async def body(ep: Endpoint) -> None:
        conn = FastConnection(ep)
        with pytest.raises(ConnectionResetError):
            await conn.request(get(ep))

    truncated = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\n{}"
    run([truncated], body)
    run([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nab"], body)
