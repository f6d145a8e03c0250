"""Per node and per target: supported / risky (with reason) / unsupported / unknown, plus the target's
global rules (dynamic shapes, INT64, DOUBLE, opset range) as model-level findings."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from studio.inspect.dynamic import DynamicReport
from studio.inspect.model import LoadedModel, NodeRef, dtype_name
from studio.inspect.profiles import Constraint, OpRule, TargetProfile, norm_domain
from studio.inspect.report import SEVERITY_OF, Finding, TargetSummary, worst


@functools.lru_cache(maxsize=4096)
def op_schema(op_type: str, domain: str, opset: int) -> Any:
    """The ONNX schema in force for ``op_type`` at the model's opset (None for unknown/custom ops)."""
    import onnx.defs

    try:
        return onnx.defs.get_schema(op_type, opset, "" if domain == "ai.onnx" else domain)
    except Exception:
        return None


def op_version(lm: LoadedModel, ref: NodeRef) -> int | None:
    dom = norm_domain(ref.node.domain)
    opset = lm.opsets.get(dom)
    if opset is None:
        return None
    s = op_schema(ref.op_type, dom, opset)
    return None if s is None else int(s.since_version)


@dataclass
class NodeVerdict:
    verdict: str
    rule: str
    reason: str
    hint: str = ""
    tensor: str | None = None


def _attr(node: Any, name: str) -> Any:
    import onnx.helper

    for a in node.attribute:
        if a.name == name:
            v = onnx.helper.get_attribute_value(a)
            return v.decode() if isinstance(v, bytes) else v
    return None


def _norm(v: Any) -> Any:
    return v.decode() if isinstance(v, bytes) else v


def check_constraint(c: Constraint, ref: NodeRef, lm: LoadedModel, dyn: DynamicReport) -> NodeVerdict | None:
    n = ref.node
    if c.kind == "const_input":
        for idx in c.inputs:
            if idx < len(n.input) and n.input[idx] and n.input[idx] not in lm.constants:
                return NodeVerdict(c.verdict, "constraint-const-input",
                                   f"input {idx} ('{n.input[idx]}') must be a constant: {c.reason}",
                                   "fold it to a constant (studio fix --static ... --simplify) or compute it "
                                   "outside the model", tensor=n.input[idx])
    elif c.kind == "attr" and c.name:
        v = _attr(n, c.name)
        if v is None:
            v = c.default
        if v is None:
            return None
        if c.allowed is not None and _norm(v) not in [_norm(a) for a in c.allowed]:
            return NodeVerdict(c.verdict, "constraint-attr", f"{c.name}={v!r} not in {c.allowed}: {c.reason}",
                               f"re-export with {c.name} in {c.allowed}")
        if c.forbidden is not None and _norm(v) in [_norm(a) for a in c.forbidden]:
            return NodeVerdict(c.verdict, "constraint-attr", f"{c.name}={v!r} is refused: {c.reason}",
                               f"re-export without {c.name}={v!r}")
        if c.max_value is not None and isinstance(v, (int, float)) and v > c.max_value:
            return NodeVerdict(c.verdict, "constraint-attr", f"{c.name}={v} above {c.max_value}: {c.reason}")
    elif c.kind == "batch1":
        x = n.input[0] if n.input else ""
        info = lm.tensors.get(x)
        if info is not None and info.shape:
            b = info.shape[0]
            if isinstance(b, int) and b != 1:
                return NodeVerdict(c.verdict, "constraint-batch", f"batch is {b}; {c.reason}",
                                   "export or fix with batch 1 (studio fix --static batch=1)", tensor=x)
            if not isinstance(b, int):
                return NodeVerdict("risky", "constraint-batch", f"batch dim is dynamic ('{b}'); {c.reason}",
                                   "fix the batch to 1 (studio fix --static batch=1)", tensor=x)
    elif c.kind == "dtype":
        for idx in c.inputs or [0]:
            if idx < len(n.input) and n.input[idx]:
                info = lm.tensors.get(n.input[idx])
                if info is not None and info.elem_type:
                    dt = dtype_name(info.elem_type)
                    if c.allowed is not None and dt not in c.allowed:
                        return NodeVerdict(c.verdict, "constraint-dtype",
                                           f"input {idx} is {dt}, allowed {c.allowed}: {c.reason}",
                                           f"cast to one of {c.allowed} before this node", tensor=n.input[idx])
    elif c.kind == "same_dtype":
        names = [n.input[i] for i in c.inputs if i < len(n.input) and n.input[i]]
        if names and all(x in lm.constants for x in names):
            return None  # computed at import time
        types = {f"input {i}": lm.tensors[n.input[i]].elem_type for i in c.inputs
                 if i < len(n.input) and n.input[i] in lm.tensors and lm.tensors[n.input[i]].elem_type}
        if c.name and _attr(n, c.name) is not None:
            types[f"{c.name}="] = int(_attr(n, c.name))
        if len(set(types.values())) > 1:
            said = ", ".join(f"{k} {dtype_name(t)}" if k.startswith("input") else f"{k}{dtype_name(t)}"
                             for k, t in types.items())
            return NodeVerdict(c.verdict, "constraint-dtype", f"element types differ ({said}): {c.reason}",
                               "cast so the types match before this node")
    elif c.kind == "max_rank":
        info = lm.tensors.get(n.input[0]) if n.input else None
        if info is not None and info.shape is not None and c.value is not None and len(info.shape) > c.value:
            return NodeVerdict(c.verdict, "constraint-rank", f"rank {len(info.shape)} > {c.value}: {c.reason}",
                               "reshape to a lower rank around this node")
    elif c.kind == "static_shape":
        for i in list(n.input) + list(n.output):
            if i and i in dyn.tensors:
                return NodeVerdict(c.verdict, "constraint-static", f"tensor '{i}' is dynamic: {c.reason}",
                                   "make its dims static (studio fix --static ...)", tensor=i)
    return None


