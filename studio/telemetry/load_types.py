"""What a load run is set up with and what it reports (LoadConfig, WindowResult, LevelResult), how a failed
request is named, and the per-window counters: the data of studio.telemetry.loadgen, kept apart from the event
loop that drives the requests so each module stays readable."""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import InputError
from studio.core.reports import Report
from studio.telemetry.histogram import LatencySummary
from studio.telemetry.http_client import ProtocolError
from studio.telemetry.kserve import Endpoint


@dataclass
class GenerationLoad:
    """A generate-endpoint workload (KServe v2 / Triton generate extension): prompts sent in turn as
    ``{"text_input": ..., "parameters": {"max_tokens": N, ...}}`` to ``generate_stream`` (or ``generate``)."""

    prompts: list[str] = field(default_factory=lambda: ["Hello, how are you?"])
    max_tokens: int = 16
    stream: bool = True  # generate_stream (TTFT and inter-token latency measurable) or generate (one JSON)
    parameters: dict[str, Any] = field(default_factory=dict)  # more sampling parameters (temperature, seed, ...)

    def validate(self) -> None:
        if not self.prompts or any(not isinstance(p, str) or not p for p in self.prompts):
            raise InputError("the generate workload needs at least one non-empty prompt", offending="--prompt",
                             hint='for example --prompt "Describe the image"')
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise InputError(f"--max-tokens must be >= 1, got {self.max_tokens}", offending="--max-tokens",
                             hint="for example --max-tokens 32")


@dataclass
class GenerationStats(Report):
    """genai-perf's measures over one window or level: time to first token (request sent -> first text piece),
    inter-token latency ((request latency - TTFT) / (output tokens - 1), per request, genai-perf's definition),
    output tokens per second (all output tokens / measured seconds) and tokens per request."""

    schema_version: int = 1
    ttft: LatencySummary = field(default_factory=LatencySummary)
    inter_token: LatencySummary = field(default_factory=LatencySummary)
    output_tokens: int = 0
    output_tokens_per_s: float = 0.0
    tokens_per_request: float | None = None
    token_source: str = ""  # "server usage (completion_tokens)" or "stream pieces counted"
    warmup_output_tokens: int = 0  # a level's warm-up (not measured; what the server also counted)
    late_output_tokens: int = 0  # requests still running when the level ended (finished, not measured)


@dataclass
class LoadConfig:
    url: str
    model: str
    concurrency: list[int] = field(default_factory=lambda: [1])
    rate: float | None = None  # requests/s; set -> open loop
    duration_s: float = 10.0  # minimum measured time per level
    warmup_s: float = 2.0
    window_s: float = 2.0
    tick_s: float = 0.25
    stability: bool = True
    stability_pct: float = 10.0
    stability_windows: int = 3
    max_windows: int = 0  # 0: minimum windows + 10
    distribution: str = "constant"  # open loop: constant | poisson
    max_connections: int = 32  # open loop connection pool
    timeout_s: float = 30.0
    input_data: Path | None = None
    shapes: dict[str, list[int]] = field(default_factory=dict)
    model_version: str = ""
    path: str = ""  # override the request path (default /v2/models/NAME[/versions/V]/infer)
    method: str = "POST"
    connect_backoff_s: float = 0.02
    generation: GenerationLoad | None = None  # set: the generate endpoints (studio.telemetry.genload)

    def validate(self) -> None:
        if self.generation is not None:
            self.generation.validate()
        if self.rate is not None and self.rate <= 0:
            raise InputError(f"--rate must be positive, got {self.rate}", offending="--rate")
        if self.rate is None and (not self.concurrency or any(c < 1 for c in self.concurrency)):
            raise InputError(f"--concurrency levels must be >= 1, got {self.concurrency}", offending="--concurrency",
                             hint="for example --concurrency 1,2,4,8")
        for name in ("duration_s", "window_s", "tick_s"):
            if getattr(self, name) <= 0:
                raise InputError(f"{name.removesuffix('_s')} must be positive", offending=f"--{name[:-2]}")
        if self.warmup_s < 0:
            raise InputError("warm-up cannot be negative", offending="--warmup")
        if self.tick_s > self.window_s:
            self.tick_s = self.window_s
        if self.distribution not in ("constant", "poisson"):
            raise InputError(f"unknown arrival distribution {self.distribution!r}", offending="--distribution",
                             hint="constant or poisson")

    @property
    def target(self) -> str:
        ep = Endpoint.parse(self.url)
        return f"{self.model}@{ep.host}:{ep.port}"

    @property
    def min_windows(self) -> int:
        return max(1, int(math.ceil(self.duration_s / self.window_s - 1e-9)))

    @property
    def window_cap(self) -> int:
        return max(self.min_windows, self.max_windows or self.min_windows + 10)


