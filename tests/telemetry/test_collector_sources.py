"""Which source each series of a target comes from (default_collectors), against real processes on loopback:
a real edge agent (its own process_* series, no psutil) and a local server exporting Triton's metrics (host
memory and CPU from nv_cpu_*, the process from psutil by its pid); never the studio's own process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from studio.telemetry import samples as S
from studio.telemetry.bench import default_collectors
from studio.telemetry.collectors import (
    AgentMetricsCollector,
    CollectorPoller,
    NvmlCollector,
    ProcessCollector,
    TritonMetricsCollector,
    TritonStatsCollector,
    listening_pid,
)
from studio.telemetry.loadgen import LoadConfig
from tests.edge.helpers import PASSPHRASE, AgentProcess, dev_keys, free_port
from tests.telemetry.test_collectors import CPU_ONLY

pytestmark = pytest.mark.timeout(120)


def _poll(collectors: list) -> dict[str, S.Sample]:  # type: ignore[type-arg]
    out: list[S.Sample] = []
    CollectorPoller(collectors, out.extend).poll_once()
    time.sleep(0.3)
    CollectorPoller(collectors, out.extend).poll_once()
    return {s.series: s for s in out}  # the last of each


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AgentProcess]:
    monkeypatch.setenv("STUDIO_KEY_PASSPHRASE", PASSPHRASE)
    dev = dev_keys(tmp_path)
    a = AgentProcess(tmp_path / "agent-data", dev.trust, dev.token).start()
    yield a
    a.stop()


@pytest.fixture
def triton_like(tmp_path: Path) -> Iterator[tuple[str, int]]:
    """A local process that serves Triton's Prometheus text at /metrics (stdlib http.server)."""
    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "metrics").write_text(CPU_ONLY)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                             "--directory", str(tmp_path / "www")], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 20
        while listening_pid(port) is None and time.time() < deadline:
            time.sleep(0.1)
        assert listening_pid(port) == proc.pid
        yield f"http://127.0.0.1:{port}", proc.pid
    finally:
        proc.kill()
        proc.wait()


def test_agent_target_process_series_come_from_the_agent(agent: AgentProcess) -> None:
    import psutil

    assert agent.proc is not None
    for kind in (None, "agent"):  # found out from its /metrics, or told by Devices
        cs = default_collectors(LoadConfig(url=agent.url, model="m"), kind=kind)
        assert not any(isinstance(c, (ProcessCollector, TritonMetricsCollector)) for c in cs), cs
        assert [c.url for c in cs if isinstance(c, AgentMetricsCollector)] == [agent.url + "/metrics"]
        assert any(isinstance(c, NvmlCollector) for c in cs)  # a local server without GPU metrics of its own
        s = _poll(cs)
        src = f"agent-metrics {agent.url}/metrics"
        for series in (S.PROC_RSS, S.PROC_CPU, S.MEM_PCT, S.CPU_PCT):
            assert s[series].source == src and s[series].value is not None, s[series]
        # the agent's own process, not this one's
        agent_rss = psutil.Process(agent.proc.pid).memory_info().rss
        assert abs(s[S.PROC_RSS].value - agent_rss) < 0.5 * agent_rss
        assert not any(x.source.startswith("psutil") for x in s.values())


def test_local_triton_target_host_from_its_metrics_process_from_its_pid(triton_like: tuple[str, int]) -> None:
    url, pid = triton_like
    cs = default_collectors(LoadConfig(url=url, model="mlp"), metrics_url=url + "/metrics", kind="triton")
    # Triton's metrics carry the series Triton's statistics and NVML would repeat: one source per series
    assert not any(isinstance(c, (TritonStatsCollector, NvmlCollector, AgentMetricsCollector)) for c in cs)
    procs = [c for c in cs if isinstance(c, ProcessCollector)]
    assert [(c.pid, c.host) for c in procs] == [(pid, False)]
    s = _poll(cs)
    assert s[S.MEM_PCT].source == s[S.CPU_PCT].source == f"triton-metrics {url}/metrics"
    assert s[S.MEM_PCT].value == 25.0 and s[S.CPU_PCT].value == 50.0
    assert s[S.PROC_RSS].source == s[S.PROC_CPU].source == f"psutil pid {pid}" != f"psutil pid {os.getpid()}"
    assert s[S.PROC_RSS].value > 0
    # the sniffing path (no kind) decides the same from the nv_* families
    assert [type(c).__name__ for c in default_collectors(LoadConfig(url=url, model="mlp"), url + "/metrics")
            ] == ["TritonMetricsCollector", "ProcessCollector"]


def test_remote_triton_target_reads_only_the_server() -> None:
    cs = default_collectors(LoadConfig(url="http://10.0.0.9:8000", model="mlp"),
                            metrics_url="http://10.0.0.9:8002/metrics", auto=False, kind="triton")
    assert [type(c).__name__ for c in cs] == ["TritonMetricsCollector"]  # nv_cpu_*: nothing of this machine
