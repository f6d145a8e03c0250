"""Triton's statistics extension on a real agent process: tritonclient.http / .grpc ``get_inference_statistics``
and the studio's TritonClient read exact success / failure counts, growing durations and ``last_inference``,
per served version through hot update and rollback, with Triton's errors and in agreement with ``/metrics``."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
import tritonclient.grpc as tg
import tritonclient.http as th
from google.protobuf.json_format import MessageToDict
from tritonclient.grpc import service_pb2 as pb
from tritonclient.utils import InferenceServerException

from studio.agent.statistics import ModelVersionStats, StatisticsError, StatisticsRegistry
from studio.package.client import AgentClient, deploy_bundle
from studio.triton.client import ServerError, TritonClient
from tests.edge.helpers import AgentProcess

pytestmark = pytest.mark.slow
STAT_KEYS = ("success", "fail", "queue", "compute_input", "compute_infer", "compute_output", "cache_hit",
             "cache_miss")
X = np.random.default_rng(3).random((2, 16), dtype=np.float32)




def _http_ok(c: th.InferenceServerClient, version: str = "", binary: bool = True) -> None:
    i = th.InferInput("x", list(X.shape), "FP32")
    i.set_data_from_numpy(X, binary_data=binary)
    c.infer("tiny", [i], model_version=version, outputs=[th.InferRequestedOutput("out", binary_data=binary)])


def _http_failures(agent: AgentProcess) -> int:
    """Three failing requests for the served version: wrong shape, unknown output, a header that is not JSON."""
    good = {"inputs": [{"name": "x", "shape": [1, 16], "datatype": "FP32", "data": [0.5] * 16}]}
    bad_shape = {"inputs": [{"name": "x", "shape": [1, 15], "datatype": "FP32", "data": [0.5] * 15}]}
    for body in (json.dumps(bad_shape).encode(), json.dumps({**good, "outputs": [{"name": "nope"}]}).encode(),
                 b"{not json"):
        r = httpx.post(agent.url + "/v2/models/tiny/infer", content=body)
        assert r.status_code == 400, r.text
    return 3


def _grpc_ok(c: tg.InferenceServerClient, version: str = "") -> None:
    i = tg.InferInput("x", list(X.shape), "FP32")
    i.set_data_from_numpy(X)
    c.infer("tiny", [i], model_version=version)


def _grpc_fail(c: tg.InferenceServerClient) -> None:
    i = tg.InferInput("x", [2, 15], "FP32")
    i.set_data_from_numpy(X[:, :15].copy())
    with pytest.raises(InferenceServerException, match="does not match"):
        c.infer("tiny", [i])


def _only(doc: dict[str, Any]) -> dict[str, Any]:
    assert len(doc["model_stats"]) == 1, doc
    return doc["model_stats"][0]


def _check_shape(ms: dict[str, Any]) -> None:
    """Triton's $model_stat: every field, integers for counts and ns (uint64 as JSON numbers)."""
    assert set(ms) == {"name", "version", "last_inference", "inference_count", "execution_count",
                       "inference_stats", "response_stats", "batch_stats", "memory_usage"}
    assert isinstance(ms["name"], str) and isinstance(ms["version"], str)
    for k in ("last_inference", "inference_count", "execution_count"):
        assert type(ms[k]) is int and ms[k] >= 0
    assert set(ms["inference_stats"]) == set(STAT_KEYS)
    durations = list(ms["inference_stats"].values())
    for b in ms["batch_stats"]:
        assert set(b) == {"batch_size", "compute_input", "compute_infer", "compute_output"}
        assert type(b["batch_size"]) is int
        durations += [b["compute_input"], b["compute_infer"], b["compute_output"]]
    for d in durations:
        assert set(d) == {"count", "ns"} and type(d["count"]) is int and type(d["ns"]) is int
        assert d["count"] >= 0 and d["ns"] >= 0


