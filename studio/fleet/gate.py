"""The rollout gate: a ring's live numbers over the watch window, from the agents' own /metrics (request and error
counters, the server-side latency histogram, host memory) plus the probe's failed sends, judged by the SLA model
(``studio.telemetry.sla.judge_window``) against a tier's thresholds and the latency budget."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from studio.telemetry.sla import FAIL, NA, PASS, CostModel, LatencyBudget, Tier, WindowMeasures, judge_window

LATENCY = "studio_agent_request_duration_seconds"
REQUESTS = "studio_agent_requests_total"
MEMORY = "studio_agent_system_memory_bytes"
# below this many requests one agent's percentiles are noise: it is judged within its ring's sums, not alone
MIN_AGENT_REQUESTS = 20


@dataclass
class MetricsSample:
    """One scrape of an agent's /metrics for one served model: cumulative counters and histogram buckets."""

    ok: float = 0.0
    errors: float = 0.0
    buckets: dict[float, float] = field(default_factory=dict)  # upper bound (s) -> cumulative count
    memory_used: float | None = None
    memory_total: float | None = None

    def __sub__(self, before: MetricsSample) -> MetricsSample:
        return MetricsSample(ok=self.ok - before.ok, errors=self.errors - before.errors,
                             buckets={le: c - before.buckets.get(le, 0.0) for le, c in self.buckets.items()},
                             memory_used=self.memory_used, memory_total=self.memory_total)


def parse_sample(text: str, models: list[str]) -> MetricsSample:
    """The counters of ``models`` (the bundle's served names, summed) in one /metrics text."""
    from studio.telemetry.prometheus import parse_prometheus_text

    s = MetricsSample()
    wanted = set(models)
    for m in parse_prometheus_text(text):
        if m.name == REQUESTS and m.labels.get("model") in wanted:
            if m.labels.get("outcome") == "ok":
                s.ok += m.value
            else:
                s.errors += m.value
        elif m.name == LATENCY + "_bucket" and m.labels.get("model") in wanted:
            le = math.inf if m.labels.get("le") in ("+Inf", "inf") else float(m.labels.get("le", "inf"))
            s.buckets[le] = s.buckets.get(le, 0.0) + m.value
        elif m.name == MEMORY and m.labels.get("kind") == "used":
            s.memory_used = m.value
        elif m.name == MEMORY and m.labels.get("kind") == "total":
            s.memory_total = m.value
    return s


def fetch_sample(url: str, models: list[str], verify: bool | str = True, timeout: float = 5.0) -> MetricsSample:
    """Scrape ``URL/metrics``; ConnectionFailed when the agent does not answer."""
    import httpx

    from studio.core.errors import ConnectionFailed

    try:
        with httpx.Client(timeout=timeout, verify=tls_context(verify)) as c:
            r = c.get(url.rstrip("/") + "/metrics")
    except httpx.TransportError as exc:
        raise ConnectionFailed(f"cannot read {url}/metrics: {type(exc).__name__}: {exc}", offending=url,
                               hint="is the agent still running?") from None
    if r.status_code != 200:
        raise ConnectionFailed(f"{url}/metrics answered HTTP {r.status_code}", offending=url)
    return parse_sample(r.text, models)


def tls_context(verify: bool | str) -> Any:
    """httpx's ``verify`` for a CA file (an SSL context), or the bool as it is."""
    if isinstance(verify, str):
        import ssl

        return ssl.create_default_context(cafile=verify)
    return verify


def bucket_quantile(q: float, buckets: dict[float, float]) -> float | None:
    """Prometheus' histogram_quantile: linear inside the bucket that holds rank q; None without observations.
    Seconds in, seconds out; a rank in the +Inf bucket reads as the highest finite bound."""
    items = sorted(buckets.items())
    if not items or items[-1][1] <= 0:
        return None
    total = items[-1][1]
    rank = q * total
    lower_bound, lower_count = 0.0, 0.0
    for le, count in items:
        if count >= rank:
            if math.isinf(le):
                return lower_bound
            width = count - lower_count
            return lower_bound + (le - lower_bound) * ((rank - lower_count) / width if width > 0 else 1.0)
        lower_bound, lower_count = le, count
    return lower_bound


@dataclass
class GateValues:
    """What the gate saw on one agent (or a ring, summed) over one window, and the verdict with its source."""

    requests: int = 0
    errors: int = 0
    probe_sent: int = 0
    probe_failed: int = 0
    p95_ms: float | None = None
    p99_ms: float | None = None
    error_pct: float | None = None
    memory_pct: float | None = None
    verdict: str = NA
    failed: list[str] = field(default_factory=list)
    note: str = ""
    source: str = "agent /metrics (studio_agent_requests, studio_agent_request_duration_seconds) + probe"

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


def measures(delta: MetricsSample, probe_failed: int = 0) -> WindowMeasures:
    """A window's WindowMeasures: requests and errors as the agent counted them, plus probe requests that never
    reached it (refused, timed out); latency percentiles from the histogram's bucket deltas."""
    requests = int(round(delta.ok + delta.errors)) + probe_failed
    p95, p99 = bucket_quantile(0.95, delta.buckets), bucket_quantile(0.99, delta.buckets)
    mem = 100.0 * delta.memory_used / delta.memory_total if delta.memory_used and delta.memory_total else None
    return WindowMeasures(p95_ms=None if p95 is None else p95 * 1e3, p99_ms=None if p99 is None else p99 * 1e3,
                          requests=requests, errors=int(round(delta.errors)) + probe_failed, memory_pct=mem,
                          memory_used_bytes=delta.memory_used, memory_source="agent /metrics (host memory)")


def judge(m: WindowMeasures, tier: Tier, budget: LatencyBudget, cost: CostModel, probe_sent: int = 0,
          probe_failed: int = 0) -> GateValues:
    """The gate verdict of one window: the SLA model's, except that a window nothing could be judged in (no
    request at all) is not a pass: the gate holds only on evidence."""
    v = judge_window(m, tier, budget, cost)
    checks = {c.name: c for c in v.checks}
    err = checks["errors"].value
    out = GateValues(requests=m.requests, errors=m.errors, probe_sent=probe_sent, probe_failed=probe_failed,
                     p95_ms=m.p95_ms, p99_ms=m.p99_ms, error_pct=err, memory_pct=m.memory_pct,
                     failed=[f"{c.name} {_fmt(c.value)}{c.unit} > {_fmt(c.limit)}{c.unit}" for c in v.checks
                             if c.status == FAIL])
    if m.requests == 0:
        out.verdict, out.failed = NA, ["no request in the window (raise --probe-rps or send traffic)"]
    else:
        out.verdict = FAIL if out.failed else PASS
    out.source += f"; tier {tier.name} ({tier.title})"
    return out


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.3g}"


def combine(deltas: list[MetricsSample]) -> MetricsSample:
    """One ring's window: counters and buckets summed over its agents; memory: the fullest agent's."""
    out = MetricsSample()
    for d in deltas:
        out.ok += d.ok
        out.errors += d.errors
        for le, c in d.buckets.items():
            out.buckets[le] = out.buckets.get(le, 0.0) + c
        if d.memory_used and d.memory_total and (
                out.memory_used is None or d.memory_used / d.memory_total > out.memory_used / (out.memory_total or 1)):
            out.memory_used, out.memory_total = d.memory_used, d.memory_total
    return out
