"""Probe traffic for a watch window: valid KServe v2 requests (bodies from the model's own metadata, built by
``studio.telemetry.kserve.bodies_from_metadata``) to each agent of a ring at a small steady rate, so the gate has
evidence even when no client is sending. What reached the agent is counted by the agent itself; the probe counts
only what never got there (refused, timed out), which the agent cannot see."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from studio.core.errors import ConnectionFailed


@dataclass
class ProbeCount:
    sent: int = 0
    failed: int = 0  # transport failures: the agent never answered
    http_errors: int = 0  # answered, but not 200 (the agent counted these itself)
    last_error: str = ""


def probe_bodies(url: str, model: str, verify: Any = True, token: str | None = None, count: int = 8) -> list[bytes]:
    """Request bodies for ``model`` from its metadata on the agent at ``url``."""
    import httpx

    from studio.telemetry.kserve import bodies_from_metadata

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with httpx.Client(timeout=10.0, verify=verify) as c:
            r = c.get(f"{url}/v2/models/{model}", headers=headers)
    except httpx.TransportError as exc:
        raise ConnectionFailed(f"cannot read the metadata of {model} on {url}: {exc}", offending=url) from None
    if r.status_code != 200:
        raise ConnectionFailed(f"{url}/v2/models/{model} answered HTTP {r.status_code}", offending=url,
                               hint="the bundle's model should be served once the deploy returned")
    return bodies_from_metadata(r.json(), count=count)


class Probe:
    """Threads sending ``rps`` requests per second to each target (url -> bodies) until :meth:`stop`."""

    def __init__(self, targets: dict[str, tuple[str, list[bytes]]], rps: float, verify: dict[str, Any] | None = None,
                 token: dict[str, str | None] | None = None, timeout: float = 10.0) -> None:
        """``targets``: agent name -> (infer URL, bodies)."""
        self.targets, self.rps, self.timeout = targets, rps, timeout
        self.verify, self.token = verify or {}, token or {}
        self.counts = {name: ProbeCount() for name in targets}
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> Probe:
        if self.rps <= 0:
            return self
        for name in self.targets:
            t = threading.Thread(target=self._run, args=(name,), name=f"probe-{name}", daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def stop(self) -> dict[str, ProbeCount]:
        self._stop.set()
        for t in self._threads:
            t.join(self.timeout + 1)
        return self.counts

    def _run(self, name: str) -> None:
        import httpx

        url, bodies = self.targets[name]
        count = self.counts[name]
        headers = {"Content-Type": "application/json"}
        if self.token.get(name):
            headers["Authorization"] = f"Bearer {self.token[name]}"
        period = 1.0 / self.rps
        next_at = time.monotonic()
        with httpx.Client(timeout=self.timeout, verify=self.verify.get(name, True)) as client:
            i = 0
            while not self._stop.is_set():
                try:
                    r = client.post(url, content=bodies[i % len(bodies)], headers=headers)
                    count.sent += 1
                    if r.status_code != 200:
                        count.http_errors += 1
                        count.last_error = f"HTTP {r.status_code}: {r.text[:200]}"
                except httpx.TransportError as exc:
                    count.sent += 1
                    count.failed += 1
                    count.last_error = f"{type(exc).__name__}: {exc}"
                i += 1
                next_at = max(next_at + period, time.monotonic())  # a slow answer skips slots, never bursts
                self._stop.wait(max(0.0, next_at - time.monotonic()))
