"""Collectors: poll a source and turn it into Samples that name that source.

A series the source cannot provide comes back as a Sample with ``value=None`` and a note saying why (no GPU
in Triton's metrics, nvidia-ml-py not installed, the agent exports no power), so nothing shows a false zero.

Where a server's memory and CPU come from: its own metrics first (Triton's ``nv_cpu_*``: the host it runs on;
the agent's ``studio_agent_process_*`` / ``process_*``: its own process), psutil only for a local server's pid,
never the studio's own process. ``studio.telemetry.bench.default_collectors`` picks one source per series.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from studio.core.errors import ConnectionFailed
from studio.telemetry import samples as S
from studio.telemetry.kserve import Endpoint, ServerStats, fetch_stats, http_get_text
from studio.telemetry.prometheus import Metric, metric_sum, parse_prometheus_text
from studio.telemetry.samples import Sample, sample, unavailable

Sink = Callable[[list[Sample]], None]


class Collector:
    """Base: ``collect()`` returns the samples of one poll; it never raises for an unreachable source."""

    source: str = "collector"

    def __init__(self, target: str = "") -> None:
        self.target = target

    def collect(self) -> list[Sample]:
        raise NotImplementedError

    def _na(self, t: float, series: str, reason: str) -> Sample:
        return unavailable(t, series, self.source, reason, self.target)

    def _s(self, t: float, series: str, value: float | None, note: str = "") -> Sample:
        return sample(t, series, value, self.source, self.target, note)


class _CounterRates:
    """Turns cumulative counters into per-second rates between two polls."""

    def __init__(self) -> None:
        self.prev: dict[str, tuple[float, float]] = {}

    def rate(self, key: str, t: float, value: float | None) -> float | None:
        if value is None:
            return None
        prev = self.prev.get(key)
        self.prev[key] = (t, value)
        if prev is None or t <= prev[0] or value < prev[1]:
            return None
        return (value - prev[1]) / (t - prev[0])

    def mean_per(self, key: str, t: float, num: float | None, den: float | None) -> float | None:
        """Delta of ``num`` over delta of ``den`` between polls (for example queue us per request)."""
        if num is None or den is None:
            return None
        prev = self.prev.get(key)
        self.prev[key] = (num, den)
        if prev is None or den - prev[1] <= 0:
            return None
        return (num - prev[0]) / (den - prev[1])


class _PrometheusCollector(Collector):
    """A Prometheus /metrics endpoint read once a poll; ``parse`` turns its metrics into samples. Unreachable:
    each of ``unreachable_series()`` is n/a, saying ``UNREACHABLE (why)``."""

    url: str
    UNREACHABLE = "metrics endpoint unreachable"

    def parse(self, metrics: list[Metric], t: float) -> list[Sample]:
        raise NotImplementedError

    def unreachable_series(self) -> Iterable[str]:
        raise NotImplementedError

    def collect(self) -> list[Sample]:
        t = time.time()
        try:
            text = http_get_text(self.url, timeout=2.0)
        except ConnectionFailed as exc:
            return [self._na(t, s, f"{self.UNREACHABLE} ({exc.message})") for s in self.unreachable_series()]
        return self.parse(parse_prometheus_text(text), t)


class TritonMetricsCollector(_PrometheusCollector):
    """Triton's Prometheus endpoint (metrics port, /metrics): CPU, host memory, GPU memory/power/utilisation,
    per-model success/failure rates and queue/compute time per request."""

    GPU_SERIES = (S.GPU_MEM_USED, S.GPU_MEM_TOTAL, S.GPU_MEM_PCT, S.GPU_POWER, S.GPU_UTIL)

    def __init__(self, metrics_url: str, model: str | None = None, target: str = "") -> None:
        super().__init__(target)
        self.url = metrics_url if metrics_url.rstrip("/").endswith("/metrics") else metrics_url.rstrip("/") + "/metrics"
        self.model = model
        self.source = f"triton-metrics {self.url}"
        self._rates = _CounterRates()

    def parse(self, metrics: list[Metric], t: float) -> list[Sample]:
        out: list[Sample] = []
        match = {"model": self.model} if self.model else {}
        cpu = metric_sum(metrics, "nv_cpu_utilization")
        out.append(self._s(t, S.CPU_PCT, None if cpu is None else 100.0 * cpu) if cpu is not None
                   else self._na(t, S.CPU_PCT, "server exports no nv_cpu_utilization"))
        used, total = metric_sum(metrics, "nv_cpu_memory_used_bytes"), metric_sum(metrics, "nv_cpu_memory_total_bytes")
        if used is not None and total:
            out += [self._s(t, S.MEM_USED, used), self._s(t, S.MEM_TOTAL, total),
                    self._s(t, S.MEM_PCT, 100.0 * used / total)]
        else:
            out += [self._na(t, s, "server exports no nv_cpu_memory_* metrics")
                    for s in (S.MEM_USED, S.MEM_TOTAL, S.MEM_PCT)]
        gused, gtotal = metric_sum(metrics, "nv_gpu_memory_used_bytes"), metric_sum(metrics, "nv_gpu_memory_total_bytes")
        power = metric_sum(metrics, "nv_gpu_power_usage")
        util = [m.value for m in metrics if m.name == "nv_gpu_utilization"]
        if gused is None and power is None and not util:
            out += [self._na(t, s, "the server reports no GPU (no nv_gpu_* metrics)") for s in self.GPU_SERIES]
        else:
            out.append(self._s(t, S.GPU_MEM_USED, gused) if gused is not None
                       else self._na(t, S.GPU_MEM_USED, "no nv_gpu_memory_used_bytes"))
            out.append(self._s(t, S.GPU_MEM_TOTAL, gtotal) if gtotal is not None
                       else self._na(t, S.GPU_MEM_TOTAL, "no nv_gpu_memory_total_bytes"))
            out.append(self._s(t, S.GPU_MEM_PCT, 100.0 * gused / gtotal) if gused is not None and gtotal
                       else self._na(t, S.GPU_MEM_PCT, "no GPU memory metrics"))
            out.append(self._s(t, S.GPU_POWER, power) if power is not None
                       else self._na(t, S.GPU_POWER, "no nv_gpu_power_usage"))
            out.append(self._s(t, S.GPU_UTIL, 100.0 * sum(util) / len(util)) if util
                       else self._na(t, S.GPU_UTIL, "no nv_gpu_utilization"))
        succ = metric_sum(metrics, "nv_inference_request_success", **match)
        fail = metric_sum(metrics, "nv_inference_request_failure", **match)
        for series, key, val in ((S.SERVER_RPS, "succ", succ), (S.SERVER_FAIL_RPS, "fail", fail)):
            r = self._rates.rate(key, t, val)
            if val is None:
                out.append(self._na(t, series, "no per-model request counters"))
            elif r is not None:
                out.append(self._s(t, series, r))
        queue = metric_sum(metrics, "nv_inference_queue_duration_us", **match)
        infer = metric_sum(metrics, "nv_inference_compute_infer_duration_us", **match)
        q = self._rates.mean_per("queue", t, queue, succ)
        c = self._rates.mean_per("infer", t, infer, succ)
        if q is not None:
            out.append(self._s(t, S.SERVER_QUEUE_US, q))
        if c is not None:
            out.append(self._s(t, S.SERVER_COMPUTE_US, c))
        pending = metric_sum(metrics, "nv_inference_pending_request_count", **match)
        if pending is not None:
            out.append(self._s(t, S.SERVER_PENDING, pending))
        return out

    def unreachable_series(self) -> Iterable[str]:
        return (S.CPU_PCT, S.MEM_PCT, *self.GPU_SERIES)


class TritonStatsCollector(Collector):
    """Triton's /v2/models/NAME/stats: server-side queue and compute time per request between polls."""

    def __init__(self, url: str, model: str, target: str = "") -> None:
        super().__init__(target)
        self.ep = Endpoint.parse(url)
        self.model = model
        self.source = f"triton-stats {self.ep.url}/v2/models/{model}/stats"
        self._prev: tuple[float, ServerStats] | None = None

    def collect(self) -> list[Sample]:
        t = time.time()
        st = fetch_stats(self.ep, self.model, timeout=2.0)
        if st is None:
            return [self._na(t, s, "server offers no statistics endpoint")
                    for s in (S.SERVER_QUEUE_US, S.SERVER_COMPUTE_US)]
        prev, self._prev = self._prev, (t, st)
        if prev is None:
            return []
        d = st - prev[1]
        b = d.breakdown_us()
        out = [self._s(t, S.SERVER_RPS, d.success_count / max(t - prev[0], 1e-9))]
        if b["queue_us"] is not None:
            out += [self._s(t, S.SERVER_QUEUE_US, b["queue_us"]), self._s(t, S.SERVER_COMPUTE_US, b["compute_infer_us"])]
        return out


