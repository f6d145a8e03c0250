"""Bad input to `studio fleet`: an empty fleet, duplicate agents, a plan whose percentages do not increase, a gate
naming an unknown tier: a clear error naming the offending thing, a non-zero exit, nothing deployed or saved.
Plus the plan and duration parsers and the gate's histogram quantile on their own."""

from __future__ import annotations

import math

import pytest

from studio.core.errors import InputError
from studio.core.workspace import Workspace
from studio.fleet import api
from studio.fleet.fleet_file import fleet_path, load_fleet
from studio.fleet.gate import bucket_quantile
from studio.fleet.plan import parse_duration, parse_plan, resolve_rings
from studio.fleet.rollout_state import RolloutStore
from tests.edge.helpers import AgentProcess
from tests.fleet.conftest import Lab


def test_plans_and_durations() -> None:
    names = [f"a{i}" for i in range(8)]
    rings, notes = resolve_rings(parse_plan("canary:1,25%,100%"), names, {})
    assert [(r.name, r.agents) for r in rings] == [("canary", ["a0"]), ("25%", ["a1"]), ("100%", names[2:])]
    rings, notes = resolve_rings(parse_plan("1,10%,50%"), names, {})  # 10% of 8 adds nobody after 1: merged
    assert [len(r.agents) for r in rings] == [1, 3] and "merged" in notes[0] and "stops at 4 of 8" in notes[1]
    labels = {n: ("canary" if n == "a0" else "main") for n in names}
    rings, _ = resolve_rings(parse_plan("rings:canary,main"), names, labels)
    assert [len(r.agents) for r in rings] == [1, 7]
    assert parse_duration("60s") == 60 and parse_duration("2m") == 120 and parse_duration("500ms") == 0.5
    for bad in ("0s", "fast", "-1s", "10 parsecs"):
        with pytest.raises(InputError, match="not a duration"):
            parse_duration(bad)
    for bad, words in (("canary:1,50%,25%", "percentages do not increase"), ("canary:2,1", "counts do not increase"),
                       ("canary:1,,100%", "empty ring"), ("canary:0,100%", "out of range"),
                       ("canary:1,150%", "out of range"), ("waves:1", "unknown plan kind")):
        with pytest.raises(InputError, match=words):
            parse_plan(bad)
    with pytest.raises(InputError, match="no agent has ring label 'beta'"):
        resolve_rings(parse_plan("rings:canary,beta"), names, labels)


def test_bucket_quantile() -> None:
    b = {0.001: 50.0, 0.01: 90.0, 0.1: 100.0, math.inf: 100.0}
    assert bucket_quantile(0.5, b) == pytest.approx(0.001)
    assert bucket_quantile(0.95, b) == pytest.approx(0.01 + 0.09 * 0.5)
    assert bucket_quantile(0.95, {0.1: 0.0, math.inf: 0.0}) is None


