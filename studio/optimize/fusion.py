"""`studio fix --fuse-attention`: rewrite attention subgraphs into ``studio.fused::FusedAttention``.

Pattern (onnxscript's rewriter; the shapes seen in eager and SDPA-style TorchScript / dynamo exports):

    MatMul(Q [*scale], K^T [*scale]) -> [Mul|Div scale] -> [Add mask] -> Softmax(-1) -> [Where(IsNaN, 0, .)]
        -> MatMul(., V)

K^T may be ``Transpose(K, perm=[0,1,3,2])`` (K is BHSd), ``Transpose(K, perm=[0,2,3,1])`` (K is BSHd, how
transformers' CLIP / ViT / BERT exports look) or any other tensor (taken as already transposed, BHdS). Scales
must be constant scalars; they are multiplied into one ``scale`` attribute. The fused node keeps the scope of
the nodes it replaced in its name (``/.../self_attn/FusedAttention``) so profiles still map to modules.

    rep = fuse_attention("model.onnx", "model.fused.onnx")   # FusionReport: sites, parity, per-target diff
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.catalogue import N_
from studio.core.errors import InputError
from studio.core.jobs import JobState
from studio.core.reports import Report
from studio.optimize.api import FixParity, check_parity
from studio.optimize.custom_ops import DOMAIN, DOMAIN_VERSION, FUSED_ATTENTION, make_session

SCHEMA_VERSION = 1


@dataclass
class FusedSite:
    """One attention subgraph replaced by one fused node."""

    node: str  # name of the new FusedAttention node
    scope: str  # common name prefix of the replaced nodes, e.g. /model/vision_model/encoder/layers.0/self_attn
    replaced: list[str] = field(default_factory=list)  # names of the nodes it replaced
    key_format: str = "BHSd"
    scale: float = 1.0
    has_mask: bool = False
    nan_to_zero: bool = False
    num_heads: int = 0


@dataclass
class FusionReport(Report):
    schema_version: int = SCHEMA_VERSION
    model: str = ""
    output: str = ""
    domain: str = DOMAIN
    op: str = FUSED_ATTENTION
    runtime: str = ""  # how ORT ran the fused model for parity
    sites: list[FusedSite] = field(default_factory=list)
    nodes_before: int = 0
    nodes_after: int = 0
    parity: FixParity | None = None
    diff: Any = None  # studio.optimize.api.AnalysisDiff (before/after inspection per target)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.parity is None or self.parity.passed


# -- the rewrite rule ---------------------------------------------------------------------------------

def _scalar(value: Any) -> float | None:
    """The float of a constant single-element tensor (initializer or Constant node), else None."""
    if value is None:
        return None
    cv = value.const_value
    if cv is None:
        node = value.producer()
        if node is not None and node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            attr = node.attributes.get("value")
            if attr is not None:
                cv = attr.value
            else:
                for k in ("value_float", "value_int"):
                    if k in node.attributes:
                        return float(node.attributes[k].value)
    if cv is None:
        return None
    try:
        arr = np.asarray(cv.numpy())
    except Exception:
        return None
    return float(arr.reshape(-1)[0]) if arr.size == 1 else None


def _common_scope(names: list[str]) -> str:
    parts = [n.split("/") for n in names if n]
    if not parts:
        return ""
    prefix: list[str] = []
    for segs in zip(*parts, strict=False):
        if all(s == segs[0] for s in segs):
            prefix.append(segs[0])
        else:
            break
    if len(prefix) == min(len(p) for p in parts):  # one name: drop the node's own last segment
        prefix = prefix[:-1]
    return "/".join(prefix)


def _rule_class() -> Any:
    from onnxscript.rewriter import pattern

    class FuseAttention(pattern.RewriteRuleClassBase):
        def __init__(self) -> None:
            super().__init__("studio-fuse-attention", remove_nodes=True)
            self.sites: list[FusedSite] = []
            self._pending: FusedSite | None = None

        def pattern(self, op: Any, query: Any, key: Any, value: Any, mask: Any, query_scale: Any,
                    key_scale: Any, qk_scale: Any, nan_fill: Any) -> Any:
            kt = pattern.OrValue([op.Transpose(key, perm=[0, 1, 3, 2]), op.Transpose(key, perm=[0, 2, 3, 1]), key],
                                 tag_var="key_format", tag_values=["BHSd", "BSHd", "BHdS"])
            q = pattern.OrValue([op.Mul(query, query_scale), op.Div(query, query_scale), query],
                                tag_var="query_scaling", tag_values=["Mul", "Div", "None"])
            kt = pattern.OrValue([op.Mul(kt, key_scale), op.Div(kt, key_scale), kt],
                                 tag_var="key_scaling", tag_values=["Mul", "Div", "None"])
            score = op.MatMul(q, kt)
            score = pattern.OrValue([op.Mul(score, qk_scale), op.Div(score, qk_scale), score],
                                    tag_var="qk_scaling", tag_values=["Mul", "Div", "None"])
            score = pattern.OrValue([op.Add(score, mask), score], tag_var="has_mask", tag_values=[True, False])
            weights = op.Softmax(score, axis=-1)
            guarded = op.Where(op.IsNaN(weights), nan_fill, weights)
            weights = pattern.OrValue([guarded, weights], tag_var="nan_guard", tag_values=[True, False])
            return op.MatMul(weights, value)

        def check(self, context: Any, query: Any, key: Any, value: Any, mask: Any, key_format: str,
                  **b: Any) -> Any:
            result = pattern.MatchResult()
            scale = 1.0
            for tag, name in (("query_scaling", "query_scale"), ("key_scaling", "key_scale"),
                              ("qk_scaling", "qk_scale")):
                how = b.get(tag, "None")
                if how == "None":
                    continue
                s = _scalar(b.get(name))
                if s is None or s == 0.0 or not math.isfinite(s):
                    return result.fail(f"{name} is not a constant non-zero scalar")
                scale *= s if how == "Mul" else 1.0 / s
            if b.get("nan_guard") and _scalar(b.get("nan_fill")) != 0.0:
                return result.fail("Where(IsNaN) does not fill with a constant 0")
            qshape = query.shape
            if qshape is not None and qshape.rank() != 4:
                return result.fail("query is not rank 4 (B, H, S, D)")
            if key_format == "BSHd" and key.shape is not None and key.shape.rank() != 4:
                return result.fail("key is not rank 4")
            heads = qshape[1] if qshape is not None else None
            names = [n.name for n in context.nodes if n.name]
            scope = _common_scope(names)
            self._pending = FusedSite(node=(scope + "/" if scope else "") + FUSED_ATTENTION, scope=scope,
                                      replaced=names, key_format=key_format, scale=scale,
                                      has_mask=bool(b.get("has_mask")), nan_to_zero=bool(b.get("nan_guard")),
                                      num_heads=heads if isinstance(heads, int) else 0)
            return result

        def rewrite(self, op: Any, query: Any, key: Any, value: Any, mask: Any, **_: Any) -> Any:
            site = self._pending
            assert site is not None
            args = [query, key, value] + ([mask] if site.has_mask else [])
            out = op.FusedAttention(*args, num_heads=site.num_heads, scale=float(site.scale),
                                    key_format=site.key_format, nan_to_zero=int(site.nan_to_zero),
                                    _domain=DOMAIN, _version=DOMAIN_VERSION)
            used = {s.node for s in self.sites}
            name, i = site.node, 1
            while name in used:
                name, i = f"{site.node}_{i}", i + 1
            site.node = name
            out.producer().name = name
            self.sites.append(site)
            return out

    return FuseAttention


def fuse_attention_proto(model: Any) -> tuple[Any, list[FusedSite]]:
    """Rewrite every matching attention subgraph of ``model`` (a ModelProto); returns (new model, sites)."""
    import onnx
    import onnx_ir as ir
    from onnxscript.rewriter import RewriteRule, RewriteRuleSet
    from onnxscript.rewriter import rewrite as _rewrite

    original = model
    try:  # shapes let the rule read num_heads and check ranks; a model without them still fuses
        from studio.core.big_proto import infer_shapes

        model = infer_shapes(model, strict_mode=False)  # past 2 GB: on the weightless skeleton
    except Exception:
        pass
    rule = _rule_class()()  # one instance, so the sites it records are ours to read
    compiled = RewriteRule(rule.pattern, rule.rewrite, rule.check, name=rule.name, remove_nodes=True)
    ir_model = _rewrite(ir.serde.deserialize_model(model), pattern_rewrite_rules=RewriteRuleSet([compiled]))
    out = ir.serde.serialize_model(ir_model)
    # keep only the value_info the model came with: inferred shapes are not ours to persist
    declared = {v.name for v in original.graph.value_info}
    keep = [v for v in out.graph.value_info if v.name in declared]
    del out.graph.value_info[:]
    out.graph.value_info.extend(keep)
    if rule.sites and not any(o.domain == DOMAIN for o in out.opset_import):
        out.opset_import.append(onnx.helper.make_opsetid(DOMAIN, DOMAIN_VERSION))
    return out, list(rule.sites)


# -- parity -------------------------------------------------------------------------------------------

def fused_parity(original: Path | str | Any, fused: Path | str | Any, *, dims: dict[str, int] | None = None,
                 cases: int = 2, seed: int = 0, custom_op_lib: Path | str | None = None) -> FixParity:
    """ORT on the unfused model vs ORT (with the studio.fused runtime registered) on the fused one: the
    reference's outputs matched by name (``studio.core.parity``, judged as a rewrite)."""
    from studio.core.runner import OnnxRuntimeRunner
    new = OnnxRuntimeRunner.wrap(make_session(fused, custom_op_lib=custom_op_lib))
    return check_parity(original, fused, "fp32", dims=dims, cases=cases, seed=seed, candidate=new)


