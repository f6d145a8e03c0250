"""SLA model: tiers L1/L2/L3 (data in studio/resources/sla/tiers.yaml), latency budgets per model, the three-way
constraint cost, a verdict per measurement window and the compliance percentage over a run."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from studio.core.errors import InputError
from studio.core.paths import resource_file
from studio.core.reports import Report

PASS, FAIL, NA = "pass", "fail", "not available"


@dataclass(frozen=True)
class Tier:
    name: str
    title: str
    memory_max_pct: float
    bandwidth_jitter_pct: float
    power_fluctuation_pct: float
    max_error_pct: float | None = None
    max_cost: float | None = None
    max_ttft_p95_ms: float | None = None  # generate endpoints: time to first token, p95 of a window
    max_inter_token_p95_ms: float | None = None  # generate endpoints: inter-token latency, p95 of a window


@dataclass(frozen=True)
class ReferenceDevice:
    name: str
    memory_bytes: float
    bandwidth_bytes_per_s: float
    power_w: float


@dataclass(frozen=True)
class CostModel:
    weights: dict[str, float]
    reference: ReferenceDevice


@dataclass(frozen=True)
class LatencyBudget:
    """User latency targets for one model (milliseconds); None means no budget on that percentile."""

    p95_ms: float | None = None
    p99_ms: float | None = None
    ttft_p95_ms: float | None = None  # generate endpoints (overrides the tier's max_ttft_p95_ms)
    inter_token_p95_ms: float | None = None


def default_tiers_path() -> Path:
    """The shipped tiers; missing (a broken install) is an InstallError naming the file and the fix."""
    return resource_file("sla", "tiers.yaml")


def load_tiers(path: Path | str | None = None) -> tuple[dict[str, Tier], CostModel]:
    """Tier definitions and the cost model from YAML (the shipped studio/resources/sla/tiers.yaml by default),
    validated by ``sla_schema``: an InputError names the file, line and field of a malformed one."""
    import yaml

    from studio.core import yamlio
    from studio.telemetry.sla_schema import CostSpec, ReferenceDeviceSpec, parse

    p = Path(path) if path else default_tiers_path()
    try:
        text = p.read_text(encoding="utf-8")
        doc = yamlio.safe_load(text)
    except FileNotFoundError as exc:
        raise InputError(f"SLA tier file not found: {p}", offending=str(p)) from exc
    except yaml.YAMLError as exc:
        raise InputError(f"SLA tier file is not valid YAML: {exc}", offending=str(p)) from exc
    spec = parse(doc, p, text)
    tiers = {name: Tier(name=name, title=t.title if t.title is not None else name, memory_max_pct=t.memory_max_pct,
                        bandwidth_jitter_pct=t.bandwidth_jitter_pct, power_fluctuation_pct=t.power_fluctuation_pct,
                        max_error_pct=t.max_error_pct, max_cost=t.max_cost, max_ttft_p95_ms=t.max_ttft_p95_ms,
                        max_inter_token_p95_ms=t.max_inter_token_p95_ms) for name, t in spec.tiers.items()}
    c = spec.cost or CostSpec()
    r = c.reference_device or ReferenceDeviceSpec()
    ref = ReferenceDevice(name=r.name, memory_bytes=r.memory_bytes, bandwidth_bytes_per_s=r.bandwidth_bytes_per_s,
                          power_w=r.power_w)
    weights = c.weights or {"memory": 0.4, "bandwidth": 0.35, "power": 0.25}
    return tiers, CostModel(weights=dict(weights), reference=ref)


def get_tier(name: str, path: Path | str | None = None) -> tuple[Tier, CostModel]:
    tiers, cost = load_tiers(path)
    if name not in tiers:
        raise InputError(f"unknown SLA tier {name!r}", offending=name,
                         hint=f"tiers defined: {', '.join(tiers)}")
    return tiers[name], cost


# -- window measurements ---------------------------------------------------------------------------

def relative_deviation_pct(values: list[float]) -> float | None:
    """Relative standard deviation (std / mean) in percent; None with fewer than two values."""
    vals = [v for v in values if v is not None and math.isfinite(v)]
    if len(vals) < 2:
        return None
    mean = math.fsum(vals) / len(vals)
    if mean == 0:
        return 0.0 if all(v == 0 for v in vals) else math.inf
    var = math.fsum((v - mean) ** 2 for v in vals) / len(vals)
    return 100.0 * math.sqrt(var) / abs(mean)


@dataclass
class WindowMeasures:
    """What the SLA model needs from one window; None where the source is not available."""

    p95_ms: float | None = None
    p99_ms: float | None = None
    requests: int = 0
    errors: int = 0
    memory_pct: float | None = None
    memory_used_bytes: float | None = None
    bandwidth_bytes_per_s: list[float] = field(default_factory=list)  # per tick
    power_w: list[float] = field(default_factory=list)  # per collector sample
    memory_source: str = ""
    power_source: str = ""
    generation: bool = False  # a generate workload: TTFT and inter-token latency are judged too
    ttft_p95_ms: float | None = None
    inter_token_p95_ms: float | None = None


@dataclass
class Check:
    name: str
    status: str  # pass | fail | not available
    value: float | None
    limit: float | None
    unit: str = ""
    note: str = ""


@dataclass
class WindowVerdict(Report):
    schema_version: int = 1
    tier: str = ""
    window: int = 0
    start: float = 0.0
    end: float = 0.0
    verdict: str = NA  # pass | fail | not available (nothing could be judged)
    checks: list[Check] = field(default_factory=list)
    cost: float | None = None
    cost_terms: dict[str, float] = field(default_factory=dict)
    cost_missing: list[str] = field(default_factory=list)

    @property
    def failed_checks(self) -> list[str]:
        return [c.name for c in self.checks if c.status == FAIL]


def _check(name: str, value: float | None, limit: float | None, unit: str, missing_note: str = "") -> Check:
    if limit is None:
        return Check(name, NA, value, None, unit, "no limit set")
    if value is None:
        return Check(name, NA, None, limit, unit, missing_note or "measurement not available")
    return Check(name, PASS if value <= limit else FAIL, value, limit, unit)


def _first(*values: float | None) -> float | None:
    return next((v for v in values if v is not None), None)


def constraint_cost(m: WindowMeasures, model: CostModel) -> tuple[float | None, dict[str, float], list[str]]:
    """Weighted sum of memory, bandwidth and power normalised to the reference device; missing terms are
    dropped and the remaining weights rescaled to sum to 1."""
    ref = model.reference
    bw = (math.fsum(m.bandwidth_bytes_per_s) / len(m.bandwidth_bytes_per_s)) if m.bandwidth_bytes_per_s else None
    pw = (math.fsum(m.power_w) / len(m.power_w)) if m.power_w else None
    raw = {"memory": None if m.memory_used_bytes is None else m.memory_used_bytes / ref.memory_bytes,
           "bandwidth": None if bw is None else bw / ref.bandwidth_bytes_per_s,
           "power": None if pw is None else pw / ref.power_w}
    present = {k: v for k, v in raw.items() if v is not None and k in model.weights}
    missing = [k for k in model.weights if raw.get(k) is None]
    wsum = math.fsum(model.weights[k] for k in present)
    if not present or wsum <= 0:
        return None, {}, missing
    terms = {k: model.weights[k] / wsum * v for k, v in present.items()}
    return math.fsum(terms.values()), terms, missing


def judge_window(m: WindowMeasures, tier: Tier, budget: LatencyBudget, cost_model: CostModel,
                 window: int = 0, start: float = 0.0, end: float = 0.0) -> WindowVerdict:
    """The verdict of one window: pass when every check that could be made passes."""
    err_pct = (100.0 * m.errors / m.requests) if m.requests else None
    checks = [
        _check("latency_p95", m.p95_ms, budget.p95_ms, "ms", "no successful request in the window"),
        _check("latency_p99", m.p99_ms, budget.p99_ms, "ms", "no successful request in the window"),
        _check("errors", err_pct, tier.max_error_pct, "%", "no request in the window"),
        _check("memory", m.memory_pct, tier.memory_max_pct, "%", "no memory source"),
        _check("bandwidth_jitter", relative_deviation_pct(m.bandwidth_bytes_per_s), tier.bandwidth_jitter_pct,
               "%", "fewer than two data-rate ticks in the window"),
        _check("power_fluctuation", relative_deviation_pct(m.power_w), tier.power_fluctuation_pct, "%",
               "no power source (no GPU metrics, no NVML, no board power)"),
    ]
    if m.memory_source:
        checks[3].note = m.memory_source
    if m.power_source and checks[5].status != NA:
        checks[5].note = m.power_source
    if m.generation:
        checks += [
            _check("ttft_p95", m.ttft_p95_ms, _first(budget.ttft_p95_ms, tier.max_ttft_p95_ms), "ms",
                   "no streamed first token in the window"),
            _check("inter_token_p95", m.inter_token_p95_ms,
                   _first(budget.inter_token_p95_ms, tier.max_inter_token_p95_ms), "ms",
                   "no request with two or more tokens in the window"),
        ]
    cost, terms, missing = constraint_cost(m, cost_model)
    if tier.max_cost is not None:
        checks.append(_check("constraint_cost", cost, tier.max_cost, ""))
    judged = [c for c in checks if c.status != NA]
    verdict = NA if not judged else (FAIL if any(c.status == FAIL for c in judged) else PASS)
    return WindowVerdict(tier=tier.name, window=window, start=start, end=end, verdict=verdict, checks=checks,
                         cost=cost, cost_terms=terms, cost_missing=missing)


@dataclass
class SlaSummary(Report):
    schema_version: int = 1
    tier: str = ""
    budget: LatencyBudget = field(default_factory=LatencyBudget)
    windows: int = 0
    judged: int = 0
    passed: int = 0
    compliance_pct: float | None = None
    required_pct: float = 100.0
    verdict: str = NA
    failures_by_check: dict[str, int] = field(default_factory=dict)
    mean_cost: float | None = None


def summarise(verdicts: list[WindowVerdict], tier: Tier, budget: LatencyBudget,
              required_pct: float = 100.0) -> SlaSummary:
    """Compliance over a run: share of judged windows that passed; the run passes at ``required_pct``."""
    judged = [v for v in verdicts if v.verdict != NA]
    passed = sum(1 for v in judged if v.verdict == PASS)
    fails: dict[str, int] = {}
    for v in judged:
        for name in v.failed_checks:
            fails[name] = fails.get(name, 0) + 1
    costs = [v.cost for v in verdicts if v.cost is not None]
    pct = 100.0 * passed / len(judged) if judged else None
    verdict = NA if pct is None else (PASS if pct >= required_pct else FAIL)
    return SlaSummary(tier=tier.name, budget=budget, windows=len(verdicts), judged=len(judged), passed=passed,
                      compliance_pct=pct, required_pct=required_pct, verdict=verdict, failures_by_check=fails,
                      mean_cost=(math.fsum(costs) / len(costs)) if costs else None)
