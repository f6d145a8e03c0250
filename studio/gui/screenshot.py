"""`studio gui --screenshot FILE [--page NAME]`: one page of the window, rendered to a PNG, then exit.

Users attach these to bug reports and docs; the layout test uses the same function, so what it checks at
1280x720 is what a user's screenshot shows. The window waits for the jobs it started (a demo workspace being
written, an inspection) so the picture shows a settled page, not a spinner.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEventLoop
from PySide6.QtWidgets import QMainWindow

from studio.core.atomic import atomic_path
from studio.core.errors import InputError

SETTLE_S = 0.4


def resolve_page(win: QMainWindow, name: str) -> str:
    """The page id for ``name`` (an id or a sidebar title, any case); an InputError lists the valid ones."""
    wanted = name.strip().lower()
    for lp in win.pages:  # type: ignore[attr-defined]
        if wanted in (lp.page_id.lower(), lp.title.lower()):
            return lp.page_id
    ids = ", ".join(lp.page_id for lp in win.pages)  # type: ignore[attr-defined]
    raise InputError(f"no page named '{name}'", offending="--page", hint=f"pages: {ids}")


def wait_idle(win: QMainWindow, timeout_s: float = 120.0) -> bool:
    """Process events until the window's jobs have finished (True) or ``timeout_s`` passed (False)."""
    deadline = time.monotonic() + timeout_s
    settle_until = time.monotonic() + SETTLE_S
    while time.monotonic() < deadline:
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
        if win.jobs.running():  # type: ignore[attr-defined]
            settle_until = time.monotonic() + SETTLE_S
        elif time.monotonic() >= settle_until:
            return True
        time.sleep(0.01)
    return False


def take_screenshot(win: QMainWindow, path: Path, page: str | None = None,
                    size: tuple[int, int] = (1280, 720), timeout_s: float = 120.0) -> Path:
    """Show ``win`` at ``size`` on ``page``, wait for its jobs, and write the PNG atomically."""
    page_id = resolve_page(win, page) if page else None
    win.resize(*size)
    win.show()
    wait_idle(win, timeout_s)
    if page_id is not None:
        win.go_to_page(page_id)  # type: ignore[attr-defined]
        wait_idle(win, timeout_s)
    image = win.grab()
    with atomic_path(path) as tmp:
        if not image.save(str(tmp), "PNG"):
            raise InputError(f"could not write the screenshot to {path}", offending=str(path),
                             hint="check the folder is writable")
    return path