# -- the fix ------------------------------------------------------------------------------------------

def fuse_attention(model: Path | str, out: Path | str, *, parity_cases: int = 2, dims: dict[str, int] | None = None,
                   custom_op_lib: Path | str | None = None, targets: list[str] | None = None,
                   profile_dirs: list[Path] | None = None, inspect: bool = True,
                   job: JobState | None = None) -> FusionReport:
    """Fuse attention in ``model``, write ``out`` atomically (only if ORT loads it and parity can run), and
    report parity against the unfused model plus the before/after inspection per target.

    Raises InputError when nothing matches (nothing is written) or for bad paths.
    """
    from studio.optimize.api import _load_full, check_out_path, save_model_atomic

    job = job or JobState(name="fuse-attention")
    model, out = Path(model), Path(out)
    check_out_path(model, out, "fused")
    t0 = time.perf_counter()
    job.set_status(f"matching attention in {model.name}")
    proto = _load_full(model)
    rep = FusionReport(model=str(model), output=str(out), nodes_before=len(proto.graph.node),
                       runtime=N_(f"custom-op library {custom_op_lib}") if custom_op_lib
                       else N_("onnxruntime-extensions Python custom op"))
    fused, sites = fuse_attention_proto(proto)
    rep.timings["rewrite"] = round(time.perf_counter() - t0, 4)
    if not sites:
        raise InputError(f"no attention subgraph matched in {model.name}", offending=str(model),
                         hint="the rule needs MatMul(Q, K^T) -> constant scale -> [Add mask] -> Softmax(-1) -> "
                              "MatMul(V); run `studio fix --simplify` first if shapes/constants are computed")
    rep.sites, rep.nodes_after = sites, len(fused.graph.node)
    job.set_progress(30)
    job.check_cancelled()
    job.set_status(f"parity of {len(sites)} fused attention node(s) against the unfused model")
    t = time.perf_counter()

    def check(tmp: Path) -> FixParity:
        p = fused_parity(model, tmp, dims=dims, cases=parity_cases, custom_op_lib=custom_op_lib)
        p.fixed = str(out)
        return p

    rep.parity = save_model_atomic(fused, out, check)
    rep.timings["parity"] = round(time.perf_counter() - t, 4)
    job.set_progress(70)
    if inspect:
        from studio.inspect.api import inspect_model
        from studio.optimize.api import analysis_diff

        t = time.perf_counter()
        before = inspect_model(model, targets, profile_dirs=profile_dirs, custom_domains=[DOMAIN])
        after = inspect_model(out, targets, profile_dirs=profile_dirs, custom_domains=[DOMAIN])
        rep.diff = analysis_diff(before, after)
        rep.timings["inspect"] = round(time.perf_counter() - t, 4)
    rep.timings["total"] = round(time.perf_counter() - t0, 4)
    job.set_progress(100, force=True)
    job.set_status(f"fused {len(sites)} attention subgraph(s)")
    return rep


