"""Start the studio window: `python -m studio.gui [--demo DIR] [--workspace DIR]` and `studio gui`.

The window appears at once; the demo workspace's sample models are written by a job whose progress shows in the
Jobs panel. Without flags the last workspace is reopened, else the demo workspace in its default place.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def default_demo_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "deployment-studio" / "demo-workspace"


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--demo", metavar="DIR", nargs="?", const=str(default_demo_dir()),
                   help="create (or reuse) the demo workspace in DIR and open it "
                        f"(default DIR: {default_demo_dir()})")
    g.add_argument("--workspace", metavar="DIR", help="open (or create) the workspace in DIR")
    p.add_argument("--theme", choices=["light", "dark"], help="override the saved theme for this session")


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
    try:
        from PySide6.QtWidgets import QApplication
    except ImportError as exc:
        from studio.core.errors import DependencyMissing

        raise DependencyMissing.for_module("PySide6", "gui", "the studio window") from exc
    from studio.gui.main_window import APPLICATION, ORGANIZATION

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    win = build_window(args)
    win.show()
    return int(app.exec())
