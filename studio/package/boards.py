"""The board registry: one board per file in studio/resources/boards/ (``<id>.yaml``), read through its schema
(``board_schema``). Board ids are the file names, so listing them reads no YAML; packaging, the agent and
`studio compile --target BOARD` (``studio.compile.targets``) all take their boards from here."""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any

from studio.core.errors import InstallError, TargetError
from studio.core.paths import resource_folder
from studio.package.board_model import BoardCompile, BoardProfile  # the data model, re-exported

__all__ = ["BoardCompile", "BoardProfile", "board_accepts", "board_arch", "board_ids", "boards_dir", "default_board",
           "detect_board", "list_boards", "load_board"]


def boards_dir() -> Path:
    """The shipped board profiles; a missing or empty folder (a broken install) is an InstallError."""
    return resource_folder("boards", "*.yaml")


def _board_files() -> dict[str, Path]:
    return {p.stem: p for p in sorted(boards_dir().glob("*.yaml"))}


def board_ids() -> tuple[str, ...]:
    """Every board id (the files' names, sorted), without reading them."""
    return tuple(_board_files())


def __getattr__(name: str) -> Any:
    if name == "BOARD_IDS":  # the old constant, now the registry's ids
        return board_ids()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def list_boards() -> list[BoardProfile]:
    from studio.package.board_schema import read_board

    return [read_board(f) for f in _board_files().values()]


def load_board(board_id: str) -> BoardProfile:
    from studio.package.board_schema import read_board

    files = _board_files()
    if board_id not in files:
        raise TargetError(f"unknown board '{board_id}'", offending=board_id, hint=f"known boards: {', '.join(files)}")
    return read_board(files[board_id])


def board_arch(board_id: str) -> str | None:
    """CPU architecture of a board id: generic-<arch> says it, a named board's file gives it; None if unknown."""
    if board_id.startswith("generic-"):
        return board_id.removeprefix("generic-")
    try:
        return load_board(board_id).cpu_arch
    except (TargetError, InstallError):
        return None


def detect_board(sysroot: Path = Path("/")) -> str:
    """The board this process runs on: device-tree model on ARM boards, else generic-<arch>."""
    arch = platform.machine().lower()
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(arch, arch)
    if arch != "aarch64":
        return f"generic-{arch}"
    model = ""
    for p in (sysroot / "proc/device-tree/model", sysroot / "sys/firmware/devicetree/base/model"):
        try:
            model = p.read_bytes().decode(errors="replace").lower()
            break
        except OSError:
            continue
    if "raspberry pi 5" in model:
        return "rpi5"
    if "orin nano" in model:
        return "jetson-orin-nano"
    if "rk3588" in model:
        return "rk3588"
    if "atlas" in model or "ascend" in model:
        return "atlas-310p"
    return "generic-aarch64"


def board_accepts(agent_board: str, bundle_board: str) -> bool:
    """A bundle runs on its own board, and a generic-<arch> bundle on any board of that arch."""
    if agent_board in ("any", bundle_board):
        return True
    if bundle_board.startswith("generic-"):
        return board_arch(agent_board) == bundle_board.removeprefix("generic-")
    return False


def default_board(target: str | None, built_for: str | None = None, agent_boards: tuple[str, ...] = ()) -> str | None:
    """The board a bundle of the workspace is most likely for, from what the workspace knows: the board the
    model was compiled for, else a board whose accelerator is the current ``target`` (the connected agents'
    own boards first, then this host's generic board), else an agent's board; None when nothing says."""
    files = _board_files()
    if built_for in files:
        return built_for
    boards = list_boards()
    fitting = [b.id for b in boards if target and b.target == target]
    agent_boards = tuple(b for b in agent_boards if b)
    for b in agent_boards:
        if b in fitting:
            return b
    host = detect_board()
    if host in fitting:
        return host
    if fitting:
        return fitting[0]
    return next((b for b in agent_boards if b in files), None)