@dataclass
class WindowResult(Report):
    schema_version: int = 1
    level: str = ""
    index: int = 0
    start: float = 0.0  # unix time
    end: float = 0.0
    requests: int = 0  # completed (success + failed)
    successes: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    throughput_rps: float = 0.0
    latency: LatencySummary = field(default_factory=LatencySummary)
    bytes_per_s: float = 0.0
    tick_bytes_per_s: list[float] = field(default_factory=list)
    histogram: str = ""  # encoded HdrHistogram of this window
    generation: GenerationStats | None = None  # generate workloads only


@dataclass
class LevelResult(Report):
    schema_version: int = 1
    mode: str = "concurrency"  # concurrency | rate
    concurrency: int | None = None
    rate: float | None = None
    label: str = ""
    windows: list[WindowResult] = field(default_factory=list)
    stable: bool = False
    measured_s: float = 0.0
    requests_sent: int = 0  # measured phase
    successes: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    error_count: int = 0
    throughput_rps: float = 0.0
    latency: LatencySummary = field(default_factory=LatencySummary)
    warmup_sent: int = 0
    warmup_successes: int = 0
    total_sent: int = 0  # warm-up + measured: what the server should have counted over the level
    server: dict[str, Any] | None = None  # measured-phase ServerStats delta
    server_total: dict[str, Any] | None = None  # whole-level delta (warm-up included)
    server_breakdown_us: dict[str, float | None] | None = None
    aborted: str = ""
    histogram: str = ""
    send_delay: LatencySummary | None = None  # open loop: how late requests left the client vs their due time
    generation: GenerationStats | None = None  # generate workloads only


def level_label(cfg: LoadConfig, conc: int | None) -> str:
    return f"rate={cfg.rate:g}/s" if cfg.rate is not None else f"concurrency={conc}"


def classify_error(exc: BaseException, timed_out: bool = False) -> str:
    if timed_out:
        return "timeout"
    if isinstance(exc, ConnectionRefusedError):
        return "connection_refused"
    if isinstance(exc, (ConnectionResetError, BrokenPipeError, asyncio.IncompleteReadError,
                        ConnectionAbortedError)):
        return "connection_lost"
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return "timeout"
    if isinstance(exc, (ProtocolError, ValueError, asyncio.LimitOverrunError)):
        return "protocol"
    if isinstance(exc, OSError):
        import errno

        return f"os_{errno.errorcode.get(exc.errno or 0, 'error').lower()}"
    return type(exc).__name__


class _Meter:
    """Per-window and per-tick accumulators; touched only on the event-loop thread."""

    def __init__(self) -> None:
        self.measuring = False
        self.warm_sent = self.warm_ok = 0
        self.new_window()
        self.new_tick()

    def new_window(self) -> None:
        self.w_lat: list[float] = []
        self.w_err: Counter[str] = Counter()
        self.w_ok = 0
        self.w_sent = 0
        self.w_bytes = 0

    def new_tick(self) -> None:
        self.t_lat: list[float] = []
        self.t_err = 0
        self.t_bytes = 0

    def sent(self) -> None:
        if self.measuring:
            self.w_sent += 1
        else:
            self.warm_sent += 1

    def ok(self, latency: float, nbytes: int) -> None:
        if self.measuring:
            self.w_lat.append(latency)
            self.t_lat.append(latency)
            self.w_ok += 1
            self.w_bytes += nbytes
            self.t_bytes += nbytes
        else:
            self.warm_ok += 1

    def err(self, kind: str, nbytes: int = 0) -> None:
        if self.measuring:
            self.w_err[kind] += 1
            self.t_err += 1
            self.w_bytes += nbytes
            self.t_bytes += nbytes


def _stable(windows: list[WindowResult], n: int, pct: float) -> bool:
    """perf_analyzer's rule: the last n windows' throughput, p50 and p99 each within +-pct of their mean."""
    if len(windows) < n:
        return False
    last = windows[-n:]
    for key in ("throughput", "p50", "p99"):
        if key == "throughput":
            vals = [w.throughput_rps for w in last]
        else:
            vals = [getattr(w.latency, f"{key}_ms") for w in last]
        if any(v is None for v in vals):
            return False
        mean = sum(vals) / n
        if mean <= 0 or any(abs(v - mean) > mean * pct / 100.0 for v in vals):
            return False
    return True
