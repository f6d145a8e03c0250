"""Before Qt starts: is there a display, and are the system libraries of Qt's xcb platform installed?

Without them Qt aborts the process ("could not load the Qt platform plugin xcb") with nothing a user can act
on. This module imports no Qt: it finds PySide6's files on disk, asks `ldd` what the xcb platform plugin cannot
resolve, and names the Debian/Ubuntu packages that provide it.

Fonts are checked too (not needed to start, so never an error): without a font covering CJK, model names in
Chinese, Japanese or Korean are drawn as boxes in the graph view and Netron. `fc-list :lang=zh` answers it;
the package is FONT_PACKAGES' (installed as root with ``--install``, as the xcb libraries are).

    python -m studio.gui.platform_check [--install]   (what `make run` calls; exit 2 with the apt line)
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from studio.core.errors import InstallError, StudioError

# Qt platforms that draw without a display server (no xcb libraries needed either).
HEADLESS_PLATFORMS = ("offscreen", "minimal", "vnc", "eglfs", "linuxfb", "vkkhrdisplay")
# The xcb platform's own files inside PySide6, relative to the package folder.
XCB_FILES = ("Qt/plugins/platforms/libqxcb.so", "Qt/lib/libQt6XcbQpa.so.6")
# soname -> Debian/Ubuntu package, for the libraries Qt's xcb platform needs (Qt's own list for Linux/X11).
DEBIAN_PACKAGES: dict[str, str] = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xinput.so.0": "libxcb-xinput0",
    "libxcb.so.1": "libxcb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
    "libGL.so.1": "libgl1",
    "libEGL.so.1": "libegl1",
    "libOpenGL.so.0": "libopengl0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libdbus-1.so.3": "libdbus-1-3",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
}
_NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.MULTILINE)
# fontconfig language -> the Debian/Ubuntu package with a font for it (names in other scripts: studio.gui.fonts)
FONT_PACKAGES: dict[str, str] = {"zh": "fonts-noto-cjk", "ja": "fonts-noto-cjk", "ko": "fonts-noto-cjk"}


def pyside_dir() -> Path | None:
    """PySide6's package folder, found without importing it (importing loads Qt's libraries)."""
    try:
        spec = importlib.util.find_spec("PySide6")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def missing_libraries(files: list[Path]) -> list[str]:
    """Sonames that `ldd` cannot resolve for ``files`` (in first-seen order, without repeats)."""
    ldd = shutil.which("ldd")
    if ldd is None:
        return []
    seen: dict[str, None] = {}
    for f in files:
        if not f.is_file():
            continue
        out = subprocess.run([ldd, str(f)], capture_output=True, text=True, timeout=30).stdout
        for soname in _NOT_FOUND.findall(out):
            seen.setdefault(soname, None)
    return list(seen)


def missing_xcb_libraries(pyside: Path | None = None) -> list[str]:
    """What Qt's xcb platform plugin needs from the system and does not find."""
    base = pyside or pyside_dir()
    if base is None:
        return []
    return missing_libraries([base / rel for rel in XCB_FILES])


def debian_package(soname: str) -> str:
    """The Debian/Ubuntu package shipping ``soname``: the table, else Debian's naming rule (libfoo.so.N -> libfooN)."""
    if soname in DEBIAN_PACKAGES:
        return DEBIAN_PACKAGES[soname]
    m = re.match(r"^(lib[\w.+-]+?)\.so\.(\d+)", soname)
    if not m:
        return soname
    name, major = m.group(1).lower(), m.group(2)
    return f"{name}-{major}" if name[-1].isdigit() else f"{name}{major}"


def apt_command(sonames: list[str]) -> list[str]:
    packages = list(dict.fromkeys(debian_package(s) for s in sonames))
    return ["apt-get", "install", "-y", "--no-install-recommends", *packages]


def platform_name(env: Mapping[str, str]) -> str:
    """The Qt platform that will be used: QT_QPA_PLATFORM's first entry, else xcb or wayland from the session."""
    requested = env.get("QT_QPA_PLATFORM", "").split(";")[0].split(":")[0].strip()
    if requested:
        return requested
    return "wayland" if env.get("WAYLAND_DISPLAY") and not env.get("DISPLAY") else "xcb"


def headless(env: Mapping[str, str]) -> bool:
    return platform_name(env) in HEADLESS_PLATFORMS


def x_display_reachable(display: str) -> bool:
    """Can an X client connect to ``display`` (":77", "host:0.0", "unix:1")? A socket connect, no X library."""
    m = re.match(r"^(?P<host>[^:]*):(?P<num>\d+)(\.\d+)?$", display.strip())
    if not m:
        return False
    host, num = m.group("host"), int(m.group("num"))
    try:
        if host in ("", "unix"):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(2)
                for path in (f"/tmp/.X11-unix/X{num}", f"\0/tmp/.X11-unix/X{num}"):
                    try:
                        s.connect(path)
                        return True
                    except OSError:
                        continue
                return False
        with socket.create_connection((host, 6000 + num), timeout=2):
            return True
    except OSError:
        return False


