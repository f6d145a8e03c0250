"""One poller per device: a thread of its own for the device's whole life, so each device has one owner of its
connections and of its gevent hub. Qt-free: snapshots go to a ``deliver`` callback (the page's queued relay).

Before, every poll ran on a fresh thread that made and destroyed a gevent hub, and a finishing job's hub
clean-up raced the first poll's gevent import (studio.core.gevent_hub). Here a poll opens a connection, reads,
closes it on the same thread; the thread's hub goes when the poller stops (device removed or edited, page
shut down). A snapshot carries the spec it was taken with, so an answer for a device's old address or token is
never shown as its current state.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from studio.core.device_failure import failure_of
from studio.core.gevent_hub import release_thread_hub
from studio.gui.devices.server_poll import ServerSnapshot, ServerSpec, poll_server

Deliver = Callable[[ServerSnapshot], None]


class DevicePoller:
    """Polls one device on its own thread whenever :meth:`request` asks, one poll at a time."""

    def __init__(self, spec: ServerSpec, deliver: Deliver,
                 poll: Callable[[ServerSpec], ServerSnapshot] = poll_server) -> None:
        self.spec = spec
        self._deliver, self._poll = deliver, poll
        self._wake = threading.Event()
        self._stopped = False
        self._busy = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=f"poll-{spec.name}", daemon=True)
        self._thread.start()

    @property
    def busy(self) -> bool:
        """A poll is asked for or running (its snapshot has not been delivered yet)."""
        return self._busy

    def request(self) -> bool:
        """Ask for a poll; False when one is already on its way (its answer is the one to wait for)."""
        with self._lock:
            if self._busy or self._stopped:
                return False
            self._busy = True
        self._wake.set()
        return True

    def stop(self) -> None:
        """End the thread after its current poll (whose snapshot is then dropped)."""
        self._stopped = True
        self._wake.set()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def _run(self) -> None:
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._stopped:
                    return
                snap = self._poll_once()
                with self._lock:
                    self._busy = False
                    if self._stopped:
                        return
                self._deliver(snap)
        finally:
            release_thread_hub()  # this thread's gevent hub (tritonclient.http) goes with it

    def _poll_once(self) -> ServerSnapshot:
        try:
            snap = self._poll(self.spec)
        except BaseException as exc:  # a bug, or a gevent Timeout: still a snapshot, so it is polled again
            snap = ServerSnapshot(self.spec.name, error=f"{type(exc).__name__}: {exc}", failure=failure_of(exc),
                                  at=time.time())
        snap.spec = self.spec
        return snap


class DevicePollers:
    """The pollers of a set of devices, by name; a device whose spec changes gets a new poller."""

    def __init__(self, deliver: Deliver, poll: Callable[[ServerSpec], ServerSnapshot] = poll_server) -> None:
        self._deliver, self._poll = deliver, poll
        self._pollers: dict[str, DevicePoller] = {}

    def set(self, spec: ServerSpec) -> None:
        """Poll ``spec`` from now on (replacing the poller of an older spec of the same name)."""
        old = self._pollers.get(spec.name)
        if old is not None and old.spec == spec:
            return
        if old is not None:
            old.stop()
        self._pollers[spec.name] = DevicePoller(spec, self._deliver, self._poll)

    def drop(self, name: str) -> None:
        p = self._pollers.pop(name, None)
        if p is not None:
            p.stop()

    def request(self, name: str) -> bool:
        p = self._pollers.get(name)
        return p.request() if p is not None else False

    def busy(self, name: str) -> bool:
        p = self._pollers.get(name)
        return p is not None and p.busy

    def current(self, snap: ServerSnapshot) -> bool:
        """Whether ``snap`` was taken with the spec its device has now."""
        p = self._pollers.get(snap.name)
        return p is not None and snap.spec == p.spec

    def stop_all(self, wait_s: float = 0.0) -> None:
        pollers = list(self._pollers.values())
        self._pollers.clear()
        for p in pollers:
            p.stop()
        deadline = time.monotonic() + wait_s
        for p in pollers:
            p.join(max(0.0, deadline - time.monotonic()))
