"""Compile targets: the ids users type (llvm, aarch64, opencl, a board id) mapped to TVM target JSON dicts.
Boards come from the board registry (studio.package.boards: one YAML file each, its ``compile`` section).

TVM 0.27 accepts targets only as JSON dicts (the old ``"llvm -mtriple=..."`` string form raises), so every
target here is a plain dict that ``tvm.target.Target(...)`` takes. Nothing in this module imports TVM.
"""

from __future__ import annotations

import platform
import shutil
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from studio.core.errors import InputError

if TYPE_CHECKING:
    from studio.package.boards import BoardProfile

AARCH64_TRIPLE = "aarch64-linux-gnu"
AARCH64_CC = "aarch64-linux-gnu-gcc"

_AARCH64_HOST: dict[str, Any] = {"kind": "llvm", "mtriple": AARCH64_TRIPLE}


@dataclass
class CompileTarget:
    """One resolved target: what TVM builds for, whether it runs here, and how its library is exported."""

    id: str  # what the user asked for: "llvm", "aarch64", "rk3588", ...
    tvm: dict[str, Any]  # the TVM target JSON dict (with "host" for GPU kinds)
    description: str
    triple: str  # the CPU triple of the library ("" = this host)
    device: str = "cpu"  # runtime device on the board: "cpu" | "opencl" | "vulkan"
    board: str | None = None
    cross_cc: str | None = None  # compiler that links a board .so, when the triple is not the host's
    notes: list[str] = field(default_factory=list)

    @property
    def is_host(self) -> bool:
        """Whether the built library can be loaded and run on this machine."""
        return self.device == "cpu" and (not self.triple or _same_arch(self.triple))

    @property
    def kind(self) -> str:
        return str(self.tvm.get("kind", "llvm"))


def _same_arch(triple: str) -> bool:
    return triple.split("-")[0] == platform.machine()


def _cpu(mcpu: str | None = None, neon: bool = False) -> dict[str, Any]:
    d: dict[str, Any] = {"kind": "llvm", "mtriple": AARCH64_TRIPLE}
    if mcpu:
        d["mcpu"] = mcpu
    if neon:
        d["mattr"] = ["+neon"]
    return d


# Generic targets: ids are a public contract (issue 7), never rename.
GENERIC: dict[str, tuple[dict[str, Any], str, str, str]] = {
    # id: (tvm dict, triple, device, description)
    "llvm": ({"kind": "llvm"}, "", "cpu", "this host's CPU (LLVM, native)"),
    "aarch64": (_cpu(), AARCH64_TRIPLE, "cpu", "64-bit ARM Linux CPU (LLVM cross build)"),
    "aarch64-neon": (_cpu(neon=True), AARCH64_TRIPLE, "cpu", "64-bit ARM Linux CPU with NEON SIMD"),
    "opencl": ({"kind": "opencl", "host": dict(_AARCH64_HOST)}, AARCH64_TRIPLE, "opencl",
               "OpenCL GPU (Mali and others) on a 64-bit ARM Linux board"),
    "vulkan": ({"kind": "vulkan", "host": dict(_AARCH64_HOST)}, AARCH64_TRIPLE, "vulkan",
               "Vulkan GPU on a 64-bit ARM Linux board"),
}

def target_ids() -> list[str]:
    """Every id `studio compile --target` accepts: the generic ids, then the board registry's ids."""
    from studio.package.boards import board_ids

    return list(GENERIC) + list(board_ids())


_AARCH64_ARCHES = ("aarch64", "arm64", "armv8", "armv8-a", "armv8.2-a")
_X86_64_ARCHES = ("x86_64", "amd64", "x86-64")


def board_target(board: BoardProfile) -> CompileTarget | None:
    """A board's compile target: its file's ``compile.tvm_target``, else an LLVM CPU target from ``cpu_arch``
    and ``compile.mcpu`` (or the Cortex core its ``cpu`` names); None for a CPU TVM is not set up for here."""
    import re

    c = board.compile
    desc = c.description or board.name
    spec = c.tvm_target
    if spec:
        host = spec.get("host") or {}
        triple = str(spec.get("mtriple") or host.get("mtriple") or "")
        device = "cpu" if spec["kind"] == "llvm" else str(spec["kind"])
        return CompileTarget(id=board.id, tvm=_copy(spec), description=desc, triple=triple, device=device,
                             board=board.id, notes=list(c.notes))
    arch = board.cpu_arch.lower()
    if arch in _AARCH64_ARCHES:
        core = c.mcpu
        if not core:
            m = re.search(r"cortex-a\d+", board.cpu.lower())
            core = m.group(0) if m else None
        return CompileTarget(id=board.id, tvm=_cpu(core, neon=True), description=desc, triple=AARCH64_TRIPLE,
                             board=board.id, notes=list(c.notes))
    if arch in _X86_64_ARCHES:
        return CompileTarget(id=board.id, tvm={"kind": "llvm", "mtriple": "x86_64-linux-gnu"}, description=desc,
                             triple="x86_64-linux-gnu", board=board.id, notes=list(c.notes))
    return None


def resolve_target(target_id: str) -> CompileTarget:
    """The CompileTarget for a generic id or a board id (from the board registry); InputError otherwise."""
    from studio.package.boards import board_ids, load_board

    tid = target_id.strip()
    t: CompileTarget | None = None
    if tid in GENERIC:
        tvm, triple, device, desc = GENERIC[tid]
        t = CompileTarget(id=tid, tvm=_copy(tvm), description=desc, triple=triple, device=device)
    elif tid in board_ids():
        t = board_target(load_board(tid))
    if t is None:
        raise InputError(f"unknown compile target '{target_id}'", offending=target_id,
                         hint="choose one of: " + ", ".join(target_ids()))
    if t.triple.startswith("aarch64") and not _same_arch(t.triple):
        t.cross_cc = AARCH64_CC
    return t


def cross_compiler_available(target: CompileTarget) -> str | None:
    """Path of the cross compiler that links a board .so, or None when it is not installed."""
    return shutil.which(target.cross_cc) if target.cross_cc else None


def _copy(d: dict[str, Any]) -> dict[str, Any]:
    import copy

    return copy.deepcopy(d)
