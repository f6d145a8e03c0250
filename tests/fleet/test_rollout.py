"""Staged rollouts to eight real agents on loopback: a good bundle reaches every ring, a slow one stops at the canary
and is rolled back, an agent killed mid-rollout is skipped or blocks, a killed studio resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import numpy as np

from studio.fleet import api
from studio.fleet.rollout_state import FleetEvent, RolloutState
from tests.fleet.conftest import Lab
from tests.fleet.fleet_models import make_erroring, make_slow

WATCH = "1s"


def _start(lab: Lab, bundle: Path, **kw: object) -> api.RolloutEngine:
    opts = {"plan": "canary:1,25%,100%", "gate": "L1", "watch": WATCH, "probe_rps": 10.0, "p95_ms": 100.0, "replace": True, **kw}
    return api.start_rollout(lab.ws, "lab", bundle, **opts)  # type: ignore[arg-type]


def _why(st: RolloutState) -> str:
    return "\n".join(e.message for e in st.events)


def _infer_ok(lab: Lab, i: int, model: str) -> bool:
    body = {"inputs": [{"name": "x", "shape": [1, 16], "datatype": "FP32", "data": np.ones(16).tolist()}]}
    return httpx.post(f"{lab.agents[i].url}/v2/models/{model}/infer", json=body, timeout=30).status_code == 200


def test_good_bundle_reaches_every_ring(lab: Lab) -> None:
    lab.deploy_all("good", "1")
    engine = _start(lab, lab.bundle("good", "2"))
    seen: list[FleetEvent] = []
    engine.subscribe(lambda ev, st: seen.append(ev))
    stop = threading.Event()

    def client() -> None:  # real traffic to the canary besides the probe: the agent's counters hold both
        while not stop.is_set():
            _infer_ok(lab, 0, "good")
            stop.wait(0.02)

    traffic = threading.Thread(target=client, daemon=True)
    traffic.start()
    try:
        st = engine.run()
    finally:
        stop.set()
        traffic.join(30)
    assert st.status == "succeeded", _why(st)
    assert [r.agents for r in st.rings] == [["a0"], ["a1"], ["a2", "a3", "a4", "a5", "a6", "a7"]]
    assert [r.status for r in st.rings] == ["passed"] * 3
    assert lab.active("good") == ["2"] * 8
    assert all(a.state == "passed" and a.version == "2" and a.previous == "1" for a in st.agents.values())
    for row in st.agents.values():  # every agent's gate saw traffic, counted by the agent itself
        assert row.gate and row.gate["requests"] > 0 and row.gate["probe_sent"] > 0, row
    canary = st.agents["a0"].gate
    assert canary and canary["requests"] > canary["probe_sent"], canary
    assert [e.kind for e in seen].count("ring_passed") == 3 and seen[-1].kind == "finished"
    again = api.load_rollout(lab.ws, "lab")[0]  # what a restarted studio reads: the same record
    assert again.status == "succeeded" and len(again.events) == len(st.events)


def test_slow_bundle_stops_at_the_canary_and_rolls_back(lab: Lab) -> None:
    lab.deploy_all("slow", "1")
    slow = lab.bundle("slow", "2", make_slow(lab.root / "src" / "slow-2" / "slow.onnx"))
    st = _start(lab, slow).run()
    assert st.status == "rolled_back", _why(st)
    assert [r.status for r in st.rings] == ["failed", "pending", "pending"]
    gate = st.rings[0].gate
    assert gate and gate["verdict"] == "fail" and gate["p95_ms"] > 100.0
    assert any("latency_p95" in f for f in gate["failed"])
    assert st.agents["a0"].state == "rolled_back" and st.agents["a0"].version == "1"
    assert all(st.agents[n].state == "pending" for n in lab.names[1:])
    assert lab.active("slow") == ["1"] * 8  # the canary is back, the rest never moved
    assert _infer_ok(lab, 0, "slow")  # and it serves
    status = httpx.get(f"{lab.agents[1].url}/agent/status", timeout=10,
                       headers={"Authorization": f"Bearer {lab.dev.token.read_text().strip()}"}).json()
    assert [v["version"] for v in status["models"]["slow"]["versions"]] == ["1"]


def test_erroring_bundle_stops_at_the_canary(lab: Lab) -> None:
    lab.deploy_all("errs", "1")
    bad = lab.bundle("errs", "2", make_erroring(lab.root / "src" / "errs-2" / "errs.onnx"))
    st = _start(lab, bad).run()
    assert st.status == "rolled_back", _why(st)
    gate = st.rings[0].gate
    assert gate and gate["errors"] > 0 and any(f.startswith("errors ") for f in gate["failed"]), gate
    assert lab.active("errs") == ["1"] * 8 and _infer_ok(lab, 0, "errs")


def test_pause_then_abort_rolls_back(lab: Lab, capsys) -> None:  # type: ignore[no-untyped-def]
    lab.deploy_all("pause", "1")
    engine = _start(lab, lab.bundle("pause", "2"))
    engine.subscribe(lambda ev, st: ev.kind == "watch" and ev.ring == 1 and lab.cli("pause", "--fleet", "lab"))
    st = engine.run()
    assert st.status == "paused" and st.rings[1].status == "watching", _why(st)
    assert lab.cli("status", "--fleet", "lab") == 0
    assert "to fleet lab: paused" in capsys.readouterr().out
    assert lab.active("pause") == ["2", "2"] + ["1"] * 6
    assert lab.cli("abort", "--fleet", "lab") == 0
    st, _ = api.load_rollout(lab.ws, "lab")
    assert st.status == "aborted" and {st.agents[n].state for n in ("a0", "a1")} == {"rolled_back"}
    assert lab.active("pause") == ["1"] * 8


def _kill_when(engine: api.RolloutEngine, lab: Lab, victims: list[int], ring: int) -> threading.Event:
    """kill -9 agents ``victims`` as soon as the watch of ring ``ring`` starts (one of the ring: in its window;
    a later ring's: before it deploys)."""
    done = threading.Event()

    def listener(ev: FleetEvent, st: RolloutState) -> None:
        if ev.kind == "watch" and ev.ring == ring and not done.is_set():
            for v in victims:
                lab.agents[v].kill9()
            done.set()

    engine.subscribe(listener)
    return done


def test_agent_killed_mid_rollout_is_skipped(alive: Lab) -> None:
    lab = alive
    lab.deploy_all("skip", "1")
    engine = _start(lab, lab.bundle("skip", "2"), on_down="skip")
    killed = _kill_when(engine, lab, victims=[1, 5], ring=1)
    st = engine.run()
    assert killed.is_set()
    assert st.status == "succeeded", _why(st)
    assert st.agents["a1"].state == "skipped" and st.agents["a1"].version == "2"  # died in its window
    assert st.rings[1].status == "skipped"
    assert st.agents["a5"].state == "skipped" and st.agents["a5"].version is None  # died before its deploy
    for n in ("a1", "a5"):
        assert "down" in st.agents[n].reason and any(e.kind == "skipped" and e.agent == n for e in st.events)
    assert all(st.agents[n].state == "passed" for n in lab.names if n not in ("a1", "a5"))


def test_agent_killed_mid_rollout_blocks_then_resumes(alive: Lab) -> None:
    lab = alive
    lab.deploy_all("block", "1")
    engine = _start(lab, lab.bundle("block", "2"), on_down="block")
    killed = _kill_when(engine, lab, victims=[7], ring=1)
    st = engine.run()
    assert killed.is_set()
    assert st.status == "blocked", _why(st)
    assert st.agents["a7"].state == "down" and st.rings[2].status == "deploying"
    assert any(e.kind == "blocked" and "a7" in e.message for e in st.events)
    lab.agents[7].start(timeout=120)  # the board is back
    st = api.resume_rollout(lab.ws, "lab").run()
    assert st.status == "succeeded", _why(st)
    assert lab.active("block") == ["2"] * 8


def test_studio_killed_mid_rollout_resumes(lab: Lab) -> None:
    lab.deploy_all("restart", "1")
    bundle = lab.bundle("restart", "2")
    cmd = [sys.executable, "-m", "studio.cli.main", "fleet", "rollout", str(bundle), "--fleet", "lab", "--plan",
           "canary:1,25%,100%", "--gate", "L1", "--watch", "2s", "--probe-rps", "10", "--replace", "--workspace", str(lab.ws.root)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:  # kill the studio in the middle of ring 2's watch window
        lines.append(line)
        if "watching ring 25%" in line:
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait(30)
    assert proc.returncode == -signal.SIGKILL, "".join(lines)
    state, _ = api.load_rollout(lab.ws, "lab")
    assert state.status == "running" and api.interrupted(state) and state.rings[1].status == "watching"
    assert lab.cli("status", "--fleet", "lab") == 0
    assert lab.cli("resume", "--fleet", "lab") == 0
    state, _ = api.load_rollout(lab.ws, "lab")
    assert state.status == "succeeded" and any(e.kind == "resumed" for e in state.events)
    assert lab.active("restart") == ["2"] * 8
    archived = list((lab.ws.root / "fleets" / "rollouts").glob("lab.*.json"))  # earlier tests' rollouts kept
    assert len(archived) >= 4 and all(api.RolloutState.from_dict(json.loads(p.read_text())).finished
                                      for p in archived)
