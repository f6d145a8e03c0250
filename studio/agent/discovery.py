"""mDNS advertisement of an agent (``_studio-agent._tcp.local.``) with zeroconf.

On loopback (the default bind) the service is announced on 127.0.0.1 only, which is how the tests and a
studio on the same machine find it; bound to another address it is announced on that interface.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

from studio.edge.discovery import SERVICE_TYPE


def _addresses(host: str) -> list[str]:
    if host in ("0.0.0.0", "", "::"):
        try:
            return sorted({ai[4][0] for ai in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)})
        except OSError:
            return ["127.0.0.1"]
    return [host]


class Advertiser:
    def __init__(self, name: str, host: str, port: int, properties: dict[str, str]) -> None:
        self.name, self.host, self.port, self.properties = name, host, port, properties
        self._zc: Any = None
        self._info: Any = None
        self._thread: threading.Thread | None = None
        self.error: str | None = None

    def start(self) -> None:
        """Register in a background thread (probing takes ~1-2 s; serving must not wait for it)."""
        self._thread = threading.Thread(target=self._register, daemon=True, name="mdns")
        self._thread.start()

    def _register(self) -> None:
        try:
            from zeroconf import IPVersion, ServiceInfo, Zeroconf

            addrs = _addresses(self.host)
            loopback = all(a.startswith("127.") for a in addrs)
            self._zc = Zeroconf(interfaces=["127.0.0.1"] if loopback else addrs, ip_version=IPVersion.V4Only)
            safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in self.name)[:50]
            self._info = ServiceInfo(SERVICE_TYPE, f"{safe}-{self.port}.{SERVICE_TYPE}",
                                     addresses=[socket.inet_aton(a) for a in addrs], port=self.port,
                                     properties=self.properties, server=f"{safe}.local.")
            self._zc.register_service(self._info, allow_name_change=True)
        except Exception as exc:  # discovery is a convenience; the agent serves without it
            self.error = f"{type(exc).__name__}: {exc}"

    def close(self) -> None:
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._zc is not None:
            try:
                if self._info is not None:
                    self._zc.unregister_service(self._info)
            finally:
                self._zc.close()
