"""`studio bench --locust`: the same KServe v2 workload through Locust, one master and N worker processes.

``LocustGenerator`` stands in for ``LoadGenerator`` inside ``run_bench`` (same ``prepare`` / ``run``, same
``on_window`` / ``sink`` callbacks), so the report, the recording, the Dashboards' samples and the SLA verdicts are
computed by the same code as for the studio's load generator. The request bodies come from the same builder
(``studio.telemetry.kserve``); the master (``locust_master``) and the workers (``locustfile``) are separate
processes because locust monkey-patches its interpreter with gevent. Workers run on loopback, or on lab hosts
(``hosts``: the studio starts none there; run ``python -m studio.telemetry.locustfile --master-host ...`` or
``locust -f .../locustfile.py --worker --master-host ...`` on them: the master sends them the workload).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import DependencyMissing, InputError, StudioError
from studio.core.jobs import JobState
from studio.telemetry import samples as S
from studio.telemetry.histogram import LatencyHistogram
from studio.telemetry.kserve import (
    Endpoint,
    bodies_from_file,
    bodies_from_metadata,
    build_request,
    fetch_stats,
    model_metadata,
)
from studio.telemetry.load_types import LevelResult, LoadConfig, WindowResult, level_label


@dataclass
class LocustOptions:
    workers: int = 2
    hosts: list[str] = field(default_factory=list)  # lab hosts that start their own workers
    bind_host: str = "127.0.0.1"
    connect_timeout_s: float = 60.0
    port: int = 0  # the master's port; 0: a free one (loopback only: lab workers must be told it)

    def validate(self) -> None:
        if self.workers < (0 if self.hosts else 1):
            raise InputError(f"--locust-workers must be >= {0 if self.hosts else 1}, got {self.workers}",
                             offending="--locust-workers")
        if not 0 <= self.port < 65536:
            raise InputError(f"--locust-port must be a TCP port, got {self.port}", offending="--locust-port")


def _require_locust() -> str:
    try:
        from importlib.metadata import version

        return version("locust")
    except Exception as exc:  # noqa: BLE001 - PackageNotFoundError and broken metadata alike
        raise DependencyMissing.for_module("locust", "locust", "studio bench --locust") from exc


class LocustGenerator:
    """Drives the configured levels through Locust; reports per level and per merged window."""

    def __init__(self, cfg: LoadConfig, job: JobState | None = None, sink: Any = None, on_window: Any = None,
                 otel: Any = None, options: LocustOptions | None = None) -> None:
        cfg.validate()
        self.cfg, self.job, self.sink, self.on_window = cfg, job, sink, on_window
        self.options = options or LocustOptions()
        self.options.validate()
        self.ep = Endpoint.parse(cfg.url)
        self.target = cfg.target
        self.requests: list[bytes] = []
        self.keep_window_histograms = False
        self.locust_version = ""
        if otel is not None:
            raise InputError("--otlp-endpoint traces the studio's own load generator's requests",
                             offending="--otlp-endpoint", hint="drop it with --locust")

    def prepare(self) -> None:
        self.locust_version = _require_locust()
        meta = model_metadata(self.ep, self.cfg.model)
        bodies = (bodies_from_file(self.cfg.input_data, meta) if self.cfg.input_data
                  else bodies_from_metadata(meta, self.cfg.shapes, count=4))
        path = self.cfg.path or (f"/v2/models/{self.cfg.model}" + (f"/versions/{self.cfg.model_version}"
                                                                   if self.cfg.model_version else "") + "/infer")
        self.requests = [build_request(self.ep, self.cfg.method, path, b) for b in bodies]

    def _config(self, port: int) -> dict[str, Any]:
        cfg = self.cfg
        levels = [{"rate": cfg.rate}] if cfg.rate is not None else [{"users": c} for c in cfg.concurrency]
        return {"workers": self.options.workers + len(self.options.hosts), "bind_host": self.options.bind_host,
                "port": port, "server_host": self.ep.host, "server_port": self.ep.port,
                "requests": [base64.b64encode(r).decode() for r in self.requests], "levels": levels,
                "warmup_s": cfg.warmup_s, "window_s": cfg.window_s, "tick_s": cfg.tick_s,
                "distribution": cfg.distribution, "min_windows": cfg.min_windows, "window_cap": cfg.window_cap,
                "stability": cfg.stability, "stability_pct": cfg.stability_pct,
                "stability_windows": cfg.stability_windows, "timeout_s": cfg.timeout_s,
                "max_connections": cfg.max_connections, "connect_timeout_s": self.options.connect_timeout_s}

    def run(self) -> list[LevelResult]:
        from studio.core.ports import free_port

        if not self.requests:
            self.prepare()
        port = self.options.port or free_port(self.options.bind_host)
        local = "127.0.0.1" if self.options.bind_host in ("0.0.0.0", "") else self.options.bind_host
        with tempfile.TemporaryDirectory(prefix="studio-locust-") as tmp:
            conf = Path(tmp) / "run.json"
            conf.write_text(json.dumps(self._config(port)), encoding="utf-8")
            # gevent's default libev loop, the one measured (the open loop's sender and receivers are OS threads:
            # locustfile, locust_client; the hub takes their results through one async watcher)
            env = {"GEVENT_LOOP": "libev-cext", **os.environ, "PYTHONUNBUFFERED": "1"}
            master = subprocess.Popen([sys.executable, "-m", "studio.telemetry.locust_master", str(conf)],
                                      stdout=subprocess.PIPE, stderr=open(Path(tmp) / "master.log", "w"),
                                      text=True, env=env)
            workers = [subprocess.Popen([sys.executable, "-m", "studio.telemetry.locustfile", "--master-host",
                                         local, "--master-port", str(port)], stdout=subprocess.DEVNULL,
                                        stderr=open(Path(tmp) / f"worker{i}.log", "w"), env=env)
                       for i in range(self.options.workers)]
            if self.options.hosts:
                self._status(f"Locust master on {self.options.bind_host}:{port}: waiting for a worker from each of "
                             f"{', '.join(self.options.hosts)} (python -m studio.telemetry.locustfile --master-host "
                             f"THIS_HOST --master-port {port})")
            try:
                return self._follow(master, Path(tmp))
            finally:
                for p in [master, *workers]:
                    try:
                        p.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        p.kill()
                        p.wait()

    def _follow(self, master: subprocess.Popen, tmp: Path) -> list[LevelResult]:
        """Read the master's JSON lines: windows go to ``on_window`` as they close, levels are assembled."""
        assert master.stdout is not None
        results: list[LevelResult] = []
        levels = [None] if self.cfg.rate is not None else list(self.cfg.concurrency)
        windows: list[WindowResult] = []
        hist = LatencyHistogram()
        stop: dict[str, Any] = {}
        stats0 = None
        level_t0 = time.perf_counter()
        for line in master.stdout:
            msg = json.loads(line)
            kind = msg["type"]
            if kind == "error":
                raise StudioError(f"Locust: {msg['message']}", offending="--locust-workers",
                                  hint="see the workers' errors: " + _tail_logs(tmp))
            if kind == "ready":
                self._status(f"Locust {msg['locust']}: master and {msg['workers']} worker(s) connected")
            if kind in ("ready", "level") and len(results) + (kind == "level") < len(levels):
                stats0 = fetch_stats(self.ep, self.cfg.model) if not self.cfg.path else None
            if kind == "window":
                w = self._window(msg, levels[msg["level"]], hist)
                if not windows:
                    level_t0 = time.perf_counter() - self.cfg.window_s
                windows.append(w)
                if self.on_window:
                    self.on_window(w)
                self._progress(msg["level"], len(levels), len(windows) / self.cfg.window_cap)
            elif kind == "stopping":
                stop = msg
            elif kind == "level":
                res = self._level(msg, levels[msg["level"]], windows, hist, stop, time.perf_counter() - level_t0)
                stats2 = self._settled(stats0, res.warmup_successes + res.successes)
                if stats0 is not None and stats2 is not None:  # the whole level: workers warm up on their own
                    d = stats2 - stats0
                    res.server_total, res.server_breakdown_us = d.to_dict(), d.breakdown_us()
                results.append(res)
                windows, hist, stop = [], LatencyHistogram(), {}
        if master.wait() != 0 and len(results) < len(levels):
            raise StudioError("the Locust master ended before the run did", offending="locust",
                              hint=_tail_logs(tmp))
        return results

    def _settled(self, base: Any, successes: int, wait_s: float = 1.0) -> Any:
        """The server's statistics once they count what the workers saw succeed (a server may book late)."""
        if base is None:
            return None
        deadline = time.monotonic() + wait_s
        while True:
            st = fetch_stats(self.ep, self.cfg.model)
            if st is None or st.success_count - base.success_count >= successes or time.monotonic() > deadline:
                return st
            time.sleep(0.01)

    def _window(self, msg: dict[str, Any], conc: int | None, level_hist: LatencyHistogram) -> WindowResult:
        h = LatencyHistogram.decode(msg["hist"]) if msg["hist"] else LatencyHistogram()
        level_hist.merge(h)
        # the workers' own span of the window (they close it ms after its nominal end, with what completed
        # meanwhile in it); window_s and the reader's clock only for workers that do not send it
        dur = msg.get("span_s") or self.cfg.window_s
        start = msg.get("t_open") or time.time() - dur
        w = WindowResult(level=level_label(self.cfg, conc), index=msg["index"], start=start, end=start + dur,
                         requests=msg["ok"] + sum(msg["errors"].values()), successes=msg["ok"],
                         errors=msg["errors"], throughput_rps=msg["ok"] / dur, latency=h.summary(),
                         bytes_per_s=msg["bytes"] / dur,
                         tick_bytes_per_s=[b / self.cfg.tick_s for b in msg["ticks"]],
                         histogram=msg["hist"] if self.keep_window_histograms else "")
        if self.sink is not None:
            t, src, tgt = w.end, "locust", self.target
            lat = w.latency
            out = [S.sample(t, S.THROUGHPUT, w.throughput_rps, src, tgt),
                   S.sample(t, S.ERRORS, sum(w.errors.values()) / dur, src, tgt),
                   S.sample(t, S.NET_BYTES, w.bytes_per_s, src, tgt)]
            for name, v in ((S.LAT_P50, lat.p50_ms), (S.LAT_P90, lat.p90_ms), (S.LAT_P95, lat.p95_ms),
                            (S.LAT_P99, lat.p99_ms), (S.LAT_MAX, lat.max_ms)):
                if v is not None:
                    out.append(S.sample(t, name, v, src, tgt))
            if conc is not None:
                out.append(S.sample(t, S.CONCURRENCY, conc, src, tgt))
            self.sink(out)
        return w

    def _level(self, msg: dict[str, Any], conc: int | None, windows: list[WindowResult], hist: LatencyHistogram,
               stop: dict[str, Any], measured_s: float) -> LevelResult:
        cfg = self.cfg
        res = LevelResult(mode="rate" if cfg.rate is not None else "concurrency", concurrency=conc, rate=cfg.rate,
                          label=level_label(cfg, conc), windows=windows, stable=bool(stop.get("stable")),
                          aborted=stop.get("reason", ""), measured_s=measured_s)
        delays = LatencyHistogram()
        done = [p for p in msg["tail"] if p.get("done")]
        if done and all("t_end" in p for p in done):
            # each worker counted its requests due from measure_at to its stop, answered by t_end, at rate / n:
            # the merged count over the mean of those spans is the merged rate (the load generator's measured
            # seconds, measuring start to drain end, on the workers' clocks; not the reader's window arrivals)
            res.measured_s = sum(p["t_end"] - p["measure_at"] for p in done) / len(done)
        for part in msg["tail"]:  # finished while draining: the last window's, as in the load generator
            res.warmup_sent += part.get("warm_sent", 0)
            res.warmup_successes += part.get("warm_ok", 0)
            if part.get("delays"):
                delays.merge(LatencyHistogram.decode(part["delays"]))
            if windows:
                last = windows[-1]
                last.successes += part["ok"]
                last.requests += part["ok"] + sum(part["errors"].values())
                for k, v in part["errors"].items():
                    last.errors[k] = last.errors.get(k, 0) + v
            if part["hist"]:
                hist.merge(LatencyHistogram.decode(part["hist"]))
        errors: Counter[str] = Counter()
        for w in windows:
            errors.update(w.errors)
        res.errors, res.error_count = dict(errors), sum(errors.values())
        res.successes = sum(w.successes for w in windows)
        res.requests_sent = sum(w.requests for w in windows)
        res.total_sent = res.requests_sent + res.warmup_sent
        res.throughput_rps = res.successes / res.measured_s if res.measured_s > 0 else 0.0
        res.latency = hist.summary()
        res.histogram = hist.encode().decode() if hist.count else ""
        if cfg.rate is not None:
            res.send_delay = delays.summary()
        return res

    def _status(self, text: str) -> None:
        if self.job:
            self.job.set_status(text)

    def _progress(self, index: int, total: int, frac: float) -> None:
        if self.job:
            self.job.set_progress(100.0 * (index + min(frac, 1.0)) / max(total, 1))


def _tail_logs(tmp: Path) -> str:
    parts = []
    for log in sorted(tmp.glob("*.log")):
        text = log.read_text(errors="replace").strip()
        if text:
            parts.append(f"{log.stem}: {text.splitlines()[-1][:300]}")
    return "; ".join(parts) or "no output from the master or the workers"
