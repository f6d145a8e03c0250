"""Compile targets: the ids users type (llvm, aarch64, opencl, a board id) mapped to TVM target JSON dicts.

TVM 0.27 accepts targets only as JSON dicts (the old ``"llvm -mtriple=..."`` string form raises), so every
target here is a plain dict that ``tvm.target.Target(...)`` takes. Nothing in this module imports TVM.
"""

from __future__ import annotations

import platform
import shutil
from dataclasses import dataclass, field
from typing import Any

from studio.core.errors import InputError, TargetError

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

# Boards: the CPU target the studio compiles for by default; board yaml files may override with `tvm_target`.
BOARDS: dict[str, tuple[dict[str, Any], str, str, str, list[str]]] = {
    "rk3588": (_cpu("cortex-a76", neon=True), AARCH64_TRIPLE, "cpu", "Rockchip RK3588 (Cortex-A76/A55 CPU)",
               ["the Mali-G610 GPU is reachable with --target opencl; the RKNN NPU is not a TVM target"]),
    "jetson-orin-nano": (_cpu("cortex-a78", neon=True), AARCH64_TRIPLE, "cpu",
                         "NVIDIA Jetson Orin Nano (Cortex-A78AE CPU)",
                         ["the PyPI apache-tvm wheel has no CUDA codegen; use TensorRT for the GPU"]),
    "rpi5": (_cpu("cortex-a76", neon=True), AARCH64_TRIPLE, "cpu", "Raspberry Pi 5 (Cortex-A76 CPU)", []),
    "atlas-310p": (_cpu(neon=True), AARCH64_TRIPLE, "cpu", "Huawei Atlas 310P host CPU (aarch64)",
                   ["the Ascend NPU is reached through CANN/ATC, not TVM: this builds for the host CPU"]),
    "generic-x86_64": ({"kind": "llvm", "mtriple": "x86_64-linux-gnu"}, "x86_64-linux-gnu", "cpu",
                       "generic x86-64 Linux CPU", []),
    "generic-aarch64": (_cpu(neon=True), AARCH64_TRIPLE, "cpu", "generic 64-bit ARM Linux CPU", []),
}


def target_ids() -> list[str]:
    """Every id `studio compile --target` accepts (generic ids, then boards, including board yaml files)."""
    return list(GENERIC) + sorted(set(BOARDS) | set(_board_files()))


def _board_files() -> dict[str, Any]:
    from studio.package.boards import boards_dir

    return {p.stem: p for p in sorted(boards_dir().glob("*.yaml"))}


def _board_yaml(board: str) -> dict[str, Any]:
    path = _board_files().get(board)
    if path is None:
        return {}
    import yaml

    from studio.core import yamlio

    try:
        data = yamlio.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise TargetError(f"board profile {path.name} is not valid YAML: {exc}", offending=str(path),
                          hint="fix the YAML syntax of the board profile") from exc
    return data if isinstance(data, dict) else {}


def _from_board_yaml(board: str, data: dict[str, Any], *, spec_only: bool = False) -> CompileTarget | None:
    """A board yaml may name its TVM target (``tvm_target`` / ``compile.tvm_target``) or just its CPU
    (``cpu_arch: aarch64``, ``cpu: "4x Cortex-A76 ..."``), from which an LLVM target is derived."""
    import re

    spec = data.get("tvm_target") or (data.get("compile") or {}).get("tvm_target")
    desc = str(data.get("name") or data.get("description") or board)
    if isinstance(spec, dict) and spec.get("kind"):
        host = spec.get("host") or {}
        triple = str(spec.get("mtriple") or host.get("mtriple") or "")
        device = "cpu" if spec["kind"] == "llvm" else str(spec["kind"])
        return CompileTarget(id=board, tvm=dict(spec), description=desc, triple=triple, device=device, board=board)
    if spec_only:
        return None
    cpu = data.get("cpu")
    cpu_d = cpu if isinstance(cpu, dict) else {}
    arch = str(data.get("cpu_arch") or data.get("arch") or cpu_d.get("arch") or "").lower()
    if arch in ("aarch64", "arm64", "armv8", "armv8-a", "armv8.2-a"):
        core = data.get("mcpu") or cpu_d.get("mcpu")
        if not core and isinstance(cpu, str):
            m = re.search(r"cortex-a\d+", cpu.lower())
            core = m.group(0) if m else None
        return CompileTarget(id=board, tvm=_cpu(str(core) if core else None, neon=True), description=desc,
                             triple=AARCH64_TRIPLE, board=board)
    if arch in ("x86_64", "amd64", "x86-64"):
        return CompileTarget(id=board, tvm={"kind": "llvm", "mtriple": "x86_64-linux-gnu"}, description=desc,
                             triple="x86_64-linux-gnu", board=board)
    return None


def resolve_target(target_id: str) -> CompileTarget:
    """The CompileTarget for a generic id or a board id; InputError naming the id otherwise."""
    tid = target_id.strip()
    if tid in GENERIC:
        tvm, triple, device, desc = GENERIC[tid]
        t = CompileTarget(id=tid, tvm=_copy(tvm), description=desc, triple=triple, device=device)
    else:
        # a board yaml's explicit tvm_target wins, then the built-in board table, then the yaml's CPU
        data = _board_yaml(tid)
        t = _from_board_yaml(tid, data, spec_only=True) if data else None
        if t is None and tid in BOARDS:
            tvm, triple, device, desc, notes = BOARDS[tid]
            t = CompileTarget(id=tid, tvm=_copy(tvm), description=desc, triple=triple, device=device, board=tid,
                              notes=list(notes))
        if t is None and data:
            t = _from_board_yaml(tid, data)
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
