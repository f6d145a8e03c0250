"""The fleet rollout's entry points (what `studio fleet ...` and a GUI Fleet page call): everything a user typed is
checked before the first agent is touched, so bad input deploys nothing."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

from studio.core.errors import BundleError, InputError
from studio.core.jobs import JobState
from studio.core.workspace import Workspace
from studio.edge.manifest import Manifest
from studio.fleet.engine import RolloutEngine
from studio.fleet.fleet_file import Fleet, fleet_path, fleets_dir, load_fleet, require_agents, resolve_agents
from studio.fleet.plan import parse_duration, parse_plan, resolve_rings
from studio.fleet.rollout_state import AgentRow, RingRecord, RolloutState, RolloutStore, runner_alive

__all__ = ["RolloutEngine", "RolloutState", "abort_rollout", "bundle_identity", "interrupted", "load_rollout",
           "open_fleet", "pause_rollout", "resume_rollout", "start_rollout"]

ON_DOWN = ("skip", "block")


def open_fleet(ws: Workspace, fleet: str | Path) -> tuple[Fleet, RolloutStore]:
    f = load_fleet(fleet_path(ws, fleet))
    return f, RolloutStore(fleets_dir(ws), f.name)


def bundle_identity(bundle: Path) -> Manifest:
    """The bundle's name and version from its manifest (the agent checks the signature; this only reads)."""
    bundle = Path(bundle)
    if not bundle.is_file():
        raise InputError(f"bundle {bundle} does not exist", offending=str(bundle), hint="build one with `studio package`")
    try:
        with tarfile.open(bundle) as tf:
            f = tf.extractfile("manifest.json")
            raw = f.read() if f else b""
    except (tarfile.TarError, KeyError, OSError) as exc:
        raise BundleError(f"{bundle} is not a studio bundle: {exc}", offending=str(bundle),
                          hint="build one with `studio package`") from None
    return Manifest.parse(raw)


def start_rollout(ws: Workspace, fleet: str | Path, bundle: Path | str, *, plan: str, gate: str, watch: str | float,
                  on_down: str = "skip", probe_rps: float = 5.0, p95_ms: float | None = None,
                  p99_ms: float | None = None, tiers_file: str | None = None, job: JobState | None = None,
                  replace: bool = False) -> RolloutEngine:
    """A checked, saved, not yet started rollout; ``engine.run()`` performs it."""
    from studio.telemetry.sla import get_tier

    f, store = open_fleet(ws, fleet)
    require_agents(f)
    steps = parse_plan(plan)
    watch_s = watch if isinstance(watch, (int, float)) else parse_duration(watch)
    if watch_s <= 0:
        raise InputError(f"--watch {watch} is not positive", offending="--watch", hint="e.g. 60s")
    get_tier(gate, tiers_file)  # an unknown tier is an InputError naming the ones there are
    if on_down not in ON_DOWN:
        raise InputError(f"--on-down {on_down!r} is not a policy", offending="--on-down", hint="skip or block")
    if probe_rps < 0:
        raise InputError("--probe-rps must be 0 or more", offending="--probe-rps", hint="e.g. 5")
    for flag, v in (("--p95-ms", p95_ms), ("--p99-ms", p99_ms)):
        if v is not None and v <= 0:
            raise InputError(f"{flag} {v} is not a latency budget", offending=flag, hint="milliseconds, e.g. 50")
    bundle = Path(bundle).resolve()
    manifest = bundle_identity(bundle)
    agents = resolve_agents(f, ws)
    rings, notes = resolve_rings(steps, [a.name for a in f.agents],
                                 {a.name: a.labels.get("ring", "") for a in f.agents})
    if store.exists():
        old = store.load()
        if old.status == "running" and runner_alive(old.runner_pid) and old.runner_pid != os.getpid():
            raise InputError(f"fleet {f.name} has a rollout running in process {old.runner_pid}",
                             offending=str(store.path), hint=f"`studio fleet abort --fleet {f.name}` first")
        if not old.finished and not replace:
            raise InputError(f"fleet {f.name} has a rollout {old.status} ({old.bundle_name} {old.bundle_version})",
                             offending=str(store.path),
                             hint=f"`studio fleet resume --fleet {f.name}` or `studio fleet abort --fleet {f.name}` "
                                  "first")
    ring_of = {n: r.index for r in rings for n in r.agents}
    state = RolloutState(fleet=f.name, fleet_path=str(f.path), bundle=str(bundle), bundle_name=manifest.name,
                         bundle_version=manifest.version, plan=steps.text, tier=gate, watch_s=float(watch_s),
                         on_down=on_down, probe_rps=float(probe_rps), p95_ms=p95_ms, p99_ms=p99_ms,
                         tiers_file=tiers_file, notes=notes,
                         rings=[RingRecord(r.index, r.name, list(r.agents)) for r in rings],
                         agents={a.name: AgentRow(a.name, a.url, ring_of.get(a.name), dict(a.labels),
                                                  state="pending" if a.name in ring_of else "not in plan")
                                 for a in f.agents})
    store.clear_request()
    store.archive()
    store.save(state)
    return RolloutEngine(state, agents, store, job)


