"""The studio on a desktop, with real tools and real processes in a temporary XDG home.

`studio gui --install-desktop` writes the entry (validated by desktop-file-validate), icons and the
application/x-onnx type; `xdg-mime` answers that .onnx files are of that type and open with the studio; a
running studio (QT_QPA_PLATFORM=offscreen) takes an .onnx double-clicked through `xdg-open` (the entry's Exec
line) and an HF folder from a second `studio gui` over its local socket; a second launch never opens a second
window. A moved venv (the entry's target gone) is said with the command that reinstalls it; a failing install
leaves nothing behind.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from studio.desktop.icons import SIZES
from tests.edge.helpers import make_mlp

BIN = Path(sys.executable).parent
STUDIO = BIN / "studio"
DESKTOP_VARS = ("XDG_CURRENT_DESKTOP", "DESKTOP_SESSION", "KDE_FULL_SESSION", "GNOME_DESKTOP_SESSION_ID",
                "XDG_SESSION_DESKTOP", "MATE_DESKTOP_SESSION_ID", "WAYLAND_DISPLAY")


def need(tool: str, package: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"{tool} is not installed (Debian package {package}; `make desktop-deps` installs it as root)")
    return path


@pytest.fixture()
def home(tmp_path: Path) -> dict[str, str]:
    """A user's environment in a temporary home: XDG data / config / runtime folders, no desktop session."""
    h = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if k not in DESKTOP_VARS}
    env.update(HOME=str(h), XDG_DATA_HOME=str(h / ".local" / "share"), XDG_CONFIG_HOME=str(h / ".config"),
               XDG_RUNTIME_DIR=str(tmp_path / "run"), STUDIO_CONFIG_DIR=str(h / ".config" / "deployment-studio"),
               QT_QPA_PLATFORM="offscreen", PATH=f"{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    (tmp_path / "run").mkdir(mode=0o700)
    h.mkdir()
    return env


def studio(env: dict[str, str], *args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(STUDIO), *map(str, args)], capture_output=True, text=True, env=env, timeout=timeout)


def entry_file(env: dict[str, str]) -> Path:
    return Path(env["XDG_DATA_HOME"]) / "applications" / "deployment-studio.desktop"


def test_install_validates_associates_and_uninstalls(home: dict[str, str], tmp_path: Path) -> None:
    validate = need("desktop-file-validate", "desktop-file-utils")
    xdg_mime = need("xdg-mime", "xdg-utils")
    need("update-mime-database", "shared-mime-info")
    out = studio(home, "gui", "--install-desktop")
    assert out.returncode == 0, out.stderr
    entry = entry_file(home)
    checked = subprocess.run([validate, str(entry)], capture_output=True, text=True)
    assert checked.returncode == 0 and "error" not in checked.stdout + checked.stderr, checked.stdout
    text = entry.read_text()
    assert f"TryExec={STUDIO}" in text and f"Exec={STUDIO} gui %F" in text and "MimeType=application/x-onnx;" in text
    icons = Path(home["XDG_DATA_HOME"]) / "icons" / "hicolor"
    assert (icons / "scalable" / "apps" / "deployment-studio.svg").is_file()
    assert all((icons / f"{s}x{s}" / "apps" / "deployment-studio.png").is_file() for s in SIZES)

    default = subprocess.run([xdg_mime, "query", "default", "application/x-onnx"], capture_output=True, text=True,
                             env=home)
    assert default.stdout.strip() == "deployment-studio.desktop", default.stdout + default.stderr
    model = make_mlp(tmp_path / "m" / "model.onnx")
    if shutil.which("mimetype"):  # xdg-mime's generic mode reads the MIME database through File::MimeInfo
        kind = subprocess.run([xdg_mime, "query", "filetype", str(model)], capture_output=True, text=True, env=home)
        assert kind.stdout.strip() == "application/x-onnx", kind.stdout
    st = studio(home, "gui", "--desktop-status")
    assert st.returncode == 0 and ".onnx files open with: deployment-studio.desktop" in st.stdout, st.stdout

    gone = studio(home, "gui", "--uninstall-desktop")
    assert gone.returncode == 0 and not entry.exists()
    assert not list(icons.rglob("deployment-studio.*"))
    default = subprocess.run([xdg_mime, "query", "default", "application/x-onnx"], capture_output=True, text=True,
                             env=home)
    assert default.stdout.strip() != "deployment-studio.desktop"
    assert studio(home, "gui", "--desktop-status").returncode == 1


def test_moved_venv_is_detected_with_the_reinstall_command(home: dict[str, str]) -> None:
    assert studio(home, "gui", "--install-desktop").returncode == 0
    entry = entry_file(home)
    moved = "/opt/old-venv/bin/studio"
    entry.write_text(entry.read_text().replace(str(STUDIO), moved))  # what a moved or deleted venv leaves
    st = studio(home, "gui", "--desktop-status")
    assert st.returncode == 1, st.stdout
    assert f"starts {moved}" in st.stdout and "no longer exists" in st.stdout
    assert f"fix: {STUDIO} gui --install-desktop" in st.stdout
    # any later `studio gui` says it too (here with a bad path, so no window starts)
    warn = studio(home, "gui", "/nonexistent/model.onnx")
    assert warn.returncode == 2 and moved in warn.stderr and f"{STUDIO} gui --install-desktop" in warn.stderr
    assert "cannot open /nonexistent/model.onnx" in warn.stderr
    assert studio(home, "gui", "--install-desktop").returncode == 0
    assert studio(home, "gui", "--desktop-status").returncode == 0


