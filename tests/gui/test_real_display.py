"""The studio on a real X display with a window manager (Xvfb + openbox), as a user on a laptop sees it.

Offscreen Qt has a fixed 800x600 "screen" and no window manager, so it cannot show the first version's faults:
a window opened wider than the screen, and one that grew when a page filled. Here the real `studio gui` process
opens on a 1366x768 X screen under openbox; xdotool reads the window's geometry, switches pages with the
keyboard shortcuts, and a screenshot of the screen is saved. Skips with the reason where Xvfb, openbox or
xdotool are missing (`make test` installs them as root, see the Makefile's desktop-deps).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from inspect_page_models import vision_model_with_problems

from studio.core.workspace import Workspace

pytestmark = pytest.mark.gui

SCREEN = (1366, 768)


def _geometry(env: dict[str, str], timeout: float = 60) -> tuple[int, int, int, int]:
    """x, y, width, height of the studio's main window (its client area, screen coordinates)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", " - Deployment Studio$"],
                               env=env, capture_output=True, text=True)
        ids = found.stdout.split()
        if ids:
            out = subprocess.run(["xdotool", "getwindowgeometry", ids[0]], env=env, capture_output=True,
                                 text=True).stdout
            pos = re.search(r"Position: (-?\d+),(-?\d+)", out)
            size = re.search(r"Geometry: (\d+)x(\d+)", out)
            if pos and size and int(size.group(1)) > 100:
                return int(pos.group(1)), int(pos.group(2)), int(size.group(1)), int(size.group(2))
        time.sleep(0.2)
    raise AssertionError("the studio window did not appear")


def _within_screen(geo: tuple[int, int, int, int], what: str) -> None:
    x, y, w, h = geo
    assert x >= 0 and y >= 0, f"{what}: window at {x},{y} starts off-screen"
    assert x + w <= SCREEN[0] and y + h <= SCREEN[1], f"{what}: window {w}x{h} at {x},{y} leaves the {SCREEN} screen"


def test_window_fits_a_laptop_screen_and_never_grows(desktop: dict[str, str], tmp_path: Path,
                                                     artifacts_dir: Path) -> None:
    ws = Workspace.create(tmp_path / "ws", name="laptop")
    vision_model_with_problems(ws.root / "vision_head.onnx")
    env = {**desktop, "STUDIO_CONFIG_DIR": str(tmp_path / "config")}
    studio = Path(sys.executable).with_name("studio")
    proc = subprocess.Popen([str(studio), "gui", "--workspace", str(ws.root)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        first = _geometry(env)
        time.sleep(1.0)  # the window manager's frame, then the studio's second clamp
        first = _geometry(env)
        _within_screen(first, "first run")
        subprocess.run(["xdotool", "search", "--name", " - Deployment Studio$", "windowactivate", "--sync"],
                       env=env, capture_output=True)
        for key in ("ctrl+2", "ctrl+4", "ctrl+5", "ctrl+6", "ctrl+7", "ctrl+1"):
            subprocess.run(["xdotool", "key", key], env=env, check=True)
            time.sleep(0.8)
            geo = _geometry(env)
            _within_screen(geo, f"after {key}")
            assert geo[2:] == first[2:], f"the window resized itself from {first[2:]} to {geo[2:]} on {key}"
        if shutil.which("import"):
            subprocess.run(["import", "-window", "root", str(artifacts_dir / "real-display-1366x768.png")],
                           env=env, check=False, timeout=30)
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
