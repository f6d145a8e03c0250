"""Triton's Prometheus metrics: a snapshot of what an operator watches (parsed by studio.telemetry.prometheus)."""

from __future__ import annotations

from dataclasses import dataclass, field

from studio.core.reports import Report
from studio.telemetry.prometheus import by_name, parse_prometheus_text

NOT_AVAILABLE = "not available"


@dataclass
class GpuMetrics:
    uuid: str
    memory_used_bytes: float | None = None
    memory_total_bytes: float | None = None
    power_watts: float | None = None
    utilization: float | None = None  # 0..1


@dataclass
class ModelMetrics:
    model: str
    version: str
    success: float = 0.0
    failure: float = 0.0
    inference_count: float = 0.0
    exec_count: float = 0.0
    request_duration_us: float = 0.0
    queue_duration_us: float = 0.0
    compute_input_us: float = 0.0
    compute_infer_us: float = 0.0
    compute_output_us: float = 0.0
    pending: float = 0.0

    @property
    def avg_request_us(self) -> float | None:
        return self.request_duration_us / self.success if self.success else None


@dataclass
class MetricsSnapshot(Report):
    schema_version: int = 1
    cpu_utilization: float | None = None  # 0..1
    cpu_memory_used_bytes: float | None = None
    cpu_memory_total_bytes: float | None = None
    gpus: list[GpuMetrics] = field(default_factory=list)
    models: list[ModelMetrics] = field(default_factory=list)
    series: int = 0

    def describe(self) -> dict[str, str]:
        """Human text per headline figure, "not available" where the server does not report it."""

        def fmt(v: float | None, unit: str = "", scale: float = 1.0) -> str:
            return NOT_AVAILABLE if v is None else f"{v / scale:.1f}{unit}"

        gpu = self.gpus[0] if self.gpus else None
        return {
            "CPU utilisation": fmt(None if self.cpu_utilization is None else self.cpu_utilization * 100, " %"),
            "CPU memory used": fmt(self.cpu_memory_used_bytes, " MiB", 2**20),
            "CPU memory total": fmt(self.cpu_memory_total_bytes, " MiB", 2**20),
            "GPU memory used": fmt(gpu.memory_used_bytes if gpu else None, " MiB", 2**20),
            "GPU power": fmt(gpu.power_watts if gpu else None, " W"),
            "GPU utilisation": fmt(None if gpu is None or gpu.utilization is None else gpu.utilization * 100, " %"),
        }

    def model(self, name: str) -> list[ModelMetrics]:
        return [m for m in self.models if m.model == name]


_MODEL_FIELDS = {
    "nv_inference_request_success": "success",
    "nv_inference_request_failure": "failure",
    "nv_inference_count": "inference_count",
    "nv_inference_exec_count": "exec_count",
    "nv_inference_request_duration_us": "request_duration_us",
    "nv_inference_queue_duration_us": "queue_duration_us",
    "nv_inference_compute_input_duration_us": "compute_input_us",
    "nv_inference_compute_infer_duration_us": "compute_infer_us",
    "nv_inference_compute_output_duration_us": "compute_output_us",
    "nv_inference_pending_request_count": "pending",
}


def snapshot(text: str) -> MetricsSnapshot:
    """The headline figures of a /metrics text; InputError naming the line when it is not the text format."""
    series = by_name(parse_prometheus_text(text))

    def one(name: str) -> float | None:
        s = series.get(name)
        return s[0].value if s else None

    snap = MetricsSnapshot(cpu_utilization=one("nv_cpu_utilization"),
                           cpu_memory_used_bytes=one("nv_cpu_memory_used_bytes"),
                           cpu_memory_total_bytes=one("nv_cpu_memory_total_bytes"),
                           series=sum(len(v) for v in series.values()))
    gpus: dict[str, GpuMetrics] = {}
    for metric, attr in (("nv_gpu_memory_used_bytes", "memory_used_bytes"),
                         ("nv_gpu_memory_total_bytes", "memory_total_bytes"),
                         ("nv_gpu_power_usage", "power_watts"), ("nv_gpu_utilization", "utilization")):
        for s in series.get(metric, []):
            g = gpus.setdefault(s.labels.get("gpu_uuid", "gpu"), GpuMetrics(s.labels.get("gpu_uuid", "gpu")))
            setattr(g, attr, s.value)
    snap.gpus = list(gpus.values())
    models: dict[tuple[str, str], ModelMetrics] = {}
    for metric, attr in _MODEL_FIELDS.items():
        for s in series.get(metric, []):
            key = (s.labels.get("model", ""), s.labels.get("version", ""))
            mm = models.setdefault(key, ModelMetrics(*key))
            setattr(mm, attr, getattr(mm, attr) + s.value)  # failure carries one series per reason
    snap.models = sorted(models.values(), key=lambda m: (m.model, m.version))
    return snap
