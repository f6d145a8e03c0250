"""Dashboards take their targets from Devices (real Qt offscreen): a real edge agent serving a signed bundle and
the real local tritonserver, recorded in the shared state the way the Triton page records the server it
started (URL, metrics URL, pid). The devices choice lists them with their states, "Add all connected" makes one
target each, and a short load on both shows each target's memory and CPU from its own source: the agent's
process_* series, Triton's nv_cpu_* plus the tritonserver's pid, never the GUI's process."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytest.importorskip("tritonclient")


from studio.core.workspace import DeviceEntry, Workspace  # noqa: E402
from studio.gui.triton.local_server import device_entry  # noqa: E402
from studio.telemetry import samples as S  # noqa: E402
from tests.edge.helpers import PASSPHRASE, AgentProcess, deploy_tiny, dev_keys, free_port  # noqa: E402
from tests.gui.gui_helpers import main_window  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.triton, pytest.mark.timeout(300),
              pytest.mark.qt_log_level_fail("WARNING"), pytest.mark.qt_log_ignore("propagateSizeHints")]

SPECS = [("studio.gui.pages.devices_page", "DevicesPage"), ("studio.gui.pages.dashboards_page", "DashboardsPage")]


@pytest.fixture(autouse=True)
def _collect_the_page_here():  # type: ignore[no-untyped-def]
    """pyqtgraph items are reference cycles: collect them on the GUI thread (see test_dashboards_page.py)."""
    yield
    from PySide6.QtCore import QCoreApplication, QEvent

    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AgentProcess]:
    """A real studio-agent on loopback serving model "tiny" from a bundle signed and deployed here."""
    monkeypatch.setenv("STUDIO_KEY_PASSPHRASE", PASSPHRASE)
    dev = dev_keys(tmp_path)
    a = AgentProcess(tmp_path / "agent-data", dev.trust, dev.token).start()
    deploy_tiny(a, dev, tmp_path)
    yield a
    a.stop()


@pytest.fixture
def triton(tmp_path: Path):  # type: ignore[no-untyped-def]
    """The real CPU tritonserver serving "mlp" (Python backend + ONNX Runtime), as the Triton page starts it."""
    from studio.triton.repo_builder import BuildOptions, build_repo
    from studio.triton.server import LocalTritonServer
    from tests.telemetry.kserve_server import build_mlp

    model = build_mlp(tmp_path / "mlp.onnx")
    build_repo(BuildOptions(model, tmp_path / "repo", "mlp", flavor="python"))
    srv = LocalTritonServer(tmp_path / "repo", model_control_mode="explicit", load_models=["mlp"])
    srv.start()
    yield srv
    srv.stop()
    srv.cleanup()


def test_targets_from_devices_watch_each_servers_own_process(qtbot, tmp_path: Path, agent: AgentProcess, triton,
                                                             artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    ws = Workspace.create(tmp_path / "ws", name="dash-devices")
    w = main_window(qtbot, ws, SPECS, 1366, 768)
    state, dash = w.state, w.page("dashboards")
    picker = dash.device_picker
    assert picker.names() == [] and not picker.add_btn.isEnabled() and not picker.all_btn.isEnabled()

    # three devices in the shared state: the local tritonserver as the Triton page records it, the agent as
    # Edge agents adds it, and an agent that is down
    state.add_device(device_entry(triton))
    token_file = str(tmp_path / "agent.token")
    state.add_device(DeviceEntry("edge", agent.url, "agent", extra={"token_file": token_file}))
    down = f"http://127.0.0.1:{free_port()}"
    state.add_device(DeviceEntry("gone", down, "agent"))
    assert picker.names() == ["local-triton", "edge", "gone"]  # listed at once, before any poll answers
    qtbot.waitUntil(lambda: state.device_state("local-triton").ok and state.device_state("edge").ok
                    and state.device_state("gone").down, timeout=60_000)
    qtbot.waitUntil(lambda: "mlp" in state.device_state("local-triton").models
                    and "tiny" in state.device_state("edge").models, timeout=30_000)
    qtbot.waitUntil(lambda: picker.labels() == ["local-triton (Triton, ok)", "edge (agent, ok)",
                                                 "gone (agent, refused)"], timeout=10_000)
    assert picker.all_btn.isEnabled()

    # a device that lists no model is refused in place, naming the control
    problems: list = []
    dash.sig_problem.connect(problems.append)
    picker.choose("gone")
    picker.add_btn.click()
    assert not dash.targets and problems and problems[-1].location == "Targets from Devices"
    assert "gone lists no model" in problems[-1].message

    # Add all connected: one target per connected device, each with its own URL, model, metrics URL and pid
    picker.all_btn.click()
    assert [(t.device, t.model) for t in dash.targets] == [("local-triton", "mlp"), ("edge", "tiny")]
    assert dash.targets_list.count() == 2
    got = {src.device: src for src in dash.target_sources()}
    tri, edge = got["local-triton"], got["edge"]
    assert (tri.url, tri.metrics_url, tri.server_pid, tri.kind) == (triton.http_url, triton.metrics_url,
                                                                   triton.proc.pid, "triton")
    assert (edge.url, edge.metrics_url, edge.server_pid, edge.kind) == (agent.url, agent.url + "/metrics", None,
                                                                       "agent")
    assert f"server pid {triton.proc.pid}" in dash.targets_list.item(0).toolTip()
    picker.choose("edge")
    picker.add_btn.click()  # the same device and model again: not a second target
    assert len(dash.targets) == 2
    w.go_to_page("dashboards")
    w.grab().save(str(artifacts_dir / "dashboards_targets_from_devices.png"))

    # a short load on both: each target's memory and CPU from its own source, never this (the GUI's) process
    dash.level_edit.setText("1")
    dash.duration.setValue(1.0)
    dash.start_runs()
    qtbot.waitUntil(lambda: len(dash.reports) == 2, timeout=90_000)
    by_url = {r.url: r.target for r in dash.reports.values()}
    t_tri, t_edge = by_url[triton.http_url], by_url[agent.url]
    src = dash.store.sources
    assert src[(t_tri, S.PROC_RSS)] == src[(t_tri, S.PROC_CPU)] == f"psutil pid {triton.proc.pid}"
    assert src[(t_tri, S.MEM_PCT)] == src[(t_tri, S.CPU_PCT)] == f"triton-metrics {triton.metrics_url}"
    assert dash.store.latest[(t_tri, S.PROC_RSS)] and dash.store.latest[(t_tri, S.MEM_PCT)]
    for series in (S.PROC_RSS, S.PROC_CPU, S.MEM_PCT, S.CPU_PCT):
        assert src[(t_edge, series)] == f"agent-metrics {agent.url}/metrics", series
    assert dash.store.latest[(t_edge, S.PROC_RSS)]
    assert not any(v == f"psutil pid {os.getpid()}" for v in src.values())
    assert not any(v.startswith("psutil") for (t, _s), v in src.items() if t == t_edge)
    w.grab().save(str(artifacts_dir / "dashboards_targets_from_devices_run.png"))

    # the targets list can be emptied; a typed target at a device's URL is that device's
    dash.clear_targets()
    assert not dash.targets and dash.targets_list.count() == 0
    dash.add_target(agent.url, "tiny")
    assert dash.targets[0].device == "edge" and dash.target_sources()[0].metrics_url == agent.url + "/metrics"
    w.close()
