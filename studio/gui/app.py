"""Start the studio window: `python -m studio.gui [--demo DIR] [--workspace DIR]` and `studio gui`.

The window appears at once; the demo workspace's sample models are written by a job whose progress shows in the
Jobs panel. Without flags the last workspace is reopened, else the demo workspace in its default place.
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
    from studio.cli import completers
    from studio.cli.completers import complete_with

    g = p.add_mutually_exclusive_group()
    g.add_argument("--demo", metavar="DIR", nargs="?", const=str(default_demo_dir()),
                   help="create (or reuse) the demo workspace in DIR and open it "
                        f"(default DIR: {default_demo_dir()})")
    g.add_argument("--workspace", metavar="DIR", help="open (or create) the workspace in DIR")
    p.add_argument("--theme", choices=["light", "dark"], help="override the saved theme for this session")
    p.add_argument("--screenshot", metavar="FILE",
                   help="render one page offscreen to this PNG and exit (no display needed; for bug reports, docs)")
    complete_with(p.add_argument("--page", metavar="NAME",
                                 help="with --screenshot: the page to show (export, inspect, ...)"), completers.pages)
    p.add_argument("--size", metavar="WxH", default=None,
                   help=f"with --screenshot: window size (default {SCREENSHOT_SIZE[0]}x{SCREENSHOT_SIZE[1]})")


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


def run(args: argparse.Namespace) -> int:
    from studio.gui.platform_check import check_display, check_libraries

    shot = _screenshot_request(args)
    if shot is not None:  # a headless look needs no display: render offscreen unless a platform was chosen
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    check_display()
    check_libraries()
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
    win = build_window(args)
    if shot is not None:
        from studio.gui.screenshot import take_screenshot

        path = take_screenshot(win, *shot)
        print(f"wrote {path}")
        win.close()
        return 0
    win.show()
    return int(app.exec())


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
