"""Load on the generate endpoints (KServe v2 / Triton generate extension): time to first token, inter-token
latency, output tokens per second and request latency, in closed loop (N concurrent streams) or open loop
(requests at a rate), per window and per level, with the same reports, SLA verdicts and dashboards series as
the inference load generator (``studio.telemetry.loadgen``), whose interface this class has, so
``run_bench(cfg, generator=GenerateLoadGenerator)`` drives it.

The measures are genai-perf's: TTFT is request sent -> first non-empty ``text_output`` piece of
``generate_stream``; inter-token latency is (request latency - TTFT) / (output tokens - 1) per request; output
tokens come from the server's final ``usage.completion_tokens`` when it sends one (the studio's agent does),
else the streamed pieces are counted (Triton's decoupled models send one piece per token). A generation takes
tens of milliseconds per token, so the client is httpx's streaming client: its per-event cost (tens of
microseconds) is far below what it measures.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from studio.core.errors import InputError, StudioError
from studio.core.jobs import JobState
from studio.edge.sse import sse_data
from studio.telemetry import samples as S
from studio.telemetry.due_timer import AsyncDueTimer
from studio.telemetry.histogram import LatencyHistogram, summarize_seconds
from studio.telemetry.kserve import Endpoint
from studio.telemetry.load_types import (
    GenerationLoad,
    GenerationStats,
    LevelResult,
    LoadConfig,
    WindowResult,
    _stable,
    classify_error,
    level_label,
)

SOURCE = "client (generate)"


@dataclass
class _Outcome:
    end: float  # perf_counter when the request finished
    latency: float = 0.0  # seconds
    ttft: float | None = None
    tokens: int = 0
    error: str = ""
    from_usage: bool = False


@dataclass
class _Meter:
    outcomes: list[_Outcome] = field(default_factory=list)
    sent: int = 0

    def take(self) -> tuple[list[_Outcome], int]:
        out, sent = self.outcomes, self.sent
        self.outcomes, self.sent = [], 0
        return out, sent


def generation_stats(outcomes: list[_Outcome], seconds: float) -> GenerationStats:
    ok = [o for o in outcomes if not o.error]
    ttft = [o.ttft for o in ok if o.ttft is not None]
    itl = [(o.latency - o.ttft) / (o.tokens - 1) for o in ok if o.ttft is not None and o.tokens > 1]
    tokens = sum(o.tokens for o in ok)
    src = ("server usage (completion_tokens)" if ok and all(o.from_usage for o in ok) else
           "stream pieces counted" if ok else "")
    return GenerationStats(ttft=summarize_seconds(ttft), inter_token=summarize_seconds(itl), output_tokens=tokens,
                           output_tokens_per_s=tokens / seconds if seconds > 0 else 0.0,
                           tokens_per_request=(tokens / len(ok)) if ok else None, token_source=src)


class GenerateLoadGenerator:
    """Drives one model's generate endpoint with the configured levels; reports per level and per window."""

    def __init__(self, cfg: LoadConfig, job: JobState | None = None, sink: Any = None, on_window: Any = None,
                 otel: Any = None) -> None:
        cfg.validate()
        if cfg.generation is None:
            cfg.generation = GenerationLoad()
        self.cfg, self.job, self.sink, self.on_window = cfg, job, sink, on_window
        self.gen: GenerationLoad = cfg.generation
        self.ep = Endpoint.parse(cfg.url)
        self.target = cfg.target
        self.keep_window_histograms = False
        self.otel = otel  # not traced: generate requests carry no traceparent yet
        base = f"/v2/models/{cfg.model}" + (f"/versions/{cfg.model_version}" if cfg.model_version else "")
        self.path = cfg.path or base + ("/generate_stream" if self.gen.stream else "/generate")
        self._prompt = 0

    # -- set-up ---------------------------------------------------------------------------------
    def _url(self, path: str) -> str:
        return self.ep.url + path

    def _body(self, max_tokens: int | None = None) -> dict[str, Any]:
        prompt = self.gen.prompts[self._prompt % len(self.gen.prompts)]
        self._prompt += 1
        return {"text_input": prompt,
                "parameters": {**self.gen.parameters, "max_tokens": max_tokens or self.gen.max_tokens}}

    def prepare(self) -> None:
        """One short request first: an unknown model, a server without the generate extension or a refused
        parameter is an InputError naming it before any load is sent."""
        import httpx

        url = self._url(self.path.replace("/generate_stream", "/generate"))
        try:
            r = httpx.post(url, json=self._body(max_tokens=1), timeout=self.cfg.timeout_s)
        except httpx.HTTPError as exc:
            raise StudioError(f"cannot reach {self.cfg.url}: {exc}", offending="--url",
                              hint="start the server, or check host and port") from exc
        if r.status_code == 404:
            raise InputError(f"{url} answered 404: the server has no generate endpoint for model "
                             f"'{self.cfg.model}' ({_message(r)})", offending="--model",
                             hint="check the model name (GET /v2/models/NAME) and that it is a generation model")
        if r.status_code >= 400:
            raise InputError(f"the generate request was refused with {r.status_code}: {_message(r)}",
                             offending="--prompt", hint="check --prompt, --max-tokens and --generate-param")

    def cancelled(self) -> bool:
        return bool(self.job and self.job.cancel_requested)

    # -- one request ----------------------------------------------------------------------------------
    async def _one(self, client: Any, meter: _Meter) -> None:
        import httpx

        body = self._body()
        meter.sent += 1
        t0 = time.perf_counter()
        out = _Outcome(end=t0)
        try:
            if self.gen.stream:
                await self._stream(client, body, t0, out)
            else:
                r = await client.post(self.path, json=body)
                if r.status_code != 200:
                    out.error = f"http_{r.status_code}"
                else:
                    usage = (r.json() or {}).get("usage") or {}
                    out.tokens, out.from_usage = int(usage.get("completion_tokens", 0)), "completion_tokens" in usage
        except httpx.TimeoutException:
            out.error = "timeout"
        except httpx.HTTPError as exc:
            out.error = classify_error(exc.__cause__ or exc) if exc.__cause__ else type(exc).__name__
        except (OSError, ValueError) as exc:
            out.error = classify_error(exc)
        out.end = time.perf_counter()
        out.latency = out.end - t0
        meter.outcomes.append(out)

    async def _stream(self, client: Any, body: dict[str, Any], t0: float, out: _Outcome) -> None:
        pieces = 0
        body = {**body, "stream": True}  # Triton's decoupled models stream only when asked; the agent ignores it
        async with client.stream("POST", self.path, json=body) as r:
            if r.status_code != 200:
                await r.aread()
                out.error = f"http_{r.status_code}"
                return
            async for line in r.aiter_lines():
                ev = sse_data(line)
                if ev is None:
                    continue
                if "error" in ev:
                    out.error = "stream_error"
                    return
                if ev.get("text_output"):
                    pieces += 1
                    if out.ttft is None:
                        out.ttft = time.perf_counter() - t0
                usage = ev.get("usage")
                if isinstance(usage, dict) and "completion_tokens" in usage:
                    out.tokens, out.from_usage = int(usage["completion_tokens"]), True
        if not out.from_usage:
            out.tokens = pieces

    # -- levels ----------------------------------------------------------------------------------------
    def run(self) -> list[LevelResult]:
        levels: list[int | None] = [None] if self.cfg.rate is not None else list(self.cfg.concurrency)
        return asyncio.run(self._run_all(levels))

    async def _run_all(self, levels: list[int | None]) -> list[LevelResult]:
        out = []
        for i, conc in enumerate(levels):
            if self.cancelled():
                break
            out.append(await self._run_level(conc, i, len(levels)))
        return out

    async def _run_level(self, conc: int | None, index: int, total: int) -> LevelResult:
        import httpx

        cfg = self.cfg
        label = level_label(cfg, conc)
        res = LevelResult(mode="rate" if cfg.rate is not None else "concurrency", concurrency=conc,
                          rate=cfg.rate, label=label)
        pool = conc or cfg.max_connections
        limits = httpx.Limits(max_connections=pool, max_keepalive_connections=pool)
        meter, stop = _Meter(), asyncio.Event()
        delays: list[float] = []
        async with httpx.AsyncClient(base_url=self._url(""), limits=limits, timeout=cfg.timeout_s) as client:
            driver = asyncio.ensure_future(self._drive(client, meter, stop, conc, delays, pool))
            try:
                self._status(f"{label}: warm-up {cfg.warmup_s:g} s ({index + 1}/{total})")
                await asyncio.sleep(cfg.warmup_s)
                warm, warm_sent = meter.take()
                res.warmup_sent, res.warmup_successes = warm_sent, sum(1 for o in warm if not o.error)
                await self._measure(res, meter, conc, label)
                res.generation.warmup_output_tokens = sum(o.tokens for o in warm if not o.error)
            finally:
                stop.set()
                await driver
            if res.generation is not None:  # requests still running when the level ended: counted, not measured
                late, _ = meter.take()
                res.generation.late_output_tokens = sum(o.tokens for o in late if not o.error)
        res.total_sent = res.warmup_sent + res.requests_sent
        res.send_delay = summarize_seconds(delays) if cfg.rate is not None else None
        return res

    async def _drive(self, client: Any, meter: _Meter, stop: asyncio.Event, conc: int | None,
                     delays: list[float], pool: int) -> None:
        """Closed loop: ``conc`` streams, each sending its next request when the last one ended. Open loop:
        arrivals at ``rate`` (constant or Poisson), at most ``pool`` in flight (a late start is a send delay)."""
        if conc is not None:
            async def stream() -> None:
                while not stop.is_set():
                    await self._one(client, meter)

            await asyncio.gather(*(stream() for _ in range(conc)))
            return
        rate = float(self.cfg.rate or 1.0)
        rng = random.Random(0)
        gate = asyncio.Semaphore(pool)
        tasks: set[asyncio.Task[None]] = set()
        due = time.perf_counter()
        timer, stopped = AsyncDueTimer(), asyncio.ensure_future(stop.wait())  # the load generator's due timer
        try:
            while not stop.is_set():
                if due > time.perf_counter():
                    woke = asyncio.ensure_future(timer.wait_until(due))
                    await asyncio.wait({woke, stopped}, return_when=asyncio.FIRST_COMPLETED)
                    if not woke.done():
                        woke.cancel()
                        break
                await gate.acquire()
                delays.append(max(0.0, time.perf_counter() - due))

                async def send() -> None:
                    try:
                        await self._one(client, meter)
                    finally:
                        gate.release()

                t = asyncio.ensure_future(send())
                tasks.add(t)
                t.add_done_callback(tasks.discard)
                due += rng.expovariate(rate) if self.cfg.distribution == "poisson" else 1.0 / rate
        finally:
            stopped.cancel()
            timer.close()
        if tasks:
            await asyncio.gather(*tasks)

    async def _measure(self, res: LevelResult, meter: _Meter, conc: int | None, label: str) -> None:
        cfg = self.cfg
        hist = LatencyHistogram()
        all_out: list[_Outcome] = []
        t_start = time.perf_counter()
        while True:
            w_start_wall, w_start = time.time(), time.perf_counter()
            ticks = 0.0
            while ticks < cfg.window_s - 1e-9 and not self.cancelled():
                await asyncio.sleep(min(cfg.tick_s, cfg.window_s - ticks))
                ticks = time.perf_counter() - w_start
                self._emit_tick(meter, w_start, conc)
            outcomes, sent = meter.take()
            dur = time.perf_counter() - w_start
            w = self._window(label, len(res.windows), w_start_wall, dur, outcomes, sent)
            res.windows.append(w)
            all_out += outcomes
            for o in outcomes:
                if not o.error:
                    hist.record(o.latency)
            if self.on_window is not None:
                self.on_window(w)
            if self.cancelled():
                res.aborted = "cancelled"
                break
            n = len(res.windows)
            if n >= cfg.min_windows and (not cfg.stability or _stable(res.windows, cfg.stability_windows,
                                                                       cfg.stability_pct)):
                res.stable = cfg.stability and n >= cfg.stability_windows
                break
            if n >= cfg.window_cap:
                break
        res.measured_s = time.perf_counter() - t_start
        errs = Counter(o.error for o in all_out if o.error)
        res.requests_sent = sum(1 for _ in all_out)
        res.successes = sum(1 for o in all_out if not o.error)
        res.errors, res.error_count = dict(errs), sum(errs.values())
        res.throughput_rps = res.successes / res.measured_s if res.measured_s > 0 else 0.0
        res.latency = hist.summary()
        res.generation = generation_stats(all_out, res.measured_s)
        if self.keep_window_histograms:
            res.histogram = hist.encode().decode("ascii") if hist.count else ""

    def _window(self, label: str, index: int, start_wall: float, dur: float, outcomes: list[_Outcome],
                sent: int) -> WindowResult:
        ok = [o for o in outcomes if not o.error]
        errs = Counter(o.error for o in outcomes if o.error)
        return WindowResult(level=label, index=index, start=start_wall, end=start_wall + dur,
                            requests=len(outcomes), successes=len(ok), errors=dict(errs),
                            throughput_rps=len(ok) / dur if dur > 0 else 0.0,
                            latency=summarize_seconds([o.latency for o in ok]),
                            generation=generation_stats(outcomes, dur))

    def _emit_tick(self, meter: _Meter, w_start: float, conc: int | None) -> None:
        """The window so far as dashboard samples (the same series names the dashboards plot)."""
        if self.sink is None:
            return
        t, tgt = time.time(), self.target
        dt = max(1e-6, time.perf_counter() - w_start)
        outs = meter.outcomes
        ok = [o for o in outs if not o.error]
        g = generation_stats(outs, dt)
        lat = summarize_seconds([o.latency for o in ok])
        batch = [S.sample(t, S.THROUGHPUT, len(ok) / dt, SOURCE, tgt),
                 S.sample(t, S.ERRORS, (len(outs) - len(ok)) / dt, SOURCE, tgt),
                 S.sample(t, S.OUTPUT_TPS, g.output_tokens_per_s, SOURCE, tgt)]
        for series, value in ((S.LAT_P50, lat.p50_ms), (S.LAT_P95, lat.p95_ms), (S.LAT_P99, lat.p99_ms),
                              (S.TTFT_P50, g.ttft.p50_ms), (S.TTFT_P95, g.ttft.p95_ms),
                              (S.ITL_P50, g.inter_token.p50_ms), (S.ITL_P95, g.inter_token.p95_ms)):
            if value is not None:
                batch.append(S.sample(t, series, value, SOURCE, tgt))
        if conc is not None:
            batch.append(S.sample(t, S.CONCURRENCY, conc, SOURCE, tgt))
        self.sink(batch)

    def _status(self, text: str) -> None:
        if self.job is not None:
            self.job.set_status(text)


def _message(r: Any) -> str:
    try:
        body = r.json()
        return str(body.get("error", body)) if isinstance(body, dict) else str(body)
    except ValueError:
        return r.text[:200]
