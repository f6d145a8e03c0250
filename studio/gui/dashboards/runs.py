"""Load runs and replay behind the Dashboards page: what the form's fields mean as a LoadConfig and SLA,
one bench job per target, a recording fed back through the same buffers, and the verdict text.

Workers only push Samples into the page's SeriesStore (locked ring buffers); nothing here touches a widget
from a worker thread: a finished run's report comes back through the JobRunner's GUI-thread callbacks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication

from studio.core.errors import InputError, StudioError
from studio.gui.jobs_qt import JobHandle, JobRunner
from studio.telemetry.ringbuffer import SeriesStore

translate = QCoreApplication.translate


def load_config(url: str, model: str, mode: str, levels: str, duration_s: float, prompt: str | None = None,
                max_tokens: int = 16) -> Any:
    """The form's target and levels as a validated LoadConfig (concurrency levels "1,2,4" or a rate); with
    ``prompt`` the generate endpoints are driven (time to first token, inter-token latency, tokens/s)."""
    from studio.telemetry.load_types import GenerationLoad
    from studio.telemetry.loadgen import LoadConfig

    text = levels.strip()
    try:
        if mode == "rate":
            rate, conc = float(text), [1]
        else:
            rate, conc = None, [int(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise InputError(translate("LoadRuns", "cannot read levels {text}").format(text=repr(text)),
                         offending=translate("DashboardsPage", "Levels / rate"),
                         hint=translate("LoadRuns", "concurrency: 1,2,4 — rate: requests per second, e.g. 100")) from exc
    dur = float(duration_s)
    cfg = LoadConfig(url=url, model=model, concurrency=conc, rate=rate, duration_s=dur,
                     warmup_s=min(2.0, dur / 4), window_s=min(2.0, dur), tick_s=0.25, stability=False,
                     generation=None if prompt is None else GenerationLoad(prompts=[prompt], max_tokens=max_tokens))
    try:
        cfg.validate()
    except InputError as exc:  # the GUI names its own fields, not the CLI's flags
        fields = {"--prompt": translate("WorkloadFields", "Prompt"),
                  "--max-tokens": translate("WorkloadFields", "Max tokens")}
        exc.offending = fields.get(exc.offending or "", exc.offending)
        raise
    return cfg


def sla_spec(tier: str, p95: float | None, p99: float | None) -> Any:
    """The SLA the runs are judged against; None for "(none)"."""
    from studio.telemetry.bench import SlaSpec
    from studio.telemetry.sla import LatencyBudget

    return None if tier == "(none)" else SlaSpec(tier, LatencyBudget(p95, p99))


def record_paths(record: str, count: int) -> list[Path | None]:
    """Where each of ``count`` runs records: the given file for one run, FILE-1, FILE-2 ... for several."""
    if not record:
        return [None] * count
    p = Path(record)
    if count == 1:
        return [p]
    return [p.with_name(f"{p.stem}-{i + 1}{p.suffix or '.sqlite'}") for i in range(count)]


def failing_windows(path: Path) -> list[tuple[float, float]]:
    """The failing SLA windows a recording holds (raises StudioError for a file that is not one)."""
    from studio.telemetry.recording import Recording

    rec = Recording(path)
    try:
        return [(v["start"], v["end"]) for v in rec.verdicts() if v.get("verdict") == "fail"]
    finally:
        rec.close()


def _measure(value: float | None, unit: str) -> str:
    from studio.gui.dashboards.values import format_measure

    return format_measure(value, unit)


def sla_lines(sla: Any, verdicts: list[Any]) -> tuple[str, str, str, str]:
    """(headline, budget, why, not judged) of a run's SLA outcome, from its summary and its window verdicts:
    ``SLA L1 fail: 0 of 5 windows passed (100 % required)``; ``budget: latency p99 ≤ 0.6 ms, errors ≤ 0.1 %
    ...`` (the limits the windows were judged against); ``why: bandwidth jitter 7.21 % > 3.5 % in 5 of 5
    windows (worst 12.1 %)``, each measure that broke its budget, most often first; what could not be judged."""
    pct = translate("LoadRuns", "n/a") if sla.compliance_pct is None else f"{sla.compliance_pct:.0f} %"
    verdict = {"pass": translate("LoadRuns", "pass"), "fail": translate("LoadRuns", "fail")}.get(sla.verdict,
                                                                                                 sla.verdict)
    head = translate("LoadRuns", "SLA {tier} {verdict}: {passed} of {judged} judged windows passed ({pct}; "
                                 "{required} % required)").format(
        tier=sla.tier, verdict=verdict, passed=sla.passed, judged=sla.judged, pct=pct,
        required=f"{sla.required_pct:.0f}")
    limits: dict[str, tuple[float, str]] = {}
    broke: dict[str, list[float]] = {}
    unjudged: dict[str, str] = {}
    for v in verdicts:
        for c in v.checks:
            if c.limit is not None and c.name not in limits:
                limits[c.name] = (c.limit, c.unit)
            if c.status == "fail" and c.value is not None:
                broke.setdefault(c.name, []).append(c.value)
            elif c.status not in ("pass", "fail") and c.limit is not None:
                unjudged.setdefault(c.name, c.note or translate("LoadRuns", "not measured"))
    budget = translate("LoadRuns", "budget: {limits}").format(
        limits=", ".join(f"{n.replace('_', ' ')} ≤ {_measure(lim, unit)}" for n, (lim, unit) in limits.items())
        or translate("LoadRuns", "none set"))
    judged = sla.judged or len(verdicts)
    reasons = []
    for name, values in sorted(broke.items(), key=lambda kv: -len(kv[1])):
        lim, unit = limits.get(name, (None, ""))
        median = sorted(values)[len(values) // 2]
        reasons.append(translate("LoadRuns", "{measure} {median} > {limit} in {n} of {judged} windows "
                                             "(worst {worst})").format(
            measure=name.replace("_", " "), median=_measure(median, unit), limit=_measure(lim, unit),
            n=len(values), judged=judged, worst=_measure(max(values), unit)))
    why = (translate("LoadRuns", "why: {reasons}").format(reasons="; ".join(reasons)) if reasons
           else translate("LoadRuns", "why: every judged measure was within its budget") if sla.verdict == "pass"
           else translate("LoadRuns", "why: no window could be judged"))
    rest = (translate("LoadRuns", "not judged: {measures}").format(
        measures="; ".join(f"{n.replace('_', ' ')} ({note})" for n, note in unjudged.items())) if unjudged else "")
    return head, budget, why, rest


def verdict_html(reports: dict[str, Any]) -> str:
    """One paragraph per finished run: throughput, p99, errors, the SLA outcome with its budget and the
    measures that broke it, and the recording."""
    from html import escape

    lines = []
    for tgt, r in reports.items():
        lv = r.levels[-1] if r.levels else None
        head = f"<b>{escape(tgt)}</b>: "
        if lv is not None:
            head += translate("LoadRuns", "{throughput}, p99 {p99}, errors {errors}").format(
                throughput=_measure(lv.throughput_rps, "req/s"), p99=_measure(lv.latency.p99_ms or 0, "ms"),
                errors=lv.error_count)
            g = lv.generation
            if g is not None:
                na = translate("LoadRuns", "n/a")
                ttft = na if g.ttft.p95_ms is None else _measure(g.ttft.p95_ms, "ms")
                itl = na if g.inter_token.p95_ms is None else _measure(g.inter_token.p95_ms, "ms")
                head += "<br>" + translate("LoadRuns", "TTFT p95 {ttft}, inter-token p95 {itl}, {rate} output "
                                                       "tok/s").format(ttft=ttft, itl=itl,
                                                                       rate=_measure(g.output_tokens_per_s, ""))
            if lv.aborted:
                head += f" — {escape(str(lv.aborted))}"
        if r.sla is not None:
            color = "#2a7a2a" if r.sla.verdict == "pass" else "#c62828"
            verdict, budget, why, rest = sla_lines(r.sla, r.verdicts)
            head += (f"<br><span style='color:{color}'><b>{escape(verdict)}</b></span>"
                     f"<br><span style='color:{color}'>{escape(why)}</span><br>{escape(budget)}")
            if rest:
                head += f"<br><span style='color:#777'>{escape(rest)}</span>"
        if r.recording:
            head += "<br>" + translate("LoadRuns", "recorded: {path}").format(path=escape(str(r.recording)))
        lines.append(head)
    return "<br>".join(lines)


class LoadRuns:
    """The page's running load jobs (one per target), their reports, and the replay thread."""

    def __init__(self, store: SeriesStore) -> None:
        self.store = store
        self.handles: dict[str, JobHandle] = {}
        self.reports: dict[str, Any] = {}
        self._replay_stop = threading.Event()
        self._replay_thread: threading.Thread | None = None

    def start(self, jobs: JobRunner, cfg: Any, sla: Any, record: Path | None, metrics: str | None,
              on_done: Callable[[Any], None], on_failed: Callable[[StudioError], None],
              server_pid: int | None = None, kind: str | None = None) -> JobHandle:
        """One bench job against ``cfg.target``; its samples go to the store, its report to ``on_done``.
        ``metrics``, ``server_pid`` and ``kind`` are this target's own (targets.resolve): its metrics URL, its
        process when the studio started it (its memory and CPU, never the GUI's), "triton" or "agent"."""
        from studio.telemetry.bench import default_collectors, run_bench
        from studio.telemetry.genload import GenerateLoadGenerator
        from studio.telemetry.loadgen import LoadGenerator

        store = self.store
        generator = GenerateLoadGenerator if cfg.generation is not None else LoadGenerator

        def work(job: Any) -> Any:
            collectors = default_collectors(cfg, metrics, server_pid, kind=kind)
            return run_bench(cfg, job, sla=sla, collectors=collectors, sink=store.push, record=record,
                             generator=generator)

        handle = jobs.start(f"dashboards:{cfg.target}", translate("LoadRuns", "Load {target}").format(target=cfg.target), work,
                            on_done=on_done, on_failed=on_failed)
        self.handles[cfg.target] = handle
        return handle

    def cancel(self, jobs: JobRunner | None) -> None:
        """Cancel every running load job and stop a replay."""
        if jobs is not None:
            for h in self.handles.values():
                if h.status == "running":
                    jobs.cancel(h.id)
        self.stop_replay()

    def running(self) -> bool:
        return any(h.status == "running" for h in self.handles.values()) or bool(
            self._replay_thread and self._replay_thread.is_alive())

    def start_replay(self, path: Path, speed: float = 0.0) -> None:
        """Feed a recording into the store on a background thread (speed 0 = as fast as possible)."""
        from studio.telemetry.recording import Recording

        self.stop_replay()
        self._replay_stop = stop = threading.Event()
        store = self.store

        def work() -> None:
            with Recording(path) as r:
                r.replay(store.push, speed=speed, stop=stop.is_set)

        self._replay_thread = threading.Thread(target=work, name="dashboard-replay", daemon=True)
        self._replay_thread.start()

    def stop_replay(self) -> None:
        self._replay_stop.set()
        if self._replay_thread is not None:
            self._replay_thread.join(timeout=5)
            self._replay_thread = None
