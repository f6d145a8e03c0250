"""One benchmark run: load generator + collectors + SLA verdicts per window + optional recording.

``run_bench`` is a plain job function (JobState in, report out): the CLI draws its progress, the
Dashboards page runs it on a worker thread and feeds its ring buffers from ``sink``.
"""

from __future__ import annotations

import csv
import io
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.jobs import JobState
from studio.core.reports import Report, to_jsonable
from studio.telemetry import samples as S
from studio.telemetry.collectors import (
    AgentMetricsCollector,
    Collector,
    CollectorPoller,
    NvmlCollector,
    ProcessCollector,
    TritonMetricsCollector,
    TritonStatsCollector,
    listening_pid,
)
from studio.telemetry.kserve import Endpoint, fetch_stats, http_get_text
from studio.telemetry.loadgen import LevelResult, LoadConfig, LoadGenerator, WindowResult
from studio.telemetry.recording import Recorder
from studio.telemetry.samples import Sample
from studio.telemetry.sla import (
    CostModel,
    LatencyBudget,
    SlaSummary,
    Tier,
    WindowMeasures,
    WindowVerdict,
    get_tier,
    judge_window,
    summarise,
)

SampleSink = Callable[[list[Sample]], None]


@dataclass
class SlaSpec:
    tier: str = "L2"
    budget: LatencyBudget = field(default_factory=LatencyBudget)
    tiers_file: Path | None = None
    required_pct: float = 100.0


@dataclass
class BenchReport(Report):
    schema_version: int = 1
    target: str = ""
    url: str = ""
    model: str = ""
    mode: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    started: float = 0.0
    finished: float = 0.0
    levels: list[LevelResult] = field(default_factory=list)
    sla: SlaSummary | None = None
    verdicts: list[WindowVerdict] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # series -> source, or "not available: why"
    recording: str | None = None

    @property
    def passed(self) -> bool | None:
        """SLA outcome: True/False, None when no SLA was asked or nothing could be judged."""
        if self.sla is None or self.sla.verdict == "not available":
            return None
        return self.sla.verdict == "pass"

    def to_csv(self) -> str:
        """One row per level: the table a spreadsheet wants."""
        buf = io.StringIO()
        cols = ["target", "level", "stable", "measured_s", "requests", "successes", "errors", "throughput_rps",
                "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms", "server_queue_us",
                "server_compute_infer_us", "sla_tier", "sla_compliance_pct", "ttft_p50_ms", "ttft_p95_ms",
                "inter_token_p50_ms", "inter_token_p95_ms", "output_tokens_per_s"]
        w = csv.writer(buf)
        w.writerow(cols)
        for lv in self.levels:
            lat = lv.latency
            b = lv.server_breakdown_us or {}
            w.writerow([self.target, lv.label, lv.stable, f"{lv.measured_s:.3f}", lv.requests_sent, lv.successes,
                        lv.error_count, f"{lv.throughput_rps:.2f}", lat.p50_ms, lat.p90_ms, lat.p95_ms, lat.p99_ms,
                        lat.p999_ms, lat.max_ms, _fmt(b.get("queue_us")), _fmt(b.get("compute_infer_us")),
                        self.sla.tier if self.sla else "",
                        _fmt(self.sla.compliance_pct) if self.sla else "", *_generation_cells(lv.generation)])
        return buf.getvalue()


def _generation_cells(g: Any) -> list[str]:
    if g is None:
        return [""] * 5
    return [_fmt(g.ttft.p50_ms), _fmt(g.ttft.p95_ms), _fmt(g.inter_token.p50_ms), _fmt(g.inter_token.p95_ms),
            _fmt(g.output_tokens_per_s)]


def _fmt(v: float | None) -> str:
    return "" if v is None else f"{v:.3f}"