def test_a_failing_install_leaves_nothing_behind(home: dict[str, str]) -> None:
    need("update-mime-database", "shared-mime-info")
    mime = Path(home["XDG_DATA_HOME"]) / "mime"
    mime.mkdir(parents=True)
    (mime / "packages").write_text("a file where the packages folder goes")
    out = studio(home, "gui", "--install-desktop")
    assert out.returncode == 2 and "error:" in out.stderr, out.stdout + out.stderr
    assert not entry_file(home).exists()
    assert not list((Path(home["XDG_DATA_HOME"]) / "icons").rglob("*.png"))
    assert (mime / "packages").read_text() == "a file where the packages folder goes"


def _wait_for_window(env: dict[str, str], ws: Path, log: Path, proc: subprocess.Popen, timeout: float = 90) -> dict:
    """Once ``proc`` holds the workspace's lock (so no probe can become the first itself), a second `studio gui`
    with no paths until the first answers (its window and server are up)."""
    from studio.desktop.instance import instance_key

    lock = Path(env["XDG_RUNTIME_DIR"]) / "deployment-studio" / f"{instance_key(ws)}.lock"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not (lock.is_file() and lock.read_text().strip() == str(proc.pid)):
        if proc.poll() is not None:
            raise AssertionError(f"the first studio exited {proc.returncode}:\n{log.read_text()[-3000:]}")
        time.sleep(0.1)
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the first studio exited {proc.returncode}:\n{log.read_text()[-3000:]}")
        out = studio(env, "gui", "--workspace", ws)
        if out.returncode == 0 and "brought its window to the front" in out.stdout:
            return {"stdout": out.stdout}
        time.sleep(0.5)
    raise AssertionError(f"the first studio never answered:\n{log.read_text()[-3000:]}")


def test_second_launch_hands_paths_to_the_running_studio(home: dict[str, str], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    model = make_mlp(tmp_path / "m" / "model.onnx")
    hf = tmp_path / "hf-model"
    hf.mkdir()
    (hf / "config.json").write_text(json.dumps({"model_type": "clip", "architectures": ["CLIPModel"]}))
    log = tmp_path / "first.log"
    with open(log, "wb") as logf:
        first = subprocess.Popen([str(STUDIO), "gui", "--workspace", str(ws)], stdout=logf, stderr=subprocess.STDOUT,
                                 env=home)
    try:
        pid = _wait_for_window(home, ws, log, first)["stdout"]
        assert f"(pid {first.pid})" in pid

        out = studio(home, "gui", "--workspace", ws, model, timeout=120)
        assert out.returncode == 0, out.stderr
        assert f"opened {model} (ONNX model) on the inspect page" in out.stdout and f"pid {first.pid}" in out.stdout
        out = studio(home, "gui", "--workspace", ws, hf)
        assert out.returncode == 0 and f"opened {hf} (HuggingFace model folder) on the export page" in out.stdout

        # the reply says what the pages show: ask through the protocol itself
        from studio.desktop.instance import hand_off
        from studio.desktop.open_paths import classify

        monkeypatch.setenv("XDG_RUNTIME_DIR", home["XDG_RUNTIME_DIR"])
        reply = hand_off(ws, [classify(model)])
        (item,) = reply["opened"]
        assert item["shows"] == str(model) and item["current_page"] == "inspect", reply

        # a double click: xdg-open finds the studio's entry for application/x-onnx and runs its Exec line
        if shutil.which("xdg-open") and shutil.which("mimetype") and shutil.which("update-mime-database"):
            assert studio(home, "gui", "--install-desktop").returncode == 0
            clicked = subprocess.run(["xdg-open", str(model)], capture_output=True, text=True, timeout=120,
                                     env={**home, "DISPLAY": ":99"})  # xdg-open's generic mode wants a display
            assert clicked.returncode == 0, clicked.stdout + clicked.stderr
            assert f"opened {model} (ONNX model) on the inspect page" in clicked.stdout, clicked.stdout
            assert f"pid {first.pid}" in clicked.stdout  # the running studio, not a new one
        bad = studio(home, "gui", "--workspace", ws, tmp_path / "missing.onnx")
        assert bad.returncode == 2 and "does not exist" in bad.stderr
        assert first.poll() is None  # still the one window
    finally:
        first.terminate()
        first.wait(30)
    text = log.read_text()
    assert "Traceback" not in text, text[-3000:]


def test_a_crashed_studio_does_not_block_the_next(home: dict[str, str], tmp_path: Path) -> None:
    """kill -9 leaves the socket file; the lock dies with the process, so the next launch is the first."""
    ws = tmp_path / "ws"
    log = tmp_path / "first.log"
    with open(log, "wb") as logf:
        first = subprocess.Popen([str(STUDIO), "gui", "--workspace", str(ws)], stdout=logf, stderr=subprocess.STDOUT,
                                 env=home)
    _wait_for_window(home, ws, log, first)
    first.kill()
    first.wait(30)
    sockets = list((tmp_path / "run" / "deployment-studio").glob("*.sock"))
    assert sockets, "the killed studio's socket file stays behind"
    with open(tmp_path / "second.log", "wb") as logf:
        second = subprocess.Popen([str(STUDIO), "gui", "--workspace", str(ws)], stdout=logf,
                                  stderr=subprocess.STDOUT, env=home)
    try:
        out = _wait_for_window(home, ws, tmp_path / "second.log", second)
        assert f"(pid {second.pid})" in out["stdout"]
    finally:
        second.terminate()
        second.wait(30)
