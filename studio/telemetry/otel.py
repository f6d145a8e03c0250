"""OpenTelemetry export for the edge agent and the load generator: traces and metrics over OTLP/HTTP.

Only when an endpoint is configured (``--otlp-endpoint URL`` or the standard ``OTEL_EXPORTER_OTLP_ENDPOINT``)
is the SDK imported and set up (a batch span processor thread, a periodic metric reader thread); without
one, :func:`setup_otel` returns None and callers keep a plain ``if otel is not None`` on their hot path.

Spans are written after the fact from ``time.perf_counter`` stamps the hot path takes anyway (one request
span with a child span per stage), so tracing adds no work inside the stages themselves. The SDK's
providers are private to each :class:`Otel` (never the process-global ones), so two in one process
(tests, an agent embedded in the studio) do not interfere.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"
TRACES_PATH, METRICS_PATH = "/v1/traces", "/v1/metrics"


def resolve_endpoint(flag: str | None = None) -> str | None:
    """The OTLP/HTTP base URL: the flag, else ``OTEL_EXPORTER_OTLP_ENDPOINT``; None when neither is set
    (or ``OTEL_SDK_DISABLED=true``)."""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    url = (flag or os.environ.get(ENDPOINT_ENV, "")).strip()
    return url or None


def check_endpoint(url: str) -> str:
    from urllib.parse import urlsplit

    from studio.core.errors import InputError

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(f"OTLP endpoint {url!r} is not an http(s) URL", offending=url,
                         hint="pass the collector's OTLP/HTTP address, e.g. http://localhost:4318")
    return url.rstrip("/")


class Otel:
    """Tracer + meter of one component. ``span_exporter`` / ``metric_reader`` replace the OTLP ones (tests:
    the SDK's InMemorySpanExporter / InMemoryMetricReader)."""

    def __init__(self, service_name: str, endpoint: str | None = None, *, span_exporter: Any = None,
                 metric_reader: Any = None, export_interval_ms: int = 5000,
                 attributes: Mapping[str, Any] | None = None) -> None:
        from opentelemetry import trace
        from opentelemetry.propagators.textmap import DefaultGetter  # noqa: F401 - fails early when missing
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        from studio import __version__

        resource = Resource.create({"service.name": service_name, "service.version": __version__,
                                    **dict(attributes or {})})
        self.endpoint = check_endpoint(endpoint) if endpoint else None
        if span_exporter is None and self.endpoint:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            span_exporter = OTLPSpanExporter(endpoint=self.endpoint + TRACES_PATH)
        if metric_reader is None and self.endpoint:
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

            metric_reader = PeriodicExportingMetricReader(OTLPMetricExporter(endpoint=self.endpoint + METRICS_PATH),
                                                          export_interval_millis=export_interval_ms)
        self.tracer_provider = TracerProvider(resource=resource)
        if span_exporter is not None:
            proc = (BatchSpanProcessor(span_exporter, schedule_delay_millis=500) if self.endpoint
                    else SimpleSpanProcessor(span_exporter))
            self.tracer_provider.add_span_processor(proc)
        self.meter_provider = MeterProvider(resource=resource,
                                            metric_readers=[metric_reader] if metric_reader is not None else [])
        self.tracer = self.tracer_provider.get_tracer("studio", __version__)
        self.meter = self.meter_provider.get_meter("studio", __version__)
        self._trace = trace
        self._propagator = TraceContextTextMapPropagator()
        self._offset_ns = time.time_ns() - time.perf_counter_ns()
        self._instruments: dict[str, Any] = {}

    # -- time and context -----------------------------------------------------------------------------
    def ns(self, perf_s: float) -> int:
        """A ``time.perf_counter()`` stamp as the epoch nanoseconds spans use."""
        return int(perf_s * 1e9) + self._offset_ns

    def extract(self, traceparent: str | bytes | None) -> Any:
        """The remote parent context of a request's ``traceparent`` header (None: a new trace)."""
        if not traceparent:
            return None
        tp = traceparent.decode("latin-1") if isinstance(traceparent, bytes) else traceparent
        return self._propagator.extract({"traceparent": tp})

    def traceparent(self, span: Any) -> str:
        carrier: dict[str, str] = {}
        self._propagator.inject(carrier, context=self._trace.set_span_in_context(span))
        return carrier.get("traceparent", "")

    # -- instruments ----------------------------------------------------------------------------------
    def histogram(self, name: str, unit: str = "s", description: str = "") -> Any:
        h = self._instruments.get(name)
        if h is None:
            h = self._instruments[name] = self.meter.create_histogram(name, unit=unit, description=description)
        return h

    def counter(self, name: str, unit: str = "1", description: str = "") -> Any:
        c = self._instruments.get(name)
        if c is None:
            c = self._instruments[name] = self.meter.create_counter(name, unit=unit, description=description)
        return c

    # -- spans ----------------------------------------------------------------------------------------
    def start_span(self, name: str, t0: float, *, parent: Any = None, kind: str = "internal",
                   attributes: Mapping[str, Any] | None = None) -> Any:
        from opentelemetry.trace import SpanKind

        return self.tracer.start_span(name, context=parent, kind=getattr(SpanKind, kind.upper()),
                                      attributes=dict(attributes or {}), start_time=self.ns(t0))

    def end_span(self, span: Any, t1: float, stages: Mapping[str, tuple[float, float]] | None = None,
                 error: str | None = None) -> None:
        """Children per stage (name -> (start, end) perf_counter stamps), then the span itself."""
        if stages:
            ctx = self._trace.set_span_in_context(span)
            for stage, (s0, s1) in stages.items():
                if s1 >= s0 > 0:
                    self.tracer.start_span(stage, context=ctx, start_time=self.ns(s0)).end(end_time=self.ns(s1))
        if error:
            from opentelemetry.trace import Status, StatusCode

            span.set_status(Status(StatusCode.ERROR, error))
        span.end(end_time=self.ns(t1))

    def record_span(self, name: str, t0: float, t1: float, *, parent: Any = None, kind: str = "internal",
                    attributes: Mapping[str, Any] | None = None,
                    stages: Mapping[str, tuple[float, float]] | None = None, error: str | None = None) -> None:
        self.end_span(self.start_span(name, t0, parent=parent, kind=kind, attributes=attributes), t1, stages, error)

    def flush(self, timeout_ms: int = 5000) -> None:
        self.tracer_provider.force_flush(timeout_ms)
        self.meter_provider.force_flush(timeout_ms)

    def shutdown(self) -> None:
        """Flush and stop the exporter threads."""
        try:
            self.flush()
        finally:
            self.tracer_provider.shutdown()
            self.meter_provider.shutdown()


def setup_otel(service_name: str, endpoint: str | None = None, **kw: Any) -> Otel | None:
    """An :class:`Otel` exporting to ``endpoint`` (or ``OTEL_EXPORTER_OTLP_ENDPOINT``); None when neither is
    set: then nothing of the SDK is imported or started."""
    url = resolve_endpoint(endpoint)
    if url is None:
        return None
    try:
        return Otel(service_name, url, **kw)
    except ImportError as exc:
        from studio.core.errors import DependencyMissing

        raise DependencyMissing(f"OpenTelemetry export needs the SDK and the OTLP exporter: {exc}",
                                offending=url, hint="pip install 'deployment-studio[agent]' (or [telemetry])"
                                ) from None
