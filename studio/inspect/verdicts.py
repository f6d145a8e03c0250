"""Per node and per target: supported / risky (with reason) / unsupported / unknown, plus the target's
global rules (dynamic shapes, INT64, DOUBLE, opset range) as model-level findings."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from itertools import compress, repeat
from operator import is_not
from typing import Any

from studio.core.catalogue import N_
from studio.inspect.constraints import NodeVerdict, check_constraint
from studio.inspect.dynamic import DynamicReport
from studio.inspect.global_rules import global_findings
from studio.inspect.model import LoadedModel, NodeRef, dtype_name
from studio.inspect.model_verdict import HOST_RULES, HostNode, static_model_verdict
from studio.inspect.profiles import OpRule, TargetProfile
from studio.inspect.report import SEVERITY_OF, Finding, TargetSummary, worst


@functools.lru_cache(maxsize=4096)
def op_schema(op_type: str, domain: str, opset: int) -> Any:
    """The ONNX schema in force for ``op_type`` at the model's opset (None for unknown/custom ops)."""
    from studio.core.onnx_light import get_schema

    try:
        return get_schema(op_type, opset, "" if domain == "ai.onnx" else domain)
    except Exception:
        return None


def op_version(lm: LoadedModel, ref: NodeRef) -> int | None:
    dom = ref.domain
    opset = lm.opsets.get(dom)
    if opset is None:
        return None
    s = op_schema(ref.op_type, dom, opset)
    return None if s is None else int(s.since_version)


def op_versions(lm: LoadedModel) -> dict[str, int | None]:
    """``op_version`` of every node by key, looked up once per (domain, op)."""
    by_op: dict[tuple[str, str], int | None] = {}
    out: dict[str, int | None] = {}
    for ref in lm.nodes:
        k = (ref.domain, ref.op_type)
        if k in by_op:
            out[ref.key] = by_op[k]
        else:
            out[ref.key] = by_op[k] = op_version(lm, ref)
    return out


def _ort_dtype_check(rule: OpRule, ref: NodeRef, lm: LoadedModel, version: int,
                     memo: dict[tuple, tuple[int, str, str] | None]) -> NodeVerdict | None:
    """A CPU kernel exists for the node's input dtypes; the answer depends only on op, version and those
    dtypes, so it is worked out once per combination (``memo``) and only the tensor name is the node's."""
    if not rule.dtypes or not rule.ranges:
        return None
    inputs = ref.inputs
    elems = tuple(map(_elem_types(lm).__getitem__, inputs))
    key = (ref.op_type, ref.domain, version, elems)
    if key not in memo:
        memo[key] = _ort_dtype_answer(rule, ref, lm, version, elems)
    ans = memo[key]
    if ans is None:
        return None
    i, reason, hint = ans
    return NodeVerdict("unsupported", "op-dtype", reason, hint, tensor=inputs[i])


class _ElemTypes(dict):
    """Tensor name -> element type (0 unknown, -1 for an absent optional input ""), for the per-node dtype
    check: one C-level lookup per input instead of a TensorInfo read."""

    def __missing__(self, name: str) -> int:
        return -1 if not name else 0


def _elem_types(lm: LoadedModel) -> _ElemTypes:
    table = lm.cache.get("elem-types")
    if table is None:
        table = lm.cache["elem-types"] = _ElemTypes((k, t.elem_type) for k, t in lm.tensors.items()
                                                           if k and t.elem_type)
    return table