def load_rollout(ws: Workspace, fleet: str | Path) -> tuple[RolloutState, RolloutStore]:
    _, store = open_fleet(ws, fleet)
    return store.load(), store


def interrupted(state: RolloutState) -> bool:
    """Running on paper, but the studio that ran it is gone (killed, crashed, machine restarted)."""
    return state.status == "running" and not runner_alive(state.runner_pid)


def resume_rollout(ws: Workspace, fleet: str | Path, job: JobState | None = None) -> RolloutEngine:
    """The engine of a paused, blocked or interrupted rollout, reading the fleet file again (tokens, URLs)."""
    f, store = open_fleet(ws, fleet)
    state = store.load()
    if state.finished:
        raise InputError(f"the rollout of {state.bundle_name} {state.bundle_version} to {f.name} is already "
                         f"{state.status}", offending=str(store.path),
                         hint="start a new one with `studio fleet rollout`")
    if state.status == "running" and runner_alive(state.runner_pid):
        raise InputError(f"the rollout to {f.name} is running in process {state.runner_pid}",
                         offending=str(store.path), hint="`studio fleet pause` or `studio fleet abort` steer it")
    return RolloutEngine(state, resolve_agents(f, ws), store, job)


def pause_rollout(ws: Workspace, fleet: str | Path) -> str:
    """Ask the running engine to pause at its next safe point; an interrupted one is marked paused."""
    state, store = load_rollout(ws, fleet)
    if state.finished:
        raise InputError(f"the rollout is already {state.status}", offending=str(store.path))
    if runner_alive(state.runner_pid) and state.status == "running":
        store.request("pause")
        return f"pause requested: process {state.runner_pid} stops at its next safe point"
    if state.status == "running":
        state.status = "paused"
        store.save(state)
    return f"rollout {state.status} at ring {min(state.ring + 1, len(state.rings))}/{len(state.rings)}"


def abort_rollout(ws: Workspace, fleet: str | Path, job: JobState | None = None) -> tuple[str, RolloutState]:
    """Stop and roll back: the running engine does it itself; otherwise it is done here."""
    state, store = load_rollout(ws, fleet)
    if state.finished and state.status != "rollback_incomplete":
        raise InputError(f"the rollout is already {state.status}", offending=str(store.path))
    if runner_alive(state.runner_pid) and state.status == "running":
        store.request("abort")
        return f"abort requested: process {state.runner_pid} rolls back at its next safe point", state
    engine = resume_rollout(ws, fleet, job) if not state.finished else _engine_for(ws, fleet, state, store, job)
    return "aborted", engine.rollback_all("aborted by the user")


def _engine_for(ws: Workspace, fleet: str | Path, state: RolloutState, store: RolloutStore,
                job: JobState | None) -> RolloutEngine:
    f, _ = open_fleet(ws, fleet)
    return RolloutEngine(state, resolve_agents(f, ws), store, job)