class AgentMetricsCollector(_PrometheusCollector):
    """The edge agent's Prometheus /metrics: process memory, host memory and board power when it exports them.

    Metric names are looked up in ``names`` (series -> candidate metric names, first present wins)."""

    DEFAULT_NAMES: dict[str, tuple[str, ...]] = {
        S.BOARD_POWER: ("studio_agent_power_watts", "studio_agent_board_power_watts", "board_power_watts"),
        S.MEM_USED: ("studio_agent_system_memory_bytes{kind=used}", "studio_agent_memory_used_bytes"),
        S.MEM_TOTAL: ("studio_agent_system_memory_bytes{kind=total}", "studio_agent_memory_total_bytes"),
        S.PROC_RSS: ("studio_agent_process_resident_memory_bytes", "process_resident_memory_bytes"),
        S.PROC_CPU: ("studio_agent_process_cpu_percent",),  # else the rate of process_cpu_seconds_total
        S.CPU_PCT: ("studio_agent_system_cpu_percent", "studio_agent_cpu_percent"),
    }
    CPU_SECONDS = "process_cpu_seconds_total"  # prometheus_client's process collector (100 = one core)
    UNREACHABLE = "agent metrics unreachable"

    def __init__(self, url: str, names: dict[str, tuple[str, ...]] | None = None, target: str = "") -> None:
        super().__init__(target)
        base = url.rstrip("/")
        self.url = base if base.endswith("/metrics") else base + "/metrics"
        self.names = {**self.DEFAULT_NAMES, **(names or {})}
        self.source = f"agent-metrics {self.url}"
        self._rates = _CounterRates()

    @staticmethod
    def _lookup(metrics: list[Metric], spec: str) -> float | None:
        """``name`` or ``name{label=value,...}``; summed over the other labels (power rails add up)."""
        name, _, rest = spec.partition("{")
        match = dict(kv.split("=", 1) for kv in rest.rstrip("}").split(",") if "=" in kv)
        return metric_sum(metrics, name, **match)

    STAGE_METRIC = "studio_agent_stage_duration_seconds"

    def _stages(self, metrics: list[Metric], t: float) -> list[Sample]:
        """Mean per-stage service time and total queue wait (ms per request) between two polls, when the
        agent serves raw inputs through its staged pipeline (absent otherwise: no series at all)."""
        out: list[Sample] = []
        queue_ms = 0.0
        have_queue = False
        for stage, series in S.STAGES_MS.items():
            for phase in ("service", "queue"):
                num = metric_sum(metrics, self.STAGE_METRIC + "_sum", stage=stage, phase=phase)
                den = metric_sum(metrics, self.STAGE_METRIC + "_count", stage=stage, phase=phase)
                mean = self._rates.mean_per(f"{stage}.{phase}", t, num, den)
                if mean is None:
                    continue
                if phase == "service":
                    out.append(self._s(t, series, 1000.0 * mean))
                else:
                    queue_ms += 1000.0 * mean
                    have_queue = True
        if have_queue:
            out.append(self._s(t, S.STAGE_QUEUE_MS, queue_ms))
        return out

    def parse(self, metrics: list[Metric], t: float) -> list[Sample]:
        out: list[Sample] = self._stages(metrics, t)
        found: dict[str, float] = {}
        for series, candidates in self.names.items():
            val = next((v for v in (self._lookup(metrics, n) for n in candidates) if v is not None), None)
            if val is None and series == S.PROC_CPU:
                secs = metric_sum(metrics, self.CPU_SECONDS)
                if secs is not None:
                    rate = self._rates.rate("process_cpu", t, secs)
                    if rate is not None:
                        found[series] = 100.0 * rate
                        out.append(self._s(t, series, 100.0 * rate))
                    continue  # the first poll is the counter's baseline
            if val is None:
                out.append(self._na(t, series, f"agent exports none of {', '.join(candidates)}"))
            else:
                found[series] = val
                out.append(self._s(t, series, val))
        if S.MEM_USED in found and found.get(S.MEM_TOTAL):
            out.append(self._s(t, S.MEM_PCT, 100.0 * found[S.MEM_USED] / found[S.MEM_TOTAL]))
        else:
            out.append(self._na(t, S.MEM_PCT, "agent exports no memory used/total"))
        return out

    def unreachable_series(self) -> Iterable[str]:
        return self.names


