"""First run on a user's machine: no display, missing xcb libraries, `studio gui --screenshot` (real processes).

Each case runs the real `studio` console script in a subprocess with the environment a user would have, so what
is checked is the exit code and the words a person reads, never a Qt abort.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from studio.core.errors import InstallError
from studio.gui import platform_check as pc

STUDIO = Path(sys.executable).with_name("studio")


def _env(**over: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    for k, v in over.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(STUDIO), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_no_display_is_a_clear_error(tmp_path: Path) -> None:
    done = _run(["gui", "--workspace", str(tmp_path / "ws")], _env(), tmp_path)
    assert done.returncode == 2, done.stderr
    assert "no display" in done.stderr and "neither DISPLAY nor WAYLAND_DISPLAY" in done.stderr
    assert "QT_QPA_PLATFORM=offscreen studio gui --screenshot" in done.stderr and "ssh -X" in done.stderr
    assert "Aborted" not in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "ws").exists()  # nothing created before the check


def test_display_that_does_not_answer(tmp_path: Path) -> None:
    done = _run(["gui"], _env(DISPLAY=":987"), tmp_path)
    assert done.returncode == 2, done.stderr
    assert "DISPLAY=:987 does not answer" in done.stderr


def test_screenshot_without_display(tmp_path: Path, artifacts_dir: Path) -> None:
    out = tmp_path / "triton.png"
    done = _run(["gui", "--workspace", str(tmp_path / "ws"), "--screenshot", str(out), "--page", "Triton"],
                _env(), tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"wrote {out}" in done.stdout
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1280, 720)
    shutil.copy(out, artifacts_dir / "first-run-screenshot-triton.png")

    small = tmp_path / "small.png"
    done = _run(["gui", "--workspace", str(tmp_path / "ws"), "--screenshot", str(small), "--size", "1366x768"],
                _env(), tmp_path)
    assert done.returncode == 0, done.stderr
    assert int.from_bytes(small.read_bytes()[16:20], "big") == 1366


@pytest.mark.parametrize(("args", "words"), [
    (["--page", "nope"], "no page named 'nope'"),
    (["--size", "12x9"], "--size must be WIDTHxHEIGHT"),
])
def test_screenshot_bad_input(tmp_path: Path, args: list[str], words: str) -> None:
    out = tmp_path / "x.png"
    done = _run(["gui", "--workspace", str(tmp_path / "ws"), "--screenshot", str(out), *args], _env(), tmp_path)
    assert done.returncode == 2, done.stderr
    assert words in done.stderr
    if "--page" in args:
        assert "pages: export, inspect" in done.stderr
    assert not out.exists()


def test_screenshot_needs_png_and_a_folder(tmp_path: Path) -> None:
    done = _run(["gui", "--screenshot", str(tmp_path / "x.jpg")], _env(), tmp_path)
    assert done.returncode == 2 and "does not end in .png" in done.stderr
    done = _run(["gui", "--screenshot", str(tmp_path / "no" / "x.png")], _env(), tmp_path)
    assert done.returncode == 2 and "does not exist" in done.stderr
    done = _run(["gui", "--page", "inspect"], _env(QT_QPA_PLATFORM="offscreen"), tmp_path)
    assert done.returncode == 2 and "--page only applies to --screenshot" in done.stderr


@pytest.fixture
def plugin_missing_a_library(tmp_path: Path) -> Path:
    """A fake PySide6 folder whose xcb plugin is a real ELF linked to a library that is then removed."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed to build an ELF with a missing dependency")
    src = tmp_path / "x.c"
    src.write_text("int studio_fake(void) { return 1; }\n")
    lib_dir = tmp_path / "lib"
    lib_dir.mkdir()
    soname = "libstudio-test-missing.so.3"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(lib_dir / soname), f"-Wl,-soname,{soname}", str(src)],
                   check=True)
    pyside = tmp_path / "PySide6"
    plugin = pyside / pc.XCB_FILES[0]
    plugin.parent.mkdir(parents=True)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(plugin), str(src), "-Wl,--no-as-needed", f"-L{lib_dir}",
                    f"-l:{soname}"],
                   check=True)
    (lib_dir / soname).unlink()
    return pyside


def test_missing_library_names_the_apt_line(plugin_missing_a_library: Path) -> None:
    missing = pc.missing_xcb_libraries(plugin_missing_a_library)
    assert missing == ["libstudio-test-missing.so.3"]
    with pytest.raises(InstallError) as info:
        pc.check_libraries({"DISPLAY": ":0"}, pyside=plugin_missing_a_library)
    assert "apt-get install -y --no-install-recommends libstudio-test-missing3" in info.value.hint
    pc.check_libraries({"QT_QPA_PLATFORM": "offscreen"}, pyside=plugin_missing_a_library)  # offscreen needs none
    done = subprocess.run([sys.executable, "-m", "studio.gui.platform_check", "--pyside-dir",
                           str(plugin_missing_a_library)], env=_env(DISPLAY=":0"), capture_output=True, text=True)
    assert done.returncode == 2
    assert "missing system libraries libstudio-test-missing.so.3" in done.stderr


def test_debian_package_names() -> None:
    assert pc.debian_package("libxcb-cursor.so.0") == "libxcb-cursor0"
    assert pc.debian_package("libxcb-keysyms.so.1") == "libxcb-keysyms1"
    assert pc.debian_package("libxkbcommon-x11.so.0") == "libxkbcommon-x11-0"
    assert pc.debian_package("libfoo2.so.5") == "libfoo2-5"  # Debian's rule for names ending in a digit
    assert pc.platform_name({"WAYLAND_DISPLAY": "wayland-0"}) == "wayland"
    assert pc.platform_name({"QT_QPA_PLATFORM": "offscreen:size=10"}) == "offscreen"


def test_the_installed_qt_is_checked_for_real() -> None:
    """Whatever this machine lacks, every name reported is one ldd really cannot resolve for the xcb plugin."""
    base = pc.pyside_dir()
    assert base is not None and (base / pc.XCB_FILES[0]).is_file()
    for soname in pc.missing_xcb_libraries():
        out = subprocess.run(["ldd", str(base / pc.XCB_FILES[0])], capture_output=True, text=True).stdout
        assert f"{soname} => not found" in out


def test_install_without_resources_is_an_error_not_a_silent_list(tmp_path: Path) -> None:
    """A studio whose package data is missing says so (exit 2), rather than showing built-in guesses."""
    (tmp_path / "res").mkdir()
    out = tmp_path / "x.png"
    done = _run(["gui", "--screenshot", str(out)], _env(STUDIO_RESOURCES=str(tmp_path / "res")), tmp_path)
    assert done.returncode == 2, done.stderr
    assert "resources folder" in done.stderr and "STUDIO_RESOURCES" in done.stderr  # the override is named
    assert "Traceback" not in done.stderr and not out.exists()
