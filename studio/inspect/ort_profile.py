"""The ONNX Runtime CPU profile, computed from the installed onnxruntime's kernel registry.

Exact for the installed version: one rule per (domain, op) with the version ranges that have a CPU kernel
and the union of type-constraint dtypes over those kernels. Ops that ONNX defines as functions (CastLike,
HardSwish, Mish, GroupNormalization, ...) have no kernel but run: ORT inlines their function body.
"""

from __future__ import annotations

import datetime as _dt
import functools

from studio.inspect.profiles import GlobalRules, OpRule, TargetProfile, norm_domain

MAX_VERSION = 2**31 - 1


@functools.lru_cache(maxsize=1)
def ort_cpu_profile() -> TargetProfile:
    import onnxruntime
    from onnxruntime.capi import _pybind_state as C

    ops: dict[str, dict[str, OpRule]] = {}
    for k in C.get_all_opkernel_def():
        if k.provider != "CPUExecutionProvider":
            continue
        dom = norm_domain(k.domain)
        lo, hi = k.version_range
        rule = ops.setdefault(dom, {}).setdefault(k.op_name, OpRule(status="supported", ranges=[], dtypes={}))
        assert rule.ranges is not None and rule.dtypes is not None
        if (lo, hi) not in rule.ranges:
            rule.ranges.append((lo, hi))
        for tparam, types in k.type_constraints.items():
            # dtypes are tracked per (range) implicitly as a union: kernels of one op share type params
            bucket = rule.dtypes.setdefault(f"{lo}-{hi}:{tparam}", [])
            bucket.extend(t for t in types if t not in bucket)
    for dom_rules in ops.values():
        for rule in dom_rules.values():
            assert rule.ranges is not None
            rule.ranges.sort()
            rule.since = rule.ranges[0][0]
            top = max(r[1] for r in rule.ranges)
            rule.until = None if top >= MAX_VERSION else top
    # Function ops: no kernel, but ORT expands the ONNX function body.
    import onnx.defs

    for s in onnx.defs.get_all_schemas_with_history():
        dom = norm_domain(s.domain)
        if dom != "ai.onnx" or s.name in ops.get(dom, {}):
            continue
        if s.has_function or s.has_context_dependent_function:
            rule = ops.setdefault(dom, {}).setdefault(s.name, OpRule(
                status="supported", reason="no CPU kernel; ONNX Runtime inlines the op's ONNX function body",
                ranges=[]))
            assert rule.ranges is not None
            rule.ranges.append((s.since_version, s.since_version))
    for dom_rules in ops.values():
        for rule in dom_rules.values():
            if rule.reason and rule.ranges:
                rule.ranges.sort()
                rule.since = rule.ranges[0][0]
                rule.until = None
    # Constant is folded into an initializer by ORT; it has no kernel and needs none.
    ops.setdefault("ai.onnx", {})["Constant"] = OpRule(status="supported", reason="folded into an initializer")
    from studio.inspect.custom_domains import ort_rules

    ops.update(ort_rules())  # studio.fused: runs where its kernels are registered
    return TargetProfile(
        id="ort-cpu", name=f"ONNX Runtime {onnxruntime.__version__} CPU execution provider",
        source="onnxruntime.capi._pybind_state.get_all_opkernel_def() (installed package, computed at run time)",
        date_read=_dt.date.today().isoformat(), kind="runtime", version=onnxruntime.__version__,
        notes="exact for the installed onnxruntime: per-op kernel version ranges and type constraints",
        unlisted="unsupported", rules=GlobalRules(domains=sorted(ops)), ops=ops)
