"""Find edge agents on the network by mDNS (``_studio-agent._tcp.local.``)."""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from typing import Any

from studio.edge.discovery import SERVICE_TYPE


@dataclass
class DiscoveredAgent:
    name: str
    url: str
    board: str = ""
    version: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def discover_agents(timeout: float = 3.0, *, loopback: bool = False,
                    interfaces: list[str] | None = None) -> list[DiscoveredAgent]:
    """Browse for ``timeout`` seconds; ``loopback=True`` browses 127.0.0.1 only (agents bound to loopback)."""
    from zeroconf import IPVersion, ServiceBrowser, ServiceListener, Zeroconf

    found: dict[str, DiscoveredAgent] = {}
    zc = Zeroconf(interfaces=["127.0.0.1"] if loopback else (interfaces or ["0.0.0.0"]),
                  ip_version=IPVersion.V4Only)

    class _L(ServiceListener):
        def add_service(self, zc: Zeroconf, type_: str, name: str) -> None:
            info = zc.get_service_info(type_, name, timeout=2000)
            if info is None or not info.addresses:
                return
            props = {k.decode(): (v or b"").decode() for k, v in (info.properties or {}).items()}
            host = socket.inet_ntoa(info.addresses[0])
            scheme = props.get("scheme", "http")
            found[name] = DiscoveredAgent(name=name.removesuffix("." + SERVICE_TYPE), url=f"{scheme}://{host}:{info.port}",
                                          board=props.get("board", ""), version=props.get("version", ""))

        update_service = add_service

        def remove_service(self, zc: Zeroconf, type_: str, name: str) -> None:
            found.pop(name, None)

    browser = ServiceBrowser(zc, SERVICE_TYPE, _L())
    try:
        time.sleep(timeout)
    finally:
        browser.cancel()
        zc.close()
    return sorted(found.values(), key=lambda a: a.name)