def test_fleet_file_errors_name_the_field(tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "f.yaml"
    p.write_text("name: f\nagents:\n  - {name: a, url: 'http://127.0.0.1:1'}\n  - {name: b, url: 'http://127.0.0.1:1/'}\n")
    with pytest.raises(InputError, match=r"agents\[1\] has the same url as agents\[0\]") as e:
        load_fleet(p)
    assert e.value.offending == f"{p}:4: agents[1].url"
    p.write_text("name: f\nagents:\n  - {name: a, url: 'ftp://x'}\n")
    with pytest.raises(InputError, match="must start with http") as e:
        load_fleet(p)
    assert e.value.offending == f"{p}:3: agents[0].url"
    p.write_text("name: f\nagents:\n  - {name: a, url: 'http://x:1', lables: {}}\n")
    with pytest.raises(InputError, match="unknown keys"):
        load_fleet(p)


def _nothing_happened(lab: Lab, store: RolloutStore, before: list[str | None]) -> None:
    assert not store.path.exists()
    assert lab.active("input") == before


def test_bad_rollouts_deploy_nothing(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    lab.deploy_all("input", "1")
    bundle = str(lab.bundle("input", "2"))
    store = RolloutStore(lab.ws.root / "fleets", "lab")
    if store.path.exists():  # an earlier test's finished rollout
        store.path.unlink()
    before = lab.active("input")
    base = ["rollout", bundle, "--fleet", "lab", "--watch", "1s"]
    for extra, words in ((["--plan", "canary:1,50%,25%", "--gate", "L1"], "percentages do not increase"),
                         (["--plan", "canary:1,100%", "--gate", "L9"], "unknown SLA tier 'L9'"),
                         (["--plan", "canary:1,100%", "--gate", "L1", "--watch", "soon"], "not a duration")):
        assert lab.cli(*base, *extra) == 2
        err = capsys.readouterr().err
        assert words in err and "hint:" in err, err
        _nothing_happened(lab, store, before)
    # an empty fleet, and one with the same agent twice
    ws: Workspace = lab.ws
    assert lab.cli("init", "empty") == 0
    assert lab.cli(*base[:2], "--fleet", "empty", "--plan", "canary:1,100%", "--gate", "L1") == 2
    assert "fleet empty has no agents" in capsys.readouterr().err
    assert not RolloutStore(ws.root / "fleets", "empty").path.exists()
    dup = fleet_path(ws, "lab").read_text().replace("name: lab", "name: twice")
    dup += dup[dup.index("- name: a0"):dup.index("- name: a1")].replace("name: a0", "name: a0-again")
    fleet_path(ws, "twice").write_text(dup)
    assert lab.cli(*base[:2], "--fleet", "twice", "--plan", "canary:1,100%", "--gate", "L1") == 2
    err = capsys.readouterr().err
    assert "the same url as agents[0]" in err and "twice.yaml:" in err and "agents[8].url" in err, err
    assert lab.active("input") == before
    # the CLI's add refuses a duplicate too, and leaves the file as it was
    text = fleet_path(ws, "lab").read_text()
    assert lab.cli("add", lab.agents[0].url + "/", "--fleet", "lab", "--name", "other") == 2
    assert "same url" in capsys.readouterr().err and fleet_path(ws, "lab").read_text() == text
    with pytest.raises(InputError, match="no rollout"):
        api.load_rollout(ws, "empty")


def test_discovered_agent_with_an_inference_token(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    """`add --discover` finds a real mDNS agent; one that wants an inference token gets it from the fleet file,
    so the probe's requests count in its gate."""
    from tests.edge.helpers import write_token

    infer = write_token(lab.root / "infer.token")
    agent = AgentProcess(lab.root / "mdns-agent", lab.dev.trust, lab.dev.token, mdns=True,
                         extra=["--name", "fleet mdns test", "--infer-token-file", str(infer)]).start()
    try:
        assert lab.cli("init", "disc", "--token-file", str(lab.dev.token)) == 0
        for _ in range(3):  # mDNS answers can take a browse or two on a busy machine
            assert lab.cli("add", "--discover", "--loopback", "--fleet", "disc", "--label", "site=loopback") == 0
            f = load_fleet(fleet_path(lab.ws, "disc"))
            mine = [a for a in f.agents if a.url == agent.url]
            if mine:
                break
        assert mine and mine[0].name.startswith("fleet-mdns-test"), capsys.readouterr().out
        assert mine[0].labels == {"board": "generic-x86_64", "site": "loopback"}
        assert any(d.url == agent.url and d.kind == "agent" for d in Workspace.open(lab.ws.root).devices)
        assert lab.cli("remove", mine[0].name, "--fleet", "disc") == 0
        assert all(a.url != agent.url for a in load_fleet(fleet_path(lab.ws, "disc")).agents)
        assert lab.cli("init", "secured") == 0
        assert lab.cli("add", agent.url, "--fleet", "secured", "--token-file", str(lab.dev.token),
                       "--infer-token-file", str(infer)) == 0
        from studio.package.client import deploy_bundle

        deploy_bundle(lab.bundle("input", "1"), agent.url, lab.dev.token.read_text().strip())
        st = api.start_rollout(lab.ws, "secured", lab.bundle("input", "2"), plan="canary:1", gate="L1",
                               watch="1s", probe_rps=10).run()
        assert st.status == "succeeded", [e.message for e in st.events]
        gate = st.rings[0].gate
        assert gate and gate["requests"] > 0 and gate["requests"] >= gate["probe_sent"] - 1, gate
    finally:
        agent.stop()