def _no_display_error(why: str) -> StudioError:
    return StudioError(
        f"no display to open the studio window on: {why}", offending="DISPLAY",
        hint="for a headless look: QT_QPA_PLATFORM=offscreen studio gui --screenshot out.png [--page inspect]; "
             "over SSH: ssh -X (or -Y) and run it again; on a server: a virtual display "
             "(Xvfb :1 & DISPLAY=:1 studio gui), or run it on a desktop session")


def check_display(env: Mapping[str, str] | None = None) -> None:
    """Raise a StudioError (exit 2) when Qt would abort for want of a display."""
    env = os.environ if env is None else env
    platform = platform_name(env)
    if platform in HEADLESS_PLATFORMS:
        return
    if platform == "wayland":
        if not env.get("WAYLAND_DISPLAY"):
            raise _no_display_error("QT_QPA_PLATFORM=wayland but WAYLAND_DISPLAY is not set")
        return
    display = env.get("DISPLAY", "")
    if not display:
        raise _no_display_error("neither DISPLAY nor WAYLAND_DISPLAY is set")
    if platform == "xcb" and not x_display_reachable(display):
        raise _no_display_error(f"DISPLAY={display} does not answer (no X server listening there)")


def check_libraries(env: Mapping[str, str] | None = None, pyside: Path | None = None) -> None:
    """Raise an InstallError (exit 2) naming the apt line when Qt's xcb platform cannot load."""
    env = os.environ if env is None else env
    if platform_name(env) != "xcb":
        return
    missing = missing_xcb_libraries(pyside)
    if missing:
        raise InstallError(
            f"Qt's xcb platform cannot load: missing system libraries {', '.join(missing)}",
            offending=", ".join(missing),
            hint=f"install them (as root): {' '.join(apt_command(missing))}   "
                 "(make run installs them itself when run as root)")


def install_missing(missing: list[str], pyside: Path | None = None) -> bool:
    """As root with apt-get: install the packages for ``missing``. False when that is not possible or failed."""
    if not missing or os.geteuid() != 0 or shutil.which("apt-get") is None:
        return False
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], env=env, check=False, capture_output=True)
    done = subprocess.run([*apt_command(missing), "-qq"], env=env, check=False)
    return done.returncode == 0 and not missing_xcb_libraries(pyside)


def missing_font_packages() -> list[str]:
    """Packages for the languages (FONT_PACKAGES) no installed font covers, as fontconfig's ``fc-list`` says;
    empty when everything is covered or fontconfig is not there to ask."""
    fc = shutil.which("fc-list")
    if fc is None:
        return []
    out: dict[str, None] = {}
    for lang, package in FONT_PACKAGES.items():
        if package in out:
            continue
        found = subprocess.run([fc, f":lang={lang}", "family"], capture_output=True, text=True, timeout=30).stdout
        if not found.strip():
            out[package] = None
    return list(out)


def font_note(packages: list[str]) -> str:
    return (f"platform check: no installed font covers CJK, so such characters (model names, the Chinese "
            f"interface) show as boxes; "
            f"install (as root): apt-get install -y --no-install-recommends {' '.join(packages)}")


def install_fonts(packages: list[str]) -> bool:
    """As root with apt-get: install the font packages. False when that is not possible or failed."""
    if not packages or os.geteuid() != 0 or shutil.which("apt-get") is None:
        return False
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], env=env, check=False, capture_output=True)
    done = subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages], env=env,
                          check=False)
    if done.returncode == 0 and shutil.which("fc-cache"):
        subprocess.run(["fc-cache", "-f"], check=False, capture_output=True)
    return done.returncode == 0 and not missing_font_packages()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m studio.gui.platform_check",
                                description="check (and as root, install) what Qt's xcb platform needs")
    p.add_argument("--install", action="store_true", help="as root with apt-get, install missing packages")
    p.add_argument("--quiet", "-q", action="store_true")
    p.add_argument("--pyside-dir", type=Path, default=None, help="the PySide6 folder to check (default: this one)")
    args = p.parse_args(argv)
    fonts = missing_font_packages()
    if fonts and args.install:
        print(f"platform check: installing {' '.join(fonts)} (a font with CJK glyphs for model names)",
              file=sys.stderr)
        fonts = [] if install_fonts(fonts) else fonts
    if fonts:  # a warning, never a failure: the studio runs, such names show as boxes
        print(font_note(fonts), file=sys.stderr)
    if platform_name(os.environ) != "xcb":
        return 0
    missing = missing_xcb_libraries(args.pyside_dir)
    if missing and args.install:
        print(f"platform check: installing {' '.join(apt_command(missing)[4:])} for Qt's xcb platform",
              file=sys.stderr)
        if install_missing(missing, args.pyside_dir):
            return 0
    try:
        check_libraries(pyside=args.pyside_dir)
    except StudioError as exc:
        print(exc.render(), file=sys.stderr)
        return exc.exit_code
    if not args.quiet:
        print("platform check: Qt's xcb platform has every system library it needs", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
