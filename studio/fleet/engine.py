"""The rollout engine: ring by ring, deploy through the studio's deploy client, watch the ring's live metrics for
the window, promote when the gate holds, halt and roll back every updated agent when it breaks.

Qt-free and observable: ``subscribe(listener)`` hears every :class:`FleetEvent` with the state after it (rows per
agent, rings, the timeline); a ``JobState`` gets status and progress, and its cancel pauses the rollout at the
next safe point (``studio fleet resume`` goes on). The state is saved after every step, so a killed studio can
resume or say where it stopped.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from studio.core.catalogue import N_
from studio.core.errors import StudioError
from studio.core.jobs import JobState
from studio.fleet import agent_ops
from studio.fleet.agent_ops import AgentDown
from studio.fleet.fleet_file import ResolvedAgent
from studio.fleet.gate import (
    MIN_AGENT_REQUESTS,
    MetricsSample,
    combine,
    fetch_sample,
    judge,
    measures,
    tls_context,
)
from studio.fleet.probe import Probe, ProbeCount, probe_bodies
from studio.fleet.rollout_state import AgentRow, FleetEvent, RingRecord, RolloutState, RolloutStore
from studio.telemetry.sla import FAIL, PASS, LatencyBudget, get_tier

Listener = Callable[[FleetEvent, RolloutState], None]
TICK_S = 0.1  # how often the watch looks at pause / abort / cancel


class _Stop(Exception):
    """Leave the run loop at a safe point: ``what`` is pause, abort or block (the state says the rest)."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class RolloutEngine:
    """Runs (or resumes) one rollout; ``run()`` returns the final state and never raises for a broken gate."""

    def __init__(self, state: RolloutState, agents: list[ResolvedAgent], store: RolloutStore,
                 job: JobState | None = None, deploy_workers: int = 8) -> None:
        self.state, self.store, self.job = state, store, job or JobState(name="fleet rollout")
        self.agents = {a.name: a for a in agents}
        self.tier, self.cost = get_tier(state.tier, state.tiers_file)
        self.budget = LatencyBudget(state.p95_ms, state.p99_ms)
        self.deploy_workers = deploy_workers
        self._listeners: list[Listener] = []
        self._lock = threading.RLock()
        self._want = ""  # in-process pause / abort (the GUI's buttons)

    # -- observing ---------------------------------------------------------------------------------------------
    def subscribe(self, listener: Listener) -> None:
        """``listener(event, state)`` after every event, from the engine's threads (deploys run in a pool): a GUI
        queues it onto its own thread (studio.gui.state_qt does the same for StudioState)."""
        self._listeners.append(listener)

    def emit(self, kind: str, message: str, agent: str | None = None, ring: int | None = None,
             **data: object) -> FleetEvent:
        with self._lock:
            ev = FleetEvent(time.time(), kind, message, agent, ring, dict(data))
            self.state.events.append(ev)
            self.store.save(self.state)
        self.job.log(message)
        for listener in list(self._listeners):
            listener(ev, self.state)
        return ev

    def _row(self, name: str, **changes: object) -> AgentRow:
        with self._lock:
            row = self.state.agents[name]
            for k, v in changes.items():
                setattr(row, k, v)
            row.updated_at = time.time()
            return row

    # -- control -----------------------------------------------------------------------------------------------
    def pause(self) -> None:
        self._want = "pause"

    def abort(self) -> None:
        self._want = "abort"

    def _check(self) -> None:
        want = self._want or self.store.requested() or ("pause" if self.job.cancel_requested else "")
        if want in ("pause", "abort"):
            raise _Stop(want)

    # -- the run -----------------------------------------------------------------------------------------------
    def run(self) -> RolloutState:
        st = self.state
        if st.finished:
            return st
        self.store.clear_request()
        resumed = st.runner_pid is not None
        st.runner_pid, st.status = os.getpid(), "running"
        self.emit("resumed" if resumed else "started",
                  f"{'resuming' if resumed else 'rolling out'} {st.bundle_name} {st.bundle_version} to fleet "
                  f"{st.fleet}: {len(st.rings)} rings, gate {st.tier}, watch {st.watch_s:g} s", ring=st.ring)
        try:
            while st.ring < len(st.rings):
                self._check()
                ring = st.rings[st.ring]
                self.job.set_progress(100.0 * st.ring / len(st.rings), force=True)
                if not self._ring(ring):
                    return self._rollback_all(N_(f"the gate broke at ring {ring.name}"), "rolled_back")
                st.ring += 1
            st.status = "succeeded"
            self.job.set_progress(100.0, force=True)
            self.emit("finished", f"{st.bundle_name} {st.bundle_version} reached every ring "
                      f"({sum(a.state == 'passed' for a in st.agents.values())} agents)")
        except _Stop as stop:
            if stop.what == "abort":
                return self._rollback_all(N_("aborted"), "aborted")
            if stop.what == "pause":
                st.status = "paused"
                self.store.clear_request()
                self.emit("paused", f"paused at ring {st.rings[st.ring].name}; `studio fleet resume` goes on",
                          ring=st.ring)
        return st

    def _ring(self, ring: RingRecord) -> bool:
        """Deploy to the ring's agents and watch it: True when the gate holds."""
        st = self.state
        if ring.started is None or ring.status == "pending":
            ring.started = time.time()
        ring.status = "deploying"
        self.emit("ring_started", f"ring {ring.index + 1}/{len(st.rings)} ({ring.name}): "
                  f"{', '.join(ring.agents)}", ring=ring.index)
        todo = [n for n in ring.agents if st.agents[n].state not in ("updated", "watching", "passed", "skipped")]
        failed: list[str] = []
        with ThreadPoolExecutor(max_workers=max(1, min(self.deploy_workers, len(todo) or 1))) as pool:
            for name, ok in zip(todo, pool.map(self._deploy_one, todo), strict=True):
                if not ok:
                    failed.append(name)
        self._check()
        if failed:
            ring.status, ring.ended = "failed", time.time()
            self.emit("ring_failed", f"ring {ring.name}: the bundle failed on {', '.join(failed)}", ring=ring.index)
            return False
        if any(st.agents[n].state == "down" for n in ring.agents):  # policy block
            self._block(ring)
        live = [n for n in ring.agents if st.agents[n].state in ("updated", "watching", "passed")]
        if not live:
            ring.status, ring.ended = "skipped", time.time()
            self.emit("note", f"ring {ring.name}: no agent up to watch (all skipped); going on", ring=ring.index)
            return True
        return self._watch(ring, live)

    def _block(self, ring: RingRecord) -> None:
        down = [n for n in ring.agents if self.state.agents[n].state == "down"]
        self.state.status = "blocked"
        self.emit("blocked", f"ring {ring.name} blocked: {', '.join(down)} down (--on-down block); bring it back "
                  "and `studio fleet resume`, or `studio fleet abort`", ring=ring.index, agents=down)
        raise _Stop("block")

    def _down(self, name: str, why: str) -> None:
        st = self.state
        reason = why  # the probe's words, translated inside the row's reason where it is shown ({reason})
        if st.on_down == "skip":
            self._row(name, state="skipped", reason=N_(f"down: {reason}"))
            self.emit("skipped", f"{name} is down, skipped (--on-down skip): {why}", agent=name,
                      ring=st.agents[name].ring)
        else:
            self._row(name, state="down", reason=N_(f"down: {reason}"))
            self.emit("down", f"{name} is down: {why}", agent=name, ring=st.agents[name].ring)

    def _deploy_one(self, name: str) -> bool:
        """Deploy to one agent; False when the bundle itself failed there (refused, warm-up failed)."""
        st, agent = self.state, self.agents[name]
        try:
            self._check()
        except _Stop:
            return True  # left pending: the run loop stops after the pool
        self._row(name, state="deploying", reason="")
        self.emit("deploying", f"deploying {st.bundle_name} {st.bundle_version} to {name}", agent=name,
                  ring=st.agents[name].ring)
        try:
            out = agent_ops.deploy(agent, Path(st.bundle), st.bundle_name, st.bundle_version)
        except AgentDown as exc:
            self._down(name, exc.message)
            return True
        except StudioError as exc:
            self._row(name, state="failed", reason=exc.message)
            self.emit("failed", f"{name} refused {st.bundle_name} {st.bundle_version}: {exc.message}", agent=name,
                      ring=st.agents[name].ring, error=exc.to_dict())
            return False
        row = st.agents[name]
        self._row(name, state="updated", version=out.version,
                  previous=row.previous if row.previous is not None else out.previous)
        with self._lock:
            if not st.models and out.served_models:
                st.models = list(out.served_models)
        self.emit("updated", f"{name}: {st.bundle_name} {out.version} active ({out.how}; was "
                  f"{out.previous or '-'})", agent=name, ring=row.ring, how=out.how)
        return True

    # -- the watch window --------------------------------------------------------------------------------------
    def _watch(self, ring: RingRecord, live: list[str]) -> bool:
        st = self.state
        models = st.models or [st.bundle_name]
        ring.status = "watching"
        before: dict[str, MetricsSample] = {}
        for name in live:
            try:
                before[name] = fetch_sample(self.agents[name].url, models, self.agents[name].verify)
                self._row(name, state="watching")
            except StudioError as exc:
                self._down(name, exc.message)
        if any(st.agents[n].state == "down" for n in ring.agents):
            self._block(ring)
        probe = self._probe([n for n in live if n in before], models[0])
        self.emit("watch", f"watching ring {ring.name} for {st.watch_s:g} s ({len(before)} agents, probe "
                  f"{st.probe_rps:g} req/s each)", ring=ring.index)
        t_end = time.monotonic() + st.watch_s
        try:
            while time.monotonic() < t_end:
                self._check()
                time.sleep(min(TICK_S, max(0.0, t_end - time.monotonic())))
        finally:
            counts = probe.stop()
        deltas, values = [], {}
        for name, b in before.items():
            c = counts.get(name, ProbeCount())
            try:
                d = fetch_sample(self.agents[name].url, models, self.agents[name].verify) - b
            except StudioError as exc:
                self._down(name, exc.message)
                continue
            deltas.append((d, c))
            v = judge(measures(d, c.failed), self.tier, self.budget, self.cost, c.sent, c.failed)
            if v.requests < MIN_AGENT_REQUESTS:
                v.note = f"{v.requests} requests: judged within the ring, not alone (under {MIN_AGENT_REQUESTS})"
            values[name] = v
            self._row(name, gate=v.to_dict())
        if any(st.agents[n].state == "down" for n in ring.agents):
            self._block(ring)
        if not deltas:
            ring.status, ring.ended = "skipped", time.time()
            self.emit("note", f"ring {ring.name}: every agent went down in the window (skipped); going on",
                      ring=ring.index)
            return True
        total = judge(measures(combine([d for d, _ in deltas]), sum(c.failed for _, c in deltas)), self.tier,
                      self.budget, self.cost, sum(c.sent for _, c in deltas), sum(c.failed for _, c in deltas))
        bad = {n: v for n, v in values.items() if v.verdict == FAIL and not v.note}
        ok = total.verdict == PASS and not bad
        ring.gate, ring.ended = total.to_dict(), time.time()
        why = "; ".join([*total.failed, *(f"{n}: {', '.join(v.failed)}" for n, v in bad.items())])
        self.emit("gate", f"gate {st.tier} on ring {ring.name}: {'holds' if ok else 'broken'} "
                  f"({total.requests} requests, {total.errors} errors, p95 {_ms(total.p95_ms)}, p99 "
                  f"{_ms(total.p99_ms)})" + ("" if ok else f": {why}"), ring=ring.index, verdict=total.verdict,
                  gate=total.to_dict(), agents={n: v.to_dict() for n, v in values.items()})
        if not ok:
            ring.status = "failed"
            self.emit("ring_failed", f"ring {ring.name} failed the gate", ring=ring.index)
            return False
        ring.status = "passed"
        for name in values:
            self._row(name, state="passed")
        self.emit("ring_passed", f"ring {ring.name} passed; promoting", ring=ring.index)
        return True

    def _probe(self, names: list[str], model: str) -> Probe:
        st = self.state
        if st.probe_rps <= 0 or not names:
            return Probe({}, 0).start()
        first = self.agents[names[0]]
        try:
            bodies = probe_bodies(first.url, model, tls_context(first.verify), first.infer_token())
        except StudioError as exc:
            self.emit("note", f"no probe traffic: {exc.message}", ring=st.ring)
            return Probe({}, 0).start()
        targets = {n: (f"{self.agents[n].url}/v2/models/{model}/infer", bodies) for n in names}
        verify = {n: tls_context(self.agents[n].verify) for n in names}
        tokens = {n: self.agents[n].infer_token() for n in names}
        return Probe(targets, st.probe_rps, verify=verify, token=tokens).start()

    # -- rollback ----------------------------------------------------------------------------------------------
    def rollback_all(self, reason: str) -> RolloutState:
        """Take every updated agent back to the version it had before (``studio fleet abort``)."""
        return self._rollback_all(reason, "aborted")

    def _rollback_all(self, reason: str, status: str) -> RolloutState:
        st = self.state
        todo = st.updated_agents()
        self.emit("rollback", f"{reason}: rolling back {len(todo)} updated agents "
                  f"({', '.join(a.name for a in todo) or 'none'})", ring=st.ring)
        failed = []
        for row in todo:
            agent = self.agents.get(row.name)
            try:
                if agent is None:
                    raise StudioError(f"{row.name} is no longer in the fleet file", offending=row.name)
                now = agent_ops.rollback(agent, st.bundle_name, row.previous, st.bundle_version)
            except StudioError as exc:
                failed.append(row.name)
                self._row(row.name, state="rollback_failed", reason=exc.message)
                self.emit("rollback_failed", f"{row.name}: rollback failed: {exc.message}", agent=row.name,
                          ring=row.ring)
                continue
            self._row(row.name, state="rolled_back", version=now)
            self.emit("rolled_back", f"{row.name}: back on {st.bundle_name} {now}", agent=row.name, ring=row.ring)
        st.status = "rollback_incomplete" if failed else status
        self.store.clear_request()
        if failed:  # two sentences, not one with an optional tail: {reason} stays one value to translate
            self.emit("finished", f"rollout {st.status}: {reason}; not rolled back: {', '.join(failed)} "
                                  "(`studio fleet abort` tries again)")
        else:
            self.emit("finished", f"rollout {st.status}: {reason}")
        return st


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f} ms"