def _ort_dtype_answer(rule: OpRule, ref: NodeRef, lm: LoadedModel, version: int,
                      elems: tuple[int, ...]) -> tuple[int, str, str] | None:
    assert rule.ranges is not None and rule.dtypes is not None
    rng = next(((lo, hi) for lo, hi in rule.ranges if lo <= version <= hi), None)
    if rng is None:
        return None
    schema = op_schema(ref.op_type, ref.domain, lm.opsets.get(ref.domain, 0))
    if schema is None:
        return None
    formals = schema.inputs
    for i, elem in enumerate(elems):
        if elem < 0 or not formals:
            continue
        formal = formals[min(i, len(formals) - 1)]
        allowed = rule.dtypes.get(f"{rng[0]}-{rng[1]}:{formal.type_str}")
        if allowed and elem:
            t = f"tensor({dtype_name(elem)})"
            if t == "tensor(float16)" and "tensor(float)" in allowed:
                continue  # ORT's InsertCastTransformer runs float16 nodes in float32 on the CPU
            if t not in allowed and "tensor(" in allowed[0]:
                return (i, N_(f"no CPU kernel of {ref.op_type}-{version} for {t} on input {i}"),
                        N_(f"cast input {i} to one of {', '.join(a[7:-1] for a in allowed)}"))
    return None


def static_verdict(dom: str, op_type: str, version: int | None, lm: LoadedModel,
                   prof: TargetProfile) -> tuple[NodeVerdict, OpRule | None, bool]:
    """The part of a node's verdict that depends only on (domain, op, version) for this model and target:
    (verdict, rule, whether node-level checks, dtypes and constraints, still apply)."""
    rule = prof.lookup(dom, op_type)
    if prof.kind == "none":
        return NodeVerdict("unknown", "op-unknown", N_(f"{prof.name} publishes no ONNX op list; support unknown"),
                           N_("try the vendor's converter on this model; cut the graph where its parser stops")), None, False
    if rule is None:
        if dom not in prof.ops:
            from studio.inspect.custom_domains import STUDIO_DOMAINS, UNSUPPORTED_HINT

            return NodeVerdict(prof.unlisted if prof.unlisted != "risky" else "risky", "domain-unsupported",
                               N_(f"domain '{dom}' is not handled by {prof.name}"),
                               UNSUPPORTED_HINT.format(domain=dom) if dom in STUDIO_DOMAINS else
                               N_("replace the custom op with standard ai.onnx ops or register a plugin/custom op")
                               ), None, False
        return NodeVerdict(prof.unlisted, "op-unlisted" if prof.unlisted != "unsupported" else "op-unsupported",
                           N_(f"{op_type} is not in {prof.name}'s supported list"),
                           N_("replace it with supported ops, or run this part on the host (graph cut)")), None, False
    if rule.status == "unsupported":
        return NodeVerdict("unsupported", "op-unsupported", rule.reason or N_(f"{prof.name} does not support {op_type}"),
                           N_("replace it with supported ops, or run this part on the host (graph cut)")), rule, False
    if rule.status == "unknown":
        return NodeVerdict("unknown", "op-unknown", rule.reason or N_(f"support of {op_type} is not documented")), rule, False
    v = NodeVerdict("supported", "", rule.reason)
    if rule.status == "risky":
        v = NodeVerdict("risky", "op-risky", rule.reason, N_("check it with the vendor toolchain"))
    elif rule.status == "cpu":
        v = NodeVerdict("risky", "cpu-fallback", N_(f"runs on the CPU, not the accelerator: {rule.reason}"),
                        N_("expect a slow host round-trip; replace or move it out of the hot path"))
    # Vendor lists give opset ranges in terms of the model's opset (converters pick the implementation for
    # the model opset); the ORT registry gives exact op-version ranges.
    opset = lm.opsets.get(dom)
    if opset is not None and prof.kind != "runtime":
        if rule.since is not None and opset < rule.since:
            return NodeVerdict("unsupported", "op-version",
                               N_(f"{prof.name} implements {op_type} from opset {rule.since}; the model uses "
                               f"opset {opset}"), N_(f"re-export with opset >= {rule.since}")), rule, False
        if rule.until is not None and opset > rule.until:
            return NodeVerdict("unsupported", "op-version",
                               N_(f"{prof.name} implements {op_type} up to opset {rule.until}; the model uses "
                               f"opset {opset}"), N_(f"re-export with opset <= {rule.until}")), rule, False
    if version is not None and rule.ranges and not any(lo <= version <= hi for lo, hi in rule.ranges):
        have = ", ".join(f"{lo}-{hi}" if hi < 2**31 - 1 else f"{lo}+" for lo, hi in rule.ranges)
        return NodeVerdict("unsupported", "op-version",
                           N_(f"{op_type} version {version} has no implementation (versions {have})"),
                           N_("re-export at an opset whose version of this op is implemented")), rule, False
    node_level = bool(rule.constraints) or (prof.kind == "runtime" and version is not None and bool(rule.dtypes))
    return v, rule, node_level


