"""Profile reports: per-node times of one model (every node has an entry), per-module times, comparisons.

Data first: the CLI, the inspector's heat overlay and the before/after comparison all read these.

    rep = ProfileReport.load("reports/model.profile.json")
    rep.node_times()          # node key -> mean ms (0 for nodes ORT fused/folded; see rep.nodes[i].status)
    rep.shares()              # node key -> share of the summed node time (0..1): the heat colour
    rep.top(10)               # the 10 slowest nodes (NodeTime)
    compare_profiles(before, after)   # ProfileComparison: total, per-node and per-scope deltas
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from studio.core.catalogue import N_, _, tr
from studio.core.columns import cell
from studio.core.errors import InputError
from studio.core.reports import Report

SCHEMA_VERSION = 1
# NodeTime.status values
MEASURED = "measured"  # ORT reported a kernel event for it (time = its kernel(s))
FUSED = "fused"  # ORT fused it into another node: its time is counted on ``fused_into``
FOLDED = "folded"  # constant-folded / computed at session load: no run-time cost
REMOVED = "removed"  # eliminated by ORT's graph optimizer (identity, dropout, ...)
NOT_RUN = "not-run"  # present but no kernel event (e.g. a branch not taken)
STATUSES = (MEASURED, FUSED, FOLDED, REMOVED, NOT_RUN)
# the text report's words for a status and for where the modules came from (translated where shown)
STATUS_WORDS = {MEASURED: N_("measured"), FUSED: N_("fused"), FOLDED: N_("folded"), REMOVED: N_("removed"),
                NOT_RUN: N_("not-run")}
MODULE_SOURCES = {"node names": N_("node names"), "metadata": N_("metadata")}


@dataclass
class NodeTime:
    key: str  # node key, spelled as studio.inspect / the graph view spell it
    name: str
    op_type: str
    mean_ms: float = 0.0  # mean per run over the measured runs
    p95_ms: float = 0.0
    share: float = 0.0  # of the summed node time per run
    calls: float = 0.0  # kernel events per run
    status: str = MEASURED
    fused_into: str | None = None  # key of the node that carries this node's time
    ort_nodes: list[str] = field(default_factory=list)  # ORT node(s) whose time lands here
    ort_op: str = ""  # op ORT ran (e.g. FusedMatMul, QuickGelu) when it differs from op_type
    reason: str = ""  # why the time is 0 / where it went
    module: str = ""  # torch module the node came from (exporter scope), "" when unknown


@dataclass
class ModuleTime:
    """One torch module: inclusive time in PyTorch and the summed ORT time of the ONNX nodes it produced."""

    module: str  # dotted path, e.g. vision_model.encoder.layers.0.self_attn
    type: str = ""  # class name, e.g. CLIPAttention
    torch_mean_ms: float | None = None
    torch_p95_ms: float | None = None
    onnx_mean_ms: float = 0.0  # sum of mapped node means (inclusive of submodules)
    onnx_nodes: list[str] = field(default_factory=list)  # node keys (inclusive)
    share: float = 0.0  # of the summed node time


@dataclass
class ProfileReport(Report):
    schema_version: int = SCHEMA_VERSION
    model: str = ""
    created: str = ""
    runtime: str = ""  # "onnxruntime 1.32.0 CPUExecutionProvider"
    optimization: str = "all"
    custom_ops: str = ""  # how studio.fused ops ran, "" when the model has none
    runs: int = 0
    warmup: int = 0
    input_shapes: dict[str, list[int]] = field(default_factory=dict)
    run_mean_ms: float = 0.0  # wall time of one profiled run (ORT's model_run event)
    run_p95_ms: float = 0.0
    node_total_ms: float = 0.0  # summed node means per run
    nodes: list[NodeTime] = field(default_factory=list)  # graph order; every node of the model
    unmapped_ort: list[dict[str, Any]] = field(default_factory=list)  # ORT nodes with no source node
    modules: list[ModuleTime] = field(default_factory=list)
    module_source: str = ""  # how modules were found: "node names" | "metadata" | "" (none)
    torch: dict[str, Any] = field(default_factory=dict)  # torch profiling details (weights, runs, error)
    warnings: list[str] = field(default_factory=list)
    _feed: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)  # inputs used (not saved)

    # -- what the GUI overlay and the CLI read -----------------------------------------------------------
    def node_times(self) -> dict[str, float]:
        """Node key -> mean ms per run; every node of the model is present (0 where ORT fused/folded it)."""
        return {n.key: n.mean_ms for n in self.nodes}

    def shares(self) -> dict[str, float]:
        """Node key -> share (0..1) of the summed node time: the heat colour."""
        return {n.key: n.share for n in self.nodes}

    def top(self, n: int = 10) -> list[NodeTime]:
        return sorted((x for x in self.nodes if x.mean_ms > 0), key=lambda x: -x.mean_ms)[:max(0, n)]

    def node(self, key: str) -> NodeTime | None:
        return next((x for x in self.nodes if x.key == key), None)

    def scope_times(self) -> dict[str, float]:
        """Exporter scope (node name minus its last segment, e.g. /model/.../self_attn) -> summed mean ms."""
        out: dict[str, float] = {}
        for n in self.nodes:
            s = scope_of(n.name)
            out[s] = out.get(s, 0.0) + n.mean_ms
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProfileReport:
        if not isinstance(data, dict) or "nodes" not in data:
            raise InputError("not a profile report (no 'nodes')", hint="give a file written by `studio profile --save`")
        if int(data.get("schema_version", 0)) > SCHEMA_VERSION:
            raise InputError(f"profile schema {data.get('schema_version')} is newer than this studio's "
                             f"({SCHEMA_VERSION})", hint="upgrade the studio")
        known = {f.name for f in fields(cls)}
        kw = {k: v for k, v in data.items() if k in known}
        kw["nodes"] = [NodeTime(**_pick(NodeTime, n)) for n in data.get("nodes", [])]
        kw["modules"] = [ModuleTime(**_pick(ModuleTime, m)) for m in data.get("modules", [])]
        return cls(**kw)

    @classmethod
    def load(cls, path: Path | str) -> ProfileReport:
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise InputError(f"cannot read profile: {exc.strerror}", offending=str(path),
                             hint="give a file written by `studio profile --save`") from None
        except ValueError as exc:
            raise InputError(f"profile is not valid JSON: {exc}", offending=str(path)) from None
        try:
            return cls.from_dict(data)
        except TypeError as exc:
            raise InputError(f"malformed profile report: {exc}", offending=str(path)) from None


def _pick(cls: Any, data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise InputError("malformed profile report: an entry is not a mapping")
    known = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in known}


def scope_of(name: str) -> str:
    return name.rsplit("/", 1)[0] if "/" in name else ""


# -- comparison -----------------------------------------------------------------------------------------

@dataclass
class Delta:
    key: str
    before_ms: float | None  # None: not in that profile
    after_ms: float | None
    delta_ms: float = 0.0
    ratio: float | None = None  # after / before
    op_before: str = ""
    op_after: str = ""


@dataclass
class ProfileComparison(Report):
    schema_version: int = SCHEMA_VERSION
    before: str = ""
    after: str = ""
    run_before_ms: float = 0.0
    run_after_ms: float = 0.0
    run_delta_ms: float = 0.0
    run_ratio: float | None = None
    node_total_before_ms: float = 0.0
    node_total_after_ms: float = 0.0
    nodes: list[Delta] = field(default_factory=list)  # matched by key; sorted by |delta|
    scopes: list[Delta] = field(default_factory=list)  # by exporter scope: survives fusions that rename nodes
    only_before: list[str] = field(default_factory=list)  # keys gone after (fused away, removed)
    only_after: list[str] = field(default_factory=list)  # keys new after (fused nodes)
    warnings: list[str] = field(default_factory=list)


def _delta(key: str, a: float | None, b: float | None, op_a: str = "", op_b: str = "") -> Delta:
    d = (b or 0.0) - (a or 0.0)
    ratio = (b / a) if a and b is not None and a > 0 else None
    return Delta(key=key, before_ms=a, after_ms=b, delta_ms=round(d, 6), ratio=ratio, op_before=op_a, op_after=op_b)


def compare_profiles(before: ProfileReport, after: ProfileReport) -> ProfileComparison:
    """Per-node (by key) and per-scope deltas and the run-time change, after minus before."""
    c = ProfileComparison(before=before.model, after=after.model, run_before_ms=before.run_mean_ms,
                          run_after_ms=after.run_mean_ms, run_delta_ms=round(after.run_mean_ms - before.run_mean_ms, 6),
                          run_ratio=(after.run_mean_ms / before.run_mean_ms) if before.run_mean_ms > 0 else None,
                          node_total_before_ms=before.node_total_ms, node_total_after_ms=after.node_total_ms)
    if before.input_shapes != after.input_shapes:
        shapes_before, shapes_after = before.input_shapes, after.input_shapes
        c.warnings.append(N_(f"input shapes differ: {shapes_before} vs {shapes_after}"))
    if before.runtime != after.runtime:
        runtime_before, runtime_after = before.runtime, after.runtime
        c.warnings.append(N_(f"runtimes differ: {runtime_before} vs {runtime_after}"))
    a = {n.key: n for n in before.nodes}
    b = {n.key: n for n in after.nodes}
    for k in a.keys() | b.keys():
        na, nb = a.get(k), b.get(k)
        c.nodes.append(_delta(k, na.mean_ms if na else None, nb.mean_ms if nb else None,
                              na.op_type if na else "", nb.op_type if nb else ""))
    c.nodes.sort(key=lambda d: (-abs(d.delta_ms), d.key))
    c.only_before = sorted(a.keys() - b.keys())
    c.only_after = sorted(b.keys() - a.keys())
    sa, sb = before.scope_times(), after.scope_times()
    for s in sa.keys() | sb.keys():
        c.scopes.append(_delta(s or "(top)", sa.get(s), sb.get(s)))
    c.scopes.sort(key=lambda d: (-abs(d.delta_ms), d.key))
    return c


# -- text rendering ---------------------------------------------------------------------------------------

def render_profile_text(rep: ProfileReport, top: int = 15) -> str:
    """The terminal report in the user's language (studio.core.catalogue): labels, column heads, status words and
    warnings translated; node keys, ops, modules, runtimes and figures as they are; English as it was."""
    counts = {s: sum(1 for n in rep.nodes if n.status == s) for s in STATUSES}
    inputs = ", ".join(f"{k}={list(v)}" for k, v in rep.input_shapes.items())
    lines = [tr("profile of {model}  ({runtime}, optimization {optimization})", model=rep.model, runtime=rep.runtime,
                optimization=rep.optimization),
             tr("  inputs {inputs}; {runs} runs after {warmup} warm-up", inputs=inputs, runs=rep.runs,
                warmup=rep.warmup),
             tr("  run {mean} ms mean, {p95} ms p95; node time {total} ms", mean=f"{rep.run_mean_ms:.3f}",
                p95=f"{rep.run_p95_ms:.3f}", total=f"{rep.node_total_ms:.3f}"),
             tr("  nodes: {counts}", counts=", ".join(f"{v} {_(STATUS_WORDS[k])}" for k, v in counts.items() if v))]
    if rep.custom_ops:
        lines.append(tr("  custom ops: {ops}", ops=_(rep.custom_ops)))
    lines.append(f"\n  {cell(_('mean ms'), 9, True)} {cell(_('p95 ms'), 9, True)} {cell(_('share'), 6, True)}  "
                 + _("op / node"))
    for n in rep.top(top):
        op = n.op_type + (tr(" (ran as {op})", op=n.ort_op) if n.ort_op else "")
        lines.append(f"  {n.mean_ms:9.4f} {n.p95_ms:9.4f} {100 * n.share:5.1f}%  {cell(op, 22)} {n.key}")
    if rep.modules:
        source = _(MODULE_SOURCES.get(rep.module_source, rep.module_source))
        lines.append("\n  " + tr("modules ({source}):", source=source) + f" {cell(_('torch ms'), 9, True)} "
                     f"{cell(_('onnx ms'), 9, True)} {cell(_('nodes'), 5, True)}  " + _("module"))
        for m in rep.modules[:top]:
            t = f"{m.torch_mean_ms:9.4f}" if m.torch_mean_ms is not None else f"{'-':>9}"
            lines.append(f"  {'':14}{t} {m.onnx_mean_ms:9.4f} {len(m.onnx_nodes):5}  {m.module} {m.type}")
    lines += [tr("  warning: {warning}", warning=_(w)) for w in rep.warnings]
    return "\n".join(lines) + "\n"


def render_comparison_text(c: ProfileComparison, top: int = 15) -> str:
    ratio = f" (x{c.run_ratio:.3f})" if c.run_ratio else ""
    lines = [tr("compare {before} -> {after}", before=c.before, after=c.after),
             tr("  run {before} -> {after} ms, {delta} ms{ratio}", before=f"{c.run_before_ms:.3f}",
                after=f"{c.run_after_ms:.3f}", delta=f"{c.run_delta_ms:+.3f}", ratio=ratio),
             tr("  node time {before} -> {after} ms; {gone} node(s) gone, {new} new",
                before=f"{c.node_total_before_ms:.3f}", after=f"{c.node_total_after_ms:.3f}", gone=len(c.only_before),
                new=len(c.only_after))]
    lines.append("\n  " + _("by scope:") + f"{cell(_('before'), 12, True)} {cell(_('after'), 9, True)} "
                 f"{cell(_('delta'), 9, True)}")
    for d in c.scopes[:top]:
        lines.append(f"  {_ms(d.before_ms)} {_ms(d.after_ms)} {d.delta_ms:+9.4f}  {d.key}")
    lines.append("\n  " + _("by node:"))
    for d in c.nodes[:top]:
        lines.append(f"  {_ms(d.before_ms)} {_ms(d.after_ms)} {d.delta_ms:+9.4f}  {d.op_before or d.op_after:14} {d.key}")
    lines += [tr("  warning: {warning}", warning=_(w)) for w in c.warnings]
    return "\n".join(lines) + "\n"


def _ms(v: float | None) -> str:
    return f"{v:9.4f}" if v is not None else f"{'-':>9}"
