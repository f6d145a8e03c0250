"""The Locust workers' HTTP client: the studio's prebuilt request bytes (``kserve.build_request``) over keep-alive
sockets, responses parsed by httptools (the parser of the studio's own client, http_client.py).

Locust's FastHttpUser (geventhttpclient) builds headers and parses in Python per request: it drove 0.3x the
studio's load generator's rate against the agent and its latencies ran 1.5-2.5x higher, so the workers use this
client and report every request through Locust's ``request`` event like any custom-protocol Locust user.

Each connection's responses are read by its own OS thread blocked in ``recv`` on the unpatched socket, which stamps
the completion time as the last byte is parsed and hands the result to the gevent hub (``Inbox``): waking a greenlet
through gevent's hub for each response read about 0.05 ms later than a blocking receive (BENCHMARKS.md, issue 18's
10 % check). Requests are sent with one ``send`` by the open loop's sender thread or a closed-loop greenlet
(locustfile). Runs only inside a worker (gevent monkey-patched).
"""

from __future__ import annotations

import socket
import time
from collections import deque
from collections.abc import Callable
from typing import Any

# what a connection delivers for a request: (status, bytes received, wall-clock and perf_counter completion
# times), or the error that ended it; with the request's id (``deliver(request_id, result)``)
Result = tuple[int, int, float, float] | BaseException
Deliver = Callable[[int, Result], None]


def original(module: str, name: str) -> Any:
    import gevent.monkey

    return gevent.monkey.get_original(module, name)


class Inbox:
    """Hands results from the receiver threads to the gevent hub: a deque and one async watcher (thread-safe
    ``send``), whose callback runs each delivery in the hub. A worker has one, made in its hub's thread."""

    def __init__(self) -> None:
        import gevent

        self._items: deque[tuple[Deliver, int, Result]] = deque()
        self._watcher = gevent.get_hub().loop.async_()
        self._watcher.ref = False  # the worker's runner keeps the loop alive, not this
        self._watcher.start(self._drain)

    def post(self, deliver: Deliver, request_id: int, result: Result) -> None:
        """From any thread: run ``deliver(request_id, result)`` in the hub soon."""
        self._items.append((deliver, request_id, result))
        self._watcher.send()

    def _drain(self) -> None:
        items = self._items
        while items:
            deliver, request_id, result = items.popleft()
            deliver(request_id, result)


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
    """One keep-alive connection, connected from a greenlet; ``send`` from any thread. Each response is delivered
    through ``inbox`` to ``deliver`` (in the hub) with the id its request was sent with: the result, a
    ``TimeoutError`` when the request waited ``timeout_s``, a ``ConnectionResetError`` when the server closed or
    reset the connection with a request on it. A connection the server closes while idle delivers nothing and
    reads ``open`` False, so the next request reconnects."""

    def __init__(self, host: str, port: int, timeout_s: float, inbox: Inbox, deliver: Deliver) -> None:
        import gevent.socket

        green = gevent.socket.create_connection((host, port), timeout=timeout_s)  # a cooperative connect
        try:
            self.sock = original("socket", "socket")(fileno=green.fileno())  # the same fd, unpatched
            green.detach()
        finally:
            green.close()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.settimeout(timeout_s)  # the receiver's wake-up to check its request's age
        self.timeout_s, self.inbox, self.deliver = timeout_s, inbox, deliver
        self._lock = original("_thread", "allocate_lock")()
        self.pending: tuple[int, float] | None = None  # the request in flight: its id and perf_counter at send
        self.dead = self.closing = False
        original("_thread", "start_new_thread")(self._receive_loop, ())

    def send(self, raw: bytes, request_id: int) -> None:
        """Write one request: one ``send`` when the socket takes it whole (a request always fits an empty
        buffer); gevent's ``sendall`` costs 6 us more per call for its timeout bookkeeping. A failed send raises
        here and delivers nothing."""
        with self._lock:
            if self.dead or self.closing:
                raise ConnectionResetError("the server closed the connection")
            self.pending = (request_id, time.perf_counter())
        try:
            n = self.sock.send(raw)
            if n < len(raw):
                self.sock.sendall(memoryview(raw)[n:])
        except BaseException:
            with self._lock:
                self.pending, self.dead = None, True
            raise

    def _receive_loop(self) -> None:
        """The receiver thread: parse responses as they come; deliver each, or the error that ended the
        connection with a request on it; exit when the connection ends."""
        resp, received, sock = _Response(), 0, self.sock
        error: BaseException | None = None
        wait = self.timeout_s
        while True:
            try:
                data = sock.recv(65536)
            except TimeoutError:
                with self._lock:
                    pending = self.pending
                left = self.timeout_s if pending is None else pending[1] + self.timeout_s - time.perf_counter()
                if left > 0:  # idle, or its request's own timeout_s has not passed: wait for what is left of it
                    wait = max(left, 0.001)
                    sock.settimeout(wait)
                    continue
                error = TimeoutError(f"no response within {self.timeout_s:g} s")
                break
            except OSError as e:
                error = e
                break
            if not data:
                error = ConnectionResetError("the server closed the connection mid-response")
                break
            if wait != self.timeout_s:
                wait = self.timeout_s
                sock.settimeout(wait)
            received += len(data)
            try:
                resp.parser.feed_data(data)
            except Exception as e:  # noqa: BLE001 - a malformed response ends the connection
                error = e
                break
            if resp.done:
                t_wall, t_perf = time.time(), time.perf_counter()
                status, keep = resp.parser.get_status_code(), resp.keep_alive
                with self._lock:
                    asked, self.pending = self.pending, None
                    self.dead = not keep
                resp.done, n, received = False, received, 0
                if asked is not None:  # (bytes nobody asked for are dropped; the lane sees no response)
                    self.inbox.post(self.deliver, asked[0], (status, n, t_wall, t_perf))
                if not keep:
                    return
        with self._lock:
            self.dead = True
            asked, self.pending = self.pending, None
        if asked is not None and not self.closing and error is not None:
            self.inbox.post(self.deliver, asked[0], error)

    @property
    def open(self) -> bool:
        return not (self.dead or self.closing)

    def close(self) -> None:
        """Shut the socket (which wakes the receiver thread from its ``recv``; it exits without delivering)."""
        if self.closing:
            return
        self.closing = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
