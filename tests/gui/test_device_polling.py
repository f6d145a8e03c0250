"""Device polling that holds: each row from its own device's latest poll, with the CPUs saturated, across a
restart with restored devices, a device that goes down mid-poll and comes back, and a wrong token fixed in place.
Real agent processes, real ports, real Qt (offscreen)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from studio.core.workspace import DeviceEntry, Workspace
from studio.gui.main_window import MainWindow
from studio.gui.pages.devices_page import DevicesPage
from tests.edge.conftest import agent, keys, token_file, trust_file  # noqa: F401  (the real agent process)
from tests.edge.helpers import AgentProcess, free_port_with

pytestmark = [pytest.mark.gui, pytest.mark.timeout(400)]
ROOT = Path(__file__).resolve().parents[2]

# what each kind of device must read, whatever its port number holds
EXPECTED = {
    "ok": "-  connected",
    "token": "-  disconnected: token rejected (HTTP 401)",
    "tls": "-  disconnected: TLS mismatch: the server speaks plain HTTP",
    "down": "-  disconnected: connection refused",
}
STATES = {"ok": "ok", "token": "token", "tls": "tls", "down": "refused"}


def _row(page: DevicesPage, name: str) -> str:
    for i in range(page.server_list.count()):
        item = page.server_list.item(i)
        if item.data(Qt.ItemDataRole.UserRole) == name:
            return item.text().split("\n")[0]
    return ""


def _devices(agent_url: str, right: Path, wrong: Path) -> list[DeviceEntry]:
    return [DeviceEntry("ok", agent_url, "agent", extra={"token_file": str(right)}),
            DeviceEntry("token", agent_url.replace("127.0.0.1", "localhost"), "agent",
                        extra={"token_file": str(wrong)}),
            DeviceEntry("tls", agent_url.replace("http://", "https://"), "agent"),
            DeviceEntry("down", f"http://127.0.0.1:{free_port_with('401')}", "agent")]


@pytest.fixture
def burners() -> Iterator[None]:
    """Two CPU-bound processes beside the test (CI's two cores, loaded)."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    yield
    for p in procs:
        p.kill()
        p.wait()


@pytest.fixture
def window(devices_window):  # type: ignore[no-untyped-def]
    return devices_window


@pytest.fixture
def agent_on_401(tmp_path: Path, trust_file: Path, token_file: Path) -> Iterator[AgentProcess]:  # noqa: F811
    """A real agent on a port whose number holds 401 (its TLS failure once read as a rejected token)."""
    a = AgentProcess(tmp_path / "agent-401", trust_file, token_file)
    a.port = free_port_with("401")
    yield a.start()
    a.stop()


def test_rows_hold_for_20_rounds_with_the_cpus_saturated(qtbot, window: MainWindow, agent_on_401, burners,
                                                         tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    devices = window.page("devices")
    devices.timer.setInterval(300)
    wrong = tmp_path / "wrong.token"
    wrong.write_text("not-the-agents-token\n")
    for d in _devices(agent_on_401.url, agent_on_401.token_file, wrong):
        window.state.add_device(d)
    names = list(EXPECTED)
    last = {n: 0.0 for n in names}
    for rnd in range(20):
        qtbot.waitUntil(lambda: all(n in devices.snapshots and devices.snapshots[n].at > last[n] for n in names),
                        timeout=60_000)
        for n in names:
            snap = devices.snapshots[n]
            last[n] = snap.at
            assert _row(devices, n).endswith(EXPECTED[n]), \
                f"round {rnd}: {n!r} row {_row(devices, n)!r}; its own last poll: {snap.error!r} ({snap.failure})"
            assert window.state.device_state(n).state == STATES[n], (rnd, n)
        assert window.devices_label.text() == "devices: 1 ok, 3 down of 4"
    for n in names:  # a long failure message wraps in the panel: the window never needs more than a 1280 screen
        devices.server_list.setCurrentRow(names.index(n))
        qtbot.wait(50)
        assert window.minimumSizeHint().width() <= 1280, (n, window.minimumSizeHint())


def test_restart_with_restored_devices(agent, tmp_path: Path) -> None:  # noqa: F811
    """Quit and reopen twice, each time a fresh process (gevent imported anew while restored devices poll)."""
    wrong = tmp_path / "wrong.token"
    wrong.write_text("not-the-agents-token\n")
    ws = Workspace.create(tmp_path / "ws", name="restart")
    ws.devices = _devices(agent.url, agent.token_file, wrong)
    ws.save()
    env = {**os.environ, "STUDIO_CONFIG_DIR": str(tmp_path / "config"), "QT_QPA_PLATFORM": "offscreen",
           "PYTHONFAULTHANDLER": "1"}  # a crash prints every thread's stack into the assertion's stderr
    for launch in range(2):
        out = subprocess.run([sys.executable, "-m", "tests.gui.restart_probe", str(ws.root), "3"], cwd=ROOT,
                             env=env, capture_output=True, text=True, timeout=180)
        assert out.returncode == 0, out.stderr[-3000:]
        report = json.loads(out.stdout.strip().splitlines()[-1])
        for n, words in EXPECTED.items():
            assert report["rows"][n].endswith(words), (launch, n, report, out.stderr[-2000:])
            assert report["polls"][n] >= 3, (launch, report)
        assert report["toolbar"] == "devices: 1 ok, 3 down of 4", report
        for bad in ("TypeError", "_closed", "Traceback"):
            assert bad not in out.stderr, out.stderr[-3000:]


def test_a_device_down_mid_poll_comes_back(qtbot, window: MainWindow, agent) -> None:  # noqa: F811
    devices = window.page("devices")
    devices.timer.setInterval(300)
    window.state.add_device(DeviceEntry("board", agent.url, "agent", extra={"token_file": str(agent.token_file)}))
    qtbot.waitUntil(lambda: _row(devices, "board").endswith(EXPECTED["ok"]), timeout=30_000)
    agent.kill9()  # whatever poll is in flight meets a dead process
    qtbot.waitUntil(lambda: _row(devices, "board").endswith(EXPECTED["down"]), timeout=30_000)
    assert window.state.device_state("board").state == "refused"
    back = AgentProcess(agent.data, agent.trust, agent.token_file)
    back.port = agent.port  # the same address: the poller finds it again
    back.start()
    try:
        qtbot.waitUntil(lambda: _row(devices, "board").endswith(EXPECTED["ok"]), timeout=30_000)
        assert window.state.device_state("board").ok
    finally:
        back.stop()


def test_a_wrong_token_is_fixed_in_place(qtbot, window: MainWindow, agent, tmp_path: Path) -> None:  # noqa: F811
    devices = window.page("devices")
    devices.timer.setInterval(300)
    panel = devices.agents_panel
    wrong = tmp_path / "wrong.token"
    wrong.write_text("not-the-agents-token\n")
    panel.add_agent(agent.url, wrong, name="board")
    qtbot.waitUntil(lambda: _row(devices, "board").endswith(EXPECTED["token"]), timeout=30_000)
    devices.sections.setCurrentWidget(panel)
    panel.select(agent.url)
    row = panel.token_row
    assert row.isEnabled() and row.edit.text() == str(wrong)
    row.edit.setText(str(tmp_path / "missing.token"))  # a typo first: said in place, nothing saved
    row.save_btn.click()
    assert panel.error.isVisible() and "missing.token" in panel.error.text()
    assert window.state.device("board").extra["token_file"] == str(wrong)
    row.edit.setText(str(agent.token_file))
    row.save_btn.click()
    assert not panel.error.isVisible()
    qtbot.waitUntil(lambda: _row(devices, "board").endswith(EXPECTED["ok"]), timeout=30_000)
    assert [d.name for d in window.state.devices()] == ["board"]  # the same entry, not a re-added one
    assert window.state.device("board").extra["token_file"] == str(agent.token_file)
    assert Workspace.open(window.state.workspace.root).devices[0].extra["token_file"] == str(agent.token_file)


def test_shutdown_leaves_no_poller_running(qtbot, window: MainWindow, agent) -> None:  # noqa: F811
    """Closing the page waits for its pollers: a poller thread still destroying its gevent hub while the
    interpreter finalized killed a restarted studio with SIGSEGV after its window had closed."""
    import threading

    devices = window.page("devices")
    devices.timer.setInterval(300)
    window.state.add_device(DeviceEntry("board", agent.url, "agent", extra={"token_file": str(agent.token_file)}))
    qtbot.waitUntil(lambda: _row(devices, "board").endswith(EXPECTED["ok"]), timeout=30_000)
    devices.poll("board")  # one in flight as the page shuts down
    devices.shutdown()
    assert [t.name for t in threading.enumerate() if t.name.startswith("poll-")] == []