def _check_numbers(ms: dict[str, Any], ok: int, failed: int, since_ms: int) -> None:
    inf = ms["inference_stats"]
    assert inf["success"]["count"] == ok and inf["fail"]["count"] == failed
    for k in ("queue", "compute_input", "compute_infer", "compute_output"):
        assert inf[k]["count"] == ok
    assert inf["cache_hit"] == {"count": 0, "ns": 0} and inf["cache_miss"] == {"count": 0, "ns": 0}
    assert ms["inference_count"] == ok and ms["execution_count"] == ok
    if ok:
        assert inf["success"]["ns"] > 0 and inf["compute_infer"]["ns"] > 0 and inf["compute_input"]["ns"] > 0
        assert inf["compute_output"]["ns"] > 0
        parts = sum(inf[k]["ns"] for k in ("queue", "compute_input", "compute_infer", "compute_output"))
        assert parts <= inf["success"]["ns"] + 8 * ok  # the stages lie inside the request (rounding to ns)
        assert since_ms <= ms["last_inference"] <= time.time() * 1000 + 1
        (b,) = ms["batch_stats"]  # max_batch_size 0: Triton counts every request as batch size 1
        assert b["batch_size"] == 1 and all(b[k]["count"] == ok for k in ("compute_input", "compute_infer",
                                                                             "compute_output"))
        assert b["compute_infer"]["ns"] == inf["compute_infer"]["ns"]
    else:
        assert ms["batch_stats"] == [] and ms["last_inference"] == 0
    if failed:
        assert inf["fail"]["ns"] > 0


def _prom_value(prom: str, line_start: str) -> float:
    lines = [ln for ln in prom.splitlines() if ln.startswith(line_start + " ")]
    return float(lines[0].split()[-1]) if lines else 0.0


def test_http_statistics_count_successes_failures_and_match_metrics(agent: AgentProcess, bundles,
                                                                   token_file: Path) -> None:  # type: ignore[no-untyped-def]
    c = th.InferenceServerClient(f"127.0.0.1:{agent.port}")
    assert c.get_inference_statistics() == {"model_stats": []}
    with pytest.raises(InferenceServerException, match="requested model 'tiny' is not available"):
        c.get_inference_statistics(model_name="tiny")
    r = httpx.get(agent.url + "/v2/models/tiny/stats")
    assert r.status_code == 400 and r.json() == {"error": "requested model 'tiny' is not available"}
    assert "statistics" in c.get_server_metadata()["extensions"]

    deploy_bundle(bundles["1"], agent.url, token_file.read_text().strip())
    ms = _only(c.get_inference_statistics(model_name="tiny"))
    _check_shape(ms)
    assert ms["name"] == "tiny" and ms["version"] == "1"
    _check_numbers(ms, 0, 0, 0)  # the warm-up runs are not requests

    since = int(time.time() * 1000)
    n = 6
    for k in range(n):
        _http_ok(c, version="1" if k % 2 else "", binary=k % 3 != 0)
    m = _http_failures(agent)
    with pytest.raises(InferenceServerException, match="unknown model"):  # not a served version: not counted
        _http_ok(c, version="9")
    ms = _only(c.get_inference_statistics(model_name="tiny", model_version="1"))
    _check_shape(ms)
    _check_numbers(ms, n, m, since)
    assert _only(c.get_inference_statistics(model_name="tiny")) == ms
    assert c.get_inference_statistics() == {"model_stats": [ms]}
    assert _only(httpx.get(agent.url + "/v2/models/stats").json()) == ms

    # durations grow with every request, last_inference moves on
    time.sleep(0.01)
    _http_ok(c)
    ms2 = _only(c.get_inference_statistics(model_name="tiny"))
    _check_numbers(ms2, n + 1, m, since)
    for k in ("success", "compute_input", "compute_infer", "compute_output"):
        assert ms2["inference_stats"][k]["ns"] > ms["inference_stats"][k]["ns"]
    assert ms2["last_inference"] >= ms["last_inference"] + 10

    # Triton's errors: an unknown version or model is 400 {"error": ...}
    with pytest.raises(InferenceServerException, match="requested model version is not available for model 'tiny'"):
        c.get_inference_statistics(model_name="tiny", model_version="9")
    r = httpx.get(agent.url + "/v2/models/nope/versions/1/stats")
    assert r.status_code == 400 and r.json() == {"error": "requested model 'nope' is not available"}

    # /metrics counts the same requests over the same interval
    prom = httpx.get(agent.url + "/metrics").text
    inf = ms2["inference_stats"]
    assert _prom_value(prom, 'studio_agent_requests_total{model="tiny",outcome="ok"}') == inf["success"]["count"]
    assert _prom_value(prom, 'studio_agent_requests_total{model="tiny",outcome="error"}') == inf["fail"]["count"]
    assert _prom_value(prom, 'studio_agent_request_duration_seconds_count{model="tiny"}') == inf["success"]["count"]
    total_s = _prom_value(prom, 'studio_agent_request_duration_seconds_sum{model="tiny"}')
    assert total_s == pytest.approx(inf["success"]["ns"] / 1e9, rel=1e-6, abs=1e-6)
    c.close()


