"""The Locust workers' HTTP client: the studio's prebuilt request bytes (``kserve.build_request``) over gevent
keep-alive sockets, responses parsed by httptools (the parser of the studio's own client, http_client.py).

Locust's FastHttpUser (geventhttpclient) builds headers and parses in Python per request: it drove 0.3x the
studio's load generator's rate against the agent and its latencies ran 1.5-2.5x higher, so the workers use this
client and report every request through Locust's ``request`` event like any custom-protocol Locust user.
Runs only inside a worker (gevent monkey-patched by locust).
"""

from __future__ import annotations

import socket

from studio.telemetry.due_timer import GeventDueTimer

DueTimer = GeventDueTimer  # the workers' open-loop wake-ups (timerfd), shared with the load generator's form


class _Response:
    """httptools callbacks for one response at a time."""

    def __init__(self) -> None:
        import httptools

        self.parser = httptools.HttpResponseParser(self)
        self.done = False
        self.keep_alive = True

    def on_message_complete(self) -> None:
        self.done = True
        self.keep_alive = self.parser.should_keep_alive()


class RawConnection:
    def __init__(self, host: str, port: int, timeout_s: float) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout_s)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.resp = _Response()

    def exchange(self, raw: bytes) -> tuple[int, int]:
        """Send one request, read its whole response: (status, bytes received)."""
        self.send(raw)
        return self.receive()

    def send(self, raw: bytes) -> None:
        """Write one request: one ``send`` when the socket takes it whole (a request always fits an empty
        buffer); gevent's ``sendall`` costs 6 us more per call for its timeout bookkeeping."""
        n = self.sock.send(raw)
        if n < len(raw):
            self.sock.sendall(memoryview(raw)[n:])

    def receive(self) -> tuple[int, int]:
        """Read the whole response to the request sent: (status, bytes received)."""
        resp, received = self.resp, 0
        resp.done = False
        while not resp.done:
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionResetError("the server closed the connection mid-response")
            received += len(data)
            resp.parser.feed_data(data)
        status = resp.parser.get_status_code()
        if not resp.keep_alive:
            self.close()
        return status, received

    @property
    def open(self) -> bool:
        return self.sock is not None

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None  # type: ignore[assignment]
