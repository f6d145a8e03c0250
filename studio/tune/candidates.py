"""Which recipes to try, in which order: first the graph changes the target's findings ask for (the recipe that
addresses all of them first, then each fix left out once, so the report shows what each one buys), then the
precisions on the structures that built, then block lists grown from the per-layer error of the ones that
missed the budget.

Precisions by target: a Rockchip NPU builds float as fp16 and int8 itself (rknn-toolkit2 quantizes, calibrated
on the samples; its block list is auto_hybrid: layers below a per-layer cosine stay fp16). Every other target
reads the ONNX's own precision: fp32, fp16 (onnxconverter-common), int8 static (ONNX Runtime's QDQ, calibrated)
or int8 dynamic; its block list is ``keep_fp32``. ``--precision`` restricts the choice; a block list needs a
float precision among the allowed ones (a layer kept "float" is not int8).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from studio.tune.recipe import RKNN_TARGETS, Recipe
from studio.tune.source import PartInfo

NEEDS_STATIC = (*RKNN_TARGETS, "tvm-relax")  # tools that build at fixed shapes


def allowed(target: str, wanted: list[str]) -> list[str]:
    """The precisions tried on ``target`` in the order tried: float first (what a build is judged by), then int8.
    Values: fp32 / fp16 / int8 / int8-dynamic (the --precision words)."""
    if target in RKNN_TARGETS:
        base = ["fp16", "int8"]
        if wanted:
            want = {"fp16" if w == "fp32" else w for w in wanted}
            base = [p for p in base if p in want]
        return base
    base = ["fp32", "fp16", "int8", "int8-dynamic"]
    return [p for p in base if not wanted or p in wanted]


def apply_precision(r: Recipe, target: str, prec: str) -> Recipe:
    """``r`` at one of the --precision words, as this target builds it."""
    if target in RKNN_TARGETS:
        return replace(r, precision="fp32", build="int8" if prec == "int8" else "fp16")
    onnx_prec = {"fp32": "fp32", "fp16": "fp16", "int8": "int8-static", "int8-dynamic": "int8"}[prec]
    return replace(r, precision=onnx_prec, build="")


def structures(info: PartInfo, target: str) -> list[Recipe]:
    """Round one: graph changes at the target's float precision, the one addressing every finding first."""
    static = tuple(sorted(info.dims.items())) if info.dynamic and info.dims else ()
    must_static = target in NEEDS_STATIC
    fixes: dict[str, Any] = {"static": static if (must_static or info.dynamic_risky) else (),
                             "simplify": True, "unfuse": info.fused, "drop_nan_guards": info.nan_trouble,
                             "host_split": bool(info.host_nodes)}
    notes = {"static": "the profile flags dynamic inputs" if info.dynamic_risky else "the tool builds at fixed shapes",
             "simplify": "fold constants and shape arithmetic at the fixed shapes",
             "unfuse": "the target does not know studio.fused",
             "drop_nan_guards": "the target has no lowering for IsNaN",
             "host_split": f"{len(info.host_nodes)} node(s) the profile places on the host"}
    full = Recipe(**fixes, notes=tuple(notes[k] for k, v in fixes.items() if v))
    out = [full]
    for k, v in fixes.items():
        if not v or (k == "static" and must_static):
            continue
        out.append(replace(full, **{k: () if k == "static" else False}, notes=(f"without {k}",)))
    base = Recipe(static=static if must_static else (), notes=("as exported" + (" at fixed shapes" if must_static
                                                                                 else ""),))
    out.append(base)
    if static and not must_static:
        out.append(replace(base, static=static, simplify=True, notes=("static + simplify",)))
    seen, uniq = set(), []
    for r in out:
        if r.key() not in seen:
            seen.add(r.key())
            uniq.append(r)
    return uniq


def hybrid_thresholds(budget: Any) -> list[float]:
    """rknn auto_hybrid thresholds from the budget: the budget's own cosine, then ten times closer to 1."""
    if budget.metric == "cosine":
        c = budget.value
        return sorted({round(c, 6), round(1 - (1 - c) / 10, 7)})
    return [0.99, 0.999]


def grow_block_list(r: Recipe, rows: list[dict[str, Any]], step: int) -> Recipe | None:
    """``r`` with the ``step`` worst new nodes of ``rows`` (per-layer error, worst added first) kept float."""
    have = set(r.keep_fp32)
    new = [row["node"] for row in rows if row["node"] not in have][:step]
    if not new:
        return None
    return replace(r, keep_fp32=tuple(sorted(have | set(new))), notes=(f"+{len(new)} kept float by per-layer error",))
