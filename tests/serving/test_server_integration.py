"""The real tritonserver (CPU, Python backend) on free loopback ports, driven through tritonclient.

One explicit-mode server serves the whole module; a second one covers poll mode; CLI tests start their own.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from studio.triton.client import ServerError, TritonClient
from studio.triton.repo_builder import BuildOptions, build_repo
from studio.triton.repo_check import check_repo
from studio.triton.runner import TritonRunner
from studio.triton.server import LocalTritonServer
from tests.serving import tiny_models as tm

pytestmark = [pytest.mark.triton, pytest.mark.timeout(300)]


def _ort(path: Path, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    s = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, feed), strict=True))


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("models")
    return {"mlp": tm.mlp(d / "mlp.onnx", seed=0), "mlp_v2": tm.mlp(d / "mlp_v2.onnx", seed=7),
            "split": tm.split_export(d / "split")}


@pytest.fixture(scope="module")
def repo(models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("repo")
    build_repo(BuildOptions(models["mlp"], r, "mlp", flavor="python", dynamic_batching=True, max_queue_delay_us=500))
    build_repo(BuildOptions(models["mlp"], r, "mlp_ort", flavor="onnxruntime", warmup=True))
    build_repo(BuildOptions(models["split"], r, "clip", flavor="onnxruntime"))
    # signed versions (studio.package manifest): verified by model.py before anything loads
    from studio.package.keys import KeyStore

    keys = KeyStore(tmp_path_factory.mktemp("keys"))
    keys.generate("release", "pw")
    signer, trust = keys.load_signing_key("release", "pw"), [str(keys.public_path("release"))]
    for name, flavor in (("mlp_signed", "python"), ("mlp_ort_signed", "onnxruntime"), ("mlp_tampered", "python")):
        build_repo(BuildOptions(models["mlp"], r, name, flavor=flavor, sign_key=signer, trust=trust))
    onnx_file = r / "mlp_tampered" / "1" / "model.onnx"
    data = bytearray(onnx_file.read_bytes())
    data[len(data) // 2] ^= 0x01  # one flipped bit in the weights
    onnx_file.write_bytes(bytes(data))
    report = check_repo(r)
    assert report.ok, [f.render() for f in report.findings]
    return r


@pytest.fixture(scope="module")
def server(repo: Path):  # type: ignore[no-untyped-def]
    srv = LocalTritonServer(repo, model_control_mode="explicit",
                            load_models=["mlp", "mlp_ort", "clip", "clip_text_pipeline"])
    srv.start()
    yield srv
    srv.stop()
    srv.cleanup()


def _x(n: int = 3, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, 16)).astype(np.float32)


def test_infer_matches_onnxruntime_over_http_and_grpc(server: LocalTritonServer, models: dict[str, Path]) -> None:
    assert server.converted == ["clip_text", "clip_vision", "mlp_ort", "mlp_ort_signed"]  # onnxruntime_onnx via python
    x = _x()
    want = _ort(models["mlp"], {"x": x})["y"]
    h = httpclient.InferenceServerClient(server.http_url.removeprefix("http://"))
    for name in ("mlp", "mlp_ort"):
        inp = httpclient.InferInput("x", list(x.shape), "FP32")
        inp.set_data_from_numpy(x)
        got = h.infer(name, [inp]).as_numpy("y")
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    g = grpcclient.InferenceServerClient(server.grpc_url.removeprefix("grpc://"))
    inp = grpcclient.InferInput("x", list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    np.testing.assert_allclose(g.infer("mlp_ort", [inp]).as_numpy("y"), want, rtol=1e-5, atol=1e-5)
    # the facade, JSON (no binary extension) and binary, and the runner interface
    c = TritonClient(server.http_url, metrics_url=server.metrics_url)
    for binary in (False, True):
        np.testing.assert_allclose(c.infer("mlp", {"x": x}, binary=binary)["y"], want, rtol=1e-5, atol=1e-5)
    with TritonRunner(server.grpc_url, "mlp_ort") as runner:
        np.testing.assert_allclose(runner.infer({"x": x})["y"], want, rtol=1e-5, atol=1e-5)
        assert runner.input_metadata() == {"x": ("TYPE_FP32", [None, 16])}


def test_text_only_request_skips_the_vision_encoder(server: LocalTritonServer, models: dict[str, Path]) -> None:
    c = TritonClient(server.grpc_url, metrics_url=server.metrics_url)

    def counts() -> dict[str, int]:
        return {s.name: s.inference_count for s in c.statistics() if s.name.startswith("clip")}

    before = counts()
    ids, mask = tm.tokenize("a photo of a cat")
    out = c.infer("clip", {"input_ids": ids, "attention_mask": mask})
    after = counts()
    assert set(out) == {"text_embeds"}
    want = _ort(models["split"] / "text_encoder.onnx", {"input_ids": ids, "attention_mask": mask})["text_embeds"]
    np.testing.assert_allclose(out["text_embeds"], want, rtol=1e-5, atol=1e-5)
    assert after["clip_text"] == before.get("clip_text", 0) + 1
    assert after.get("clip_vision", 0) == before.get("clip_vision", 0)  # never ran
    px = np.random.default_rng(1).random((1, 3, 8, 8)).astype(np.float32)
    out = c.infer("clip", {"pixel_values": px, "input_ids": ids})  # mask defaults to ones
    assert set(out) == {"text_embeds", "image_embeds"}
    np.testing.assert_allclose(out["image_embeds"],
                               _ort(models["split"] / "vision_encoder.onnx", {"pixel_values": px})["image_embeds"],
                               rtol=1e-5, atol=1e-5)
    assert counts()["clip_vision"] == after.get("clip_vision", 0) + 1
    # text through the tokenizer ensemble (BYTES input) equals tokenising locally
    out = c.infer("clip_text_pipeline", {"TEXT": np.array([[b"a photo of a cat"]], dtype=object)})
    np.testing.assert_allclose(out["text_embeds"], want, rtol=1e-5, atol=1e-5)


def _hammer(url: str, model: str, stop: threading.Event, results: list, errors: list) -> None:
    c = TritonClient(url, timeout=20)
    x = _x(1, seed=3)
    while not stop.is_set():
        try:
            results.append(c.infer(model, {"x": x})["y"].copy())
        except Exception as exc:  # every failure is a test failure, collected for the message
            errors.append(repr(exc))


def _wait_for(pred, timeout: float = 60.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.2)
    return False


def _swap_under_load(url: str, name: str, action, expect: np.ndarray, log=lambda: "") -> tuple[list, list]:  # type: ignore[no-untyped-def]
    """Keep one client sending requests while ``action`` swaps the model; until answers equal ``expect``."""
    stop, results, errors = threading.Event(), [], []  # type: ignore[var-annotated]
    t = threading.Thread(target=_hammer, args=(url, name, stop, results, errors))
    t.start()
    try:
        assert _wait_for(lambda: len(results) >= 5)
        action()
        assert _wait_for(lambda: np.allclose(results[-1], expect, atol=1e-5)), log()
        n = len(results)
        assert _wait_for(lambda: len(results) >= n + 5)
    finally:
        stop.set()
        t.join(30)
    return results, errors


def test_hot_reload_explicit_while_serving(server: LocalTritonServer, repo: Path, models: dict[str, Path]) -> None:
    x = _x(1, seed=3)
    v1 = _ort(models["mlp"], {"x": x})["y"]
    v2 = _ort(models["mlp_v2"], {"x": x})["y"]
    c = TritonClient(server.http_url, metrics_url=server.metrics_url)
    for name in ("mlp", "mlp_ort"):
        def swap(name: str = name) -> None:
            build_repo(BuildOptions(models["mlp_v2"], repo, name, flavor="python" if name == "mlp" else "onnxruntime"))
            server.sync()  # the mirror of the onnxruntime_onnx model picks up version 2
            c.load(name)  # explicit mode: a load of a loaded model reloads it, new version included

        results, errors = _swap_under_load(server.http_url, name, swap, v2, server.log_tail)
        assert errors == []
        assert any(np.allclose(r, v1, atol=1e-5) for r in results)
        assert all(np.allclose(r, v1, atol=1e-5) or np.allclose(r, v2, atol=1e-5) for r in results)
        states = {(m.name, m.version): m.state for m in c.repository_index()}
        assert states[(name, "2")] == "READY"


def test_upload_version_then_unload(server: LocalTritonServer, repo: Path, models: dict[str, Path]) -> None:
    c = TritonClient(server.grpc_url, metrics_url=server.metrics_url)
    x = _x(2)
    c.upload_version("mlp", 5, repo / "mlp")  # newest local version (v2 weights) as version 5
    assert _wait_for(lambda: any(m.name == "mlp" and m.version == "5" and m.state == "READY"
                                 for m in c.repository_index()))
    np.testing.assert_allclose(c.infer("mlp", {"x": x})["y"], _ort(models["mlp_v2"], {"x": x})["y"], atol=1e-5)
    cfg = c.model_config("mlp")
    assert cfg["backend"] == "python" and int(cfg["max_batch_size"]) == 8
    c.unload("mlp")
    assert _wait_for(lambda: not c.model_ready("mlp"))
    with pytest.raises(ServerError):
        c.infer("mlp", {"x": x})
    c.load("mlp")  # back from the repository
    c.wait_model_ready("mlp")


def test_statistics_and_metrics(server: LocalTritonServer) -> None:
    c = TritonClient(server.http_url, metrics_url=server.metrics_url)
    for _ in range(3):
        c.infer("mlp_ort", {"x": _x(4)})
    # Triton records a request's statistics after its response is sent: on a loaded machine the last one can
    # still be missing when the client asks right away
    assert _wait_for(lambda: {s.name: s for s in c.statistics()}["mlp_ort"].batch_sizes.get(4, 0) >= 3)
    st = {s.name: s for s in c.statistics()}["mlp_ort"]
    assert st.success_count >= 3 and st.inference_count >= 12 and st.batch_sizes.get(4, 0) >= 3
    assert st.avg_compute_infer_us > 0 and st.avg_queue_us >= 0
    snap = c.metrics()
    assert snap.cpu_memory_total_bytes and snap.cpu_memory_total_bytes > 0
    assert snap.describe()["GPU memory used"] == "not available"  # no GPU here
    assert sum(m.success for m in snap.model("mlp_ort")) >= 3
    info = c.info()
    assert info.live and info.ready and "model_repository" in info.extensions and info.version


def test_hot_reload_in_poll_mode(models: dict[str, Path], tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    build_repo(BuildOptions(models["mlp"], repo, "mlp", flavor="python"))
    build_repo(BuildOptions(models["mlp"], repo, "mlp_ort", flavor="onnxruntime"))
    x = _x(1, seed=3)
    v2 = _ort(models["mlp_v2"], {"x": x})["y"]
    with LocalTritonServer(repo, model_control_mode="poll", repository_poll_secs=1) as srv:
        for name, flavor in (("mlp", "python"), ("mlp_ort", "onnxruntime")):
            def swap(name: str = name, flavor: str = flavor) -> None:
                build_repo(BuildOptions(models["mlp_v2"], repo, name, flavor=flavor))  # the poller finds it

            _results, errors = _swap_under_load(srv.http_url, name, swap, v2, srv.log_tail)
            assert errors == [], errors[:3]


def _start_cli(args: list[str]) -> tuple[subprocess.Popen[str], dict[str, str]]:
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    urls: dict[str, str] = {}
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        m = re.match(r"\s+(HTTP|gRPC|metrics)\s+(\S+)", line)
        if m:
            urls[m.group(1)] = m.group(2)
        if "press Ctrl+C" in line:
            break
    assert "HTTP" in urls, "".join(lines)
    return proc, urls


@pytest.mark.parametrize("which", ["serve-local", "multimodal-serve"])
def test_cli_serves_and_stops_cleanly(which: str, repo: Path, models: dict[str, Path]) -> None:
    if which == "serve-local":
        args = [sys.executable, "-m", "studio.cli.main", "triton", "serve-local", "--repo", str(repo),
                "--load-model", "mlp_ort"]
        sig, model = signal.SIGINT, "mlp_ort"
    else:
        args = [sys.executable, "-c", "import sys; from studio.cli.triton_cmd import serve_alias_main; "
                "sys.exit(serve_alias_main())", "--model", str(models["mlp"]), "--device", "cpu",
                "--max-batch-size", "8"]
        sig, model = signal.SIGTERM, "mlp"
    proc, urls = _start_cli(args)
    try:
        c = TritonClient(urls["HTTP"], metrics_url=urls["metrics"])
        assert c.model_ready(model)
        assert c.infer(model, {"x": _x(2)})["y"].shape == (2, 8)
        status = subprocess.run([sys.executable, "-m", "studio.cli.main", "triton", "status", "--url", urls["gRPC"]],
                                capture_output=True, text=True, timeout=60)
        assert status.returncode == 0 and model in status.stdout and "READY" in status.stdout
    finally:
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    assert "stopped" in out
    with pytest.raises(Exception):  # noqa: B017 - the port is closed: whichever error the client raises
        TritonClient(urls["HTTP"], timeout=2).is_live()


# Last of the module-server tests: a model that failed to load leaves Triton "not ready" (strict readiness).
def test_signed_versions_load_and_a_tampered_one_is_refused(server: LocalTritonServer,
                                                            models: dict[str, Path]) -> None:
    client = TritonClient(server.http_url)
    x = _x()
    want = _ort(models["mlp"], {"x": x})
    for name in ("mlp_signed", "mlp_ort_signed"):  # python flavour, and onnxruntime served through the mirror
        client.load(name)
        got = client.infer(name, {"x": x})
        np.testing.assert_allclose(next(iter(got.values())), next(iter(want.values())), rtol=1e-5, atol=1e-6)
    with pytest.raises(ServerError) as ei:
        client.load("mlp_tampered")
    assert "signature check failed" in str(ei.value) and "model.onnx" in str(ei.value)
    assert not client.model_ready("mlp_tampered")
    assert client.model_ready("mlp_signed")  # the good ones keep serving
