"""The search's report: every candidate with its figures (each with the tool that produced it), the Pareto front
per part, the chosen variant with its recipe as commands, and what stands in the way when the budget is not met.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from studio.core.catalogue import N_, _, tr
from studio.core.columns import cell
from studio.core.reports import Report

SCHEMA_VERSION = 1
REPORT_FILE = "optimize_report.json"
RECIPE_FILE = "recipe.sh"
# a candidate's status in the text report's table (translated where shown; the report keeps the ids)
STATUS_WORDS = {"built": N_("built"), "pruned": N_("pruned"), "failed": N_("failed"), "crashed": N_("crashed"),
                "error": N_("error"), "skipped": N_("skipped"), "pending": N_("pending")}


@dataclass
class Candidate:
    id: str
    part: str
    label: str
    recipe: dict[str, Any]
    round: str  # structure | precision | block-list
    status: str = "queued"  # queued | pruned | built | failed | crashed | error | cancelled | skipped
    meets_budget: bool = False
    pareto: bool = False
    chosen: bool = False
    judged: dict[str, Any] = field(default_factory=dict)  # studio.tune.judge.Judged as data
    latency_ms: float | None = None
    latency_by: str = ""
    latency_ratio: float | None = None  # / the FP32 original's latency (both measured in one run)

    @property
    def accuracy(self) -> dict[str, Any] | None:
        return self.judged.get("accuracy")

    def accuracy_value(self, metric: str) -> float | None:
        a = self.accuracy
        return None if a is None else {"cosine": a["cosine"], "max-abs": a["max_abs"],
                                       "top1-agree": a["top1_agree"]}[metric]

    def objective_value(self, objective: str) -> float | None:
        j = self.judged
        if objective == "npu-coverage":
            return j.get("coverage")
        if objective == "size":
            return float(j["size_bytes"]) if j.get("size_bytes") else None
        return self.latency_ms


@dataclass
class Blocking:
    """What stands in the way of the budget: a node (or None), the rule or error measure, the words, the tool."""

    node: str | None
    rule: str
    message: str
    tool: str


@dataclass
class PartResult:
    part: str
    source: str
    chosen: str | None = None  # candidate id
    met: bool = False
    candidates: list[Candidate] = field(default_factory=list)
    blocking: list[Blocking] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # what the chosen variant wrote under --out
    reference_by: str = ""
    reference_latency_ms: float | None = None
    reference_latency_by: str = ""
    dims: dict[str, int] = field(default_factory=dict)
    static_needed: bool = False  # the target builds at fixed shapes, or its profile flags the dynamic inputs
    findings: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def chosen_candidate(self) -> Candidate | None:
        return next((c for c in self.candidates if c.id == self.chosen), None)


@dataclass
class TuneReport(Report):
    schema_version: int = SCHEMA_VERSION
    model: str = ""
    target: str = ""
    budget: str = ""
    objective: str = ""
    calibration: str = ""
    calibration_source: str = ""
    time_limit_min: float = 0.0
    status: str = "not-met"  # met | not-met | cancelled
    out: str = ""
    parts: list[PartResult] = field(default_factory=list)
    tools: dict[str, str] = field(default_factory=dict)
    cache_key: str = ""
    cached: bool = False
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def met(self) -> bool:
        return self.status == "met"

    def commands(self) -> list[str]:
        return [c for p in self.parts for c in p.commands]

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TuneReport:
        d = dict(d)
        parts = []
        for p in d.get("parts") or []:
            p = dict(p)
            p["candidates"] = [Candidate(**_known(Candidate, c)) for c in p.get("candidates") or []]
            p["blocking"] = [Blocking(**_known(Blocking, b)) for b in p.get("blocking") or []]
            parts.append(PartResult(**_known(PartResult, p)))
        d["parts"] = parts
        return cls(**_known(cls, d))

    @classmethod
    def load(cls, path: Any) -> TuneReport:
        import json
        from pathlib import Path

        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


def _known(cls: type, d: dict[str, Any]) -> dict[str, Any]:
    names = set(cls.__dataclass_fields__)  # type: ignore[attr-defined]
    return {k: v for k, v in d.items() if k in names}


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.0f}%"


def _size(n: int | None) -> str:
    if not n:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def candidate_row(c: Candidate, metric: str) -> str:
    j = c.judged
    acc = c.accuracy_value(metric)
    acc_s = "-" if acc is None else (f"{acc:.6f}" if metric != "max-abs" else f"{acc:.3g}")
    lat = "-" if c.latency_ms is None else f"{c.latency_ms:.3f} ms"
    mark = ("*" if c.chosen else "") + ("P" if c.pareto else "")
    verdict = (j.get("verdict") or {}).get("verdict") or ("pruned" if c.status == "pruned" else "")
    status = _(STATUS_WORDS.get(c.status, c.status))
    return (f"  {mark:2} {c.id:4} {c.label[:58]:58} {cell(status, 7)} {verdict[:14]:14} {_pct(j.get('coverage')):>5} "
            f"{acc_s:>10} {_size(j.get('size_bytes')):>10} {lat:>11}")


def render_text(rep: TuneReport) -> str:
    metric = rep.budget.split(">")[0].split("<")[0] if rep.budget else "cosine"
    lines = [tr("optimize {model} for {target}: budget {budget}, objective {objective}", model=rep.model,
                target=rep.target, budget=rep.budget, objective=rep.objective)
             + (" " + _("(cached result)") if rep.cached else ""),
             "  " + tr("calibration: {source}", source=rep.calibration_source)]
    for name, tool in sorted(rep.tools.items()):
        lines.append(f"  {name}: {tool}")
    for p in rep.parts:
        lines.append(f"\n[{p.part}] {p.source}  ({_('budget met') if p.met else _('budget NOT met')})")
        if p.dims:
            lines.append("  " + tr("static dims from the samples: {dims}",
                                   dims=", ".join(f"{k}={v}" for k, v in p.dims.items())))
        lines.append(f"     {cell(_('id'), 4)} {cell(_('recipe'), 58)} {cell(_('status'), 7)} "
                     f"{cell(_('tool verdict'), 14)} {cell(_('npu'), 5, True)} {metric:>10} {cell(_('size'), 10, True)} "
                     f"{cell(_('host lat.'), 11, True)}")
        for c in p.candidates:
            lines.append(candidate_row(c, metric))
            if c.status in ("pruned", "failed", "crashed", "error") and c.judged.get("error"):
                lines.append(f"         {c.judged['error'][:150]}")
        lines.append("  " + _("(* chosen, P Pareto front on the objective vs accuracy)"))
        ch = p.chosen_candidate()
        if ch is not None:
            j = ch.judged
            lines.append("  " + tr("chosen {id}: {label}", id=ch.id, label=ch.label))
            verdict = j.get("verdict") or {}
            lines.append("    " + tr("tool verdict: {verdict} [{by}]", verdict=verdict.get("verdict"),
                                     by=verdict.get("by", "")))
            if ch.accuracy:
                a = ch.accuracy
                lines.append("    " + tr("accuracy: cosine {cosine}, max|diff| {max_abs}, top-1 agree {top1}% on "
                                         "{samples} sample(s) [{by}]", cosine=f"{a['cosine']:.6f}",
                                         max_abs=f"{a['max_abs']:.3g}", top1=f"{100 * a['top1_agree']:.1f}",
                                         samples=a["samples"], by=a["by"]))
            lines.append("    " + tr("size {size} [{by}]", size=_size(j.get("size_bytes")), by=j.get("size_by", "")))
            if ch.latency_ms is not None:
                ratio = tr(", {ratio}x the FP32 original's {ms} ms [{by}]", ratio=f"{ch.latency_ratio:.2f}",
                           ms=f"{p.reference_latency_ms:.3f}", by=p.reference_latency_by) if ch.latency_ratio else ""
                lines.append("    " + tr("host latency {ms} ms [{by}]", ms=f"{ch.latency_ms:.3f}", by=ch.latency_by)
                             + ratio)
        for b in p.blocking[:12]:
            lines.append("  " + tr("blocking: {node}: {rule}: {message} [{tool}]", node=b.node or _("(model)"),
                                   rule=b.rule, message=b.message[:160], tool=b.tool))
        for w in p.warnings:
            lines.append("  " + tr("warning: {message}", message=_(w)))
        if p.commands:
            lines.append("  " + _("recipe:"))
            lines += [f"    {c}" for c in p.commands]
    for w in rep.warnings:
        lines.append(tr("warning: {message}", message=_(w)))
    for n in rep.notes:
        lines.append(tr("note: {message}", message=_(n)))
    status = _("budget met") if rep.met else _("budget NOT met") if rep.status == "not-met" else _(rep.status)
    lines.append("\n" + tr("{status}: {out}  ({seconds} s)", status=status, out=rep.out, seconds=f"{rep.seconds:.1f}"))
    return "\n".join(lines) + "\n"