def test_grpc_statistics_same_counters_and_rollback(grpc_agent: AgentProcess, bundles,
                                                    token_file: Path) -> None:  # type: ignore[no-untyped-def]
    token = token_file.read_text().strip()
    g = tg.InferenceServerClient(f"127.0.0.1:{grpc_agent.grpc_port}")  # type: ignore[attr-defined]
    h = th.InferenceServerClient(f"127.0.0.1:{grpc_agent.port}")
    assert "statistics" in g.get_server_metadata(as_json=True)["extensions"]
    assert list(g.get_inference_statistics().model_stats) == []
    with pytest.raises(InferenceServerException, match="requested model 'tiny' is not available") as ei:
        g.get_inference_statistics(model_name="tiny")
    assert ei.value.status() == "StatusCode.INVALID_ARGUMENT"

    since = int(time.time() * 1000)
    deploy_bundle(bundles["1"], grpc_agent.url, token)
    for _ in range(4):
        _grpc_ok(g)
    _grpc_fail(g)
    _grpc_fail(g)
    _http_ok(h)  # both protocols count into the same version
    st = g.get_inference_statistics(model_name="tiny", model_version="1")
    assert isinstance(st, pb.ModelStatisticsResponse) and len(st.model_stats) == 1
    p = st.model_stats[0]
    assert (p.name, p.version) == ("tiny", "1")
    assert p.inference_stats.success.count == 5 and p.inference_stats.fail.count == 2
    assert p.inference_stats.success.ns > 0 and p.inference_stats.fail.ns > 0 and p.last_inference >= since
    ms = _only(h.get_inference_statistics(model_name="tiny"))
    _check_numbers(ms, 5, 2, since)
    as_json = MessageToDict(p, preserving_proto_field_name=True)  # uint64 as strings, zeros left out
    assert int(as_json["inference_stats"]["success"]["ns"]) == ms["inference_stats"]["success"]["ns"]
    assert int(as_json["last_inference"]) == ms["last_inference"]
    for k in STAT_KEYS:
        d = getattr(p.inference_stats, k)
        assert (d.count, d.ns) == (ms["inference_stats"][k]["count"], ms["inference_stats"][k]["ns"])
    assert [(b.batch_size, b.compute_infer.count, b.compute_infer.ns) for b in p.batch_stats] == [
        (1, 5, ms["batch_stats"][0]["compute_infer"]["ns"])]
    with pytest.raises(InferenceServerException, match="version is not available for model 'tiny'") as ei:
        g.get_inference_statistics(model_name="tiny", model_version="2")
    assert ei.value.status() == "StatusCode.INVALID_ARGUMENT"

    # hot update: version 2 is served and counted from zero; version 1 is no longer reported
    deploy_bundle(bundles["2"], grpc_agent.url, token)
    p2 = g.get_inference_statistics(model_name="tiny").model_stats[0]
    assert p2.version == "2" and p2.inference_stats.success.count == 0 and p2.inference_stats.fail.count == 0
    for _ in range(3):
        _grpc_ok(g, version="2")
    _grpc_fail(g)
    _check_numbers(_only(h.get_inference_statistics(model_name="tiny", model_version="2")), 3, 1, since)
    with pytest.raises(InferenceServerException, match="version is not available"):
        h.get_inference_statistics(model_name="tiny", model_version="1")

    # rollback: version 1 serves again, with its own counts since the agent started
    AgentClient(grpc_agent.url, token).rollback("tiny")
    assert g.get_inference_statistics(model_name="tiny").model_stats[0].version == "1"
    _http_ok(h)
    _grpc_ok(g, version="1")
    ms1 = _only(h.get_inference_statistics(model_name="tiny"))
    assert ms1["version"] == "1"
    _check_numbers(ms1, 7, 2, since)
    p1 = g.get_inference_statistics(model_name="tiny", model_version="1").model_stats[0]
    assert (p1.inference_stats.success.count, p1.inference_stats.fail.count) == (7, 2)
    assert p1.inference_stats.success.ns == ms1["inference_stats"]["success"]["ns"]
    prom = httpx.get(grpc_agent.url + "/metrics").text  # per model name: both versions together
    assert _prom_value(prom, 'studio_agent_requests_total{model="tiny",outcome="ok"}') == 7 + 3
    assert _prom_value(prom, 'studio_agent_requests_total{model="tiny",outcome="error"}') == 2 + 1
    g.close()
    h.close()


