"""The numbers a candidate is judged by: accuracy against the FP32 original, device coverage, the Pareto front.

Accuracy is over every sample and every float output: the worst cosine, the largest absolute difference, and the
share of rows whose arg-max (last axis) agrees ("top1-agree"). Coverage is the share of the nodes the tool placed
that it placed on the device (the host's FLOPs share is reported beside it: the integer work a Rockchip NPU leaves
to its CPU weighs almost no FLOPs, yet each such node is a host round trip).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from studio.core.parity import cosine


@dataclass
class Accuracy:
    cosine: float = 1.0
    max_abs: float = 0.0
    top1_agree: float = 1.0
    samples: int = 0
    compared: int = 0  # (sample, output) pairs

    def value(self, metric: str) -> float:
        return {"cosine": self.cosine, "max-abs": self.max_abs, "top1-agree": self.top1_agree}[metric]


def accuracy(reference: list[list[Any]], got: list[list[Any]]) -> Accuracy | None:
    """``got`` against ``reference`` (per sample, per output); None when a shape or count differs."""
    if len(reference) != len(got) or not reference:
        return None
    acc = Accuracy(samples=len(reference))
    agree, rows = 0, 0
    for ref_outs, outs in zip(reference, got, strict=True):
        if len(ref_outs) != len(outs):
            return None
        for x, y in zip(ref_outs, outs, strict=True):
            x = np.asarray(x)
            if x.dtype.kind not in "fc":
                continue
            x64 = x.astype(np.float64)
            y64 = np.asarray(y, dtype=np.float64)
            if x64.size != y64.size:
                return None
            y64 = y64.reshape(x64.shape)
            acc.compared += 1
            if not np.all(np.isfinite(y64)):
                acc.cosine, acc.max_abs = min(acc.cosine, 0.0), float("inf")
                continue
            d = float(np.abs(x64 - y64).max()) if x64.size else 0.0
            acc.max_abs = max(acc.max_abs, d)
            acc.cosine = min(acc.cosine, cosine(x64, y64))
            if x64.ndim >= 1 and x64.shape[-1] > 1:
                ra = x64.reshape(-1, x64.shape[-1]).argmax(-1)
                rb = y64.reshape(-1, x64.shape[-1]).argmax(-1)
                agree += int((ra == rb).sum())
                rows += ra.size
    acc.top1_agree = agree / rows if rows else 1.0
    return acc


def coverage(verdict: Any, result: Any = None) -> float | None:
    """The device's share of the placed nodes under ``verdict`` (a ModelVerdict; ``result`` the tool's
    VerifyResult with each node's placement); None when the model did not build."""
    if verdict is None or verdict.builds is not True:
        return None
    if verdict.verdict == "runs":
        return 1.0
    host = len(verdict.host_nodes)
    placed = sum(1 for n in getattr(result, "nodes", []) or [] if n.placement in ("accelerator", "cpu"))
    return round(1.0 - host / max(placed, host, 1), 4)


def pareto(points: list[tuple[str, float, float]]) -> set[str]:
    """Ids not dominated on (objective, accuracy), both already oriented so that larger is better."""
    front = set()
    for pid, o, a in points:
        if not any((o2 >= o and a2 >= a) and (o2 > o or a2 > a) for _pid2, o2, a2 in points):
            front.add(pid)
    return front
