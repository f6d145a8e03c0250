"""The Locust workers' HTTP client: the studio's prebuilt request bytes (``kserve.build_request``) over gevent
keep-alive sockets, responses parsed by httptools (the parser of the studio's own client, http_client.py).

Locust's FastHttpUser (geventhttpclient) builds headers and parses in Python per request: it drove 0.3x the
studio's load generator's rate against the agent and its latencies ran 1.5-2.5x higher, so the workers use this
client and report every request through Locust's ``request`` event like any custom-protocol Locust user.
Runs only inside a worker (gevent monkey-patched by locust).
"""

from __future__ import annotations

import ctypes
import os
import socket
import sys
import time


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


class DueTimer:
    """Sleeps a greenlet until a wall-clock due time with microsecond precision and no busy-wait.

    gevent's timers have millisecond steps (libuv truncates to whole ms and re-arms sub-ms waits at 1 ms; libev's
    epoll timeouts round up): open-loop senders woke 0.7-0.9 ms after their due time, against 0.3-0.4 ms for the
    load generator's uvloop, which is 20-40 % of a tiny model's latency. A Linux timerfd armed at the absolute due
    time (CLOCK_REALTIME, the workers' clock) makes the epoll the loop already waits on return when it expires:
    0.13-0.16 ms late at p50 for the same CPU as gevent.sleep (2 %, 100 wake-ups/s). Elsewhere: gevent.sleep."""

    def __init__(self) -> None:
        self.fd = -1
        if sys.platform.startswith("linux"):
            self._libc = ctypes.CDLL(None, use_errno=True)
            self.fd = self._libc.timerfd_create(0, os.O_NONBLOCK | os.O_CLOEXEC)  # CLOCK_REALTIME; TFD_* = O_*

    def wait_until(self, due: float) -> None:
        """Return at ``due`` (time.time()) or just after it; never before."""
        import gevent
        from gevent.socket import wait_read

        while (left := due - time.time()) > 0:
            if self.fd < 0:
                gevent.sleep(left)
                continue
            sec = int(due)
            spec = _Itimerspec(_Timespec(0, 0), _Timespec(sec, int((due - sec) * 1e9)))
            if self._libc.timerfd_settime(self.fd, 1, ctypes.byref(spec), None) != 0:  # TFD_TIMER_ABSTIME
                raise OSError(ctypes.get_errno(), "timerfd_settime failed")
            wait_read(self.fd)
            try:
                os.read(self.fd, 8)
            except BlockingIOError:  # already consumed
                pass

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


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
        self.sock.sendall(raw)
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