class SampleStore:
    """Thread-safe, time-bounded store of collector samples used to judge windows."""

    def __init__(self, keep_s: float = 600.0) -> None:
        self._lock = threading.Lock()
        self._items: list[Sample] = []
        self.keep_s = keep_s
        self.sources: dict[str, str] = {}

    def add(self, samples: list[Sample]) -> None:
        with self._lock:
            self._items.extend(samples)
            for s in samples:
                if s.available:
                    self.sources[s.series] = s.source
                elif s.series not in self.sources or not self.sources[s.series].startswith(s.source):
                    self.sources.setdefault(s.series, f"{s.note} ({s.source})")
            if len(self._items) > 50_000:
                cut = time.time() - self.keep_s
                self._items = [s for s in self._items if s.t >= cut]

    def between(self, start: float, end: float, series: str) -> list[Sample]:
        with self._lock:
            return [s for s in self._items if s.series == series and start <= s.t <= end and s.available]


def _is_triton_text(text: str) -> bool:
    """Triton's metrics are the nv_* families (a model named conv_net must not make an agent look like one)."""
    return any(line.startswith(("nv_", "# HELP nv_", "# TYPE nv_")) for line in text.splitlines())


def _metrics_collector(cfg: LoadConfig, metrics_url: str | None, auto: bool,
                       kind: str | None) -> Collector | None:
    """The server's Prometheus collector: Triton's or the agent's, by ``kind`` or by what the endpoint says."""
    if not metrics_url and not auto:
        return None
    url = metrics_url or f"{Endpoint.parse(cfg.url).url}/metrics"
    url = url if url.rstrip("/").endswith("/metrics") else url.rstrip("/") + "/metrics"
    text: str | None = None
    if kind not in ("triton", "agent"):
        try:
            text = http_get_text(url, timeout=2.0)
        except Exception:  # noqa: BLE001 - a given URL is then shown "unreachable" by the collector itself
            text = None
    if not metrics_url and kind != "agent" and text is None:
        return None  # nothing at URL/metrics: Triton keeps its metrics on another port (8002)
    if kind == "agent" or (kind is None and text is not None and not _is_triton_text(text)):
        return AgentMetricsCollector(url, target=cfg.target)
    return TritonMetricsCollector(url, cfg.model, cfg.target)


def default_collectors(cfg: LoadConfig, metrics_url: str | None = None, server_pid: int | None = None,
                       auto: bool = True, kind: str | None = None) -> list[Collector]:
    """Collectors for a target, one source per series, the server's own view first.

    Metrics: Triton's Prometheus endpoint (given, or found at URL/metrics) or the agent's /metrics (``kind``:
    "triton" or "agent", as Devices knows it; else told apart by the text). Statistics (Triton's, the agent's)
    when there is no Triton metrics endpoint. Memory and CPU: Triton's nv_cpu_* (the host it runs on) or the
    agent's own process_* series; psutil watches a local server's process (``server_pid``, else the process
    listening on the URL's port), never the studio's, and the host's memory only when no server metrics report
    it; the agent reports its own process, so it gets no psutil collector. NVML for a local server whose
    metrics carry no GPU series (Triton exports nv_gpu_* itself)."""
    ep = Endpoint.parse(cfg.url)
    tgt = cfg.target
    metrics = _metrics_collector(cfg, metrics_url, auto, kind)
    out: list[Collector] = [metrics] if metrics is not None else []
    triton_metrics = isinstance(metrics, TritonMetricsCollector)
    if auto and not triton_metrics and fetch_stats(ep, cfg.model, timeout=2.0) is not None:
        out.append(TritonStatsCollector(cfg.url, cfg.model, tgt))
    local = ep.host in ("127.0.0.1", "localhost", "::1")
    if not isinstance(metrics, AgentMetricsCollector):
        if server_pid:
            out.append(ProcessCollector(server_pid, tgt, host=not triton_metrics))
        elif local and auto:  # the process listening on the URL's port, never this one
            pid = listening_pid(ep.port)
            out.append(ProcessCollector(pid, tgt, host=not triton_metrics, why_no_pid="" if pid else
                                        f"no process found listening on port {ep.port} (pass --server-pid)"))
    if local and auto and not triton_metrics:
        out.append(NvmlCollector(tgt))
    return out


def _pick(store: SampleStore, start: float, end: float, *series: str) -> tuple[list[float], str, str]:
    for name in series:
        found = store.between(start, end, name)
        reported = [s for s in found if not s.source.startswith("psutil")]
        found = reported or found  # what the server reports beats this machine's view of itself
        if found:
            return [s.value for s in found if s.value is not None], found[-1].source, name
    return [], "", ""


