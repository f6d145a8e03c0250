"""The real agent process on loopback: deploy, infer through tritonclient (JSON + binary), hot update with a
client running, rollback, restart; adversarial uploads each leave the active version serving and nothing new."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import onnxruntime as ort
import pytest
import tritonclient.http as th

from studio.core.errors import BundleError, InputError, ModelError
from studio.package.bundle import build_bundle
from studio.package.client import AgentClient, deploy_bundle
from tests.edge.helpers import (
    AgentProcess,
    make_mlp,
    make_warmup_failing,
    mlp_ref,
    self_signed_cert,
    tree_snapshot,
)
from tests.edge.test_bundle import CASES, _tampered

pytestmark = pytest.mark.slow


def _client(agent: AgentProcess) -> th.InferenceServerClient:
    return th.InferenceServerClient(f"127.0.0.1:{agent.port}")


def _infer(c: th.InferenceServerClient, x: np.ndarray, binary: bool, model: str = "tiny") -> np.ndarray:
    i = th.InferInput("x", list(x.shape), "FP32")
    i.set_data_from_numpy(x, binary_data=binary)
    r = c.infer(model, [i], outputs=[th.InferRequestedOutput("out", binary_data=binary)])
    return r.as_numpy("out")


def _token(token_file: Path) -> str:
    return token_file.read_text().strip()


def test_deploy_infer_update_rollback_restart(agent: AgentProcess, bundles, token_file: Path,
                                              tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    token = _token(token_file)
    rep = deploy_bundle(bundles["1"], agent.url, token)
    assert rep.name == "tiny" and rep.version == "1" and rep.previous is None
    c = _client(agent)
    assert c.is_server_live() and c.is_server_ready() and c.is_model_ready("tiny")
    meta = c.get_model_metadata("tiny")
    assert meta["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [-1, 16]}]
    x = np.random.default_rng(1).random((4, 16), dtype=np.float32)
    ort_out = ort.InferenceSession(str(tmp_path / "src1" / "tiny.onnx")).run(None, {"x": x})[0]
    for binary in (True, False):
        np.testing.assert_allclose(_infer(c, x, binary), ort_out, rtol=1e-6, atol=1e-6)
    r = c.infer("tiny", _inp(x))  # outputs unspecified: binary_data_output
    np.testing.assert_allclose(r.as_numpy("out"), ort_out, rtol=1e-6, atol=1e-6)

    # v2 while a client keeps sending requests: no failed request, answers switch from v1 to v2
    failures: list[str] = []
    seen: set[str] = set()
    stop = threading.Event()

    def hammer() -> None:
        cc = _client(agent)
        while not stop.is_set():
            try:
                out = _infer(cc, x, binary=True)
                if np.allclose(out, mlp_ref(x, 1.0), atol=1e-5):
                    seen.add("1")
                elif np.allclose(out, mlp_ref(x, 3.0), atol=1e-4):
                    seen.add("2")
                else:
                    failures.append("wrong answer")
            except Exception as exc:
                failures.append(repr(exc))

    t = threading.Thread(target=hammer)
    t.start()
    try:
        time.sleep(0.3)
        rep2 = deploy_bundle(bundles["2"], agent.url, token)
        time.sleep(0.3)
    finally:
        stop.set()
        t.join(30)
    assert rep2.version == "2" and rep2.previous == "1"
    assert failures == [] and seen == {"1", "2"}
    np.testing.assert_allclose(_infer(c, x, True), mlp_ref(x, 3.0), rtol=1e-5)

    # CLI status and rollback
    st = subprocess.run([sys.executable, "-m", "studio.cli.main", "agent", "status", "--agent", agent.url,
                         "--token-file", str(token_file), "--json"], capture_output=True, text=True)
    status = json.loads(st.stdout)
    assert status["models"]["tiny"]["active"] == "2" and status["models"]["tiny"]["rollback_to"] == "1"
    assert [v["version"] for v in status["models"]["tiny"]["versions"]] == ["1", "2"]
    assert status["sensors"]["power_source"]  # a named source or "not available"
    rb = subprocess.run([sys.executable, "-m", "studio.cli.main", "agent", "rollback", "--agent", agent.url,
                         "--token-file", str(token_file), "--model", "tiny"], capture_output=True, text=True)
    assert rb.returncode == 0, rb.stderr
    assert "rolled back to 1" in rb.stdout
    np.testing.assert_allclose(_infer(c, x, False), mlp_ref(x, 1.0), rtol=1e-5)

    # restart: the last active version (1, after the rollback; not the newest) is served again
    agent.stop()
    agent.start()
    c = _client(agent)
    np.testing.assert_allclose(_infer(c, x, True), mlp_ref(x, 1.0), rtol=1e-5)
    assert c.get_model_metadata("tiny")["versions"] == ["1"]
    # roll forward to a named version
    res = AgentClient(agent.url, token).rollback("tiny", "2")
    assert res["version"] == "2"
    np.testing.assert_allclose(_infer(c, x, True), mlp_ref(x, 3.0), rtol=1e-5)
    # metrics: latency histogram, in-flight, errors, memory, sensors with their source
    metrics = httpx.get(agent.url + "/metrics").text
    for name in ("studio_agent_request_duration_seconds_bucket", "studio_agent_inflight_requests",
                 "studio_agent_process_resident_memory_bytes", "studio_agent_system_memory_bytes",
                 "studio_agent_system_cpu_percent", 'studio_agent_sensor_available{quantity="power"',
                 'studio_agent_model_info{model="tiny",version="2"}'):
        assert name in metrics, name


def _inp(x: np.ndarray) -> list[th.InferInput]:
    i = th.InferInput("x", list(x.shape), "FP32")
    i.set_data_from_numpy(x)
    return [i]


def test_bad_requests_are_kserve_errors(agent: AgentProcess, bundles, token_file: Path) -> None:  # type: ignore[no-untyped-def]
    deploy_bundle(bundles["1"], agent.url, _token(token_file))
    c = _client(agent)
    from tritonclient.utils import InferenceServerException

    with pytest.raises(InferenceServerException, match="unknown model"):
        c.infer("nope", _inp(np.zeros((1, 16), np.float32)))
    with pytest.raises(InferenceServerException, match="shape"):
        c.infer("tiny", _inp(np.zeros((1, 15), np.float32)))
    i = th.InferInput("x", [1, 16], "FP64")
    i.set_data_from_numpy(np.zeros((1, 16), np.float64))
    with pytest.raises(InferenceServerException, match="datatype"):
        c.infer("tiny", [i])
    r = httpx.post(agent.url + "/v2/models/tiny/infer", content=b"{not json")
    assert r.status_code == 400 and "error" in r.json()
    assert 'reason="bad_request"' in httpx.get(agent.url + "/metrics").text


def _upload_raw(agent: AgentProcess, path: Path, token: str) -> httpx.Response:
    return httpx.post(agent.url + "/agent/bundles", content=path.read_bytes(),
                      headers={"Authorization": f"Bearer {token}"}, timeout=60)


def _assert_v1_serving(agent: AgentProcess) -> None:
    x = np.ones((2, 16), np.float32)
    np.testing.assert_allclose(_infer(_client(agent), x, True), mlp_ref(x, 1.0), rtol=1e-5)


def test_adversarial_uploads_leave_active_version(agent: AgentProcess, bundles, token_file: Path,
                                                  tmp_path: Path, keys, signing_key) -> None:  # type: ignore[no-untyped-def]
    token = _token(token_file)
    deploy_bundle(bundles["1"], agent.url, token)
    data = agent.data
    before = tree_snapshot(data)
    outside = tree_snapshot(tmp_path)
    (tmp_path / "bad").mkdir()
    for case in sorted(CASES):
        bad = _tampered(tmp_path / "bad", bundles["2"], case)
        r = _upload_raw(agent, bad, token)
        assert r.status_code == 422, (case, r.text)
        assert "error" in r.json() and r.json()["offending"], case
        _assert_v1_serving(agent)
        assert tree_snapshot(data) == before, case
    # signed by a key the agent does not trust
    from studio.package.keys import KeyStore

    other = KeyStore(tmp_path / "other")
    other.generate("mallory", "pw-mallory")
    evil = build_bundle(make_mlp(tmp_path / "evil" / "tiny.onnx", 9.0), "generic-x86_64",
                        other.load_signing_key("mallory", "pw-mallory"), tmp_path / "evil.tar", version="2")
    with pytest.raises(BundleError, match="untrusted key"):
        deploy_bundle(evil.bundle, agent.url, token)
    # wrong token: refused before anything is read or written
    with pytest.raises(InputError, match="token"):
        deploy_bundle(bundles["2"], agent.url, "wrong-token-wrong-token")
    assert httpx.get(agent.url + "/agent/status", headers={"Authorization": "Bearer nope"}).status_code == 401
    # a bundle for another board
    arm = build_bundle(make_mlp(tmp_path / "arm" / "tiny.onnx"), "rk3588", signing_key, tmp_path / "arm.tar",
                       version="3")
    with pytest.raises(InputError, match="built for board rk3588"):
        deploy_bundle(arm.bundle, agent.url, token)
    # the same version again
    with pytest.raises(InputError, match="already installed"):
        deploy_bundle(bundles["1"], agent.url, token)
    # a model that loads but fails its warm-up request: rolled back, its files removed
    wf = build_bundle(make_warmup_failing(tmp_path / "wf" / "tiny.onnx"), "generic-x86_64", signing_key,
                      tmp_path / "wf.tar", version="4")
    with pytest.raises(ModelError, match="warm-up") as ei:
        deploy_bundle(wf.bundle, agent.url, token)
    assert "1 is still serving" in (ei.value.hint or "")
    _assert_v1_serving(agent)
    after = tree_snapshot(data)
    assert {k for k in after if k.startswith("bundles")} == {k for k in before if k.startswith("bundles")}
    assert not list((data / "incoming").iterdir())
    assert not (tmp_path / "evil.txt").exists() and not Path("/tmp/evil.txt").exists()
    assert set(tree_snapshot(tmp_path)) >= set(outside)


def test_oversize_upload(tmp_path: Path, trust_file: Path, token_file: Path, bundles, signing_key) -> None:  # type: ignore[no-untyped-def]
    agent = AgentProcess(tmp_path / "data", trust_file, token_file, max_upload_mb=0.05).start()
    try:
        token = _token(token_file)
        deploy_bundle(bundles["1"], agent.url, token)
        before = tree_snapshot(agent.data)
        big = build_bundle(make_mlp(tmp_path / "big" / "tiny.onnx", pad_bytes=200_000), "generic-x86_64",
                           signing_key, tmp_path / "big.tar", version="2")
        with pytest.raises(BundleError, match="upload limit"):
            deploy_bundle(big.bundle, agent.url, token)  # declared Content-Length over the cap

        def chunked():  # no Content-Length: the cap is enforced while streaming
            data = Path(big.bundle).read_bytes()
            for i in range(0, len(data), 16384):
                yield data[i:i + 16384]

        try:
            r = httpx.post(agent.url + "/agent/bundles", content=chunked(), headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 413
        except httpx.TransportError:
            pass  # the agent may close the connection as soon as it has answered 413
        _assert_v1_serving(agent)
        time.sleep(0.2)
        assert tree_snapshot(agent.data) == before
    finally:
        agent.stop()


SLOW_UPLOADER = r"""
import sys, time, httpx
url, token, path = sys.argv[1:4]
data = open(path, "rb").read()
def gen():
    for i in range(0, len(data), 65536):
        yield data[i:i + 65536]
        time.sleep(0.05)