def listening_pid(port: int) -> int | None:
    """The process listening on TCP ``port`` on this machine (psutil), or None (none, or not ours to see)."""
    try:
        import psutil

        for c in psutil.net_connections(kind="inet"):
            if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port and c.pid:
                return int(c.pid)
    except Exception:  # noqa: BLE001 - psutil missing or AccessDenied: the caller says "not available"
        return None
    return None


class ProcessCollector(Collector):
    """The server's process (a local tritonserver or agent, by pid) and the host's memory, via psutil.

    Never this process: the studio's own memory is not the server's (a pid equal to ours is refused). Without a
    pid only the host's memory is reported, and the process series say why they are not available.
    ``host=False`` leaves the host's memory to the server's own metrics (Triton's nv_cpu_memory_*)."""

    def __init__(self, pid: int | None = None, target: str = "", why_no_pid: str = "", host: bool = True) -> None:
        super().__init__(target)
        import os

        if pid and pid == os.getpid():
            pid, why_no_pid = None, "that pid is the studio itself, not the server"
        self.pid = pid
        self.host = host
        self.source = f"psutil pid {pid}" if pid else "psutil (host)"
        self._proc: Any = None
        self._psutil: Any = None
        self._err = why_no_pid or "no server process to watch (not a local server the studio knows)"
        try:
            import psutil

            self._psutil = psutil
            if pid:
                self._proc = psutil.Process(pid)
                self._proc.cpu_percent(None)
        except ImportError:
            self._err = "psutil not installed"
        except Exception as exc:  # noqa: BLE001 - NoSuchProcess, AccessDenied
            self._err = f"process {pid}: {exc}"

    def collect(self) -> list[Sample]:
        t = time.time()
        series = (S.PROC_RSS, S.PROC_CPU) + ((S.MEM_USED, S.MEM_TOTAL, S.MEM_PCT) if self.host else ())
        if self._psutil is None:
            return [self._na(t, s, self._err) for s in series]
        if self._proc is None:  # the host only
            return [self._na(t, S.PROC_RSS, self._err), self._na(t, S.PROC_CPU, self._err), *self._host(t)]
        try:
            with self._proc.oneshot():
                rss = self._proc.memory_info().rss
                cpu = self._proc.cpu_percent(None)
        except Exception as exc:  # noqa: BLE001 - the process ended
            return [self._na(t, s, f"process {self.pid} gone: {type(exc).__name__}") for s in series]
        return [self._s(t, S.PROC_RSS, rss), self._s(t, S.PROC_CPU, cpu), *self._host(t)]

    def _host(self, t: float) -> list[Sample]:
        if not self.host:
            return []
        vm = self._psutil.virtual_memory()
        used = vm.total - vm.available
        return [self._s(t, S.MEM_USED, used), self._s(t, S.MEM_TOTAL, vm.total),
                self._s(t, S.MEM_PCT, 100.0 * used / vm.total)]