def test_studio_triton_client_reads_agent_statistics(grpc_agent: AgentProcess, bundles,
                                                      token_file: Path) -> None:  # type: ignore[no-untyped-def]
    deploy_bundle(bundles["1"], grpc_agent.url, token_file.read_text().strip())
    h = th.InferenceServerClient(f"127.0.0.1:{grpc_agent.port}")
    for _ in range(3):
        _http_ok(h)
    failed = _http_failures(grpc_agent)
    for url in (grpc_agent.url, f"grpc://127.0.0.1:{grpc_agent.grpc_port}"):  # type: ignore[attr-defined]
        tc = TritonClient(url, timeout=10)
        # what the Devices page polls: metadata, repository index, then every model's statistics
        assert "statistics" in tc.server_metadata().get("extensions", [])
        assert [m.name for m in tc.repository_index()] == ["tiny"]
        (st,) = tc.statistics("tiny")
        assert (st.name, st.version) == ("tiny", "1")
        assert st.success_count == 3 and st.fail_count == failed
        assert st.inference_count == 3 and st.execution_count == 3 and st.batch_sizes == {1: 3}
        assert st.avg_request_us > 0 and st.avg_compute_infer_us > 0 and st.last_inference_ms > 0
        assert st.avg_queue_us + st.avg_compute_input_us + st.avg_compute_infer_us + st.avg_compute_output_us \
            <= st.avg_request_us + 0.01
        assert [s.name for s in tc.statistics()] == ["tiny"]
        assert tc.statistics("tiny", "1")[0].success_count == 3
        with pytest.raises(ServerError, match=re.escape("requested model 'nope' is not available")):
            tc.statistics("nope")
        tc.close()
    h.close()


# -- the counters themselves (no process) -------------------------------------------------------------------

def test_counters_json_and_proto_agree() -> None:
    s = ModelVersionStats("m", "3")
    s.record_success(0.004, 0.001, 0.0005, 0.002, 0.0005)
    s.record_success(0.002, 0.0, 0.0005, 0.001, 0.0005)
    s.record_failure(0.0001)
    d = s.to_json()
    inf = d["inference_stats"]
    assert inf["success"] == {"count": 2, "ns": 6_000_000} and inf["fail"] == {"count": 1, "ns": 100_000}
    assert inf["queue"] == {"count": 2, "ns": 1_000_000} and inf["compute_infer"] == {"count": 2, "ns": 3_000_000}
    assert d["batch_stats"] == [{"batch_size": 1, "compute_input": {"count": 2, "ns": 1_000_000},
                                 "compute_infer": {"count": 2, "ns": 3_000_000},
                                 "compute_output": {"count": 2, "ns": 1_000_000}}]
    assert d["inference_count"] == d["execution_count"] == 2 and d["last_inference"] > 0
    p = s.to_proto(pb)
    assert MessageToDict(p, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)[
        "inference_stats"]["success"] == {"count": "2", "ns": "6000000"}
    assert p.inference_stats.cache_miss.count == 0 and p.batch_stats[0].compute_output.ns == 1_000_000

    s.record_success(0.01, 0.0, 0.001, 0.008, 0.001, batch_size=4)  # a batch: 4 inferences, 1 execution
    d = s.to_json()
    assert d["inference_count"] == 6 and d["execution_count"] == 3
    assert [(b["batch_size"], b["compute_infer"]) for b in d["batch_stats"]] == [
        (1, {"count": 2, "ns": 3_000_000}), (4, {"count": 1, "ns": 8_000_000})]
    assert d["inference_stats"]["compute_infer"] == {"count": 3, "ns": 11_000_000}

    reg = StatisticsRegistry()

    class _M:
        version = "3"

    served = {"m": _M()}
    assert reg.of("m", "3") is reg.of("m", "3")
    reg.of("m", "3").record_failure(0.001)
    assert [x.fail_count for x in reg.select(served)] == [1]
    reg.forget(["m"], "3")
    assert reg.report(served, "m", "3")["model_stats"][0]["inference_stats"]["fail"]["count"] == 0
    with pytest.raises(StatisticsError, match="requested model 'x' is not available"):
        reg.select(served, "x")
    with pytest.raises(StatisticsError, match="requested model version is not available for model 'm'"):
        reg.select(served, "m", "4")