def _ort_dtype_check(rule: OpRule, ref: NodeRef, lm: LoadedModel, version: int) -> NodeVerdict | None:
    if not rule.dtypes or not rule.ranges:
        return None
    rng = next(((lo, hi) for lo, hi in rule.ranges if lo <= version <= hi), None)
    if rng is None:
        return None
    schema = op_schema(ref.op_type, norm_domain(ref.node.domain), lm.opsets.get(norm_domain(ref.node.domain), 0))
    if schema is None:
        return None
    formals = schema.inputs
    for i, name in enumerate(ref.node.input):
        if not name or not formals:
            continue
        formal = formals[min(i, len(formals) - 1)]
        key = f"{rng[0]}-{rng[1]}:{formal.type_str}"
        allowed = rule.dtypes.get(key)
        info = lm.tensors.get(name)
        if allowed and info is not None and info.elem_type:
            t = f"tensor({dtype_name(info.elem_type)})"
            if t == "tensor(float16)" and "tensor(float)" in allowed:
                continue  # ORT's InsertCastTransformer runs float16 nodes in float32 on the CPU
            if t not in allowed and "tensor(" in allowed[0]:
                return NodeVerdict("unsupported", "op-dtype",
                                   f"no CPU kernel of {ref.op_type}-{version} for {t} on input {i}",
                                   f"cast input {i} to one of {', '.join(a[7:-1] for a in allowed)}", tensor=name)
    return None


