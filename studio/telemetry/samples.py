"""One measured value of one series at one time, naming where it came from.

``value is None`` means the source cannot provide the series (no GPU, no NVML, the agent exports no power):
the dashboards and reports show "not available" for it, never a zero.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

# Series names shared by the load generator, the collectors, the SLA model and the dashboards.
LAT_P50 = "latency.p50_ms"
LAT_P90 = "latency.p90_ms"
LAT_P95 = "latency.p95_ms"
LAT_P99 = "latency.p99_ms"
LAT_MAX = "latency.max_ms"
THROUGHPUT = "client.throughput_rps"
ERRORS = "client.errors_per_s"
NET_BYTES = "client.bytes_per_s"
CONCURRENCY = "client.concurrency"
MEM_PCT = "memory.used_pct"
MEM_USED = "memory.used_bytes"
MEM_TOTAL = "memory.total_bytes"
CPU_PCT = "cpu.util_pct"
PROC_RSS = "process.rss_bytes"
PROC_CPU = "process.cpu_pct"
GPU_MEM_USED = "gpu.memory_used_bytes"
GPU_MEM_TOTAL = "gpu.memory_total_bytes"
GPU_MEM_PCT = "gpu.memory_used_pct"
GPU_POWER = "gpu.power_w"
GPU_POWER_LIMIT = "gpu.power_limit_w"
GPU_UTIL = "gpu.util_pct"
BOARD_POWER = "board.power_w"
SERVER_RPS = "server.success_rps"
SERVER_FAIL_RPS = "server.failure_rps"
SERVER_QUEUE_US = "server.queue_us"
SERVER_COMPUTE_US = "server.compute_infer_us"
SERVER_PENDING = "server.pending_requests"
SLA_COMPLIANCE = "sla.compliance_pct"
# generate endpoints (genai-perf's measures): time to first token, inter-token latency, output token rate
TTFT_P50 = "generate.ttft_p50_ms"
TTFT_P95 = "generate.ttft_p95_ms"
ITL_P50 = "generate.inter_token_p50_ms"
ITL_P95 = "generate.inter_token_p95_ms"
OUTPUT_TPS = "generate.output_tokens_per_s"
# the edge agent's staged pipeline (raw inputs): mean service time per stage, and queue wait over all stages
STAGE_PRE_MS = "stage.preprocess_ms"
STAGE_INFER_MS = "stage.infer_ms"
STAGE_POST_MS = "stage.postprocess_ms"
STAGE_QUEUE_MS = "stage.queue_ms"
STAGES_MS = {"preprocess": STAGE_PRE_MS, "infer": STAGE_INFER_MS, "postprocess": STAGE_POST_MS}

UNITS = {LAT_P50: "ms", LAT_P90: "ms", LAT_P95: "ms", LAT_P99: "ms", LAT_MAX: "ms", THROUGHPUT: "req/s",
         ERRORS: "err/s", NET_BYTES: "B/s", CONCURRENCY: "", MEM_PCT: "%", MEM_USED: "B", MEM_TOTAL: "B",
         CPU_PCT: "%", PROC_RSS: "B", PROC_CPU: "%", GPU_MEM_USED: "B", GPU_MEM_TOTAL: "B", GPU_MEM_PCT: "%",
         GPU_POWER: "W", GPU_POWER_LIMIT: "W", GPU_UTIL: "%", BOARD_POWER: "W", SERVER_RPS: "req/s",
         SERVER_FAIL_RPS: "req/s", SERVER_QUEUE_US: "us", SERVER_COMPUTE_US: "us", SERVER_PENDING: "",
         SLA_COMPLIANCE: "%", TTFT_P50: "ms", TTFT_P95: "ms", ITL_P50: "ms", ITL_P95: "ms", OUTPUT_TPS: "tok/s",
         STAGE_PRE_MS: "ms", STAGE_INFER_MS: "ms", STAGE_POST_MS: "ms", STAGE_QUEUE_MS: "ms"}

NOT_AVAILABLE = "not available"


@dataclass(frozen=True)
class Sample:
    t: float  # unix time, seconds
    series: str
    value: float | None  # None: the source cannot provide it (shown as "not available")
    source: str  # e.g. "client", "triton-metrics http://127.0.0.1:8002/metrics", "psutil pid 1234", "nvml"
    target: str = ""  # which server/model this belongs to (dashboards put targets side by side)
    unit: str = ""
    note: str = ""  # why a value is not available

    @property
    def available(self) -> bool:
        return self.value is not None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def sample(t: float, series: str, value: float | None, source: str, target: str = "", note: str = "") -> Sample:
    return Sample(t=t, series=series, value=None if value is None else float(value), source=source,
                  target=target, unit=UNITS.get(series, ""), note=note)


def unavailable(t: float, series: str, source: str, reason: str, target: str = "") -> Sample:
    return sample(t, series, None, source, target, note=f"{NOT_AVAILABLE}: {reason}")


def format_value(s: Sample) -> str:
    """Text for a table cell: the value with its unit, or "not available" (never 0 for a missing source)."""
    if s.value is None:
        return NOT_AVAILABLE
    return f"{s.value:.4g} {s.unit}".strip()
