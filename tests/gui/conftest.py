"""Fixtures of the GUI tests: a real X display with a window manager (Xvfb + openbox)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

SCREEN = (1366, 768)
TOOLS = ("Xvfb", "openbox", "xdotool")


def _free_display() -> int:
    for n in range(90, 140):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            return n
    pytest.skip("no free X display number")


@pytest.fixture
def desktop():  # type: ignore[no-untyped-def]
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (Debian: apt-get install xvfb openbox xdotool)")
    n = _free_display()
    xvfb = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", f"{SCREEN[0]}x{SCREEN[1]}x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = {**os.environ, "DISPLAY": f":{n}"}
    env.pop("QT_QPA_PLATFORM", None)
    deadline = time.monotonic() + 10
    while not Path(f"/tmp/.X11-unix/X{n}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    wm = subprocess.Popen(["openbox"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    yield env
    wm.terminate()
    xvfb.terminate()
    wm.wait(10)
    xvfb.wait(10)


@pytest.fixture
def board(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A board's agent, set up by its owner: their key trusted, pushing keys allowed, a token to copy."""
    from studio.package.keys import KeyStore
    from tests.edge.helpers import AgentProcess, trust_key, write_token

    trust = trust_key(KeyStore(tmp_path / "owner-keys"), "owner", "x", tmp_path / "owner.pub")
    token = write_token(tmp_path / "board.token")
    agent = AgentProcess(tmp_path / "agent-data", trust, token, extra=["--allow-trust-push"]).start()
    yield agent, token
    agent.stop()


@pytest.fixture
def devices_window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    """The main window with only the Devices page, on a fresh workspace (its pollers stopped afterwards)."""
    from PySide6.QtWidgets import QApplication

    from studio.core.settings import Settings
    from studio.core.workspace import Workspace
    from studio.gui.main_window import MainWindow
    from studio.gui.theme import apply_theme

    apply_theme(QApplication.instance(), "light")
    ws = Workspace.create(tmp_path / "ws", name="devices")
    w = MainWindow(ws, settings=Settings.load(), page_specs=[("studio.gui.pages.devices_page", "DevicesPage")],
                   restore_state=False)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.page("devices").shutdown()
    w.close()