def node_verdict(ref: NodeRef, lm: LoadedModel, dyn: DynamicReport, prof: TargetProfile,
                 version: int | None) -> NodeVerdict:
    dom = norm_domain(ref.node.domain)
    rule = prof.lookup(dom, ref.op_type)
    if prof.kind == "none":
        return NodeVerdict("unknown", "op-unknown", f"{prof.name} publishes no ONNX op list; support unknown",
                           "try the vendor's converter on this model; cut the graph where its parser stops")
    if rule is None:
        if dom not in prof.ops:
            from studio.inspect.custom_domains import STUDIO_DOMAINS, UNSUPPORTED_HINT

            return NodeVerdict(prof.unlisted if prof.unlisted != "risky" else "risky", "domain-unsupported",
                               f"domain '{dom}' is not handled by {prof.name}",
                               UNSUPPORTED_HINT.format(domain=dom) if dom in STUDIO_DOMAINS else
                               "replace the custom op with standard ai.onnx ops or register a plugin/custom op")
        return NodeVerdict(prof.unlisted, "op-unlisted" if prof.unlisted != "unsupported" else "op-unsupported",
                           f"{ref.op_type} is not in {prof.name}'s supported list",
                           "replace it with supported ops, or run this part on the host (graph cut)")
    if rule.status == "unsupported":
        return NodeVerdict("unsupported", "op-unsupported", rule.reason or f"{prof.name} does not support {ref.op_type}",
                           "replace it with supported ops, or run this part on the host (graph cut)")
    if rule.status == "unknown":
        return NodeVerdict("unknown", "op-unknown", rule.reason or f"support of {ref.op_type} is not documented")
    v = NodeVerdict("supported", "", rule.reason)
    if rule.status == "risky":
        v = NodeVerdict("risky", "op-risky", rule.reason, "check it with the vendor toolchain")
    elif rule.status == "cpu":
        v = NodeVerdict("risky", "cpu-fallback", f"runs on the CPU, not the accelerator: {rule.reason}",
                        "expect a slow host round-trip; replace or move it out of the hot path")
    # Vendor lists give opset ranges in terms of the model's opset (converters pick the implementation for
    # the model opset); the ORT registry gives exact op-version ranges.
    opset = lm.opsets.get(dom)
    if opset is not None and prof.kind != "runtime":
        if rule.since is not None and opset < rule.since:
            return NodeVerdict("unsupported", "op-version",
                               f"{prof.name} implements {ref.op_type} from opset {rule.since}; the model uses "
                               f"opset {opset}", f"re-export with opset >= {rule.since}")
        if rule.until is not None and opset > rule.until:
            return NodeVerdict("unsupported", "op-version",
                               f"{prof.name} implements {ref.op_type} up to opset {rule.until}; the model uses "
                               f"opset {opset}", f"re-export with opset <= {rule.until}")
    if version is not None:
        if rule.ranges is not None and rule.ranges and not any(lo <= version <= hi for lo, hi in rule.ranges):
            have = ", ".join(f"{lo}-{hi}" if hi < 2**31 - 1 else f"{lo}+" for lo, hi in rule.ranges)
            return NodeVerdict("unsupported", "op-version",
                               f"{ref.op_type} version {version} has no implementation (versions {have})",
                               "re-export at an opset whose version of this op is implemented")
        if prof.kind == "runtime":
            bad = _ort_dtype_check(rule, ref, lm, version)
            if bad is not None:
                return bad
    for c in rule.constraints:
        bad = check_constraint(c, ref, lm, dyn)
        if bad is not None and (v.verdict == "supported" or bad.verdict == "unsupported"):
            v = bad if worst(bad.verdict, v.verdict) == bad.verdict else v
            if v.verdict == "unsupported":
                break
    return v


def evaluate_target(lm: LoadedModel, dyn: DynamicReport, prof: TargetProfile,
                    versions: dict[str, int | None]) -> tuple[TargetSummary, dict[str, str], dict[str, str],
                                                              list[Finding]]:
    verdicts: dict[str, str] = {}
    reasons: dict[str, str] = {}
    grouped: dict[tuple, Finding] = {}
    findings: list[Finding] = []
    dd = set(dyn.data_dependent_nodes)
    dyn_level = prof.rules.data_dependent
    shape_flags: dict[str, Any] = {}
    if prof.shape_values is not None:
        from studio.inspect.shape_values import shape_value_findings

        shape_flags, _ = shape_value_findings(lm, set(prof.shape_values.accepts))
    for ref in lm.nodes:
        nv = node_verdict(ref, lm, dyn, prof, versions[ref.key])
        sf = shape_flags.get(ref.key)
        if sf is not None and nv.verdict != "unsupported":
            nv = NodeVerdict("unsupported", "shape-value", sf.reason, sf.hint, tensor=sf.tensor)
        if ref.key in dd and dyn_level != "allowed" and nv.verdict != "unknown":
            worse = worst(nv.verdict, dyn_level)
            if worse != nv.verdict:
                nv = NodeVerdict(worse, "dynamic-shape",
                                 f"output shape is data-dependent; {prof.rules.data_dependent_reason or 'not supported'}",
                                 "replace the data-dependent op, or bound it and pad to a fixed size")
        verdicts[ref.key] = nv.verdict
        if nv.verdict == "supported":
            if nv.reason:
                reasons[ref.key] = nv.reason
            continue
        reasons[ref.key] = nv.reason
        dom = norm_domain(ref.node.domain)
        key = (nv.verdict, nv.rule, ref.op_type, dom, ref.graph, nv.reason) if nv.tensor is None else None
        if key is not None and key in grouped:
            f = grouped[key]
            f.nodes.append(ref.key)
            f.count += 1
            continue
        f = Finding(target=prof.id, severity=SEVERITY_OF[nv.verdict], verdict=nv.verdict, rule=nv.rule,
                    message=f"{ref.op_type}: {nv.reason}", hint=nv.hint, node=ref.key, op_type=ref.op_type,
                    domain=dom, subgraph=ref.graph, tensor=nv.tensor, nodes=[ref.key])
        findings.append(f)
        if key is not None:
            grouped[key] = f
    findings.extend(global_findings(lm, dyn, prof))
    counts = {v: 0 for v in ("supported", "risky", "unsupported", "unknown")}
    for v in verdicts.values():
        counts[v] += 1
    fverdicts = {f.verdict for f in findings}
    if "unsupported" in fverdicts:
        summary_verdict = "fail"
    elif "risky" in fverdicts:
        summary_verdict = "risky"
    elif "unknown" in fverdicts:
        summary_verdict = "unknown"
    else:
        summary_verdict = "pass"
    sev: dict[str, int] = {}
    for f in findings:
        sev[f.severity] = sev.get(f.severity, 0) + 1

    def ops_with(verdict: str) -> list[str]:
        return sorted({r.op_type for r in lm.nodes if verdicts[r.key] == verdict})

    summary = TargetSummary(id=prof.id, name=prof.name, kind=prof.kind, source=prof.source,
                            verdict=summary_verdict, counts=counts, findings=sev,
                            unsupported_ops=ops_with("unsupported"), risky_ops=ops_with("risky"),
                            unknown_ops=ops_with("unknown"))
    return summary, verdicts, reasons, findings


