"""The persisted record of one fleet rollout (WORKSPACE/fleets/rollouts/FLEET.json, written atomically after every
step): what it deploys, its rings, one row per agent (version, state, ring, gate values) and the timeline of
events. A restarted studio reads it back to resume or to say where the rollout stopped.

Pause and abort from another process go through a control file beside it (FLEET.control), read by the running
engine at its safe points; the state file itself has one writer, the engine.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from studio.core.atomic import write_json_atomic, write_text_atomic
from studio.core.errors import InputError

SCHEMA_VERSION = 1
ROLLOUTS_DIR = "rollouts"
# rollout status: running (or interrupted when its runner is gone), paused, blocked (an agent down, policy
# block), succeeded, rolled_back (the gate broke), aborted, rollback_incomplete (some agents could not go back)
ACTIVE = ("running", "paused", "blocked")
FINISHED = ("succeeded", "rolled_back", "aborted", "rollback_incomplete")
# agent states: pending, deploying, updated, watching, passed, down, skipped, failed, rolled_back, rollback_failed


@dataclass
class FleetEvent:
    """One line of the rollout's timeline; listeners get these as they happen (``RolloutEngine.subscribe``)."""

    t: float
    kind: str  # started, ring_started, deploying, updated, down, skipped, watch, gate, ring_passed, ring_failed,
    # rollback, rolled_back, rollback_failed, paused, blocked, resumed, aborted, finished, note
    message: str
    agent: str | None = None
    ring: int | None = None
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class AgentRow:
    """One agent as the Fleet page shows it."""

    name: str
    url: str
    ring: int | None
    labels: dict[str, str] = field(default_factory=dict)
    state: str = "pending"
    version: str | None = None  # the bundle model's active version as last seen
    previous: str | None = None  # active before this rollout touched it (what a rollback goes back to)
    gate: dict[str, Any] | None = None  # GateValues.to_dict() of its last window
    reason: str = ""
    updated_at: float = 0.0


@dataclass
class RingRecord:
    index: int
    name: str
    agents: list[str]
    status: str = "pending"  # pending, deploying, watching, passed, failed, skipped
    gate: dict[str, Any] | None = None
    started: float | None = None
    ended: float | None = None


@dataclass
class RolloutState:
    fleet: str
    fleet_path: str
    bundle: str
    bundle_name: str
    bundle_version: str
    plan: str
    tier: str
    watch_s: float
    on_down: str = "skip"  # skip | block
    probe_rps: float = 5.0
    p95_ms: float | None = None
    p99_ms: float | None = None
    tiers_file: str | None = None
    models: list[str] = field(default_factory=list)  # served model names, from the first deploy
    status: str = "running"
    ring: int = 0  # the ring in progress (len(rings) once all passed)
    rings: list[RingRecord] = field(default_factory=list)
    agents: dict[str, AgentRow] = field(default_factory=dict)
    events: list[FleetEvent] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    runner_pid: int | None = None
    started: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RolloutState:
        d = dict(d)
        d["rings"] = [RingRecord(**r) for r in d.get("rings", [])]
        d["agents"] = {k: AgentRow(**a) for k, a in d.get("agents", {}).items()}
        d["events"] = [FleetEvent(**e) for e in d.get("events", [])]
        known = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    def updated_agents(self) -> list[AgentRow]:
        """Agents this rollout changed (what a rollback must take back)."""
        return [a for a in self.agents.values() if a.state != "rolled_back" and (
            a.state in ("updated", "watching", "passed", "rollback_failed") or a.version == self.bundle_version)]


def runner_alive(pid: int | None) -> bool:
    """Whether the process that ran the rollout still exists (a killed studio leaves a stale pid)."""
    if not pid:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (killed, not yet reaped by its parent) is not running anything
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


class RolloutStore:
    """Where one fleet's rollout lives in the workspace; every save is a temp file renamed into place."""

    def __init__(self, fleets_dir: Path, fleet: str) -> None:
        self.dir = fleets_dir / ROLLOUTS_DIR
        self.path = self.dir / f"{fleet}.json"
        self.control_path = self.dir / f"{fleet}.control"
        self.fleet = fleet

    def exists(self) -> bool:
        return self.path.is_file()

    def load(self) -> RolloutState:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(f"fleet {self.fleet} has no rollout", offending=str(self.path),
                             hint="start one with `studio fleet rollout BUNDLE --fleet "
                                  f"{self.fleet} --plan canary:1,25%,100% --gate L1`") from None
        except ValueError as exc:
            raise InputError(f"rollout state {self.path} is not valid JSON: {exc}", offending=str(self.path),
                             hint="it is written atomically; a hand edit broke it") from None
        return RolloutState.from_dict(data)

    def save(self, state: RolloutState) -> None:
        state.updated = time.time()
        write_json_atomic(self.path, state.to_dict())

    def archive(self) -> Path | None:
        """Keep the last rollout's record as FLEET.STARTED.json before a new one takes the name."""
        if not self.path.is_file():
            return None
        try:
            started = int(json.loads(self.path.read_text(encoding="utf-8")).get("started", 0))
        except (OSError, ValueError):
            started = int(time.time())
        dest = self.dir / f"{self.fleet}.{started}.json"
        os.replace(self.path, dest)
        return dest

    # -- control: pause / abort from another process -------------------------------------------------------
    def request(self, what: str) -> None:
        write_text_atomic(self.control_path, what + "\n")

    def requested(self) -> str:
        try:
            return self.control_path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return ""

    def clear_request(self) -> None:
        self.control_path.unlink(missing_ok=True)