httpx.post(url + "/agent/bundles", content=gen(), headers={"Authorization": "Bearer " + token,
           "Content-Length": str(len(data))}, timeout=120)
"""


def _wait_for_part(data: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        parts = list((data / "incoming").glob("*.part"))
        if parts and parts[0].stat().st_size > 65536:
            return
        time.sleep(0.05)
    raise AssertionError("upload never started")


def test_kill9_mid_upload(agent: AgentProcess, bundles, token_file: Path, tmp_path: Path,
                          signing_key) -> None:  # type: ignore[no-untyped-def]
    token = _token(token_file)
    deploy_bundle(bundles["1"], agent.url, token)
    big = build_bundle(make_mlp(tmp_path / "big" / "tiny.onnx", 3.0, pad_bytes=3_000_000), "generic-x86_64",
                       signing_key, tmp_path / "big.tar", version="2")
    before = tree_snapshot(agent.data)
    # 1) the uploading client is killed -9: the agent keeps serving v1 and drops the partial upload
    up = subprocess.Popen([sys.executable, "-c", SLOW_UPLOADER, agent.url, token, big.bundle])
    _wait_for_part(agent.data)
    os.kill(up.pid, 9)
    up.wait()
    _assert_v1_serving(agent)
    deadline = time.monotonic() + 10
    while list((agent.data / "incoming").iterdir()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not list((agent.data / "incoming").iterdir())
    assert tree_snapshot(agent.data) == before
    # 2) the agent itself is killed -9 mid-upload: after restart v1 serves and no partial bundle is left
    up = subprocess.Popen([sys.executable, "-c", SLOW_UPLOADER, agent.url, token, big.bundle],
                          stderr=subprocess.DEVNULL)
    _wait_for_part(agent.data)
    agent.kill9()
    up.wait(60)
    agent.start()
    _assert_v1_serving(agent)
    assert not list((agent.data / "incoming").iterdir())
    assert tree_snapshot(agent.data).keys() == before.keys()
    assert json.loads((agent.data / "state.json").read_text())["models"]["tiny"]["active"] == "1"
    # and the same bundle deploys fine afterwards
    assert deploy_bundle(big.bundle, agent.url, token).version == "2"


def test_tampered_on_disk_is_not_loaded_at_restart(agent: AgentProcess, bundles, token_file: Path) -> None:  # type: ignore[no-untyped-def]
    """The ORT loader verifies before loading: a model file changed on the board is refused at restart, and
    the agent falls back to the previous verified version."""
    token = _token(token_file)
    deploy_bundle(bundles["1"], agent.url, token)
    deploy_bundle(bundles["2"], agent.url, token)
    agent.stop()
    f = agent.data / "bundles" / "tiny" / "2" / "model" / "tiny.onnx"
    raw = bytearray(f.read_bytes())
    raw[-10] ^= 0xFF
    f.write_bytes(bytes(raw))
    agent.start()
    _assert_v1_serving(agent)
    st = AgentClient(agent.url, token).status()["models"]["tiny"]
    assert st["active"] == "1"
    assert any(h["event"] == "resume-failed" and h["version"] == "2" for h in st["history"])


def test_mdns_discovery(tmp_path: Path, trust_file: Path, token_file: Path) -> None:
    from studio.package.discovery import discover_agents

    agent = AgentProcess(tmp_path / "data", trust_file, token_file, mdns=True, extra=["--name", "edge-test"]).start()
    try:
        found = []
        for _ in range(3):
            found = [a for a in discover_agents(3.0, loopback=True) if a.url == agent.url]
            if found:
                break
        assert found and found[0].board == "generic-x86_64" and found[0].name.startswith("edge-test")
    finally:
        agent.stop()


def test_tls(tmp_path: Path, trust_file: Path, token_file: Path, bundles) -> None:  # type: ignore[no-untyped-def]
    cert, key = self_signed_cert(tmp_path)
    agent = AgentProcess(tmp_path / "data", trust_file, token_file,
                         extra=["--tls-cert", str(cert), "--tls-key", str(key)])
    agent.scheme = "https"
    agent.start()
    try:
        rep = deploy_bundle(bundles["1"], agent.url, _token(token_file), verify=str(cert))
        assert rep.version == "1"
        from studio.core.errors import ConnectionFailed

        with pytest.raises(ConnectionFailed):
            AgentClient(agent.url, _token(token_file)).status()  # unknown CA is refused
    finally:
        agent.stop()
