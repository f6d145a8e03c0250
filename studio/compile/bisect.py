"""Failure localisation: when TVM fails on a whole graph, find the smallest node set that fails the same way.

1. Prefix bisection: graph nodes are topologically ordered and the importer converts them in order, so the
   shortest failing prefix ends at the culprit node (binary search, ~log2(N) trials).
2. Shrink: the culprit plus its ancestors, cut at increasing depth; tensors cut off become inputs fed with
   the shapes ONNX Runtime computed, or (second try at each depth) constants holding the values it
   computed, as an importer that folds shape arithmetic sees them. The first cut that still fails the same way
   is the reported node set, saved as a small ONNX file a user can open and attach to a bug report.

Each trial is ``trial(model, shapes, dtypes) -> StageFailure | None`` (a TVM import, or import + build).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import onnx

from studio.compile.graph import ancestors, node_label, probe_tensors, subgraph
from studio.compile.tvm_backend import StageFailure
from studio.core.jobs import JobState
from studio.core.parity import random_inputs

Trial = Callable[[onnx.ModelProto, dict[str, list[int]], dict[str, str]], StageFailure | None]
MAX_DEPTH = 8


@dataclass
class Localisation:
    culprit: str  # the node whose conversion fails
    culprit_op: str
    nodes: list[str]  # smallest failing node set (names), the culprit last
    op_types: list[str]
    cut_inputs: dict[str, list[int]]  # inputs of the reduced graph and their shapes
    mode: str  # "inputs" | "constants" | "ancestors" | "prefix": how cut tensors were fed
    trials: int
    failure: StageFailure
    subgraph: onnx.ModelProto | None = field(default=None, repr=False)


def localise(model: onnx.ModelProto, shapes: dict[str, list[int]], dtypes: dict[str, str], trial: Trial,
             original: StageFailure, job: JobState | None = None, max_trials: int = 64) -> Localisation | None:
    """Name the smallest node set that reproduces ``original``; None when no prefix reproduces it."""
    nodes = list(model.graph.node)
    n = len(nodes)
    count = 0

    def fails(m: onnx.ModelProto, s: dict[str, list[int]], d: dict[str, str]) -> StageFailure | None:
        nonlocal count
        count += 1
        if job is not None:
            job.set_status(f"localising the failure: trial {count}")
            job.check_cancelled()
        try:
            f = trial(m, s, d)
        except Exception as exc:  # a trial that crashes in our own extraction is inconclusive: not a repro
            f = StageFailure("extract", type(exc).__name__, str(exc))
        return f if f is not None and f.same_as(original) else None

    def prefix(k: int) -> tuple[onnx.ModelProto, dict[str, list[int]], dict[str, str]]:
        return subgraph(model, range(k), shapes=shapes)

    # 1. shortest failing prefix (fails(prefix(n)) is the original failure itself)
    lo, hi = 1, n
    last_fail: StageFailure | None = original
    while lo < hi and count < max_trials:
        mid = (lo + hi) // 2
        f = fails(*prefix(mid))
        if f is not None:
            hi, last_fail = mid, f
        else:
            lo = mid + 1
    k = hi
    culprit_i = k - 1
    if fails(*prefix(k)) is None:
        return None
    culprit = nodes[culprit_i]

    best: tuple[list[int], str, onnx.ModelProto, dict[str, list[int]]] | None = None
    # 2. the culprit's ancestor cone cut at growing depth, with ORT-computed values for cut tensors
    feed = random_inputs({k: (dtypes.get(k, "float32"), v) for k, v in shapes.items()})
    known: dict[str, Any] = probe_tensors(model, feed) if n <= 5000 else {}
    full_cone = ancestors(nodes, culprit_i)
    if known:
        prev: list[int] | None = None
        for depth in range(0, MAX_DEPTH + 1):
            idx = ancestors(nodes, culprit_i, depth)
            if idx == prev:
                break
            prev = idx
            for mode in ("inputs", "constants"):
                try:
                    m, s, d = subgraph(model, idx, outputs=[o for o in culprit.output if o], known=known,
                                       as_constants=(mode == "constants"), shapes=shapes)
                except KeyError:
                    continue
                f = fails(m, s, d)
                if f is not None:
                    best, last_fail = (idx, mode, m, s), f
                    break
            if best is not None or count >= max_trials:
                break
    if best is None:
        m, s, d = subgraph(model, full_cone, outputs=[o for o in culprit.output if o], shapes=shapes)
        f = fails(m, s, d)
        if f is not None:
            best, last_fail = (full_cone, "ancestors", m, s), f
    if best is None:
        m, s, _ = prefix(k)
        best = (list(range(k)), "prefix", m, s)
    idx, mode, sub, cut = best
    return Localisation(culprit=node_label(culprit, culprit_i), culprit_op=culprit.op_type,
                        nodes=[node_label(nodes[i], i) for i in idx], op_types=[nodes[i].op_type for i in idx],
                        cut_inputs={k_: list(map(int, v)) for k_, v in cut.items()}, mode=mode, trials=count,
                        failure=last_fail or original, subgraph=sub)
