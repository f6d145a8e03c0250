"""Load generator for KServe v2 servers (Triton, the edge agent): closed-loop concurrency sweeps and
open-loop fixed-rate runs, measured in windows until they are stable (after perf_analyzer).

Open loop: requests are due at fixed (or Poisson) times and latency counts from the time a request was DUE,
not from when a connection was free to send it, so queueing in the client or the server is never hidden
(no coordinated omission). Requests still due when the run ends are reported as ``unsent_backlog`` errors.

Between warm-up and measurement, and at the end, in-flight requests are drained and the server's
statistics read, so the measured request count matches the server's own counters exactly.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from studio.core.jobs import JobState
from studio.telemetry import samples as S
from studio.telemetry.due_timer import AsyncDueTimer
from studio.telemetry.histogram import LatencyHistogram, summarize_seconds
from studio.telemetry.http_client import FastConnection, WriteBatch, build_request
from studio.telemetry.kserve import (
    Endpoint,
    bodies_from_file,
    bodies_from_metadata,
    fetch_stats,
    model_metadata,
)
from studio.telemetry.load_types import (
    LevelResult,
    LoadConfig,
    WindowResult,
    _Meter,
    _stable,
    classify_error,
    level_label,
)
from studio.telemetry.samples import Sample

SampleSink = Callable[[list[Sample]], None]
WindowSink = Callable[[WindowResult], None]


class _Level:
    """One level (a concurrency or a rate) on the event loop."""

    def __init__(self, gen: LoadGenerator, conc: int | None) -> None:
        self.gen, self.cfg, self.conc = gen, gen.cfg, conc
        self.meter = _Meter()
        self.conns: list[FastConnection] = []
        self.busy: dict[int, float] = {}  # id(conn) -> send time, for the timeout watchdog
        self.timed_out: set[int] = set()
        self.stop = asyncio.Event()
        self.k = 0
        self.backlog: asyncio.Queue[float | None] | None = None
        self.batch = WriteBatch()
        self.delays: list[float] = []

    def _raw(self) -> bytes:
        self.k += 1
        reqs = self.gen.requests
        return reqs[self.k % len(reqs)]

    async def _one(self, conn: FastConnection, due: float | None) -> None:
        """One request; latency runs from ``due`` (open loop: when it was scheduled) or, closed loop, from
        when it was issued, to when its response was complete."""
        raw = self._raw()
        cid = id(conn)
        self.meter.sent()
        self.busy[cid] = t_send = time.perf_counter()
        if due is not None and self.meter.measuring:
            self.delays.append(t_send - due)
        otel = self.gen.otel
        if otel is not None:
            span = otel.start_span(f"infer {self.cfg.model}", t_send if due is None else min(due, t_send),
                                   kind="client", attributes={"model": self.cfg.model})
            raw = inject_header(raw, b"traceparent", otel.traceparent(span).encode())
        try:
            status, nbytes = await conn.request(raw)
        except Exception as exc:  # noqa: BLE001 - every failure is a counted error kind
            self.busy.pop(cid, None)
            if otel is not None:
                otel.end_span(span, time.perf_counter(), error=type(exc).__name__)
            await self._failed(conn, exc)
            return
        finally:
            self.busy.pop(cid, None)
        if otel is not None:
            t_first = t_send if due is None else min(due, t_send)
            otel.end_span(span, conn.t_done, {"send": (t_first, conn.t_sent), "receive": (conn.t_sent, conn.t_done)},
                          None if 200 <= status < 300 else f"http_{status}")
            otel.histogram("studio.loadgen.request.duration", "s").record(
                conn.t_done - conn.t_sent, {"model": self.cfg.model, "outcome": str(status)})
        if 200 <= status < 300:
            self.meter.ok(conn.t_done - (conn.t_sent if due is None else due), nbytes + len(raw))
        else:
            self.meter.err(f"http_{status}", nbytes + len(raw))

    async def _failed(self, conn: FastConnection, exc: BaseException) -> None:
        """The request in flight on ``conn`` failed: count its error kind, drop the connection, back off."""
        cid = id(conn)
        kind = classify_error(exc, cid in self.timed_out)
        self.timed_out.discard(cid)
        conn.close()
        self.meter.err(kind)
        if kind in ("connection_refused", "connection_lost") or kind.startswith("os_"):
            await asyncio.sleep(self.cfg.connect_backoff_s)

    async def _closed_worker(self, conn: FastConnection) -> None:
        """Closed loop: each response triggers the next request from the connection's protocol callback
        (``FastConnection.pump``), which halves the client's Python cost per request against a fast server
        compared with a coroutine round trip per request."""
        cid = id(conn)
        meter, busy, stop, reqs = self.meter, self.busy, self.stop, self.gen.requests
        nreq = len(reqs)
        inflight = [b""]  # bytes of the request in flight

        def next_request() -> bytes | None:
            if stop.is_set():
                busy.pop(cid, None)
                return None
            self.k += 1
            raw = inflight[0] = reqs[self.k % nreq]
            meter.sent()
            busy[cid] = conn.t_sent = time.perf_counter()  # re-stamped when the batch writes it
            return raw

        def on_response(status: int, nbytes: int, t_done: float, more: bool) -> bytes | None:
            nbytes += len(inflight[0])
            if 200 <= status < 300:
                meter.ok(t_done - conn.t_sent, nbytes)
            else:
                meter.err(f"http_{status}", nbytes)
            if not more:  # the server is closing this connection: the worker reconnects
                busy.pop(cid, None)
                return None
            return next_request()

        if self.gen.otel is not None:  # rebinds the names on_response calls too
            next_request, on_response = self._traced(conn, next_request, on_response)
        while True:
            raw = next_request()
            if raw is None:
                return
            try:
                await conn.pump(raw, on_response, self.batch)
            except Exception as exc:  # noqa: BLE001 - every failure is a counted error kind
                busy.pop(cid, None)
                await self._failed(conn, exc)

    def _traced(self, conn: FastConnection, next_request: Callable[[], bytes | None],
                on_response: Callable[[int, int, float, bool], bytes | None]) -> tuple[Any, Any]:
        """Closed-loop callbacks with a client span per request: send = issued to written, receive = written
        to the response complete."""
        otel, model = self.gen.otel, self.cfg.model
        hist = otel.histogram("studio.loadgen.request.duration", "s", "request latency seen by the client")
        pending: list[Any] = [None, 0.0]  # span, issue time

        def traced_next() -> bytes | None:
            raw = next_request()
            if raw is None:
                return None
            t = time.perf_counter()
            span = otel.start_span(f"infer {model}", t, kind="client",
                                   attributes={"model": model, "server.address": self.gen.ep.host,
                                               "server.port": self.gen.ep.port})
            pending[0], pending[1] = span, t
            return inject_header(raw, b"traceparent", otel.traceparent(span).encode())

        def traced_response(status: int, nbytes: int, t_done: float, more: bool) -> bytes | None:
            span, t_issue = pending[0], pending[1]
            pending[0] = None
            if span is not None:
                ok = 200 <= status < 300
                span.set_attribute("http.response.status_code", status)
                otel.end_span(span, t_done, {"send": (t_issue, conn.t_sent), "receive": (conn.t_sent, t_done)},
                              None if ok else f"http_{status}")
                hist.record(t_done - conn.t_sent, {"model": model, "outcome": "ok" if ok else f"http_{status}"})
            return on_response(status, nbytes, t_done, more)

        return traced_next, traced_response

    async def _open_worker(self, conn: FastConnection) -> None:
        assert self.backlog is not None
        while True:
            due = await self.backlog.get()
            if due is None:
                return
            await self._one(conn, due)

    async def _scheduler(self) -> None:
        """Queues each due time when it comes, woken by a timerfd armed at it (due_timer): uvloop's timers have
        millisecond steps, which made the sends 0.4 ms late at p50 and 1.1-1.35 ms at p90. run_phase cancels it."""
        assert self.backlog is not None and self.cfg.rate is not None
        rate = self.cfg.rate
        rnd = random.Random(1)
        nxt = time.perf_counter()
        timer = AsyncDueTimer()
        try:
            while not self.stop.is_set():
                now = time.perf_counter()
                while nxt <= now:
                    self.backlog.put_nowait(nxt)
                    nxt += rnd.expovariate(rate) if self.cfg.distribution == "poisson" else 1.0 / rate
                await timer.wait_until(nxt)
        finally:
            timer.close()

    async def run_phase(self, seconds: float | None, controller: Callable[[], Any] | None = None) -> None:
        """Run workers until ``seconds`` pass (or ``controller`` returns), then drain in-flight requests."""
        self.stop = asyncio.Event()
        tasks: list[asyncio.Task[Any]] = []
        scheduler: asyncio.Task[None] | None = None
        if self.cfg.rate is None:
            n = self.conc or 1
            while len(self.conns) < n:
                self.conns.append(FastConnection(self.gen.ep, self.cfg.timeout_s))
            tasks = [asyncio.create_task(self._closed_worker(c)) for c in self.conns[:n]]
        else:
            self.backlog = asyncio.Queue()
            while len(self.conns) < self.cfg.max_connections:
                self.conns.append(FastConnection(self.gen.ep, self.cfg.timeout_s))
            tasks = [asyncio.create_task(self._open_worker(c)) for c in self.conns]
            tasks.append(scheduler := asyncio.create_task(self._scheduler()))
        watchdog = asyncio.create_task(self._watchdog())
        try:
            if controller is not None:
                await controller()
            elif seconds:
                end = time.perf_counter() + seconds
                while time.perf_counter() < end and not self.gen.cancelled():
                    await asyncio.sleep(min(0.1, max(0.0, end - time.perf_counter())))
        finally:
            self.stop.set()
            if scheduler is not None:
                scheduler.cancel()
                await asyncio.sleep(0)  # a due time queued µs before the end goes to the idle sender it woke
            if self.backlog is not None:
                unsent = 0
                while not self.backlog.empty():
                    if self.backlog.get_nowait() is not None:
                        unsent += 1
                self.gen.unsent += unsent
                for _ in range(len(self.conns)):
                    self.backlog.put_nowait(None)
            await asyncio.gather(*tasks, return_exceptions=True)
            watchdog.cancel()

    async def _watchdog(self) -> None:
        while True:
            await asyncio.sleep(min(1.0, self.cfg.timeout_s / 4))
            now = time.perf_counter()
            for conn in self.conns:
                t0 = self.busy.get(id(conn))
                if t0 is not None and now - t0 > self.cfg.timeout_s and conn.connected:
                    self.timed_out.add(id(conn))
                    conn.abort()

    def close(self) -> None:
        for c in self.conns:
            c.close()


def inject_header(raw: bytes, name: bytes, value: bytes) -> bytes:
    """``raw`` (a whole HTTP/1.1 request) with one more header after the request line."""
    line, _, rest = raw.partition(b"\r\n")
    return b"".join((line, b"\r\n", name, b": ", value, b"\r\n", rest))


class LoadGenerator:
    """Drives one KServe v2 model with the configured levels; reports per level and per window."""

    def __init__(self, cfg: LoadConfig, job: JobState | None = None, sink: SampleSink | None = None,
                 on_window: WindowSink | None = None, otel: Any = None) -> None:
        """``otel``: a :class:`studio.telemetry.otel.Otel`: a client span per request (send / receive
        children, ``traceparent`` sent so the server's spans join the trace) and a latency histogram."""
        cfg.validate()
        self.otel = otel
        self.cfg = cfg
        self.ep = Endpoint.parse(cfg.url)
        self.job = job
        self.sink = sink
        self.on_window = on_window
        self.target = cfg.target
        self.requests: list[bytes] = []
        self.meta: dict[str, Any] = {}
        self.unsent = 0
        self.keep_window_histograms = False  # set when recording: each window keeps its full distribution

    def cancelled(self) -> bool:
        return bool(self.job and self.job.cancel_requested)

    def prepare(self) -> None:
        """Read the model's metadata and build the request bytes (once; the hot loop only writes them)."""
        cfg = self.cfg
        self.meta = model_metadata(self.ep, cfg.model)
        if cfg.input_data:
            bodies = bodies_from_file(cfg.input_data, self.meta)
        else:
            bodies = bodies_from_metadata(self.meta, cfg.shapes, count=4)
        path = cfg.path or (f"/v2/models/{cfg.model}" + (f"/versions/{cfg.model_version}" if cfg.model_version
                                                         else "") + "/infer")
        self.requests = [build_request(self.ep, cfg.method, path, b) for b in bodies]

    def use_raw_requests(self, requests: list[bytes]) -> None:
        """Benchmarks against a trivial endpoint: send these exact bytes (skips metadata)."""
        self.requests = requests

    # -- one level ---------------------------------------------------------------------------
    async def _run_level(self, conc: int | None, index: int, total: int) -> LevelResult:
        cfg = self.cfg
        lv = _Level(self, conc)
        label = level_label(cfg, conc)
        res = LevelResult(mode="rate" if cfg.rate is not None else "concurrency", concurrency=conc,
                          rate=cfg.rate, label=label)
        self.unsent = 0
        stats0 = fetch_stats(self.ep, cfg.model) if not cfg.path else None
        self._status(f"{label}: warm-up {cfg.warmup_s:g} s")
        if cfg.warmup_s > 0:
            await lv.run_phase(cfg.warmup_s)
        warm_unsent, self.unsent = self.unsent, 0
        stats1 = self._settled_stats(stats0, lv.meter.warm_ok)
        lv.meter.measuring = True
        lv.meter.new_window()
        lv.meter.new_tick()
        hist = LatencyHistogram()
        windows: list[WindowResult] = []

        async def controller() -> None:
            t_start = time.perf_counter()
            w_start_wall, w_start = time.time(), t_start
            ticks: list[float] = []
            next_tick = t_start + cfg.tick_s
            while True:
                await asyncio.sleep(max(0.0, next_tick - time.perf_counter()))
                now = time.perf_counter()
                dt_tick = now - (next_tick - cfg.tick_s)
                next_tick += cfg.tick_s
                ticks.append(lv.meter.t_bytes / max(dt_tick, 1e-9))
                self._emit_tick(lv.meter, dt_tick, conc)
                lv.meter.new_tick()
                if now - w_start + 1e-6 < cfg.window_s and not self.cancelled():
                    continue
                w = self._close_window(lv.meter, label, len(windows), w_start_wall, now - w_start, ticks, hist)
                windows.append(w)
                lv.meter.new_window()
                ticks = []
                w_start_wall, w_start = time.time(), now
                if self.on_window:
                    self.on_window(w)
                n = len(windows)
                self._progress(index, total, n / cfg.window_cap if cfg.stability else n / cfg.min_windows)
                if self.cancelled():
                    res.aborted = "cancelled by user"
                    return
                if w.successes == 0 and w.requests > 0:
                    res.aborted = (f"server stopped answering: no successful request in window {n} "
                                   f"({', '.join(f'{k}={v}' for k, v in w.errors.items())})")
                    return
                if n >= cfg.min_windows and (not cfg.stability or
                                             _stable(windows, cfg.stability_windows, cfg.stability_pct)):
                    res.stable = _stable(windows, cfg.stability_windows, cfg.stability_pct)
                    return
                if n >= cfg.window_cap:
                    res.stable = False
                    return

        self._status(f"{label}: measuring")
        t0 = time.perf_counter()
        await lv.run_phase(None, controller)
        # requests that finished while draining belong to the last window
        if windows and (lv.meter.w_ok or lv.meter.w_err or lv.meter.w_sent):
            last = windows[-1]
            last.requests += lv.meter.w_ok + sum(lv.meter.w_err.values())
            last.successes += lv.meter.w_ok
            for k, v in lv.meter.w_err.items():
                last.errors[k] = last.errors.get(k, 0) + v
            hist.record_many(lv.meter.w_lat)
        res.measured_s = time.perf_counter() - t0
        lv.close()
        stats2 = (self._settled_stats(stats0, lv.meter.warm_ok + sum(w.successes for w in windows))
                  if stats1 is not None else None)
        res.windows = windows
        res.successes = sum(w.successes for w in windows)
        errors: Counter[str] = Counter()
        for w in windows:
            errors.update(w.errors)
        if self.unsent:
            errors["unsent_backlog"] += self.unsent
        res.errors = dict(errors)
        res.error_count = sum(errors.values())
        res.requests_sent = sum(w.requests for w in windows)
        res.warmup_sent, res.warmup_successes = lv.meter.warm_sent, lv.meter.warm_ok
        res.total_sent = res.requests_sent + res.warmup_sent
        if warm_unsent:
            res.errors["warmup_unsent_backlog"] = warm_unsent
        res.throughput_rps = res.successes / res.measured_s if res.measured_s > 0 else 0.0
        res.latency = hist.summary()
        if cfg.rate is not None:
            dh = LatencyHistogram()
            dh.record_many(lv.delays)
            res.send_delay = dh.summary()
        res.histogram = hist.encode().decode() if hist.count else ""
        if stats0 is not None and stats1 is not None and stats2 is not None:
            d = stats2 - stats1
            res.server = d.to_dict()
            res.server_total = (stats2 - stats0).to_dict()
            res.server_breakdown_us = d.breakdown_us()
        return res

    def _settled_stats(self, base: Any, successes: int, wait_s: float = 1.0) -> Any:
        """The server's statistics once they count the ``successes`` the client saw since ``base``: a server
        may answer before it books the request (Triton's Python backend does), so an immediate read can
        miss the last one. Gives up after ``wait_s`` (a server that lost requests keeps its own count)."""
        if base is None:
            return None
        deadline = time.monotonic() + wait_s
        while True:
            st = fetch_stats(self.ep, self.cfg.model)
            if st is None or st.success_count - base.success_count >= successes or time.monotonic() > deadline:
                return st
            time.sleep(0.01)

    def _close_window(self, m: _Meter, label: str, index: int, start_wall: float, dur: float,
                      ticks: list[float], level_hist: LatencyHistogram) -> WindowResult:
        level_hist.record_many(m.w_lat)
        hist = ""
        if self.keep_window_histograms and m.w_lat:
            h = LatencyHistogram()
            h.record_many(m.w_lat)
            hist = h.encode().decode()
        errs = dict(m.w_err)
        return WindowResult(level=label, index=index, start=start_wall, end=start_wall + dur,
                            requests=m.w_ok + sum(errs.values()), successes=m.w_ok, errors=errs,
                            throughput_rps=m.w_ok / dur if dur > 0 else 0.0, latency=summarize_seconds(m.w_lat),
                            bytes_per_s=m.w_bytes / dur if dur > 0 else 0.0, tick_bytes_per_s=list(ticks),
                            histogram=hist)

    def _emit_tick(self, m: _Meter, dt: float, conc: int | None) -> None:
        if self.sink is None:
            return
        t = time.time()
        src, tgt = "client", self.target
        out = [S.sample(t, S.THROUGHPUT, len(m.t_lat) / dt, src, tgt), S.sample(t, S.ERRORS, m.t_err / dt, src, tgt),
               S.sample(t, S.NET_BYTES, m.t_bytes / dt, src, tgt)]
        if m.t_lat:
            p50, p90, p95, p99 = np.percentile(np.asarray(m.t_lat), [50, 90, 95, 99]) * 1e3
            out += [S.sample(t, S.LAT_P50, p50, src, tgt), S.sample(t, S.LAT_P90, p90, src, tgt),
                    S.sample(t, S.LAT_P95, p95, src, tgt), S.sample(t, S.LAT_P99, p99, src, tgt),
                    S.sample(t, S.LAT_MAX, max(m.t_lat) * 1e3, src, tgt)]
        if conc is not None:
            out.append(S.sample(t, S.CONCURRENCY, conc, src, tgt))
        self.sink(out)

    def _status(self, text: str) -> None:
        if self.job:
            self.job.set_status(text)

    def _progress(self, index: int, total: int, frac: float) -> None:
        if self.job:
            self.job.set_progress(100.0 * (index + min(frac, 1.0)) / max(total, 1))

    # -- all levels --------------------------------------------------------------------------
    async def run_async(self) -> list[LevelResult]:
        if not self.requests:
            self.prepare()
        levels: list[int | None] = [None] if self.cfg.rate is not None else list(self.cfg.concurrency)
        results: list[LevelResult] = []
        for i, conc in enumerate(levels):
            res = await self._run_level(conc, i, len(levels))
            results.append(res)
            if res.aborted:
                break
        return results

    def run(self) -> list[LevelResult]:
        with asyncio.Runner(loop_factory=_loop_factory()) as runner:
            return runner.run(self.run_async())


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop when installed (the telemetry extra pulls it in): it halves the client's cost per request, which
    is what bounds the request rate against a fast server; the standard loop otherwise."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - depends on the environment / platform
        return None
    return uvloop.new_event_loop
