"""Prometheus parsing and collectors: each series names its source; missing ones are "not available"."""

from __future__ import annotations

import pytest

from studio.core.errors import InputError
from studio.telemetry import samples as S
from studio.telemetry.collectors import (
    AgentMetricsCollector,
    CollectorPoller,
    NvmlCollector,
    ProcessCollector,
    TritonMetricsCollector,
)
from studio.telemetry.prometheus import metric_sum, parse_prometheus_text

CPU_ONLY = """# HELP nv_inference_request_success Number of successful inference requests
# TYPE nv_inference_request_success counter
nv_inference_request_success{model="mlp",version="1"} 100
nv_inference_request_failure{model="mlp",reason="BACKEND",version="1"} 2
nv_inference_queue_duration_us{model="mlp",version="1"} 5000
nv_inference_compute_infer_duration_us{model="mlp",version="1"} 20000
nv_cpu_utilization 0.5
nv_cpu_memory_total_bytes 1000
nv_cpu_memory_used_bytes 250
"""
GPU = CPU_ONLY + """nv_gpu_utilization{gpu_uuid="GPU-1"} 0.8
nv_gpu_memory_total_bytes{gpu_uuid="GPU-1"} 4000
nv_gpu_memory_used_bytes{gpu_uuid="GPU-1"} 1000
nv_gpu_power_usage{gpu_uuid="GPU-1"} 70.5
"""


def by_series(samples: list[S.Sample]) -> dict[str, S.Sample]:
    return {s.series: s for s in samples}


def test_parser_labels_escapes_and_special_values() -> None:
    m = parse_prometheus_text('a{x="q\\"uote",y="n\\nl"} +Inf 1700000000\nb 3.5\n# comment\nc{} NaN\n')
    assert m[0].labels == {"x": 'q"uote', "y": "n\nl"} and m[0].value == float("inf")
    assert m[1].value == 3.5 and m[2].name == "c"
    assert metric_sum(m, "missing") is None
    with pytest.raises(InputError):
        parse_prometheus_text('bad{x="1" 2')


def test_triton_cpu_only_marks_gpu_not_available() -> None:
    c = TritonMetricsCollector("http://h:8002/metrics", "mlp", "mlp@h")
    s = by_series(c.parse(parse_prometheus_text(CPU_ONLY), 1.0))
    assert s[S.CPU_PCT].value == 50.0 and s[S.MEM_PCT].value == 25.0
    assert s[S.CPU_PCT].source == "triton-metrics http://h:8002/metrics" and s[S.CPU_PCT].target == "mlp@h"
    for name in (S.GPU_POWER, S.GPU_MEM_PCT, S.GPU_UTIL):
        assert s[name].value is None and "not available" in s[name].note
        assert S.format_value(s[name]) == "not available"
    # counters become rates and per-request means on the next poll
    nxt = CPU_ONLY.replace("} 100", "} 200").replace("} 5000", "} 6000").replace("} 20000", "} 30000")
    s2 = by_series(c.parse(parse_prometheus_text(nxt), 3.0))
    assert s2[S.SERVER_RPS].value == pytest.approx(50.0)
    assert s2[S.SERVER_QUEUE_US].value == pytest.approx(10.0)
    assert s2[S.SERVER_COMPUTE_US].value == pytest.approx(100.0)


def test_triton_gpu_metrics() -> None:
    s = by_series(TritonMetricsCollector("http://h:8002", "mlp").parse(parse_prometheus_text(GPU), 1.0))
    assert s[S.GPU_MEM_PCT].value == 25.0 and s[S.GPU_POWER].value == 70.5 and s[S.GPU_UTIL].value == 80.0


def test_agent_metrics_power_present_or_not() -> None:
    c = AgentMetricsCollector("http://board:8080")
    with_power = ('studio_agent_power_watts{rail="npu",source="hwmon"} 3.0\n'
                  'studio_agent_power_watts{rail="cpu",source="hwmon"} 1.5\n'
                  'studio_agent_system_memory_bytes{kind="total"} 4000\n'
                  'studio_agent_system_memory_bytes{kind="used"} 1000\n'
                  'studio_agent_system_memory_bytes{kind="available"} 3000\n'
                  "studio_agent_process_resident_memory_bytes 1e6\n")
    s = by_series(c.parse(parse_prometheus_text(with_power), 1.0))
    assert s[S.BOARD_POWER].value == 4.5 and s[S.BOARD_POWER].source == "agent-metrics http://board:8080/metrics"
    assert s[S.MEM_PCT].value == 25.0 and s[S.PROC_RSS].value == 1e6
    s2 = by_series(c.parse(parse_prometheus_text("studio_agent_process_resident_memory_bytes 1e6\n"), 1.0))
    assert s2[S.BOARD_POWER].value is None and "not available" in s2[S.BOARD_POWER].note