def node_verdict(ref: NodeRef, lm: LoadedModel, dyn: DynamicReport, prof: TargetProfile, version: int | None,
                 memo: dict[Any, Any] | None = None) -> NodeVerdict:
    """One node's verdict for one target; ``memo`` (one dict per model and target) shares the static part
    between the nodes of the same op and version."""
    memo = {} if memo is None else memo
    dom = ref.domain
    skey = (dom, ref.op_type, version)
    st = memo.get(skey)
    if st is None:
        st = memo[skey] = static_verdict(dom, ref.op_type, version, lm, prof)
    v, rule, node_level = st
    if not node_level:
        return v
    assert rule is not None
    if prof.kind == "runtime" and version is not None:
        bad = _ort_dtype_check(rule, ref, lm, version, memo.setdefault("dtype", {}))
        if bad is not None:
            return bad
    for c in rule.constraints:
        bad = check_constraint(c, ref, lm, dyn, memo.get("constants"))
        if bad is not None and (v.verdict == "supported" or bad.verdict == "unsupported"):
            v = bad if worst(bad.verdict, v.verdict) == bad.verdict else v
            if v.verdict == "unsupported":
                break
    return v


@dataclass
class _Groups:
    """The model's nodes grouped by what a static verdict depends on, computed once for all targets."""

    keys: list[str]
    groups: dict[tuple[str, str, int | None, str], list[int]]  # (domain, op, version, graph) -> positions


def _groups(lm: LoadedModel, versions: dict[str, int | None]) -> _Groups:
    cached = lm.cache.get("verdict-groups")
    if cached is not None and cached[0] is versions:
        return cached[1]
    groups: dict[tuple[str, str, int | None, str], list[int]] = {}
    for pos, ref in enumerate(lm.nodes):
        groups.setdefault((ref.domain, ref.op_type, versions[ref.key], ref.graph), []).append(pos)
    g = _Groups([r.key for r in lm.nodes], groups)
    lm.cache["verdict-groups"] = (versions, g)
    return g