def window_measures(w: WindowResult, store: SampleStore, pad_s: float = 0.6) -> WindowMeasures:
    """Join a client window with the collector samples taken during it (GPU memory before host memory)."""
    a, b = w.start - pad_s, w.end + pad_s
    mem, mem_src, mem_series = _pick(store, a, b, S.GPU_MEM_PCT, S.MEM_PCT)
    used_series = S.GPU_MEM_USED if mem_series == S.GPU_MEM_PCT else S.MEM_USED
    used = [s.value for s in store.between(a, b, used_series) if s.value is not None]
    power, pw_src, _ = _pick(store, a, b, S.GPU_POWER, S.BOARD_POWER)
    return WindowMeasures(p95_ms=w.latency.p95_ms, p99_ms=w.latency.p99_ms, requests=w.requests,
                          errors=sum(w.errors.values()), memory_pct=max(mem) if mem else None,
                          memory_used_bytes=(sum(used) / len(used)) if used else None,
                          bandwidth_bytes_per_s=list(w.tick_bytes_per_s), power_w=power,
                          memory_source=f"{mem_series} from {mem_src}" if mem_src else "",
                          power_source=pw_src, generation=w.generation is not None,
                          ttft_p95_ms=w.generation.ttft.p95_ms if w.generation else None,
                          inter_token_p95_ms=w.generation.inter_token.p95_ms if w.generation else None)


def run_bench(cfg: LoadConfig, job: JobState | None = None, *, sla: SlaSpec | None = None,
              collectors: list[Collector] | None = None, sink: SampleSink | None = None,
              record: Path | str | None = None, poll_s: float = 0.5, otel: Any = None,
              generator: Callable[..., Any] = LoadGenerator) -> BenchReport:
    """Drive the configured load, judge each window against the SLA, optionally record; returns the report.
    ``generator``: LoadGenerator's signature and interface (``studio.telemetry.locust_run`` for --locust)."""
    job = job or JobState(name="bench")
    cfg.validate()
    tier: Tier | None = None
    cost_model: CostModel | None = None
    if sla is not None:
        tier, cost_model = get_tier(sla.tier, sla.tiers_file)
    report = BenchReport(target=cfg.target, url=cfg.url, model=cfg.model,
                         mode="rate" if cfg.rate is not None else "concurrency",
                         config=to_jsonable(cfg), started=time.time())
    store = SampleStore()
    recorder = Recorder(record, meta={"config": to_jsonable(cfg), "target": cfg.target,
                                      "sla": to_jsonable(sla) if sla else None}) if record else None
    verdicts: list[WindowVerdict] = []

    def fan_out(batch: list[Sample]) -> None:
        store.add(batch)
        if recorder is not None:
            recorder.add_samples(batch)
        if sink is not None:
            sink(batch)

    def on_window(w: WindowResult) -> None:
        verdict = None
        if tier is not None and cost_model is not None and sla is not None:
            verdict = judge_window(window_measures(w, store), tier, sla.budget, cost_model,
                                   window=len(verdicts), start=w.start, end=w.end)
            verdicts.append(verdict)
            summ = summarise(verdicts, tier, sla.budget, sla.required_pct)
            if summ.compliance_pct is not None:
                fan_out([S.sample(w.end, S.SLA_COMPLIANCE, summ.compliance_pct, f"sla {tier.name}", cfg.target)])
        if recorder is not None:
            recorder.add_window(cfg.target, w, verdict)

    poller = CollectorPoller(collectors or [], fan_out, poll_s)
    ok = False
    try:
        gen = generator(cfg, job, sink=fan_out, on_window=on_window, otel=otel)
        gen.keep_window_histograms = recorder is not None
        job.set_status(f"reading metadata of {cfg.model} at {cfg.url}")
        gen.prepare()
        if collectors:
            poller.poll_once()  # first sample before load: counters need a baseline
        poller.start()
        report.levels = gen.run()
        ok = True
    finally:
        poller.stop()
        report.finished = time.time()
        report.sources = dict(sorted(store.sources.items()))
        report.verdicts = verdicts
        if tier is not None and sla is not None:
            report.sla = summarise(verdicts, tier, sla.budget, sla.required_pct)
        if recorder is not None:
            if ok:
                for lv in report.levels:
                    recorder.add_level(cfg.target, lv)
                recorder.set_meta("report", {k: v for k, v in report.to_dict().items() if k != "levels"})
                recorder.set_meta("sources", report.sources)
            # a failed run (unreachable server, bad input) leaves no recording; a cancelled one keeps its data
            path = recorder.close(ok=ok)
            report.recording = str(path) if path else None
    return report


