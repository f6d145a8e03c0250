"""A fix's memory: the estimate before it starts, so a conversion that cannot fit stops with exit 2 and the ways
out instead of an out-of-memory kill half-way (issue 29: `studio fix --int8` of Qwen2-VL-2B's 7.1 GB decoder was
killed by the kernel at 23 GB on a 24 GB machine).

The peak per file is modelled as ``BASE + factor x the file's weight bytes`` (the graph file plus the external data
it references, read from the graph without its weights). The factors are peak RSS over weight bytes measured with
`/usr/bin/time` on the 2.66 GB vision part of Qwen2-VL-2B at real size (BENCHMARKS.md, issue 29): FP16 16.1 GB
(5.6x above the base), dynamic INT8 18.6 GB (6.5x): the converter's in-memory model and its converted copy, then
ONNX Runtime sessions of the original and the result for parity and the inspection diff. Static dims, simplify and
the graph rewrites are not modelled (not measured); files are fixed one at a time, so the peak is the largest file's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.machine_memory import GB, MemoryShortfall, machine_available

BASE_BYTES = int(1.2 * GB)  # python + onnx + onnxruntime loaded, before the model
FACTORS = {"fp16": 5.8, "int8": 6.7, "int8-static": 6.7}  # measured 5.6x / 6.5x, rounded up
STREAMED = {"fp16": 1.2}  # weights left on disk (studio.optimize.streamed): measured 0.98x (the FP32 parity session), rounded up


@dataclass
class FixMemory:
    """The estimated peak of each file's conversion and what the machine has free."""

    files: dict[str, tuple[int, int, str]]  # part -> (weight bytes, estimated peak bytes, precision)
    available: int
    available_source: str
    streamed: list[str] = field(default_factory=list)  # parts whose weights are converted from disk

    @property
    def peak(self) -> int:
        return max((p for _w, p, _prec in self.files.values()), default=0)

    def to_dict(self) -> dict[str, Any]:
        return {"files": {k: {"weight_bytes": w, "peak_bytes": p, "precision": prec}
                          for k, (w, p, prec) in self.files.items()},
                "streamed": list(self.streamed), "peak_bytes": self.peak, "available_bytes": self.available, "available_source": self.available_source}


def weight_bytes(model: Path) -> int:
    """The graph file's size plus the external data it references (the graph read without its weights)."""
    return _weights(model)[0]


def _weights(model: Path) -> tuple[int, bool]:
    """``weight_bytes`` and whether any weights are in data files."""
    from studio.core.external_data import data_files, read_graph

    graph = read_graph(model)  # a missing or unreadable file: ModelError naming it
    files = data_files(graph, model)
    return model.stat().st_size + sum(df.needed for df in files), bool(files)


def check_fix_fits(jobs: list[tuple[str, Path, str, bool]]) -> FixMemory:
    """``jobs``: (part, source file, precision, streamed: its weights converted from disk). MemoryShortfall (exit 2, before any work) when a conversion's
    estimate exceeds the free memory. ``STUDIO_FIX_MEMORY`` (GB) stands in for the free memory (tests)."""
    avail, source = machine_available()
    forced = os.environ.get("STUDIO_FIX_MEMORY")
    if forced:
        avail, source = int(float(forced) * GB), "STUDIO_FIX_MEMORY"
    est = FixMemory({}, avail, source)
    external: dict[str, bool] = {}
    for part, src, prec, on_disk in jobs:
        if prec in FACTORS:
            w, external[part] = _weights(src)
            factor = STREAMED[prec] if on_disk and prec in STREAMED else FACTORS[prec]
            est.files[part] = (w, BASE_BYTES + int(factor * w), prec)
            if on_disk and prec in STREAMED:
                est.streamed.append(part)
    over = {k: v for k, v in est.files.items() if v[1] > avail}
    if over:
        part, (w, peak, prec) = max(over.items(), key=lambda kv: kv[1][1])
        ways = [f"run it on a machine with {peak / GB + 1:.0f} GB or more free, or free "
                f"{(peak - avail) / GB:.1f} GB here (other programs, other conversions)"]
        fits = [k for k, v in est.files.items() if v[1] <= avail]
        if fits:
            ways.append(f"convert only the parts that fit now ({', '.join(fits)}) and keep '{part}' in FP32")
        fp16 = STREAMED["fp16"] if external[part] else FACTORS["fp16"]  # FP16 alone streams data-file weights
        if prec != "fp16" and BASE_BYTES + fp16 * w <= avail:
            ways.append(f"--fp16 for '{part}' (estimated peak {(BASE_BYTES + fp16 * w) / GB:.1f} GB)")
        raise MemoryShortfall(
            f"converting '{part}' to {prec} will not fit in memory: {w / GB:.1f} GB of weights, estimated peak "
            f"{peak / GB:.1f} GB, {avail / GB:.1f} GB free ({source})", offending=str(jobs[0][1]),
            hint="ways out: " + "; ".join(ways), details={"estimate": est.to_dict(), "ways_out": ways})
    return est