def test_unreachable_source_is_not_available() -> None:
    s = by_series(TritonMetricsCollector("http://127.0.0.1:9/metrics").collect())
    assert s[S.GPU_POWER].value is None and "unreachable" in s[S.GPU_POWER].note


def test_nvml_absent_or_present_never_zero_when_absent() -> None:
    import importlib.util

    c = NvmlCollector()
    got = c.collect()
    if not c.available:
        assert all(s.value is None and s.note.startswith("not available") for s in got)
        if importlib.util.find_spec("pynvml") is None:
            assert c.reason == "nvidia-ml-py not installed (pip install 'deployment-studio[gpu]')"
        else:  # nvidia-ml-py (make test installs it) on a machine without a GPU: NVML's own error, named
            assert c.reason.startswith("no NVIDIA GPU"), c.reason
            assert all(s.note == f"not available: {c.reason}" for s in got)
    else:  # a machine with a GPU and nvidia-ml-py
        assert by_series(got)[S.GPU_MEM_TOTAL].value > 0


def test_nvml_without_the_library_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pynvml", None)  # the import fails as it does without nvidia-ml-py
    c = NvmlCollector()
    assert not c.available and c.reason == "nvidia-ml-py not installed (pip install 'deployment-studio[gpu]')"
    assert by_series(c.collect())[S.GPU_POWER].note.endswith("pip install 'deployment-studio[gpu]')")


def test_agent_process_cpu_from_its_own_metrics() -> None:
    c = AgentMetricsCollector("http://board:8080")
    s = by_series(c.parse(parse_prometheus_text("studio_agent_process_cpu_percent 42.5\n"
                                                "studio_agent_process_resident_memory_bytes 2e6\n"), 1.0))
    assert s[S.PROC_CPU].value == 42.5 and s[S.PROC_RSS].value == 2e6
    assert s[S.PROC_CPU].source == "agent-metrics http://board:8080/metrics"
    # prometheus_client's own process collector: CPU from the counter's rate (100 = one core)
    c = AgentMetricsCollector("http://board:8080")
    first = by_series(c.parse(parse_prometheus_text("process_cpu_seconds_total 10\n"
                                                    "process_resident_memory_bytes 3e6\n"), 1.0))
    assert S.PROC_CPU not in first and first[S.PROC_RSS].value == 3e6  # the counter's baseline
    second = by_series(c.parse(parse_prometheus_text("process_cpu_seconds_total 11\n"), 3.0))
    assert second[S.PROC_CPU].value == pytest.approx(50.0)


def test_studio_pid_is_never_watched() -> None:
    import os

    c = ProcessCollector(pid=os.getpid())
    assert c.pid is None
    s = by_series(c.collect())
    assert s[S.PROC_RSS].value is None and "studio itself" in s[S.PROC_RSS].note


def test_process_collector_and_poller() -> None:
    import os
    import socket
    import subprocess
    import sys
    import time

    from studio.telemetry.bench import LoadConfig, default_collectors
    from studio.telemetry.collectors import listening_pid

    # without a pid: the host's memory only, and never this process's RSS passed off as the server's
    host = by_series(ProcessCollector().collect())
    assert host[S.PROC_RSS].value is None and "no server process" in host[S.PROC_RSS].note
    assert 0 < host[S.MEM_PCT].value <= 100
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 20
        while listening_pid(port) is None and time.time() < deadline:
            time.sleep(0.1)
        assert listening_pid(port) == server.pid != os.getpid()
        # a local URL: the collector watches the process listening on its port
        procs = [c for c in default_collectors(LoadConfig(url=f"http://127.0.0.1:{port}", model="m"))
                 if isinstance(c, ProcessCollector)]
        assert [c.pid for c in procs] == [server.pid]
        out: list[S.Sample] = []
        poller = CollectorPoller(procs, out.extend, interval_s=0.05)
        poller.poll_once()
        s = by_series(out)
        assert s[S.PROC_RSS].value > 0 and s[S.PROC_RSS].source == f"psutil pid {server.pid}"
        assert 0 < s[S.MEM_PCT].value <= 100
    finally:
        server.kill()
        server.wait()
    gone = by_series(ProcessCollector(pid=2**22 + 12345).collect())
    assert gone[S.PROC_RSS].value is None
