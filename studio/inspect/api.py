"""The inspector's public API: one call in, one InspectionReport out. CLI, GUI, Triton, packaging and
compile helpers all call this; nothing here imports torch or Qt.

    report = inspect_model("model.onnx", ["rk3588", "qnn-htp"], shapes={"input_ids": [1, 64]})
    report.targets["rk3588"].verdict          # "pass" | "risky" | "fail" | "unknown"
    report.node_verdicts["rk3588"][node_key]  # "supported" | "risky" | "unsupported" | "unknown"
    report.findings                           # [Finding(target, severity, verdict, rule, node, message, hint, ...)]
    report.dynamic.tensors[name].origins      # where each dynamic tensor's dims come from
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from studio.core.catalogue import N_
from studio.core.jobs import JobState, Stages
from studio.inspect.dynamic import DynamicOrigin, DynamicReport, DynamicTensor, trace_dynamic
from studio.inspect.model import LoadedModel, analyse_structure, read_model_proto
from studio.inspect.profiles import (
    BUILTIN_IDS,
    Constraint,
    GlobalRules,
    OpRule,
    TargetProfile,
    list_targets,
    load_target,
    resolve_targets,
)
from studio.inspect.report import (
    POLICY_TARGET,
    SCHEMA_VERSION,
    BoundaryCheck,
    Finding,
    InspectionReport,
    ModelStats,
    TargetSummary,
)

__all__ = ["inspect_model", "inspect_parts", "load_structure", "LoadedModel", "check_boundaries", "list_targets", "load_target",
           "resolve_targets", "InspectionReport", "TargetSummary", "Finding", "ModelStats", "BoundaryCheck",
           "DynamicReport", "DynamicOrigin", "DynamicTensor", "TargetProfile", "OpRule", "Constraint",
           "GlobalRules", "BUILTIN_IDS", "SCHEMA_VERSION", "POLICY_TARGET", "DEFAULT_ALLOWED_DOMAINS",
           "render"]

DEFAULT_ALLOWED_DOMAINS = ("ai.onnx",)


def inspect_model(model: Path | str, targets: list[str] | None = None, *,
                  shapes: dict[str, list[int]] | None = None, profile_dirs: list[Path] | None = None,
                  job: JobState | None = None, custom_domains: list[str] | None = None) -> InspectionReport:
    """Analyse ``model`` against ``targets`` (ids; None or ["all"] = every profile) without loading weights.

    ``shapes`` fixes input dims for the FLOPs / activation-memory estimate (the dynamic-dim analysis always
    describes the model as it is). ``custom_domains`` are op domains the model may use besides ai.onnx.
    Raises InputError / ModelError / TargetError for bad input; never a bare exception for a bad file.
    """
    from studio.core.gc_pause import gc_paused

    with gc_paused():  # ~10^5 small objects (node refs, tensor infos, verdicts) and no cycles among them
        return _inspect_model(model, targets, shapes=shapes, profile_dirs=profile_dirs, job=job,
                              custom_domains=custom_domains)


def _inspect_model(model: Path | str, targets: list[str] | None, *, shapes: dict[str, list[int]] | None,
                   profile_dirs: list[Path] | None, job: JobState | None,
                   custom_domains: list[str] | None) -> InspectionReport:
    job = job or JobState(name="inspect")
    stages = Stages(job, {"load": 2, "shapes": 3, "dynamic": 1, "targets": 3, "stats": 1})
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    path = Path(model)
    from studio.inspect import shape_fork

    # a child infers the shapes while the file is parsed, the profiles load and the nodes are indexed
    pending = shape_fork.take(path) or shape_fork.start(path)
    try:
        profiles = resolve_targets(targets, profile_dirs)  # bad target names fail before any work
        stages.begin("load", f"reading {path.name} (without external weights)")
        proto = read_model_proto(path)
    except BaseException:
        if pending is not None:
            pending.cancel()
        raise
    timings["load"] = time.perf_counter() - t0

    stages.begin("shapes", "shape inference")
    t = time.perf_counter()
    lm = analyse_structure(path, proto, pending=pending)
    timings["shape_inference"] = time.perf_counter() - t

    stages.begin("dynamic", "tracing dynamic dims")
    t = time.perf_counter()
    dyn = trace_dynamic(lm)
    timings["dynamic"] = time.perf_counter() - t

    stages.begin("targets", "checking targets")
    t = time.perf_counter()
    from studio.inspect.verdicts import evaluate_target, op_versions

    versions = op_versions(lm)
    # estimates for the given shapes (statistics, the price of a host fallback) come from a second,
    # shape-fixed inference
    fixed = analyse_structure(path, _copy(proto), shapes=shapes) if shapes else None
    rep = InspectionReport(model=str(path), ir_version=int(proto.ir_version),
                           producer=f"{proto.producer_name} {proto.producer_version}".strip(),
                           opset_imports=dict(lm.opsets), dynamic=dyn,
                           shape_inference="passed" if lm.shape_inference_error is None
                           else f"failed: {lm.shape_inference_error}")
    allowed = list(DEFAULT_ALLOWED_DOMAINS) + [d for d in (custom_domains or []) if d not in DEFAULT_ALLOWED_DOMAINS]
    from studio.inspect.custom_domains import declared_in

    allowed += [d for d in declared_in(lm.opsets) if d not in allowed]  # the studio's own domain is declared
    rep.allowed_domains = allowed
    rep.findings.extend(policy_findings(lm, allowed))
    for i, prof in enumerate(profiles):
        summary, verdicts, reasons, findings = evaluate_target(lm, dyn, prof, versions, fixed)
        rep.targets[prof.id] = summary
        rep.node_verdicts[prof.id] = verdicts
        rep.node_reasons[prof.id] = reasons
        rep.findings.extend(findings)
        stages.within("targets", (i + 1) / max(len(profiles), 1))
    timings["targets"] = time.perf_counter() - t

    stages.begin("stats", "statistics")
    t = time.perf_counter()
    from studio.inspect.stats import compute_stats

    if fixed is not None:
        rep.stats = compute_stats(fixed, shapes)
    else:
        rep.stats = compute_stats(lm)
    timings["stats"] = time.perf_counter() - t
    timings["total"] = time.perf_counter() - t0
    rep.timings = {k: round(v, 4) for k, v in timings.items()}
    job.set_progress(100, force=True)
    job.set_status(f"inspected {len(lm.nodes)} nodes against {len(profiles)} targets")
    return rep


def load_structure(model: Path | str, *, shapes: dict[str, list[int]] | None = None) -> LoadedModel:
    """The indexed graph the report's node keys refer to (for graph views): ``nodes`` (NodeRef: key, name,
    graph path, NodeProto), ``tensors`` (dtype + shape), ``producers``/``consumers``, ``constants``.
    Weights are not loaded. Keys match ``InspectionReport.node_verdicts[target]`` exactly."""
    return analyse_structure(Path(model), read_model_proto(model), shapes=shapes)


def _copy(proto: Any) -> Any:
    import onnx

    m = onnx.ModelProto()
    m.CopyFrom(proto)
    return m


def policy_findings(lm: LoadedModel, allowed: list[str]) -> list[Finding]:
    """Opset/domain policy (seed: only ai.onnx plus declared custom domains) and shape-inference health."""
    out: list[Finding] = []
    bad: dict[str, list[str]] = {}
    for ref in lm.nodes:
        if ref.domain not in allowed:
            bad.setdefault(ref.domain, []).append(ref.key)
    for dom, keys in bad.items():
        first = next(r for r in lm.nodes if r.key == keys[0])
        out.append(Finding(target=POLICY_TARGET, severity="warning", verdict="risky", rule="domain-policy",
                           message=N_(f"{len(keys)} node(s) in domain '{dom}', which is not declared "
                                   f"(allowed: {', '.join(allowed)})"),
                           hint=N_(f"declare it with --custom-domain {dom} if your runtime provides these ops, "
                                "or replace them with ai.onnx ops"),
                           node=keys[0], op_type=first.op_type, domain=dom, subgraph=first.graph,
                           nodes=keys, count=len(keys)))
    for dom in lm.opsets:
        if dom not in allowed and dom not in bad:
            out.append(Finding(target=POLICY_TARGET, severity="note", verdict="unknown", rule="domain-policy",
                               message=N_(f"opset import of undeclared domain '{dom}' (no node uses it)"),
                               hint=N_("remove the unused opset import or declare the domain"), domain=dom))
    if lm.shape_inference_error:
        out.append(Finding(target=POLICY_TARGET, severity="warning", verdict="risky", rule="shape-inference",
                           message=N_(f"ONNX shape inference failed: {lm.shape_inference_error}"),
                           hint=N_("shapes, dynamic dims and estimates may be incomplete; run onnx.checker on the model")))
    return out


def inspect_parts(models: list[Path | str], targets: list[str] | None = None, **kw: Any) -> list[InspectionReport]:
    """Inspect each part of a split export; boundary checks are attached to every report."""
    reports = [inspect_model(m, targets, **kw) for m in models]
    checks = check_boundaries(models)
    for r in reports:
        r.boundaries = checks
        for c in checks:
            if c.status != "ok" and r.model.endswith(c.consumer):
                r.findings.append(Finding(target=POLICY_TARGET, severity="error" if c.status == "mismatch"
                                          else "warning", verdict="unsupported" if c.status == "mismatch"
                                          else "risky", rule="boundary", message=c.message, tensor=c.tensor,
                                          hint=N_("re-export the parts together so boundary tensors agree")))
    return reports


def check_boundaries(models: list[Path | str]) -> list[BoundaryCheck]:
    """Static-shape and dtype consistency of tensors that one part outputs and another takes as input."""
    from studio.inspect.model import dtype_name

    parts = []
    for m in models:
        proto = read_model_proto(m)
        lm = analyse_structure(Path(m), proto)
        parts.append((Path(m).name, lm))
    checks: list[BoundaryCheck] = []
    for pname, plm in parts:
        for out in plm.graph_outputs:
            for cname, clm in parts:
                if cname == pname or out not in clm.graph_inputs:
                    continue
                po, ci = plm.tensors.get(out), clm.tensors.get(out)
                pd = dtype_name(po.elem_type) if po else "unknown"
                cd = dtype_name(ci.elem_type) if ci else "unknown"
                ps, cs = (po.shape if po else None), (ci.shape if ci else None)
                status, msg = "ok", "matches"
                if pd != cd:
                    status, msg = "mismatch", f"dtype {pd} from {pname} but {cname} expects {cd}"
                elif ps is not None and cs is not None and len(ps) != len(cs):
                    status, msg = "mismatch", f"rank {len(ps)} from {pname} but {cname} expects rank {len(cs)}"
                elif ps is not None and cs is not None:
                    for ax, (a, b) in enumerate(zip(ps, cs, strict=False)):
                        if isinstance(a, int) and isinstance(b, int) and a != b:
                            status, msg = "mismatch", f"axis {ax}: {a} from {pname} but {cname} expects {b}"
                            break
                        if isinstance(a, int) != isinstance(b, int) and status == "ok":
                            status, msg = "risky", (f"axis {ax}: {a!r} from {pname} vs {b!r} in {cname} "
                                                    "(static on one side, dynamic on the other)")
                checks.append(BoundaryCheck(tensor=out, producer=pname, consumer=cname, producer_dtype=pd,
                                            consumer_dtype=cd, producer_shape=ps, consumer_shape=cs,
                                            status=status, message=f"boundary '{out}': {msg}"))
    return checks


def render(report: InspectionReport, fmt: str = "text", *, target: str | None = None) -> str:
    """Render the report as ``text`` | ``json`` | ``html`` | ``sarif``."""
    from studio.inspect import render as r

    return r.render(report, fmt, target=target)