def format_report(rep: BenchReport) -> str:
    """The text a person reads in a terminal."""
    lines = [f"target {rep.target}  ({rep.mode} mode, {len(rep.levels)} level(s))"]
    hdr = (f"{'level':<18}{'req/s':>10}{'p50':>9}{'p90':>9}{'p95':>9}{'p99':>9}{'max':>9}"
           f"{'errors':>8}{'queue':>9}{'compute':>9}  stable")
    lines += [hdr, "-" * len(hdr)]

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.2f}"

    def us(v: float | None) -> str:
        return "n/a" if v is None else f"{v / 1000:.2f}"

    for lv in rep.levels:
        b = lv.server_breakdown_us or {}
        lat = lv.latency
        lines.append(f"{lv.label:<18}{lv.throughput_rps:>10.1f}{ms(lat.p50_ms):>9}{ms(lat.p90_ms):>9}"
                     f"{ms(lat.p95_ms):>9}{ms(lat.p99_ms):>9}{ms(lat.max_ms):>9}{lv.error_count:>8}"
                     f"{us(b.get('queue_us')):>9}{us(b.get('compute_infer_us')):>9}  {'yes' if lv.stable else 'no'}")
        g = lv.generation
        if g is not None:
            lines.append(f"    generate: TTFT p50 {ms(g.ttft.p50_ms)} p95 {ms(g.ttft.p95_ms)} ms, inter-token p50 "
                         f"{ms(g.inter_token.p50_ms)} p95 {ms(g.inter_token.p95_ms)} ms, "
                         f"{g.output_tokens_per_s:.1f} output tok/s, "
                         f"{'-' if g.tokens_per_request is None else f'{g.tokens_per_request:.1f}'} tok/request "
                         f"({g.token_source or 'no answer'})")
        if lv.errors:
            lines.append("    errors: " + ", ".join(f"{k}={v}" for k, v in sorted(lv.errors.items())))
        if lv.send_delay is not None and lv.send_delay.count:
            lines.append(f"    send delay vs due time: p50 {ms(lv.send_delay.p50_ms)} p99 {ms(lv.send_delay.p99_ms)} ms "
                         "(high: the client machine could not keep the schedule)")
        if lv.aborted:
            lines.append(f"    ended early: {lv.aborted}")
    lines.append("(latency in ms; queue/compute: server-side mean per request in ms, n/a when the server "
                 "has no statistics endpoint)")
    if rep.sla is not None:
        s = rep.sla
        pct = "n/a" if s.compliance_pct is None else f"{s.compliance_pct:.1f}%"
        lines.append(f"SLA {s.tier}: {s.verdict.upper()}  compliance {pct} of {s.judged} judged window(s) "
                     f"(required {s.required_pct:g}%)")
        if s.failures_by_check:
            lines.append("    failed checks: " + ", ".join(f"{k} in {v} window(s)"
                                                          for k, v in s.failures_by_check.items()))
        if rep.verdicts:
            na = sorted({c.name for v in rep.verdicts for c in v.checks if c.status == "not available"})
            if na:
                lines.append("    not available: " + ", ".join(na))
            if s.mean_cost is not None and not math.isnan(s.mean_cost):
                lines.append(f"    mean constraint cost {s.mean_cost:.4f} (missing terms: "
                             f"{', '.join(rep.verdicts[-1].cost_missing) or 'none'})")
    if rep.recording:
        lines.append(f"recorded to {rep.recording}")
    return "\n".join(lines)
