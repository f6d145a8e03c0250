"""Start the studio window: `python -m studio.gui [--demo DIR] [--workspace DIR] [PATH...]` and `studio gui`.

The window appears at once; the demo workspace's sample models are written by a job whose progress shows in the
Jobs panel. Without flags the last workspace is reopened, else the demo workspace in its default place.
PATHs (an .onnx file, an export folder, a HuggingFace model folder) open on their page (studio.desktop.open_paths);
when a studio is already open on the same workspace, they go to it over its local socket and this launch exits
(studio.desktop.instance). `--install-desktop` / `--uninstall-desktop` / `--desktop-status`: studio.desktop.entry.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

SCREENSHOT_SIZE = (1280, 720)


def default_demo_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "deployment-studio" / "demo-workspace"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from studio.core.completion import complete_with
    from studio.gui.page_ids import complete_pages

    g = p.add_mutually_exclusive_group()
    g.add_argument("--demo", metavar="DIR", nargs="?", const=str(default_demo_dir()),
                   help="create (or reuse) the demo workspace in DIR and open it "
                        f"(default DIR: {default_demo_dir()})")
    g.add_argument("--workspace", metavar="DIR", help="open (or create) the workspace in DIR")
    p.add_argument("--theme", choices=["light", "dark"], help="override the saved theme for this session")
    p.add_argument("--screenshot", metavar="FILE",
                   help="render one page offscreen to this PNG and exit (no display needed; for bug reports, docs)")
    complete_with(p.add_argument("--page", metavar="NAME",
                                 help="with --screenshot: the page to show (export, inspect, ...)"), complete_pages)
    p.add_argument("--size", metavar="WxH", default=None,
                   help=f"with --screenshot: window size (default {SCREENSHOT_SIZE[0]}x{SCREENSHOT_SIZE[1]})")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="open these: an .onnx model (Inspect), an export folder (Inspect), a HuggingFace model "
                        "folder (the export wizard); handed to the studio already open on the workspace, if any "
                        "(put PATHs before --demo, whose DIR is optional)")
    p.add_argument("--new-instance", action="store_true",
                   help="open a separate window even when a studio is already open on this workspace")
    d = p.add_mutually_exclusive_group()
    d.add_argument("--install-desktop", action="store_true",
                   help="add the studio to the desktop's application menu (per user, with its icon) and make it "
                        "open .onnx files, then exit")
    d.add_argument("--uninstall-desktop", action="store_true", help="remove what --install-desktop wrote, then exit")
    d.add_argument("--desktop-status", action="store_true",
                   help="say whether the desktop entry is installed and still starts an existing studio (exit 1 "
                        "when it is broken)")


def workspace_dir(args: argparse.Namespace) -> Path:
    """The workspace ``build_window`` opens for these arguments, known before Qt starts (the instance key)."""
    from studio.core.settings import Settings
    from studio.core.workspace import WORKSPACE_FILE

    if getattr(args, "demo", None):
        return Path(args.demo)
    if getattr(args, "workspace", None):
        return Path(args.workspace)
    last = Settings.load().last_workspace
    return Path(last) if last and (Path(last) / WORKSPACE_FILE).is_file() else default_demo_dir()


def build_window(args: argparse.Namespace):  # noqa: ANN201 (returns MainWindow; Qt imported lazily)
    """Create the window for parsed arguments; a QApplication must exist."""
    from PySide6.QtWidgets import QApplication

    from studio.core.settings import Settings
    from studio.core.workspace import WORKSPACE_FILE
    from studio.gui.main_window import MainWindow
    from studio.gui.theme import apply_theme

    settings = Settings.load()
    app = QApplication.instance()
    settings.theme = apply_theme(app, args.theme or settings.theme)
    win = MainWindow(settings=settings)
    if args.demo:
        win.start_demo(args.demo)
    elif args.workspace:
        ws_dir = Path(args.workspace)
        if (ws_dir / WORKSPACE_FILE).is_file():
            win.open_workspace(ws_dir)
        else:
            win.create_workspace(ws_dir)
    else:
        last = settings.last_workspace
        if last and (Path(last) / WORKSPACE_FILE).is_file() and win.open_workspace(last) is not None:
            pass
        else:
            win.start_demo(default_demo_dir())
    return win


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m studio.gui", description="Open the Deployment Studio window.")
    add_arguments(parser)
    args = parser.parse_args(argv)
    return run(args)


def _desktop(args: argparse.Namespace) -> int | None:
    """--install-desktop / --uninstall-desktop / --desktop-status (no window); None when none was asked."""
    from studio.desktop import entry

    if getattr(args, "install_desktop", False):
        print(entry.install().render())
        return 0
    if getattr(args, "uninstall_desktop", False):
        removed = entry.uninstall()
        print("\n".join(f"removed {r}" for r in removed) or f"no desktop entry at {entry.entry_path()}")
        return 0
    if getattr(args, "desktop_status", False):
        st = entry.status()
        print(st.render())
        return 1 if st.problems or not st.installed else 0
    return None


def _hand_off(ws: Path, requests: list) -> int:  # type: ignore[type-arg]
    """Give the paths to the studio already open on ``ws`` and say what it did."""
    from studio.desktop.instance import hand_off

    reply = hand_off(ws, requests)
    if not reply.get("ok"):
        print(f"error: the studio open on {ws} refused the paths: {reply.get('error')}", file=sys.stderr)
        return 2
    where = f"the studio already open on {ws} (pid {reply.get('pid')})"
    if not reply.get("opened"):
        print(f"{where}: brought its window to the front")
    bad = 0
    for item in reply.get("opened", []):
        if item.get("opened"):
            print(f"opened {item['path']} ({item['what']}) on the {item['page']} page of {where}")
        else:
            bad += 1
            print(f"error: {where} has no {item['page']} page for {item['path']}", file=sys.stderr)
    return 2 if bad else 0


def run(args: argparse.Namespace) -> int:
    from studio.desktop.entry import stale_entry_warning
    from studio.desktop.open_paths import classify_all
    from studio.gui.platform_check import check_display, check_libraries

    done = _desktop(args)
    if done is not None:
        return done
    warning = stale_entry_warning()
    if warning:
        print(warning, file=sys.stderr)
    requests = classify_all(getattr(args, "paths", None))  # a bad path: exit 2 before any window
    shot = _screenshot_request(args)
    if shot is not None:  # a headless look needs no display: render offscreen unless a platform was chosen
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    check_display()
    check_libraries()
    instance = None
    if shot is None and not getattr(args, "new_instance", False):
        from studio.desktop.instance import claim

        ws = workspace_dir(args)
        instance = claim(ws)
        if instance is None:
            return _hand_off(ws, requests)
    try:
        from PySide6.QtWidgets import QApplication
    except ImportError as exc:
        from studio.core.errors import DependencyMissing

        raise DependencyMissing.for_module("PySide6", "gui", "the studio window") from exc
    from studio.gui import gc_guard
    from studio.gui.main_window import APPLICATION, ORGANIZATION

    app = QApplication.instance() or QApplication(sys.argv[:1])
    gc_guard.install(app)  # cyclic garbage (widgets among it) collected on this thread only, never a worker's
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    from studio.core.settings import Settings
    from studio.gui import i18n

    language = i18n.install(i18n.saved_language(Settings.load()))  # before any widget makes its texts
    if language.warning:  # also in the status bar and Problems (apply_start_language)
        print(f"warning: {language.warning}", file=sys.stderr)
    win = build_window(args)
    win.apply_start_language(language)
    from studio.gui.instance_server import InstanceServer, open_requests

    server = InstanceServer(win, instance) if instance is not None else None
    open_requests(win, requests)
    if shot is not None:
        from studio.gui.screenshot import take_screenshot

        path = take_screenshot(win, *shot)
        print(f"wrote {path}")
        win.close()
        return 0
    win.show()
    try:
        return int(app.exec())
    finally:
        if server is not None:
            server.close()


def _screenshot_request(args: argparse.Namespace) -> tuple[Path, str | None, tuple[int, int]] | None:
    """Check --screenshot/--page/--size before any window exists: (file, page, size), or None without --screenshot."""
    from studio.core.errors import InputError

    shot, page, size = getattr(args, "screenshot", None), getattr(args, "page", None), getattr(args, "size", None)
    if shot is None:
        if page or size:
            flag = "--page" if page else "--size"
            raise InputError(f"{flag} only applies to --screenshot", offending=flag,
                             hint="add --screenshot FILE.png, or open the window and pick the page in the sidebar")
        return None
    path = Path(shot)
    if path.suffix.lower() != ".png":
        raise InputError(f"--screenshot writes a PNG: '{shot}' does not end in .png", offending=shot,
                         hint=f"use --screenshot {path.with_suffix('.png').name}")
    if not path.parent.is_dir():
        raise InputError(f"the folder for --screenshot does not exist: {path.parent}", offending=str(path.parent),
                         hint="create it first, or write the PNG somewhere else")
    wh = SCREENSHOT_SIZE
    if size:
        try:
            w, h = (int(x) for x in size.lower().split("x"))
            if w < 320 or h < 240:
                raise ValueError
            wh = (w, h)
        except ValueError:
            raise InputError(f"--size must be WIDTHxHEIGHT of at least 320x240, got '{size}'", offending="--size",
                             hint="e.g. --size 1366x768") from None
    return path, page, wh
