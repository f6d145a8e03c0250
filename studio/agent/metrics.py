"""Prometheus metrics of the agent: latency histogram, in-flight, errors, memory, CPU, temperature, power."""

from __future__ import annotations

import os
from typing import Any

import psutil
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from studio.agent.sensors import NOT_AVAILABLE, Sensors

LATENCY_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
                   2.5, 5.0, 10.0)


class _SystemCollector(Collector):
    """Read at scrape time, so an idle agent costs nothing."""

    def __init__(self, sensors: Sensors, core: Any) -> None:
        self.sensors = sensors
        self.core = core
        self.proc = psutil.Process(os.getpid())
        self.proc.cpu_percent(None)
        psutil.cpu_percent(None)

    def collect(self) -> Any:
        mi = self.proc.memory_info()
        g = GaugeMetricFamily("studio_agent_process_resident_memory_bytes", "Agent process RSS")
        g.add_metric([], mi.rss)
        yield g
        g = GaugeMetricFamily("studio_agent_process_cpu_percent", "Agent process CPU (100 = one core)")
        g.add_metric([], self.proc.cpu_percent(None))
        yield g
        vm = psutil.virtual_memory()
        g = GaugeMetricFamily("studio_agent_system_memory_bytes", "System memory", labels=["kind"])
        g.add_metric(["total"], vm.total)
        g.add_metric(["used"], vm.total - vm.available)
        g.add_metric(["available"], vm.available)
        yield g
        g = GaugeMetricFamily("studio_agent_system_cpu_percent", "System CPU utilisation (all cores)")
        g.add_metric([], psutil.cpu_percent(None))
        yield g
        temps, power = self.sensors.temperatures(), self.sensors.power()
        g = GaugeMetricFamily("studio_agent_temperature_celsius", "Board temperature", labels=["sensor", "source"])
        for r in temps:
            g.add_metric([r.sensor, r.source], r.value)
        yield g
        g = GaugeMetricFamily("studio_agent_power_watts", "Board power", labels=["rail", "source"])
        for r in power:
            g.add_metric([r.sensor, r.source], r.value)
        yield g
        g = GaugeMetricFamily("studio_agent_sensor_available",
                              "1 when the board exposes the quantity; source names where it is read from",
                              labels=["quantity", "source"])
        g.add_metric(["temperature", ", ".join(sorted({r.source for r in temps})) or NOT_AVAILABLE],
                     1 if temps else 0)
        g.add_metric(["power", ", ".join(sorted({r.source for r in power})) or NOT_AVAILABLE], 1 if power else 0)
        yield g
        g = GaugeMetricFamily("studio_agent_model_info", "Active version per served model",
                              labels=["model", "version"])
        for name, m in dict(self.core.served).items():
            g.add_metric([name, m.version], 1)
        yield g


class AgentMetrics:
    def __init__(self, core: Any, sensors: Sensors | None = None) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.latency = Histogram("studio_agent_request_duration_seconds", "Inference request latency (server side)",
                                 ["model"], buckets=LATENCY_BUCKETS, registry=r)
        self.inflight = Gauge("studio_agent_inflight_requests", "Inference requests in progress", registry=r)
        self.requests = Counter("studio_agent_requests", "Inference requests", ["model", "outcome"], registry=r)
        self.errors = Counter("studio_agent_request_errors", "Failed inference requests", ["model", "reason"],
                              registry=r)
        self.deploys = Counter("studio_agent_deployments", "Bundle uploads", ["outcome"], registry=r)
        # staged pipeline (raw inputs): queue wait and service time per stage
        self.stage = Histogram("studio_agent_stage_duration_seconds",
                               "Staged pipeline: time per stage, phase=queue (waiting) or service (working)",
                               ["model", "stage", "phase"], buckets=LATENCY_BUCKETS, registry=r)
        self.stage_queue = Gauge("studio_agent_stage_queue_depth", "Staged pipeline: requests waiting per stage",
                                 ["model", "stage"], registry=r)
        self._stage_children: dict[tuple[str, str], tuple[Any, Any]] = {}
        # generate / generate_stream (studio.agent.generate_routes): requests, output tokens, TTFT, inter-token
        self.generate_requests = Counter("studio_agent_generate_requests", "Generate requests",
                                         ["model", "outcome"], registry=r)
        self.generate_tokens = Counter("studio_agent_generate_output_tokens", "Tokens generated", ["model"],
                                       registry=r)
        self.generate_finished = Counter("studio_agent_generate_finished", "Generations ended, by finish reason "
                                         "(cancelled: the client went away)", ["model", "reason"], registry=r)
        self.generate_ttft = Histogram("studio_agent_generate_ttft_seconds", "Request in -> first text out",
                                       ["model"], buckets=LATENCY_BUCKETS, registry=r)
        self.generate_itl = Histogram("studio_agent_generate_inter_token_seconds",
                                      "Mean time between tokens, one observation per generation", ["model"],
                                      buckets=LATENCY_BUCKETS, registry=r)
        self.sensors = sensors or Sensors()
        r.register(_SystemCollector(self.sensors, core))

    def observe_stage(self, model: str, stage: str, queue_s: float, service_s: float) -> None:
        """A :class:`studio.agent.pipeline.StagedPipeline` observer (called from its worker threads)."""
        c = self._stage_children.get((model, stage))
        if c is None:
            c = (self.stage.labels(model, stage, "queue"), self.stage.labels(model, stage, "service"))
            self._stage_children[(model, stage)] = c
        c[0].observe(max(queue_s, 0.0))
        c[1].observe(max(service_s, 0.0))

    def observe_generation(self, model: str, reason: str, tokens: int, ttft_s: float, itl_s: float | None) -> None:
        self.generate_tokens.labels(model).inc(tokens)
        self.generate_finished.labels(model, reason).inc()
        self.generate_ttft.labels(model).observe(max(ttft_s, 0.0))
        if itl_s is not None:
            self.generate_itl.labels(model).observe(max(itl_s, 0.0))

    def render(self) -> bytes:
        from prometheus_client import generate_latest

        return generate_latest(self.registry)