def fuse_attention_in_place(path: Path | str, **kw: Any) -> FusionReport:
    """Fuse ``path`` (e.g. the output of the other fixes) and replace it; parity is against its unfused self."""
    import os
    import shutil
    import tempfile

    path = Path(path)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".fuse", dir=path.parent))
    try:
        rep = fuse_attention(path, tmp / path.name, **kw)
        os.replace(tmp / path.name, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rep.output = str(path)
    if rep.parity is not None:
        rep.parity.fixed = str(path)
    return rep


def run_fuse_cli(args: Any, flag: Any) -> int:
    """`studio fix --fuse-attention [other fixes]`: the other fixes first (fix_model), then the fusion."""
    import sys

    from studio.core.catalogue import tr
    from studio.optimize.api import fix_model, parse_static
    from studio.optimize.render import render_fix_text, render_fusion_text

    static = parse_static(args.static) or None
    kw = {"parity_cases": args.cases, "custom_op_lib": args.custom_op_lib, "targets": args.target,
          "profile_dirs": args.profile_dir, "dims": static}
    fix_rep = None
    if static or args.simplify or args.fp16 is not None or args.int8 is not None:
        fix_rep = fix_model(args.model, args.out, static=static, simplify=args.simplify, fp16=flag(args.fp16),
                            int8=flag(args.int8), targets=args.target, parity_cases=args.cases,
                            profile_dirs=args.profile_dir)
        rep = fuse_attention_in_place(args.out, **kw)
    else:
        rep = fuse_attention(args.model, args.out, **kw)
    if args.report:
        rep.save(args.report)
    if args.json:
        import json

        doc = {"fusion": rep.to_dict(), **({"fix": fix_rep.to_dict()} if fix_rep else {})}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        sys.stdout.write((render_fix_text(fix_rep) if fix_rep else "") + render_fusion_text(rep))
    if not rep.passed or (fix_rep is not None and not fix_rep.passed):
        print(tr("fix: parity check failed (outputs written; see the report)"), file=sys.stderr)
        return 1
    return 0
