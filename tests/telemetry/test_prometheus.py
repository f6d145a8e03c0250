"""The one Prometheus text parser (studio.telemetry.prometheus, on prometheus_client.parser): the inputs both old
parsers read still parse the same, UTF-8 label values survive, and a bad line is an error naming that line."""

from __future__ import annotations

import math

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from studio.core.errors import InputError
from studio.telemetry.prometheus import Metric, by_name, metric_sum, parse_prometheus_text
from studio.triton.metrics import snapshot

# What Triton serves: counters without the _total suffix, gauges, a summary; HELP/TYPE lines between
TRITON = """# HELP nv_inference_request_success Number of successful inference requests, all batch sizes
# TYPE nv_inference_request_success counter
nv_inference_request_success{model="mlp",version="1"} 7
# HELP nv_inference_request_failure Number of failed inference requests, all batch sizes
# TYPE nv_inference_request_failure counter
nv_inference_request_failure{model="mlp",reason="REJECTED",version="1"} 1
nv_inference_request_failure{model="mlp",reason="BACKEND",version="1"} 2
# TYPE nv_inference_request_duration_us counter
nv_inference_request_duration_us{model="mlp",version="1"} 700
# TYPE nv_inference_queue_summary_us summary
nv_inference_queue_summary_us_count{model="mlp",version="1"} 7
nv_inference_queue_summary_us_sum{model="mlp",version="1"} 35
nv_inference_queue_summary_us{model="mlp",version="1",quantile="0.5"} 4
# HELP nv_cpu_utilization CPU utilization rate [0.0 - 1.0]
# TYPE nv_cpu_utilization gauge
nv_cpu_utilization 0.25
nv_cpu_memory_used_bytes 1048576
nv_cpu_memory_total_bytes 4194304
nv_gpu_power_usage{gpu_uuid="GPU-1"} 71.5
"""


def test_triton_text_keeps_the_exposed_names_and_values() -> None:
    m = parse_prometheus_text(TRITON)
    names = [x.name for x in m]
    assert names[:4] == ["nv_inference_request_success", "nv_inference_request_failure",
                         "nv_inference_request_failure", "nv_inference_request_duration_us"]
    assert "nv_inference_request_success_total" not in names  # prometheus_client's renaming undone
    assert metric_sum(m, "nv_inference_request_failure", model="mlp") == 3.0
    assert metric_sum(m, "nv_inference_queue_summary_us", quantile="0.5") == 4.0
    assert metric_sum(m, "nv_inference_queue_summary_us_count") == 7.0
    assert all(isinstance(x.value, float) for x in m)  # integers in the text come back as floats
    assert len(by_name(m)["nv_inference_request_failure"]) == 2
    snap = snapshot(TRITON)
    mm = snap.model("mlp")[0]
    assert (mm.success, mm.failure, mm.avg_request_us) == (7, 3, 100)
    assert snap.cpu_utilization == 0.25 and snap.describe()["GPU power"] == "71.5 W"
    assert snap.series == len(m)


def test_old_spellings_still_parse() -> None:
    """Escapes, +Inf/NaN, a timestamp, empty braces, a bare comment, blank lines, leading spaces: what the
    telemetry parser accepted; and counters already named *_total keep their name."""
    m = parse_prometheus_text('a{x="q\\"uote",y="n\\nl",z="back\\\\slash"} +Inf 1700000000\n\n'
                              '  b 3.5\n# comment\nc{} NaN\nd -Inf\n'
                              "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 12.5\n")
    assert m[0] == Metric("a", {"x": 'q"uote', "y": "n\nl", "z": "back\\slash"}, math.inf)
    assert (m[1].name, m[1].value) == ("b", 3.5)
    assert m[2].name == "c" and m[2].labels == {} and math.isnan(m[2].value)
    assert m[3].value == -math.inf
    assert (m[4].name, m[4].value) == ("process_cpu_seconds_total", 12.5)
    assert metric_sum(m, "missing") is None
    assert parse_prometheus_text("") == []


def test_utf8_label_values_are_kept() -> None:
    """The Triton parser decoded label values with unicode_escape, turning 'é' into 'Ã©'."""
    text = 'studio_agent_model_info{model="modèle-日本",version="ü 2"} 1\n'
    assert parse_prometheus_text(text)[0].labels == {"model": "modèle-日本", "version": "ü 2"}
    assert snapshot('nv_inference_request_success{model="modèle",version="1"} 4\n').models[0].model == "modèle"


def test_prometheus_client_output_round_trips() -> None:
    """What the agent serves is prometheus_client's own exposition: counters, gauges and histograms."""
    r = CollectorRegistry()
    c = Counter("studio_agent_requests", "Inference requests", ["model", "outcome"], registry=r)
    c.labels("clip", "ok").inc(5)
    Gauge("studio_agent_inflight_requests", "In progress", registry=r).set(2)
    h = Histogram("studio_agent_request_duration_seconds", "Latency", ["model"], buckets=(0.01, 0.1), registry=r)
    h.labels("clip").observe(0.05)
    m = parse_prometheus_text(generate_latest(r).decode())
    assert metric_sum(m, "studio_agent_requests_total", model="clip", outcome="ok") == 5.0
    assert metric_sum(m, "studio_agent_inflight_requests") == 2.0
    assert metric_sum(m, "studio_agent_request_duration_seconds_bucket", le="0.1") == 1.0
    assert metric_sum(m, "studio_agent_request_duration_seconds_count") == 1.0


@pytest.mark.parametrize(("text", "line", "why"), [
    ('ok 1\nbad{x="1" 2\n', 2, "bad{x=\"1\" 2"),  # unterminated label set (the Triton parser dropped it)
    ("ok 1\n# TYPE ok gauge\nok{a=1} 2\n", 3, "Invalid labels"),  # unquoted label value
    ("a 1\nb 2\nc\n", 3, "line 3: c"),  # a sample without a value
    ("x not-a-number\n", 1, "not-a-number"),
    ("# TYPE x\n", 1, "# TYPE x"),  # TYPE without a type
    ('x{a="1",a="2"} 1\n', 1, "Invalid labels"),  # a label given twice
])
def test_a_bad_line_is_an_error_naming_it(text: str, line: int, why: str) -> None:
    with pytest.raises(InputError) as err:
        parse_prometheus_text(text)
    e = err.value
    assert e.message.startswith(f"line {line} of the metrics is not in the Prometheus text format")
    assert e.offending is not None and e.offending.startswith(f"line {line}: ")
    assert why in e.message or why in e.offending
    assert e.hint and "Prometheus text format" in e.hint


def test_triton_snapshot_reports_a_bad_line_instead_of_dropping_it() -> None:
    with pytest.raises(InputError) as err:
        snapshot(TRITON + 'nv_gpu_utilization{gpu_uuid="GPU-1" 0.5\n')
    assert err.value.offending == 'line 20: nv_gpu_utilization{gpu_uuid="GPU-1" 0.5'