def global_findings(lm: LoadedModel, dyn: DynamicReport, prof: TargetProfile) -> list[Finding]:
    out: list[Finding] = []
    r = prof.rules
    if prof.kind == "none":
        return out
    # opset range of the default domain
    opset = lm.opsets.get("ai.onnx")
    if opset is not None and ((r.opset_min is not None and opset < r.opset_min)
                              or (r.opset_max is not None and opset > r.opset_max)):
        rng = f"{r.opset_min if r.opset_min is not None else '?'}-{r.opset_max if r.opset_max is not None else '?'}"
        out.append(Finding(target=prof.id, severity=SEVERITY_OF[r.opset_verdict], verdict=r.opset_verdict,
                           rule="opset", message=f"model opset {opset} outside {prof.name}'s range {rng}"
                           + (f": {r.opset_reason}" if r.opset_reason else ""),
                           hint=f"re-export with an opset in {rng} (studio export --opset N)"))
    # dynamic shapes
    if r.dynamic_shapes != "allowed":
        for o in dyn.origins:
            if o.kind == "input":
                sev = r.dynamic_shapes
                out.append(Finding(target=prof.id, severity=SEVERITY_OF[sev], verdict=sev, rule="dynamic-shape",
                                   message=f"{o.description}; {r.dynamic_reason or prof.name + ' needs static shapes'}"
                                   f" (reaches {o.reaches} tensors)", tensor=o.tensor,
                                   hint=f"fix it: studio fix MODEL --static {o.symbol or o.tensor}=N"
                                   if o.symbol else "give the input a fixed shape (studio fix --static)"))
    # INT64 / DOUBLE tensors at the graph boundary and inside
    for key, elem, level, why in (("int64", 7, r.int64, r.int64_reason), ("double", 11, r.double, r.double_reason)):
        if level == "allowed":
            continue
        io = [n for n in lm.graph_inputs + lm.graph_outputs if lm.tensors.get(n) and lm.tensors[n].elem_type == elem]
        inner = sum(1 for name, t in lm.tensors.items() if t.elem_type == elem and name not in lm.constants)
        if io or inner:
            what = f"graph inputs/outputs {io}" if io else f"{inner} internal tensors"
            out.append(Finding(target=prof.id, severity=SEVERITY_OF[level], verdict=level, rule=f"dtype-{key}",
                               message=f"{key.upper()} {what}: {why or prof.name + ' handles ' + key + ' poorly'}",
                               tensor=io[0] if io else None,
                               hint="cast to int32/float32 at the boundary" if key == "int64"
                               else "convert the model to float32"))
    return out
