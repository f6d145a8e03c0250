"""`studio bench --locust`: one Locust master and 2 worker processes on loopback against a real agent process.

The merged counts must equal the agent's own statistics (/v2/models/tiny/stats); the merged report carries the
same SLA verdicts and recording. Whether Locust's percentiles agree with the single-process load generator's at
one rate is a timing comparison: `bench/bench_locust.py --percentiles` (BENCHMARKS.md), not an assertion here.
Workers started the way a lab host starts them (only the master's address) get the workload from the master."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from studio.telemetry.bench import SlaSpec, run_bench
from studio.telemetry.kserve import Endpoint, build_request, fetch_stats
from studio.telemetry.load_types import LoadConfig
from studio.telemetry.locust_run import LocustGenerator, LocustOptions
from studio.telemetry.recording import Recording
from tests.edge.helpers import PASSPHRASE, AgentProcess, deploy_tiny, dev_keys

RATE = 200.0


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AgentProcess]:
    root = tmp_path_factory.mktemp("locust-agent")
    mp = pytest.MonkeyPatch()
    mp.setenv("STUDIO_KEY_PASSPHRASE", PASSPHRASE)
    dev = dev_keys(root)
    a = AgentProcess(root / "agent-data", dev.trust, dev.token).start()
    deploy_tiny(a, dev, root)
    yield a
    a.stop()
    mp.undo()


def _cfg(url: str, **kw: object) -> LoadConfig:
    base = dict(url=url, model="tiny", rate=RATE, duration_s=4.0, warmup_s=1.0, window_s=2.0, stability=False)
    base.update(kw)
    return LoadConfig(**base)  # type: ignore[arg-type]


def _locust(workers: int = 2):  # type: ignore[no-untyped-def]
    def make(*a, **kw):  # type: ignore[no-untyped-def]
        return LocustGenerator(*a, options=LocustOptions(workers=workers), **kw)
    return make


def test_merged_counts_equal_the_agents_own(agent: AgentProcess, tmp_path: Path) -> None:
    ep = Endpoint.parse(agent.url)
    before = fetch_stats(ep, "tiny")
    rec = tmp_path / "locust.sqlite"
    rep = run_bench(_cfg(agent.url), sla=SlaSpec(tier="L3"), record=rec, generator=_locust(2))
    after = fetch_stats(ep, "tiny")
    assert before is not None and after is not None
    (lv,) = rep.levels
    # every request the workers sent (warm-up included) is one the agent counted, and none failed
    assert lv.error_count == 0, lv.errors
    assert lv.warmup_successes + lv.successes == lv.total_sent
    assert after.success_count - before.success_count == lv.total_sent
    assert after.fail_count == before.fail_count
    assert lv.server_total is not None and lv.server_total["success_count"] == lv.total_sent
    # the two workers shared the rate: about RATE * (warm-up + measured) requests in all
    assert abs(lv.total_sent - RATE * 5.0) < RATE * 0.15
    assert len(lv.windows) == 2 and sum(w.successes for w in lv.windows) == lv.successes
    # the report's SLA verdicts and the recording come from the same code as the load generator's
    assert rep.sla is not None and rep.sla.judged == 2 and len(rep.verdicts) == 2
    recording = Recording(rec)
    assert len(recording.windows()) == 2


def test_merged_rate_is_the_count_over_the_span_it_was_counted_over(agent: AgentProcess) -> None:
    """requests/s = requests counted / the seconds they were counted over, as the load generator defines it.
    Each worker counts the requests due from measure_at until its stop (rate / 2 each, one due time of rounding),
    so the count can exceed rate x measured seconds by at most one request per worker. The old figure divided by
    the window's nominal seconds while the count ran on to the stop (20-50 ms later here): 1-2.7 % high at 200
    req/s over 2 s, 8-20 requests over the bound at this rate and length."""
    rate, n = 400.0, 2
    ep = Endpoint.parse(agent.url)
    before = fetch_stats(ep, "tiny")
    rep = run_bench(_cfg(agent.url, rate=rate, duration_s=1.0, warmup_s=0.5, window_s=1.0), generator=_locust(n))
    after = fetch_stats(ep, "tiny")
    assert before is not None and after is not None
    (lv,) = rep.levels
    assert lv.error_count == 0, lv.errors
    assert after.success_count - before.success_count == lv.total_sent
    assert lv.throughput_rps == pytest.approx(lv.successes / lv.measured_s)
    assert lv.measured_s >= 1.0  # the stop comes after the one window closes
    assert lv.successes <= rate * lv.measured_s + n, (lv.successes, lv.measured_s)
    # below the offered rate only by the requests in flight at the stop (the load generator's drain)
    assert lv.throughput_rps > 0.95 * rate, (lv.successes, lv.measured_s)
    (w,) = lv.windows  # the window's own span, on the workers' clocks: at least the nominal second
    assert w.end - w.start >= 1.0 and w.throughput_rps * (w.end - w.start) <= w.successes + 1e-6


def test_cli_bench_locust_and_bad_worker_count(agent: AgentProcess, tmp_path: Path) -> None:
    out = tmp_path / "rep.json"
    proc = subprocess.run([sys.executable, "-m", "studio.cli.main", "bench", "--url", agent.url, "--model", "tiny",
                           "--concurrency", "2", "--duration", "2", "--warmup", "0.5", "--no-stability",
                           "--no-collectors", "--quiet", "--locust", "--locust-workers", "2", "--output", str(out)],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    (lv,) = json.loads(out.read_text())["levels"]
    assert lv["concurrency"] == 2 and lv["successes"] > 0 and lv["error_count"] == 0
    proc = subprocess.run([sys.executable, "-m", "studio.cli.main", "bench", "--url", agent.url, "--model", "tiny",
                           "--locust", "--locust-workers", "0"], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "--locust-workers must be >= 1" in proc.stderr


def test_workers_started_like_lab_hosts_get_the_workload_from_the_master(agent: AgentProcess,
                                                                         tmp_path: Path) -> None:
    """Two workers started the way a lab host starts them, in a directory of their own with nothing but the
    master's address (no run file): one with the studio's module, one with the ``locust`` command."""
    import studio.telemetry.locustfile as locustfile
    from studio.core.ports import free_port

    port = free_port()
    cmds = [[sys.executable, "-m", "studio.telemetry.locustfile", "--master-host", "127.0.0.1",
             "--master-port", str(port)],
            [sys.executable, "-m", "locust", "-f", locustfile.__file__, "--worker", "--master-host", "127.0.0.1",
             "--master-port", str(port)]]
    logs = [open(tmp_path / f"worker{i}.log", "w") for i in range(2)]
    workers = [subprocess.Popen(c, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
               for c, log in zip(cmds, logs, strict=True)]
    try:
        ep = Endpoint.parse(agent.url)
        before = fetch_stats(ep, "tiny")
        opts = LocustOptions(workers=0, hosts=["127.0.0.1", "127.0.0.1"], port=port)
        rep = run_bench(_cfg(agent.url), generator=lambda *a, **kw: LocustGenerator(*a, options=opts, **kw))
        after = fetch_stats(ep, "tiny")
        # the master's quit ends both workers, as it ends a lab host's
        codes = [w.wait(timeout=30) for w in workers]
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
                w.wait()
        for log in logs:
            log.close()
    assert before is not None and after is not None
    (lv,) = rep.levels
    assert lv.error_count == 0, lv.errors
    assert after.success_count - before.success_count == lv.total_sent
    assert abs(lv.total_sent - RATE * 5.0) < RATE * 0.15
    assert codes == [0, 0], [(tmp_path / f"worker{i}.log").read_text()[-2000:] for i in range(2)]


class _BadServer:
    """A TCP server on loopback that reads requests and never answers ("stall") or hangs up on each one
    ("close"): what the workers' receiver threads must count (timeout, connection_lost) without hanging the run."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            self.conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            while conn.recv(65536):
                if self.mode == "close":
                    conn.close()
                    return
        except OSError:
            pass

    def close(self) -> None:
        self.sock.close()
        for c in self.conns:
            c.close()


@pytest.mark.parametrize(("mode", "kind"), [("stall", "timeout"), ("close", "connection_lost")])
def test_a_server_that_stalls_or_hangs_up_is_counted_and_the_run_ends(mode: str, kind: str) -> None:
    srv = _BadServer(mode)
    try:
        cfg = _cfg(f"http://127.0.0.1:{srv.port}", rate=40.0, duration_s=2.0, warmup_s=0.5, window_s=2.0,
                   timeout_s=0.5)
        gen = LocustGenerator(cfg, options=LocustOptions(workers=2))
        # no metadata to read from this server: the request bytes are given
        gen.requests = [build_request(Endpoint.parse(cfg.url), "POST", "/v2/models/tiny/infer", b'{"inputs": []}')]
        (lv,) = gen.run()
    finally:
        srv.close()
    assert lv.successes == 0 and lv.warmup_successes == 0
    assert set(lv.errors) == {kind}, lv.errors
    # every measured request due more than timeout_s before the stop was counted as failed, and no more than sent
    assert 40.0 * 1.0 <= lv.error_count <= lv.requests_sent, (lv.error_count, lv.requests_sent)
    if mode == "close":  # each hang-up cost a connection: the lanes reconnected and went on
        assert srv.accepted >= lv.error_count
