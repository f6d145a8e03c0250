"""Board profiles (studio/resources/boards/*.yaml): what a bundle is built for and what the agent runs it with."""

from __future__ import annotations

import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import InstallError, TargetError
from studio.core.paths import resource_folder

BOARD_IDS = ("rk3588", "jetson-orin-nano", "rpi5", "atlas-310p", "generic-x86_64", "generic-aarch64")


@dataclass
class BoardProfile:
    id: str
    name: str
    cpu_arch: str
    target: str  # the inspector target id of the board's accelerator
    accelerator: str = ""
    cpu: str = ""
    memory_mb: int = 0
    runtime: str = "onnxruntime"
    execution_providers: list[str] = field(default_factory=lambda: ["CPUExecutionProvider"])
    power_sensor: dict[str, Any] = field(default_factory=dict)
    temperature_sensor: dict[str, Any] = field(default_factory=dict)
    optional_targets: list[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "") -> BoardProfile:
        try:
            acc = data.get("accelerator") or {}
            rt = data.get("runtime") or {}
            return cls(id=str(data["id"]), name=str(data.get("name", data["id"])),
                       cpu_arch=str(data["cpu_arch"]), target=str(acc["target"]),
                       accelerator=str(acc.get("name", "")), cpu=str(data.get("cpu", "")),
                       memory_mb=int(data.get("memory_mb", 0)), runtime=str(rt.get("name", "onnxruntime")),
                       execution_providers=list(rt.get("execution_providers") or ["CPUExecutionProvider"]),
                       power_sensor=dict(data.get("power_sensor") or {}),
                       temperature_sensor=dict(data.get("temperature_sensor") or {}),
                       optional_targets=list(acc.get("optional_targets") or []))
        except (KeyError, TypeError, ValueError) as exc:
            raise TargetError(f"board profile is malformed: missing or bad field {exc}", offending=source,
                              hint="compare with studio/resources/boards/generic-x86_64.yaml") from exc

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


def boards_dir() -> Path:
    """The shipped board profiles; a missing or empty folder (a broken install) is an InstallError."""
    return resource_folder("boards", "*.yaml")


def list_boards() -> list[BoardProfile]:

    from studio.core import yamlio

    out = []
    for f in sorted(boards_dir().glob("*.yaml")):
        out.append(BoardProfile.from_dict(yamlio.safe_load(f.read_text(encoding="utf-8")) or {}, str(f)))
    return out


def load_board(board_id: str) -> BoardProfile:

    from studio.core import yamlio

    f = boards_dir() / f"{board_id}.yaml"
    if not f.is_file():
        known = ", ".join(b.id for b in list_boards()) or ", ".join(BOARD_IDS)
        raise TargetError(f"unknown board '{board_id}'", offending=board_id, hint=f"known boards: {known}")
    return BoardProfile.from_dict(yamlio.safe_load(f.read_text(encoding="utf-8")) or {}, str(f))


def board_arch(board_id: str) -> str | None:
    """CPU architecture of a board id, without needing the YAML files (the agent may run without them)."""
    if board_id.startswith("generic-"):
        return board_id.removeprefix("generic-")
    if board_id in BOARD_IDS:
        return "aarch64"
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
