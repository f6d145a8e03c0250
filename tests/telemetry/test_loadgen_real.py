"""Real load runs against real KServe v2 servers on loopback.

Counting and the server-side breakdown are checked against the real CPU tritonserver (LocalTritonServer);
the server-dies-mid-run case uses the stdlib KServe v2 server process (tests/telemetry/kserve_server.py)
so it can be killed without tearing down the shared Triton instance.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from studio.telemetry import samples as S
from studio.telemetry.bench import SlaSpec, default_collectors, run_bench
from studio.telemetry.kserve import Endpoint, fetch_stats
from studio.telemetry.loadgen import LoadConfig, LoadGenerator
from studio.telemetry.recording import Recording
from studio.telemetry.sla import LatencyBudget

pytestmark = [pytest.mark.timeout(300)]


def _cfg(url: str, **kw: object) -> LoadConfig:
    base = dict(url=url, model="mlp", duration_s=1.5, warmup_s=0.5, window_s=0.5, tick_s=0.25, stability=False)
    base.update(kw)
    return LoadConfig(**base)  # type: ignore[arg-type]


@pytest.mark.triton
def test_closed_loop_counts_match_triton(triton) -> None:  # type: ignore[no-untyped-def]
    ep = Endpoint.parse(triton.http_url)
    before = fetch_stats(ep, "mlp")
    assert before is not None
    levels = LoadGenerator(_cfg(triton.http_url, concurrency=[1, 2])).run()
    after = fetch_stats(ep, "mlp")
    assert [lv.concurrency for lv in levels] == [1, 2]
    for lv in levels:
        assert lv.error_count == 0 and lv.successes > 10, lv.errors
        # the server's own counter equals what the client sent, for the measured phase and the whole level
        assert lv.server is not None and lv.server["success_count"] == lv.successes
        assert lv.server_total is not None and lv.server_total["success_count"] == lv.total_sent
        b = lv.server_breakdown_us
        assert b is not None
        client_mean_us = lv.latency.mean_ms * 1000  # type: ignore[operator]
        assert 0 < b["compute_infer_us"] < client_mean_us  # type: ignore[operator]
        assert b["request_us"] <= client_mean_us  # type: ignore[operator]
        assert lv.latency.p50_ms <= lv.latency.p99_ms <= lv.latency.max_ms  # type: ignore[operator]
        assert sum(w.successes for w in lv.windows) == lv.successes
    assert after.success_count - before.success_count == sum(lv.total_sent for lv in levels)  # type: ignore[union-attr]


@pytest.mark.triton
def test_open_loop_rate_with_triton_metrics_and_sla(triton, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cfg = _cfg(triton.http_url, rate=80.0, duration_s=2.0)
    collectors = default_collectors(cfg, metrics_url=triton.metrics_url)
    got: list[S.Sample] = []
    rec = tmp_path / "run.sqlite"
    rep = run_bench(cfg, sla=SlaSpec("L3", LatencyBudget(p95_ms=1000.0, p99_ms=2000.0)), collectors=collectors,
                    sink=got.extend, record=rec)
    lv = rep.levels[0]
    assert lv.mode == "rate" and lv.error_count == 0, lv.errors
    assert lv.server is not None and lv.server["success_count"] == lv.successes
    assert 40 < lv.throughput_rps < 120  # open loop holds the offered rate
    assert lv.send_delay is not None and lv.send_delay.count == lv.successes
    # Triton's CPU metrics come with their source; GPU series are "not available", never zero
    assert rep.sources[S.CPU_PCT].startswith("triton-metrics")
    assert rep.sources[S.GPU_POWER].startswith("not available")
    assert all(s.value is None for s in got if s.series == S.GPU_POWER)
    assert any(s.series == S.SERVER_RPS and s.value for s in got)
    assert rep.sla is not None and rep.sla.judged == len(lv.windows)
    for v in rep.verdicts:
        assert {c.name: c.status for c in v.checks}["power_fluctuation"] == "not available"
        assert {c.name: c.status for c in v.checks}["memory"] in ("pass", "fail")  # host memory from Triton
    # recording round trip
    assert rep.recording == str(rec)
    with Recording(rec) as r:
        assert r.meta["target"] == cfg.target
        assert [w["index"] for w in r.windows()] == [w.index for w in lv.windows]
        assert [v["verdict"] for v in r.verdicts()] == [v.verdict for v in rep.verdicts]
        assert r.levels()[0]["successes"] == lv.successes
        assert len(r.samples()) == len(got)
        replayed: list[S.Sample] = []
        assert r.replay(replayed.extend) == len(got)
        assert [(s.series, s.value, s.source) for s in replayed] == \
            [(s.series, s.value, s.source) for s in sorted(got, key=lambda s: s.t)]


def test_server_dying_mid_run_is_reported_and_ends_cleanly(kserve_proc, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cfg = _cfg(kserve_proc.url, concurrency=[2, 4], duration_s=6.0, warmup_s=0.3, timeout_s=5.0)
    threading.Timer(1.5, kserve_proc.kill).start()
    t0 = time.monotonic()
    rep = run_bench(cfg, record=tmp_path / "dead.sqlite")
    assert time.monotonic() - t0 < 30
    lv = rep.levels[0]
    assert len(rep.levels) == 1  # the sweep stops: no point hammering a dead server
    assert lv.successes > 0 and lv.error_count > 0
    assert set(lv.errors) <= {"connection_refused", "connection_lost", "timeout"}
    assert "server stopped answering" in lv.aborted
    with Recording(tmp_path / "dead.sqlite") as r:  # a run that ended early is still recorded, whole
        assert r.levels()[0]["aborted"] == lv.aborted


def test_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    from studio.core.errors import ConnectionFailed

    with pytest.raises(ConnectionFailed) as ei:
        run_bench(_cfg("http://127.0.0.1:9"), record=tmp_path / "x.sqlite")
    assert "127.0.0.1:9" in str(ei.value.offending)
    assert not (tmp_path / "x.sqlite").exists() and not list(tmp_path.iterdir())  # nothing half-written


def test_input_data_file_and_bad_names(kserve_proc, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import json

    from studio.core.errors import InputError

    good = tmp_path / "in.json"
    good.write_text(json.dumps({"data": [{"INPUT0": {"content": [0.5] * 32, "shape": [2, 16]}}]}))
    levels = LoadGenerator(_cfg(kserve_proc.url, input_data=good, duration_s=0.5, window_s=0.5)).run()
    assert levels[0].successes > 0 and levels[0].error_count == 0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"data": [{"nope": [1.0]}]}))
    with pytest.raises(InputError) as ei:
        LoadGenerator(_cfg(kserve_proc.url, input_data=bad)).prepare()
    assert "nope" in str(ei.value.offending) and "INPUT0" in (ei.value.hint or "")


def test_http_errors_are_counted_by_kind(kserve_proc) -> None:  # type: ignore[no-untyped-def]
    gen = LoadGenerator(_cfg(kserve_proc.url, duration_s=0.5, window_s=0.5, warmup_s=0))
    gen.prepare()
    gen.requests = [r.replace(b'"INPUT0"', b'"WRONG0"') for r in gen.requests]  # the server answers 400
    lv = gen.run()[0]
    assert lv.successes == 0 and set(lv.errors) == {"http_400"}
    stats = fetch_stats(Endpoint.parse(kserve_proc.url), "mlp")
    assert stats is not None and stats.fail_count == lv.error_count
