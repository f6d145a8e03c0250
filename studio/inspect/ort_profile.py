"""The ONNX Runtime CPU profile, computed from the installed onnxruntime's kernel registry.

Exact for the installed version, as ORT's own kernel lookup matches: a kernel registered for versions
[a, b] serves a node whose op version is in [a, b]; an open-ended kernel [a, latest] serves version a only
(ORT cannot know whether a later op version changed what the kernel must do: QuantizeLinear-25+ does not
serve QuantizeLinear-28). Type constraints are the union over the kernels of a range. Ops that ONNX defines as
functions (CastLike, HardSwish, GroupNormalization, NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, ...)
have no kernel but run: ORT inlines their function body, provided every op of that body has a kernel (Swish's
body holds CastLike, a function inlined in turn; SwiGLU-28 holds Swish, one level too deep for ORT 1.32). Attribute values a
kernel refuses at construction (recurrent layout=1) are constraints. Checked against real sessions on the ONNX
backend node-test corpus: bench/bench_verify_agreement.py.
"""

from __future__ import annotations

import datetime as _dt
import functools
from typing import Any

from studio.inspect.profile_model import Constraint, GlobalRules, OpRule, TargetProfile, norm_domain

MAX_VERSION = 2**31 - 1
FUNCTION_REASON = "no CPU kernel; ONNX Runtime inlines the op's ONNX function body"
# Attribute values the CPU kernels refuse when the session builds (ORT's own words).
ATTR_REFUSED = {
    op: Constraint(kind="attr", name="layout", forbidden=[1], default=0, verdict="unsupported",
                   reason="Batchwise recurrent operations (layout == 1) are not supported by the CPU kernel")
    for op in ("GRU", "LSTM", "RNN")
}


def _kernel_ranges() -> dict[str, dict[str, OpRule]]:
    """One rule per (domain, op) with the version ranges ORT's kernel lookup accepts and their dtypes."""
    from onnxruntime.capi import _pybind_state as C

    ops: dict[str, dict[str, OpRule]] = {}
    for k in C.get_all_opkernel_def():
        if k.provider != "CPUExecutionProvider":
            continue
        dom = norm_domain(k.domain)
        lo, hi = k.version_range
        hi = lo if hi >= MAX_VERSION else hi  # open-ended kernels match their start version exactly
        rule = ops.setdefault(dom, {}).setdefault(k.op_name, OpRule(status="supported", ranges=[], dtypes={}))
        assert rule.ranges is not None and rule.dtypes is not None
        if (lo, hi) not in rule.ranges:
            rule.ranges.append((lo, hi))
        for tparam, types in k.type_constraints.items():
            bucket = rule.dtypes.setdefault(f"{lo}-{hi}:{tparam}", [])
            bucket.extend(t for t in types if t not in bucket)
    for dom_rules in ops.values():
        for rule in dom_rules.values():
            assert rule.ranges is not None
            rule.ranges.sort()
            rule.since, rule.until = rule.ranges[0][0], max(r[1] for r in rule.ranges)
    return ops


def _has_kernel(ops: dict[str, dict[str, OpRule]], op: str, version: int) -> bool:
    rule = ops.get("ai.onnx", {}).get(op)
    return bool(rule and rule.ranges and any(lo <= version <= hi for lo, hi in rule.ranges))


# ORT inlines a function op, and the function ops in its body once more, but not a third level: Swish-24 alone
# runs (its body holds CastLike), SwiGLU-28 does not ("Could not find an implementation for Swish(24)").
MAX_INLINE_DEPTH = 2


def _generic_body(schema: Any) -> Any | None:
    """The function body ONNX builds for a plain node of this op (float inputs where allowed), or None."""
    import onnx
    import onnx.helper as h

    if schema.has_function:
        return schema.function_body
    by_param = {t.type_param_str: list(t.allowed_type_strs) for t in schema.type_constraints}
    types, names = [], []
    for i, formal in enumerate(schema.inputs):
        allowed = by_param.get(formal.type_str, [formal.type_str])
        pick = "tensor(float)" if "tensor(float)" in allowed else allowed[0] if allowed else "tensor(float)"
        elem = getattr(onnx.TensorProto, pick[7:-1].upper(), onnx.TensorProto.FLOAT) if pick.startswith(
            "tensor(") else onnx.TensorProto.FLOAT
        types.append(h.make_tensor_type_proto(elem, None).SerializeToString())
        names.append(f"in{i}")
    node = h.make_node(schema.name, names, [f"out{i}" for i in range(len(schema.outputs))])
    try:
        f = onnx.FunctionProto()
        f.ParseFromString(schema.get_context_dependent_function(node.SerializeToString(), types))
    except Exception:  # needs attributes or types a generic node lacks: ORT builds it per node
        return None
    return f


