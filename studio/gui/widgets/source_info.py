"""What the Package page says about a `studio compile` folder chosen as a bundle source (plain text, no widgets;
said in the studio's language through QCoreApplication.translate, which needs no application object)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication

from studio.core.catalogue import _ as core_text
from studio.core.errors import StudioError

translate = QCoreApplication.translate


def compiled_source_text(c: Any, board: Any) -> tuple[str, bool]:
    """(The runtime, library, target and parity of compiled source ``c``; whether its CPU architecture
    mismatches ``board``, a BoardProfile or None)."""
    from studio.package.compiled import norm_arch

    par = c.parity_summary()
    figures = (translate("SourceInfo", ", max abs {max_abs}, max rel {max_rel}").format(
        max_abs=f"{par['max_abs']:.3g}", max_rel=f"{par['max_rel']:.3g}") if par["max_abs"] is not None else "")
    lat = (translate("SourceInfo", "; TVM {tvm} ms vs ORT {ort} ms on the compile host").format(
        tvm=f"{par['tvm_ms_median']:.3f}", ort=f"{par['ort_ms_median']:.3f}")
           if par.get("tvm_ms_median") is not None and par.get("ort_ms_median") is not None else "")
    text = translate("SourceInfo", "runtime: tvm {version} — {library} ({kind}, {arch}), target {target}\n"
                                   "parity vs ONNX Runtime: {status}{figures}{latency}").format(
        version=c.tvm_version, library=c.library, kind=c.library_kind,
        arch=c.arch or translate("SourceInfo", "unknown arch"), target=c.meta.get("target_id", ""),
        status=core_text(par["status"] or ""), figures=figures, latency=lat)
    mismatch = bool(board is not None and c.arch and c.arch != norm_arch(board.cpu_arch))
    if mismatch:  # first: the label shows a fixed number of lines, the warning must not be the part cut off
        text = translate("SourceInfo", "⚠ built for {arch}, board {board} is {board_arch}: packaging is refused "
                                       "unless forced; compile with --target {board}").format(
            arch=c.arch, board=board.id, board_arch=board.cpu_arch) + "\n" + text
    return text, mismatch


def read_compiled_source(src: str) -> Any:
    """The CompiledSource when ``src`` is a `studio compile` folder, else None (an unreadable one too)."""
    from studio.package.compiled import is_compiled_dir, read_compiled

    if not src or not is_compiled_dir(src):
        return None
    try:
        return read_compiled(src)
    except StudioError:
        return None


def board_text(board: Any, target: str | None) -> str:
    """The Board row's line: the chosen BoardProfile's CPU, accelerator, runtime and power sensor, or, with none
    chosen, why (no board carries the workspace's ``target``)."""
    if board is None:
        return translate("PackagingPage", "No board of the workspace's target {target}: choose the board the bundle "
                         "is for.").format(target=target or "—")
    return translate("PackagingPage", "{cpu_arch}, {accelerator} → inspector target {target}; {runtime} with {join}; "
                     "power: {get}").format(cpu_arch=board.cpu_arch, accelerator=board.accelerator,
                                            target=board.target, runtime=board.runtime,
                                            join=", ".join(board.execution_providers),
                                            get=board.power_sensor.get("kind", "none"))
