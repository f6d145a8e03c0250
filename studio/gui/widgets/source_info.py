"""What the Package page says about a `studio compile` folder chosen as a bundle source. Qt-free."""

from __future__ import annotations

from typing import Any


def compiled_source_text(c: Any, board: Any) -> tuple[str, bool]:
    """(The runtime, library, target and parity of compiled source ``c``; whether its CPU architecture
    mismatches ``board``, a BoardProfile or None)."""
    from studio.package.compiled import norm_arch

    par = c.parity_summary()
    figures = (f", max abs {par['max_abs']:.3g}, max rel {par['max_rel']:.3g}" if par["max_abs"] is not None
               else "")
    lat = (f"; TVM {par['tvm_ms_median']:.3f} ms vs ORT {par['ort_ms_median']:.3f} ms on the compile host"
           if par.get("tvm_ms_median") is not None and par.get("ort_ms_median") is not None else "")
    text = (f"runtime: tvm {c.tvm_version} — {c.library} ({c.library_kind}, {c.arch or 'unknown arch'}), "
            f"target {c.meta.get('target_id', '')}\nparity vs ONNX Runtime: {par['status']}{figures}{lat}")
    mismatch = bool(board is not None and c.arch and c.arch != norm_arch(board.cpu_arch))
    if mismatch:  # first: the label shows a fixed number of lines, the warning must not be the part cut off
        text = (f"⚠ built for {c.arch}, board {board.id} is {board.cpu_arch}: packaging is refused unless "
                f"forced; compile with --target {board.id}\n") + text
    return text, mismatch