def _inlinable(name: str, version: int, kernels: dict[str, dict[str, OpRule]], seen: tuple = ()) -> bool:
    """ORT runs this op version without a kernel: it is a function whose body ops all run (recursively)."""
    import onnx.defs

    if len(seen) >= MAX_INLINE_DEPTH or (name, version) in seen:
        return False
    try:
        schema = onnx.defs.get_schema(name, version)
    except Exception:
        return False
    if schema.since_version != version or not (schema.has_function or schema.has_context_dependent_function):
        return False
    body = _generic_body(schema)
    if body is None:
        return True
    opset = next((o.version for o in body.opset_import if o.domain in ("", "ai.onnx")), version)
    for n in body.node:
        if n.op_type == "Constant" or n.domain not in ("", "ai.onnx"):
            continue
        try:
            v = onnx.defs.get_schema(n.op_type, opset).since_version
        except Exception:
            return False
        if not (_has_kernel(kernels, n.op_type, v) or _inlinable(n.op_type, v, kernels, (*seen, (name, version)))):
            return False
    return True


def _function_ops(ops: dict[str, dict[str, OpRule]]) -> None:
    """Function-op versions without a kernel: supported where ORT can inline the body (HardSwish-14 has a
    kernel, HardSwish-22 runs as its function; Bernoulli's body needs RandomUniformLike-22, which has none)."""
    import copy

    import onnx.defs

    kernels = copy.deepcopy(ops)
    added: set[str] = set()
    for s in onnx.defs.get_all_schemas_with_history():
        if norm_domain(s.domain) != "ai.onnx" or _has_kernel(kernels, s.name, s.since_version):
            continue
        if not (s.has_function or s.has_context_dependent_function):
            continue
        if not _inlinable(s.name, s.since_version, kernels):
            continue
        rule = ops.setdefault("ai.onnx", {}).get(s.name)
        if rule is None:
            rule = ops["ai.onnx"][s.name] = OpRule(status="supported", reason=FUNCTION_REASON, ranges=[])
        assert rule.ranges is not None
        rule.ranges.append((s.since_version, s.since_version))
        added.add(s.name)
    for name in added:
        rule = ops["ai.onnx"][name]
        assert rule.ranges is not None
        rule.ranges.sort()
        rule.since, rule.until = rule.ranges[0][0], None
        if rule.reason != FUNCTION_REASON:
            rule.reason = "versions without a CPU kernel run as their inlined ONNX function body"


def _cast_constraints(ops: dict[str, dict[str, OpRule]]) -> None:
    """Cast's target type (attribute ``to``) and CastLike's input types must be types a Cast kernel has."""
    import onnx

    cast = ops.get("ai.onnx", {}).get("Cast")
    if cast is None or not cast.dtypes:
        return
    names = sorted({t[7:-1] for k, v in cast.dtypes.items() if k.endswith(":T2") for t in v})
    enums = sorted(getattr(onnx.TensorProto, n.upper()) for n in names if hasattr(onnx.TensorProto, n.upper()))
    cast.constraints = [*cast.constraints, Constraint(
        kind="attr", name="to", allowed=list(enums), verdict="unsupported",
        reason="no CPU Cast kernel produces this type")]
    like = ops.get("ai.onnx", {}).get("CastLike")
    if like is not None:
        like.constraints = [*like.constraints, Constraint(
            kind="dtype", inputs=[0, 1], allowed=names, verdict="unsupported",
            reason="CastLike runs as a Cast, and no CPU Cast kernel has this type")]


@functools.lru_cache(maxsize=1)
def ort_cpu_profile() -> TargetProfile:
    """The profile, from the per-user cache when the same onnxruntime and onnx builds made it (importing
    onnxruntime and walking its registry takes 0.45 s; the cached profile loads in a few ms)."""
    from studio.inspect.profile_cache import cached_profile

    return cached_profile("ort-cpu", ("onnxruntime", "onnx"), __file__, _compute)


def _compute() -> TargetProfile:
    import onnxruntime

    ops = _kernel_ranges()
    _function_ops(ops)
    _cast_constraints(ops)
    for op, c in ATTR_REFUSED.items():
        rule = ops.get("ai.onnx", {}).get(op)
        if rule is not None:
            rule.constraints = [*rule.constraints, c]
    # Constant is folded into an initializer by ORT; it has no kernel and needs none.
    ops.setdefault("ai.onnx", {})["Constant"] = OpRule(status="supported", reason="folded into an initializer")
    from studio.inspect.custom_domains import ort_rules

    ops.update(ort_rules())  # studio.fused: runs where its kernels are registered
    return TargetProfile(
        id="ort-cpu", name=f"ONNX Runtime {onnxruntime.__version__} CPU execution provider",
        source="onnxruntime.capi._pybind_state.get_all_opkernel_def() (installed package, computed at run time)",
        date_read=_dt.date.today().isoformat(), kind="runtime", version=onnxruntime.__version__,
        notes="exact for the installed onnxruntime: per-op kernel version ranges (open-ended kernels serve their "
              "start version only, as ORT's lookup does), type constraints, inlinable function ops",
        unlisted="unsupported", rules=GlobalRules(domains=sorted(ops)), ops=ops)