def evaluate_target(lm: LoadedModel, dyn: DynamicReport, prof: TargetProfile,
                    versions: dict[str, int | None], cost_lm: LoadedModel | None = None
                    ) -> tuple[TargetSummary, dict[str, str], dict[str, str], list[Finding]]:
    """Every node's verdict for one target. Nodes of one (domain, op, version, subgraph) share the static
    part of their verdict, so a group without node-level checks is judged once; findings keep the order of
    their first node and list their nodes in graph order, as a node-by-node walk would. The whole-model
    verdict goes into the summary, a host fallback priced on ``cost_lm`` (the model at the given shapes)."""
    gr = _groups(lm, versions)
    nodes = lm.nodes
    n = len(nodes)
    vals: list[str] = [""] * n
    why: list[str | None] = [None] * n
    grouped: dict[tuple, list[tuple[list[int], NodeVerdict]]] = {}  # finding key -> (positions, verdict)
    single: list[tuple[int, NodeVerdict]] = []  # findings about one tensor of one node
    dd = set(dyn.data_dependent_nodes)
    dyn_level = prof.rules.data_dependent
    shape_flags: dict[str, Any] = {}
    if prof.shape_values is not None:
        from studio.inspect.shape_values import shape_value_findings

        shape_flags, kinds = shape_value_findings(lm, set(prof.shape_values.accepts))
    special = dd | set(shape_flags) if (dd and dyn_level != "allowed") or shape_flags else set()
    memo: dict[Any, Any] = {}
    if prof.shape_values is not None:  # what the importer holds at import: constants, shape values, dimensions
        memo["constants"] = set(lm.initializers) | {t for t, v in kinds.items() if v.kind != "tensor"}
    elems = _elem_types(lm)
    placement = None
    if prof.graph is not None:  # the toolchain's own folding and host placement come first
        from studio.inspect.graph_model import place

        placement = place(lm, dyn, prof, cost_lm)
        assert placement is not None
        memo["constants"] = placement.constants
        dd = placement.data_dependent  # at the build's shapes: only shapes given by run-time values
        special = (dd if dyn_level != "allowed" else set()) | set(shape_flags) | placement.special
    host: list[tuple[int, str]] = []  # (position, why) of the nodes that run on the host

    counts = {v: 0 for v in ("supported", "risky", "unsupported", "unknown")}
    ops_by: dict[str, set[str]] = {v: set() for v in counts}

    def record(positions: list[int], nv: NodeVerdict, op: str, dom: str, graph: str) -> None:
        for p in positions:
            vals[p] = nv.verdict
        if nv.rule in HOST_RULES:
            host.extend((p, nv.reason) for p in positions)
        counts[nv.verdict] += len(positions)
        ops_by[nv.verdict].add(op)
        if nv.verdict == "supported":
            if nv.reason:
                for p in positions:
                    why[p] = nv.reason
            return
        for p in positions:
            why[p] = nv.reason
        if nv.tensor is not None:
            single.extend((p, nv) for p in positions)
            return
        key = (nv.verdict, nv.rule, op, dom, graph, nv.reason)
        grouped.setdefault(key, []).append((positions, nv))

    for (dom, op, version, graph), positions in gr.groups.items():
        st = memo.get((dom, op, version))
        if st is None:
            st = memo[(dom, op, version)] = static_verdict(dom, op, version, lm, prof)
        if not st[2] and not (special and any(gr.keys[p] in special for p in positions)):
            record(positions, st[0], op, dom, graph)
            continue
        plain: list[int] = []  # nodes whose verdict is the group's static one: recorded together
        # With dtype checks only, a node's verdict follows from its inputs' element types: each combination
        # found clean is not checked again.
        by_dtypes = st[1] is not None and all(c.kind == "dtype" for c in st[1].constraints)
        clean: set[tuple[int, ...]] = set()
        for p in positions:
            ref = nodes[p]
            if by_dtypes:
                sig = tuple(map(elems.__getitem__, ref.inputs))
                if sig in clean and not (special and ref.key in special):
                    plain.append(p)
                    continue
            nv = node_verdict(ref, lm, dyn, prof, version, memo)
            if nv is st[0] and not (special and ref.key in special):
                if by_dtypes:
                    clean.add(sig)
                plain.append(p)
                continue
            sf = shape_flags.get(ref.key)
            if sf is not None and nv.verdict != "unsupported":
                nv = NodeVerdict("unsupported", "shape-value", sf.reason, sf.hint, tensor=sf.tensor)
            if ref.key in dd and dyn_level != "allowed" and nv.verdict != "unknown":
                worse = worst(nv.verdict, dyn_level)
                if worse != nv.verdict:
                    reason = prof.rules.data_dependent_reason or N_("not supported")  # {reason}: translated too
                    nv = NodeVerdict(worse, "dynamic-shape", N_(f"output shape is data-dependent; {reason}"),
                                     N_("replace the data-dependent op, or bound it and pad to a fixed size"))
            if placement is not None and ref.key in placement.special:
                nv = _placed(nv, ref.key, placement)
            record([p], nv, op, dom, graph)
        if plain:
            record(plain, st[0], op, dom, graph)

    keys = gr.keys
    verdicts = dict(zip(keys, vals, strict=True))
    reasons = dict(compress(zip(keys, why, strict=True), map(is_not, why, repeat(None))))  # C-level filter
    placed: list[tuple[int, Finding]] = []
    for lists in grouped.values():
        pos = lists[0][0] if len(lists) == 1 else sorted(p for lst, _ in lists for p in lst)
        nv = min(lists, key=lambda x: x[0][0])[1]  # the earliest node's words, as a walk in order gives
        ref = nodes[pos[0]]
        placed.append((pos[0], Finding(target=prof.id, severity=SEVERITY_OF[nv.verdict], verdict=nv.verdict,
                                       rule=nv.rule, message=f"{ref.op_type}: {nv.reason}", hint=nv.hint,
                                       node=ref.key, op_type=ref.op_type, domain=ref.domain, subgraph=ref.graph,
                                       tensor=None, nodes=[keys[p] for p in pos], count=len(pos))))
    for p, nv in single:
        ref = nodes[p]
        placed.append((p, Finding(target=prof.id, severity=SEVERITY_OF[nv.verdict], verdict=nv.verdict,
                                  rule=nv.rule, message=f"{ref.op_type}: {nv.reason}", hint=nv.hint, node=ref.key,
                                  op_type=ref.op_type, domain=ref.domain, subgraph=ref.graph, tensor=nv.tensor,
                                  nodes=[ref.key])))
    placed.sort(key=lambda x: x[0])
    findings = [f for _, f in placed]
    findings.extend(global_findings(lm, dyn, prof))
    if prof.kind != "none":  # a window longer than its input runs nowhere, whatever the op lists say
        from studio.inspect.kernel_fit import kernel_findings

        findings.extend(kernel_findings(cost_lm or lm, prof.id,
                                        "the shapes given" if cost_lm is not None else "the model's static dims"))
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
        return sorted(ops_by[verdict])

    summary = TargetSummary(id=prof.id, name=prof.name, kind=prof.kind, source=prof.source,
                            verdict=summary_verdict, counts=counts, findings=sev,
                            unsupported_ops=ops_with("unsupported"), risky_ops=ops_with("risky"),
                            unknown_ops=ops_with("unknown"))
    mv = summary.model = static_model_verdict(prof, findings, [
        HostNode(nodes[p].key, nodes[p].op_type, why) for p, why in sorted(host)], counts["unknown"],
        placement.source if placement is not None else "")
    if mv.host_nodes:
        from studio.inspect.model_verdict import fallback_cost

        gone = placement.gone if placement is not None else set()
        consts = lm.constants
        placed = {r.key for r in nodes if not r.graph and r.key not in gone and r.op_type != "Constant"
                  and not (r.outputs and all(o in consts for o in r.outputs if o))}
        mv.cost = fallback_cost(cost_lm or lm, {h.node for h in mv.host_nodes}, placed)
    return summary, verdicts, reasons, findings


FOLDED = N_("folded into a constant at build (the toolchain folds constant and shape arithmetic first)")


def _placed(nv: NodeVerdict, key: str, p: Any) -> NodeVerdict:
    """A node's verdict after the toolchain's whole-graph passes (``graph_model.Placement``): folded nodes are
    gone before any op is looked up; a host-placed node runs (risky), unless a rule refuses it outright. The
    placement's words are its templates (graph_model), the profile's sentence a ``{reason}`` in them."""
    if key in p.folded:
        return NodeVerdict("supported", "", FOLDED)
    if key in p.removed:
        return NodeVerdict("supported", "", p.removed[key])
    if key in p.accelerated and nv.rule == "cpu-fallback":
        reason = p.accelerated[key]
        return NodeVerdict("supported", "", N_(f"on the accelerator in this graph: {reason}"))
    if key in p.host and (nv.verdict == "supported" or nv.rule == "cpu-fallback"):
        return NodeVerdict("risky", "host-placement", p.host[key],
                           N_("expect host<->device transfers around it; move it out of the model or change its "
                           "dtype to one the accelerator computes"))
    return nv
