"""What the rollout does to one agent, through the studio's one deploy client (``studio.package.client``): look at
its active version, deploy the bundle (or reactivate it when an earlier rollout left it installed), roll back."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from studio.core.errors import ConnectionFailed, StudioError
from studio.fleet.fleet_file import ResolvedAgent
from studio.package.client import AgentClient, deploy_bundle


class AgentDown(StudioError, kind="connection"):
    """The agent does not answer: the rollout's --on-down policy decides (skip it, or block)."""


@dataclass
class DeployOutcome:
    version: str
    previous: str | None
    served_models: list[str]
    how: str  # deployed | reactivated | already active


def client_for(agent: ResolvedAgent, timeout: float = 30.0) -> AgentClient:
    return AgentClient(agent.url, agent.token(), verify=agent.verify, timeout=timeout)


def active_version(agent: ResolvedAgent, model: str) -> tuple[str | None, list[str], str | None]:
    """(active version of bundle ``model``, its served models, the version a rollback goes to) on the agent;
    AgentDown when it does not answer."""
    try:
        st = client_for(agent, timeout=10.0).status()
    except ConnectionFailed as exc:
        raise AgentDown(exc.message, offending=agent.url, hint=exc.hint) from None
    m = (st.get("models") or {}).get(model) or {}
    return m.get("active"), list(m.get("served_models") or []), m.get("rollback_to")


def deploy(agent: ResolvedAgent, bundle: Path, name: str, version: str) -> DeployOutcome:
    """Bring ``name`` ``version`` up on the agent; the agent verifies and warms it up, its old version serving
    meanwhile. A version already installed there (a rollout that was rolled back) is reactivated instead."""
    before, served, back_to = active_version(agent, name)
    if before == version:  # a studio killed after the upload: the agent's rollback target is what was there
        return DeployOutcome(version, back_to, served, "already active")
    try:
        rep = deploy_bundle(bundle, agent.url, agent.token() or "", verify=agent.verify)
        return DeployOutcome(rep.version, rep.previous, rep.served_models, "deployed")
    except ConnectionFailed as exc:
        raise AgentDown(exc.message, offending=agent.url, hint=exc.hint) from None
    except StudioError as exc:
        if exc.details.get("status") != 409:
            raise
    try:
        res = client_for(agent).rollback(name, version)
    except ConnectionFailed as exc:
        raise AgentDown(exc.message, offending=agent.url, hint=exc.hint) from None
    return DeployOutcome(res["version"], res.get("previous"), list(res.get("served_models") or []), "reactivated")


def rollback(agent: ResolvedAgent, name: str, to_version: str | None, from_version: str) -> str:
    """Put ``to_version`` back (the version that was active before the rollout); returns the version then
    active, checked by asking the agent. AgentDown when it does not answer."""
    if to_version is None:
        raise StudioError(f"{name} had no version on {agent.name} before the rollout: nothing to go back to",
                          offending=agent.url, hint="deploy a known-good version to it by hand")
    active = active_version(agent, name)[0]
    if active != to_version:
        try:
            client_for(agent).rollback(name, to_version)
        except ConnectionFailed as exc:
            raise AgentDown(exc.message, offending=agent.url, hint=exc.hint) from None
        active = active_version(agent, name)[0]
    if active != to_version:
        raise StudioError(f"{agent.name} serves {name} {active} after the rollback, not {to_version}",
                          offending=agent.url)
    return active
