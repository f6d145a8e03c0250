"""A device's failure is named from what failed, never from the digits of its address (a TLS failure on port
40133 read as "token rejected": the race the Devices tests were thought to have). Real sockets on loopback."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator

import pytest

from studio.core.device_failure import failure_of, failure_state, token_status, without_addresses
from studio.core.errors import StudioError
from tests.edge.helpers import free_port_with


@pytest.mark.parametrize("digits", ["401", "403"])
def test_messages_with_status_like_ports(digits: str) -> None:
    for port in (int(digits + "33"), int("3" + digits + "7"), int(digits + "0")):
        url = f"https://127.0.0.1:{port}"
        assert failure_state(f"Triton server at {url} did not answer (server metadata): [SSL: WRONG_VERSION_NUMBER] "
                             "wrong version number (_ssl.c:1006)") == "tls"
        assert failure_state(f"cannot reach agent at {url}: [Errno 111] Connection refused") == "refused"
        assert failure_state(f"Triton server at {url} did not answer: timed out") == "timeout"
        assert token_status(f"agent at {url} refused: missing or wrong agent token (HTTP {digits})") == int(digits)
        assert token_status(f"agent at {url} said nothing") is None
    assert failure_state("cannot reach agent at http://token-box.local:8765: [Errno 111] Connection refused") \
        == "refused"
    assert failure_state("agent refused: missing or wrong agent token (HTTP 401)") == "token"
    assert failure_state("[403] forbidden") == "token"
    assert failure_state("ConnectError: [Errno -3] Temporary failure in name resolution") == "dns"
    assert "40133" not in without_addresses("at https://127.0.0.1:40133/v2 and 10.0.0.4:40133")


@pytest.fixture
def plain_http_on_401() -> Iterator[int]:
    """A plain-HTTP server on a port whose number holds 401."""
    port = free_port_with("401")

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            self.request.recv(4096)
            self.request.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    srv = socketserver.TCPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield port
    srv.shutdown()
    srv.server_close()


def _raised(fn) -> BaseException:  # type: ignore[no-untyped-def]
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 (what any client raised is what is classified)
        return exc
    raise AssertionError("no error")


def test_real_client_failures_on_status_like_ports(plain_http_on_401: int) -> None:
    """tritonclient (gevent) and httpx as the studio calls them: TLS to a plain port, and a closed port."""
    from studio.package.client import AgentClient
    from studio.triton.client import TritonClient

    tls = _raised(lambda: TritonClient(f"https://127.0.0.1:{plain_http_on_401}", timeout=5).server_metadata())
    assert isinstance(tls, StudioError) and str(plain_http_on_401) in tls.message
    assert failure_of(tls) == "tls", tls.message
    probe = AgentClient(f"https://127.0.0.1:{plain_http_on_401}", None, timeout=5).probe()
    assert probe is not None and failure_state(probe) == "tls", probe

    closed = free_port_with("403")
    refused = _raised(lambda: TritonClient(f"http://127.0.0.1:{closed}", timeout=5).server_metadata())
    assert failure_of(refused) == "refused", refused
    refused = _raised(lambda: AgentClient(f"http://127.0.0.1:{closed}", "t", timeout=5).status())
    assert failure_of(refused) == "refused", refused