class NvmlCollector(Collector):
    """Local GPUs through NVML (the ``pynvml`` module of nvidia-ml-py, the ``gpu`` extra). A missing library,
    driver or GPU gives "not available" with the reason, never zero."""

    source = "nvml"
    SERIES = (S.GPU_MEM_USED, S.GPU_MEM_TOTAL, S.GPU_MEM_PCT, S.GPU_POWER, S.GPU_UTIL)
    NOT_INSTALLED = "nvidia-ml-py not installed (pip install 'deployment-studio[gpu]')"

    def __init__(self, target: str = "") -> None:
        super().__init__(target)
        self._nvml: Any = None
        self._handles: list[Any] = []
        try:
            import pynvml
        except ImportError:
            self.reason = self.NOT_INSTALLED
            return
        try:
            pynvml.nvmlInit()
            self._handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
            self._nvml = pynvml
            self.reason = "" if self._handles else "no NVIDIA GPU (NVML sees none)"
        except Exception as exc:  # noqa: BLE001 - NVMLError: no libnvidia-ml, no driver loaded
            self.reason = f"no NVIDIA GPU/driver (NVML: {exc})"

    @property
    def available(self) -> bool:
        return bool(self._nvml and self._handles)

    def collect(self) -> list[Sample]:
        t = time.time()
        if not self.available:
            return [self._na(t, s, self.reason) for s in self.SERIES]
        n = self._nvml
        used = total = 0.0
        powers: list[float] = []
        utils: list[float] = []
        why = {S.GPU_POWER: "", S.GPU_UTIL: ""}
        for h in self._handles:
            mem = n.nvmlDeviceGetMemoryInfo(h)
            used += mem.used
            total += mem.total
            try:  # some boards and MIG slices do not report power or utilisation (NVMLError_NotSupported)
                powers.append(n.nvmlDeviceGetPowerUsage(h) / 1000.0)
            except n.NVMLError as exc:
                why[S.GPU_POWER] = f"NVML: {exc}"
            try:
                utils.append(float(n.nvmlDeviceGetUtilizationRates(h).gpu))
            except n.NVMLError as exc:
                why[S.GPU_UTIL] = f"NVML: {exc}"
        out = [self._s(t, S.GPU_MEM_USED, used), self._s(t, S.GPU_MEM_TOTAL, total),
               self._s(t, S.GPU_MEM_PCT, 100.0 * used / total) if total
               else self._na(t, S.GPU_MEM_PCT, "NVML reports no GPU memory")]
        out.append(self._na(t, S.GPU_POWER, why[S.GPU_POWER]) if why[S.GPU_POWER] or not powers
                   else self._s(t, S.GPU_POWER, sum(powers)))
        out.append(self._na(t, S.GPU_UTIL, why[S.GPU_UTIL]) if why[S.GPU_UTIL] or not utils
                   else self._s(t, S.GPU_UTIL, sum(utils) / len(utils)))
        return out


class CollectorPoller:
    """Polls collectors on a background thread and hands their samples to ``sink`` (thread-safe sinks only)."""

    def __init__(self, collectors: list[Collector], sink: Sink, interval_s: float = 0.5) -> None:
        self.collectors = collectors
        self.sink = sink
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def poll_once(self) -> list[Sample]:
        out: list[Sample] = []
        for c in self.collectors:
            try:
                out += c.collect()
            except Exception as exc:  # noqa: BLE001 - a broken source must not end a load run
                out.append(unavailable(time.time(), "collector.error", c.source, f"{type(exc).__name__}: {exc}",
                                       c.target))
        if out:
            self.sink(out)
        return out

    def _loop(self) -> None:
        while not self._stop.is_set():
            t0 = time.monotonic()
            self.poll_once()
            self._stop.wait(max(0.0, self.interval_s - (time.monotonic() - t0)))

    def start(self) -> None:
        if self.collectors and self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="telemetry-collectors", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
