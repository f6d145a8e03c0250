"""KServe v2 gRPC on a real agent process (``--grpc-port``): tritonclient.grpc against it unchanged, compared
with ONNX Runtime, next to the HTTP path on the same registry and metrics."""

from __future__ import annotations

from pathlib import Path

import httpx
import numpy as np
import onnxruntime as ort
import pytest
import tritonclient.grpc as tg
import tritonclient.http as th
from tritonclient.utils import InferenceServerException

from studio.package.client import deploy_bundle
from tests.edge.helpers import AgentProcess, free_port, mlp_ref, self_signed_cert

pytestmark = pytest.mark.slow




def _infer(c: tg.InferenceServerClient, x: np.ndarray, model: str = "tiny", version: str = "") -> np.ndarray:
    i = tg.InferInput("x", list(x.shape), "FP32")
    i.set_data_from_numpy(x)
    r = c.infer(model, [i], model_version=version, outputs=[tg.InferRequestedOutput("out")])
    return r.as_numpy("out")


def test_grpc_infer_metadata_readiness_errors(grpc_agent: AgentProcess, bundles, token_file: Path,
                                              tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    c = tg.InferenceServerClient(f"127.0.0.1:{grpc_agent.grpc_port}")  # type: ignore[attr-defined]
    assert c.is_server_live() and c.is_server_ready()
    assert not c.is_model_ready("tiny")
    with pytest.raises(InferenceServerException, match="unknown model: 'tiny'"):
        _infer(c, np.zeros((1, 16), np.float32))

    deploy_bundle(bundles["1"], grpc_agent.url, token_file.read_text().strip())
    assert c.is_model_ready("tiny") and c.is_model_ready("tiny", "1") and not c.is_model_ready("tiny", "9")
    assert c.get_server_metadata().name == "studio-agent"
    md = c.get_model_metadata("tiny", as_json=True)
    assert md["name"] == "tiny" and md["versions"] == ["1"] and md["platform"] == "onnxruntime_onnx"
    assert md["inputs"] == [{"name": "x", "datatype": "FP32", "shape": ["-1", "16"]}]
    assert md["outputs"] == [{"name": "out", "datatype": "FP32", "shape": ["-1", "8"]}]

    # raw_input_contents in, raw_output_contents out; equal to ONNX Runtime on the same model file
    x = np.random.default_rng(1).standard_normal((3, 16)).astype(np.float32)
    got = _infer(c, x)
    model_file = next((tmp_path / "agent-data").rglob("tiny.onnx"))
    want = ort.InferenceSession(str(model_file), providers=["CPUExecutionProvider"]).run(["out"], {"x": x})[0]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, mlp_ref(x), rtol=1e-5, atol=1e-5)
    # all outputs when none are requested
    i = tg.InferInput("x", [2, 16], "FP32")
    i.set_data_from_numpy(x[:2])
    r = c.infer("tiny", [i])
    np.testing.assert_array_equal(r.as_numpy("out"), want[:2])
    assert r.get_response().model_version == "1"

    # typed contents (the proto's fp32_contents), as other KServe gRPC clients send them
    from tritonclient.grpc import service_pb2 as pb

    req = pb.ModelInferRequest(model_name="tiny", id="typed-1")
    t = req.inputs.add(name="x", datatype="FP32", shape=[1, 16])
    t.contents.fp32_contents.extend(x[0].tolist())
    resp = c._client_stub.ModelInfer(req)
    assert resp.id == "typed-1" and resp.outputs[0].name == "out" and list(resp.outputs[0].shape) == [1, 8]
    np.testing.assert_array_equal(np.frombuffer(resp.raw_output_contents[0], np.float32).reshape(1, 8), want[:1])

    # clean errors: unknown model / version, wrong shape, dtype, output name, contents size
    with pytest.raises(InferenceServerException, match="unknown model: 'nope'") as ei:
        _infer(c, x, model="nope")
    assert ei.value.status() == "StatusCode.NOT_FOUND"
    with pytest.raises(InferenceServerException, match="unknown model"):
        _infer(c, x, version="7")
    with pytest.raises(InferenceServerException, match="unknown model: 'nope'"):
        c.get_model_metadata("nope")
    with pytest.raises(InferenceServerException, match=r"shape \[3, 15\] does not match") as ei:
        _infer(c, x[:, :15].copy())
    assert ei.value.status() == "StatusCode.INVALID_ARGUMENT"
    with pytest.raises(InferenceServerException, match="input 'x': datatype mismatch, expected FP32"):
        i = tg.InferInput("x", [3, 16], "FP64")
        i.set_data_from_numpy(x.astype(np.float64))
        c.infer("tiny", [i])
    with pytest.raises(InferenceServerException, match="unexpected inference output 'nope'"):
        i = tg.InferInput("x", [3, 16], "FP32")
        i.set_data_from_numpy(x)
        c.infer("tiny", [i], outputs=[tg.InferRequestedOutput("nope")])
    bad = pb.ModelInferRequest(model_name="tiny")
    bad.inputs.add(name="x", datatype="FP32", shape=[1, 16])
    bad.raw_input_contents.append(b"\0" * 12)
    with pytest.raises(Exception, match="12 bytes of raw contents"):
        c._client_stub.ModelInfer(bad)
    # management is not on gRPC
    with pytest.raises(InferenceServerException, match="(?i)unimplemented"):
        c.load_model("tiny")

    # the HTTP path still works, on the same registry; a hot update is seen by gRPC at once
    h = th.InferenceServerClient(f"127.0.0.1:{grpc_agent.port}")
    hi = th.InferInput("x", list(x.shape), "FP32")
    hi.set_data_from_numpy(x, binary_data=True)
    np.testing.assert_array_equal(h.infer("tiny", [hi]).as_numpy("out"), got)
    deploy_bundle(bundles["2"], grpc_agent.url, token_file.read_text().strip())
    np.testing.assert_allclose(_infer(c, x), mlp_ref(x, 3.0), rtol=1e-5, atol=1e-5)
    assert c.is_model_ready("tiny", "2") and not c.is_model_ready("tiny", "1")

    # shared metrics: gRPC requests are counted with the HTTP ones
    prom = httpx.get(grpc_agent.url + "/metrics").text
    ok = [ln for ln in prom.splitlines() if ln.startswith('studio_agent_requests_total{model="tiny",outcome="ok"}')]
    assert ok and float(ok[0].split()[-1]) >= 5
    # an unknown name is counted under the one "unknown" label (names from clients never grow the metrics)
    assert 'studio_agent_request_errors_total{model="unknown",reason="unknown_model"}' in prom and '"nope"' not in prom
    assert 'studio_agent_request_errors_total{model="tiny",reason="bad_request"}' in prom
    c.close()


def test_grpc_tls_uses_the_agent_cert(tmp_path: Path, trust_file: Path, token_file: Path,
                                     bundles) -> None:  # type: ignore[no-untyped-def]
    cert, key = self_signed_cert(tmp_path)
    gport = free_port()
    a = AgentProcess(tmp_path / "agent-data", trust_file, token_file,
                     extra=["--tls-cert", str(cert), "--tls-key", str(key), "--grpc-port", str(gport)])
    a.scheme = "https"
    a.start()
    try:
        deploy_bundle(bundles["1"], a.url, token_file.read_text().strip(), verify=str(cert))
        c = tg.InferenceServerClient(f"127.0.0.1:{gport}", ssl=True, root_certificates=str(cert))
        x = np.ones((1, 16), np.float32)
        np.testing.assert_allclose(_infer(c, x), mlp_ref(x), rtol=1e-5, atol=1e-5)
        c.close()
        plain = tg.InferenceServerClient(f"127.0.0.1:{gport}")  # no TLS: refused
        with pytest.raises(InferenceServerException):
            plain.is_server_live(client_timeout=5)
        plain.close()
    finally:
        a.stop()
