"""Where file dialogs open: beside what the field already holds, else in the workspace, never in the process's
working directory (which for `make run` is the checkout, and for a desktop launcher is `/`)."""

from __future__ import annotations

from pathlib import Path

from studio.core.workspace import Workspace


def start_dir(current: str | Path | None = None, workspace: Workspace | None = None, sub: str = "",
              name: str = "") -> str:
    """The folder (or, with ``name``, the file path) a dialog starts at.

    ``current``: what the field holds (its folder is used when it exists); ``sub``: a folder inside the
    workspace (models, bundles, recordings, ...) used when it exists; else the workspace, else the home folder.
    """
    folder: Path | None = None
    if current:
        p = Path(str(current)).expanduser()
        for cand in (p, p.parent):
            if cand.is_dir() and str(cand) not in ("", "."):
                folder = cand
                break
    if folder is None and workspace is not None:
        folder = workspace.root / sub if sub and (workspace.root / sub).is_dir() else workspace.root
    if folder is None:
        folder = Path.home()
    return str(folder / name) if name else str(folder)
