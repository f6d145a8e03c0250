"""Wake-ups at open-loop due times with microsecond precision and no busy-wait, for both load clients: the studio's
load generator (asyncio, :class:`AsyncDueTimer`) and the Locust workers' sender thread (:class:`ThreadDueTimer`).

Event loops' timers have millisecond steps: uvloop (libuv) truncates to whole ms and gevent's libev epoll timeouts
round up, so open-loop senders woke 0.3-1.1 ms after their due time, 20-70 % of a tiny model's latency. A Linux
timerfd armed at the absolute due time makes the epoll the loop already waits on return when it expires (0.13-0.27
ms late at p50, for the CPU of the loop's own timer), or a thread's blocking read of it return. Off Linux both forms
fall back to sleeping.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import sys
import time
from collections.abc import Callable


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


_TFD_TIMER_ABSTIME = 1


class _TimerFd:
    """A non-blocking timerfd on ``clock_id`` (``fd`` -1 off Linux); due times are read on ``now`` and converted to
    the fd's clock at each arming, so any clock that ticks with it works (perf_counter with CLOCK_MONOTONIC)."""

    def __init__(self, clock_id: int, now: Callable[[], float]) -> None:
        self.clock_id, self.now, self.fd = clock_id, now, -1
        if sys.platform.startswith("linux"):
            self._libc = ctypes.CDLL(None, use_errno=True)
            fd = self._libc.timerfd_create(clock_id, os.O_NONBLOCK | os.O_CLOEXEC)  # TFD_NONBLOCK/CLOEXEC = O_*
            self.fd = fd if fd >= 0 else -1

    def arm(self, due: float) -> None:
        """Expire at ``due`` (on ``now``'s scale), at once if it has passed."""
        at = max(due - self.now() + time.clock_gettime(self.clock_id), 1e-9)
        sec = int(at)
        spec = _Itimerspec(_Timespec(0, 0), _Timespec(sec, max(1, int((at - sec) * 1e9))))
        if self._libc.timerfd_settime(self.fd, _TFD_TIMER_ABSTIME, ctypes.byref(spec), None) != 0:
            raise OSError(ctypes.get_errno(), "timerfd_settime failed")

    def consume(self) -> None:
        try:
            os.read(self.fd, 8)
        except BlockingIOError:  # not expired yet, or already read
            pass

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class ThreadDueTimer(_TimerFd):
    """Blocks an OS thread until a wall-clock due time (``time.time()``), in a blocking ``read`` of the timerfd
    (the GIL released): the Locust workers' sender thread. ``stop`` from another thread ends the wait under way
    and every later one at once. Elsewhere: time.sleep in steps."""

    def __init__(self) -> None:
        super().__init__(time.CLOCK_REALTIME if hasattr(time, "CLOCK_REALTIME") else 0, time.time)
        if self.fd >= 0:
            os.set_blocking(self.fd, True)
        self.stopped = False

    def wait_until(self, due: float, read: Callable[[int, int], bytes] = os.read) -> None:
        """Return at ``due`` or just after it (never before), or once ``stop`` is called. ``read``: the
        unpatched ``os.read`` in a gevent-patched process."""
        while not self.stopped and (left := due - time.time()) > 0:
            if self.fd < 0:
                time.sleep(min(left, 0.005))
                continue
            self.arm(due)
            if self.stopped:  # stop's own arming may have come before this one
                break
            read(self.fd, 8)

    def stop(self) -> None:
        self.stopped = True
        if self.fd >= 0:
            self.arm(0.0)  # expires at once: a read under way returns


class AsyncDueTimer(_TimerFd):
    """Awaits a ``time.perf_counter()`` due time on the running asyncio loop (uvloop or the standard one): the fd
    stays registered with ``loop.add_reader`` and each wait is one future its callback resolves. Cancelling a
    wait leaves the timer reusable. Elsewhere: asyncio.sleep."""

    def __init__(self) -> None:
        super().__init__(time.CLOCK_MONOTONIC if hasattr(time, "CLOCK_MONOTONIC") else 1, time.perf_counter)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._fut: asyncio.Future[None] | None = None

    def _fired(self) -> None:
        self.consume()
        fut = self._fut
        if fut is not None and not fut.done():
            fut.set_result(None)

    async def wait_until(self, due: float) -> None:
        """Return at ``due`` or just after it; never before."""
        while (left := due - time.perf_counter()) > 0:
            if self.fd < 0:
                await asyncio.sleep(left)
                continue
            if self._loop is None:
                self._loop = asyncio.get_running_loop()
                self._loop.add_reader(self.fd, self._fired)
            self._fut = fut = self._loop.create_future()
            self.arm(due)
            try:
                await fut
            finally:
                self._fut = None

    def close(self) -> None:
        if self._loop is not None and self.fd >= 0 and not self._loop.is_closed():
            self._loop.remove_reader(self.fd)
        self._loop = None
        super().close()
