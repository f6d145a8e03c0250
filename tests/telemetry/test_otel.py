"""OpenTelemetry: spans with stage children (SDK in-memory exporter), the load generator's client spans at a
real OTLP receiver (in-process and from `studio bench`), and nothing set up when no endpoint is configured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from studio.core.errors import InputError
from studio.telemetry.loadgen import LoadConfig, LoadGenerator, inject_header
from studio.telemetry.otel import Otel, resolve_endpoint, setup_otel
from tests.telemetry.otlp_receiver import OtlpReceiver


def test_request_span_has_stage_children_and_continues_remote_trace() -> None:
    exp, reader = InMemorySpanExporter(), InMemoryMetricReader()
    otel = Otel("unit", span_exporter=exp, metric_reader=reader)
    t0 = time.perf_counter()
    parent = otel.extract(b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
    otel.record_span("infer m", t0, t0 + 0.003, parent=parent, kind="server", attributes={"model": "m"},
                     stages={"preprocess": (t0, t0 + 0.001), "infer": (t0 + 0.001, t0 + 0.002),
                             "postprocess": (t0 + 0.002, t0 + 0.003)}, error=None)
    otel.histogram("studio.test.duration").record(0.003, {"model": "m"})
    spans = {s.name: s for s in exp.get_finished_spans()}
    root = spans["infer m"]
    assert format(root.context.trace_id, "032x") == "0af7651916cd43dd8448eb211c80319c"
    assert format(root.parent.span_id, "016x") == "b7ad6b7169203331"
    for stage in ("preprocess", "infer", "postprocess"):
        assert spans[stage].parent.span_id == root.context.span_id
        assert root.start_time <= spans[stage].start_time <= spans[stage].end_time <= root.end_time
    assert spans["infer"].end_time - spans["infer"].start_time == pytest.approx(1_000_000, abs=2_000)
    live = otel.start_span("child", t0, parent=parent)
    assert otel.traceparent(live).startswith("00-0af7651916cd43dd8448eb211c80319c-")
    otel.end_span(live, t0 + 0.001)
    names = [m.name for rm in reader.get_metrics_data().resource_metrics for sm in rm.scope_metrics
             for m in sm.metrics]
    assert "studio.test.duration" in names
    otel.shutdown()


def test_error_status_and_endpoint_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    exp = InMemorySpanExporter()
    otel = Otel("unit", span_exporter=exp)
    t0 = time.perf_counter()
    otel.record_span("infer m", t0, t0 + 0.001, error="http_500")
    assert exp.get_finished_spans()[0].status.status_code.name == "ERROR"
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    assert resolve_endpoint(None) is None and setup_otel("x", None) is None
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    assert resolve_endpoint(None) == "http://127.0.0.1:4318"
    assert resolve_endpoint("http://other:4318") == "http://other:4318"
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert resolve_endpoint("http://other:4318") is None
    with pytest.raises(InputError):
        Otel("x", "localhost:4318")
    assert inject_header(b"POST /x HTTP/1.1\r\nHost: h\r\n\r\nbody", b"traceparent", b"00-a") == (
        b"POST /x HTTP/1.1\r\ntraceparent: 00-a\r\nHost: h\r\n\r\nbody")


def _cfg(url: str, **kw: object) -> LoadConfig:
    base = dict(url=url, model="mlp", duration_s=0.5, warmup_s=0.0, window_s=0.5, tick_s=0.25, stability=False)
    base.update(kw)
    return LoadConfig(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", [{"concurrency": [2]}, {"rate": 50.0}])
def test_loadgen_spans_reach_otlp_receiver(kserve_proc, mode) -> None:  # type: ignore[no-untyped-def]
    with OtlpReceiver() as rx:
        otel = setup_otel("studio-bench", rx.url)
        assert otel is not None
        levels = LoadGenerator(_cfg(kserve_proc.url, **mode), otel=otel).run()
        otel.shutdown()
        ok = sum(lv.successes for lv in levels)
        assert ok > 0
        assert rx.wait_for(lambda r: len([s for s in r.spans if s.name == "infer mlp"]) >= ok)
        root = next(s for s in rx.spans if s.name == "infer mlp")
        assert root.kind == 3 and root.service == "studio-bench"  # SPAN_KIND_CLIENT
        kids = {s.name for s in rx.spans if s.parent_span_id == root.span_id}
        assert kids == {"send", "receive"}
        assert rx.wait_for(lambda r: "studio.loadgen.request.duration" in r.metric_names)


_SCRIPT = """
import json, sys, threading
from studio.cli.main import main
rc = main(["bench", "--url", sys.argv[1], "--model", "mlp", "--duration", "0.5", "--warmup", "0",
           "--window", "0.5", "--no-stability", "--no-collectors", "--quiet", "--json"])
print(json.dumps({"rc": rc, "sdk": sorted(m for m in sys.modules if m.startswith("opentelemetry.sdk")),
                  "threads": sorted(t.name for t in threading.enumerate())}), file=sys.stderr)
"""


def _bench(url: str, env: dict[str, str]) -> dict:
    p = subprocess.run([sys.executable, "-c", _SCRIPT, url], capture_output=True, text=True, env=env, timeout=120)
    return json.loads(p.stderr.strip().splitlines()[-1])


def test_studio_bench_exports_only_with_endpoint(kserve_proc) -> None:  # type: ignore[no-untyped-def]
    base = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    off = _bench(kserve_proc.url, base)
    assert off["rc"] == 0
    assert off["sdk"] == [], "no endpoint: the OpenTelemetry SDK must not even be imported"
    assert not any("otel" in t.lower() or "export" in t.lower() for t in off["threads"]), off["threads"]
    with OtlpReceiver() as rx:
        on = _bench(kserve_proc.url, {**base, "OTEL_EXPORTER_OTLP_ENDPOINT": rx.url})
        assert on["rc"] == 0 and on["sdk"]
        assert rx.wait_for(lambda r: any(s.name == "infer mlp" and s.service == "studio-bench" for s in r.spans))
