"""A device that is down says why, per row, in the Devices list and the Edge agents table (real Qt offscreen,
real failures on loopback: a port nobody listens on, a real agent process given the wrong token, https
spoken to the agent's plain-HTTP port)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from studio.core.device_failure import failure_state
from studio.core.state import DeviceState
from studio.core.workspace import DeviceEntry
from studio.gui.devices.reasons import down_reason, status_text
from studio.gui.main_window import MainWindow
from studio.gui.pages.devices_page import DevicesPage
from tests.edge.conftest import agent, keys, token_file, trust_file  # noqa: F401  (the real agent process)
from tests.edge.helpers import free_port

pytestmark = [pytest.mark.gui, pytest.mark.timeout(180)]


def _list_row(page: DevicesPage, name: str) -> tuple[str, str]:
    """The Devices list's row for ``name``: (text, tooltip)."""
    for i in range(page.server_list.count()):
        item = page.server_list.item(i)
        if item.data(Qt.ItemDataRole.UserRole) == name:
            return item.text(), item.toolTip()
    return "", ""


def _shows(page: DevicesPage, name: str, words: str):  # type: ignore[no-untyped-def]
    """A waitUntil check that, when it times out, says what the row showed instead (and the poll's error)."""
    def check() -> None:
        text, tip = _list_row(page, name)
        snap = page.snapshots.get(name)
        assert words in text, f"{name!r} row: {text!r}, tooltip {tip!r}, in flight: {page.polling(name)}, " \
                              f"last poll error: {snap.error if snap else None!r}"
    return check


def _agent_row(page: DevicesPage, url: str) -> tuple[str, str]:
    """The Edge agents table's State cell for ``url``: (text, tooltip)."""
    t = page.agents_panel.table
    for r in range(t.rowCount()):
        if t.item(r, 0).data(Qt.ItemDataRole.UserRole) == url:
            return t.item(r, 3).text(), t.item(r, 3).toolTip()
    return "", ""


@pytest.fixture
def window(devices_window):  # type: ignore[no-untyped-def]
    return devices_window


def test_the_words_for_each_failure() -> None:
    """The phrases, from messages the clients really produce (see the loopback tests below)."""
    cases = {
        "Triton server at http://127.0.0.1:9 did not answer (server metadata): [Errno 111] Connection refused":
            "connection refused",
        "agent refused: missing or wrong agent token (HTTP 401)": "token rejected (HTTP 401)",
        "agent refused: forbidden (HTTP 403)": "token rejected (HTTP 403)",
        "ConnectError: [SSL: WRONG_VERSION_NUMBER] wrong version number (_ssl.c:1006)":
            "TLS mismatch: the server speaks plain HTTP",
        "ConnectError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed": "TLS certificate not trusted",
        "ReadTimeout: timed out": "timed out",
        "Triton server at http://nosuchhost.invalid:8000 did not answer (server metadata): "
        "[Errno -2] Name or service not known": "host name not found (DNS)",
        "ConnectError: [Errno -3] Temporary failure in name resolution": "host name not found (DNS)",
        "not ready (HTTP 503)": "not ready (HTTP 503)",
    }
    for message, phrase in cases.items():
        assert down_reason(failure_state(message), message) == phrase, message
    assert status_text(DeviceState("refused", "[Errno 111] Connection refused")) == \
        "disconnected: connection refused"
    assert status_text(DeviceState("ok")) == "connected"
    assert status_text(DeviceState("connecting")) == "connecting..."


def test_refused_shows_in_the_list_and_the_agents_table(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    devices = window.page("devices")
    triton_url, agent_url = f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}"
    window.state.add_device(DeviceEntry("gone", triton_url, "triton"))
    qtbot.waitUntil(lambda: "disconnected: connection refused" in _list_row(devices, "gone")[0], timeout=20_000)
    text, tip = _list_row(devices, "gone")
    assert text.startswith("\u2716 gone") and triton_url in text and "Connection refused" in tip
    # the window's connection signal did not wipe the reason: the state keeps the failure and its detail
    assert window.state.device_state("gone").state == "refused"
    assert "Connection refused" in window.state.device_state("gone").detail

    devices.agents_panel.add_agent(agent_url)
    qtbot.waitUntil(lambda: _agent_row(devices, agent_url)[0] == "\u2716 disconnected: connection refused",
                    timeout=20_000)
    assert "Connection refused" in _agent_row(devices, agent_url)[1]
    assert "disconnected: connection refused" in _list_row(devices, agent_url.split("://")[1])[0]
    assert window.devices_label.text() == "devices: 0 ok, 2 down of 2"


def test_wrong_token_and_tls_mismatch_against_a_real_agent(qtbot, window: MainWindow, agent,  # noqa: F811
                                                           tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    devices = window.page("devices")
    devices.timer.setInterval(500)
    panel = devices.agents_panel
    wrong = tmp_path / "wrong.token"
    wrong.write_text("not-the-agents-token\n")
    panel.add_agent(agent.url, wrong, name="board")
    # the agent answers inference without a token, but its management API refuses this one: down, token
    qtbot.waitUntil(lambda: _agent_row(devices, agent.url)[0] == "\u2716 disconnected: token rejected (HTTP 401)",
                    timeout=30_000)
    assert "wrong agent token" in _agent_row(devices, agent.url)[1]
    qtbot.waitUntil(_shows(devices, "board", "disconnected: token rejected (HTTP 401)"), timeout=30_000)
    qtbot.wait(1200)  # two more polls of the Devices list: they agree with the table, no flapping to "ok"
    assert window.state.device_state("board").state == "token"
    assert _agent_row(devices, agent.url)[0] == "\u2716 disconnected: token rejected (HTTP 401)"

    # https spoken to the agent's plain-HTTP port
    tls_url = agent.url.replace("http://", "https://")
    panel.add_agent(tls_url, name="board-tls")
    qtbot.waitUntil(lambda: _agent_row(devices, tls_url)[0]
                    == "\u2716 disconnected: TLS mismatch: the server speaks plain HTTP", timeout=30_000)
    assert "SSL" in _agent_row(devices, tls_url)[1]
    qtbot.waitUntil(_shows(devices, "board-tls", "disconnected: TLS mismatch"), timeout=30_000)
    assert window.state.device_state("board-tls").state == "tls"

    # the right token: connected everywhere
    panel.add_agent(agent.url, agent.token_file, name="board")
    qtbot.waitUntil(lambda: _agent_row(devices, agent.url)[0] == "\u25cf connected", timeout=30_000)
    qtbot.waitUntil(_shows(devices, "board", "-  connected\n"), timeout=30_000)
