"""The agent's inference fast path (raw ASGI handler) keeps every KServe v2 detail tritonclient relies on."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import numpy as np
import pytest
import tritonclient.http as th
from tritonclient.utils import InferenceServerException

from studio.package.client import deploy_bundle
from tests.edge.helpers import AgentProcess, mlp_ref


def test_infer_path_protocol_details(agent: AgentProcess, bundles, token_file: Path) -> None:  # type: ignore[no-untyped-def]
    deploy_bundle(bundles["1"], agent.url, token_file.read_text().strip())
    c = th.InferenceServerClient(f"127.0.0.1:{agent.port}")
    x = np.arange(32, dtype=np.float32).reshape(2, 16) / 10
    for algo in ("gzip", "deflate"):  # compressed request and response
        i = th.InferInput("x", [2, 16], "FP32")
        i.set_data_from_numpy(x)
        r = c.infer("tiny", [i], model_version="1", request_id="r-7", request_compression_algorithm=algo,
                    response_compression_algorithm=algo)
        np.testing.assert_allclose(r.as_numpy("out"), mlp_ref(x), rtol=1e-6)
        assert r.get_response()["id"] == "r-7" and r.get_response()["model_version"] == "1"
    with pytest.raises(InferenceServerException, match="unknown model"):
        c.infer("tiny", [i], model_version="9")
    body = {"inputs": [{"name": "x", "shape": [1, 16], "datatype": "FP32", "data": [0.5] * 16}],
            "outputs": [{"name": "out"}]}
    r = httpx.post(agent.url + "/v2/models/tiny/versions/1/infer", content=json.dumps(body))
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    assert "inference-header-content-length" not in r.headers
    np.testing.assert_allclose(r.json()["outputs"][0]["data"], mlp_ref(np.full((1, 16), 0.5, np.float32)).ravel(),
                               rtol=1e-6)
    body["outputs"] = [{"name": "nope"}]
    r = httpx.post(agent.url + "/v2/models/tiny/infer", content=json.dumps(body))
    assert r.status_code == 400 and "nope" in r.json()["error"]
    r = httpx.post(agent.url + "/v2/models/tiny/infer", content=b"{}",
                   headers={"Inference-Header-Content-Length": "999"})
    assert r.status_code == 400 and "exceeds the body" in r.json()["error"]
    r = httpx.get(agent.url + "/v2/models/tiny/infer")
    assert r.status_code == 405 and "error" in r.json()
    metrics = httpx.get(agent.url + "/metrics").text
    assert 'studio_agent_request_duration_seconds_count{model="tiny"} 3.0' in metrics
    assert 'studio_agent_requests_total{model="tiny",outcome="error"} 2.0' in metrics
    assert "studio_agent_inflight_requests 0.0" in metrics
