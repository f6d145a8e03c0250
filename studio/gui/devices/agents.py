"""An edge agent as the agents panels list it, and the refresh that asks it what it serves. No widgets: the
refresh runs on a job's worker thread (its status line goes through the thread-safe QCoreApplication.translate)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QCoreApplication

from studio.core.device_failure import failure_of, failure_state
from studio.core.errors import StudioError
from studio.core.workspace import DeviceEntry


@dataclass
class AgentEntry:
    name: str
    url: str
    token_file: str = ""
    board: str = ""
    state: str = "unknown"  # unknown | ok | a failure (studio.core.device_failure), from this panel's refresh
    status: dict[str, Any] | None = None
    detail: str = ""  # why the last refresh failed, in the transport's or the agent's words

    def client(self) -> Any:
        from studio.package.client import AgentClient, read_token_file

        return AgentClient(self.url, read_token_file(self.token_file) if self.token_file else None, timeout=10)

    def to_device(self) -> DeviceEntry:
        return DeviceEntry(name=self.name, url=self.url, kind="agent", extra={"token_file": self.token_file})


def refresh_one(a: AgentEntry) -> tuple[str, Any]:
    """On a worker thread: ("ok", the agent's status or None) or (its failure, why)."""
    try:
        if a.token_file:
            return "ok", a.client().status()
        why = a.client().probe()  # not managed without its token, but whether it answers is worth knowing
        return ("ok", None) if why is None else (failure_state(why), why)
    except StudioError as exc:
        status = (exc.details or {}).get("status")
        return failure_of(exc), f"{exc.message} (HTTP {status})" if status in (401, 403) else exc.message


def discover_all(job: Any) -> list[Any]:
    """A job: agents found by mDNS on the network, then on loopback (a board's agent and a local one)."""
    from studio.package.discovery import discover_agents

    job.set_status(QCoreApplication.translate("AgentsPanel", "browsing mDNS for {service}").format(service="_studio-agent._tcp"))
    found = discover_agents(3.0)
    found += [a for a in discover_agents(2.0, loopback=True) if a.url not in {f.url for f in found}]
    return found
