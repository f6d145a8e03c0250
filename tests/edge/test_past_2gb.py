"""A model past protobuf's 2 GB through the whole flow: export -> inspect -> package -> a real agent -> inference.

The model is the tiny CLIP sample with a 1.06M-token vocabulary (bench.real_models "clip-past-2gb": 2.18 GB of
weights, nearly all one embedding table, so an inference reads a few rows of it). Each step runs as a user runs
it (the CLI in a subprocess, the agent as its own process) and must take the graph + model.onnx.data layout: the
data file is carried in the bundle and signed like the graph, and one byte flipped inside it in the bundle is
refused by the agent with the data file named, while the version it already serves keeps answering.

Measured on the 2-core machine (2026-12-04): about 110 s, peak RSS 4.8 GB (the export subprocess: the torch
model's mmapped weights plus the TorchScript exporter's copy of the one big tensor while it writes it); pytest's
own process stays under 1 GB. Disk: at most about 9 GB at once (bundle + the agent's upload, staging and version
copies); every big file is removed as soon as the next step no longer needs it, and all of it at the end.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import httpx
import numpy as np
import pytest

from tests.edge.helpers import AgentProcess, dev_keys

pytestmark = [pytest.mark.slow, pytest.mark.export]
ROOT = Path(__file__).resolve().parents[2]
NEED_DISK = 12 * 10**9


def _run(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{args[:3]} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _feeds() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    return {"input_ids": rng.integers(0, 300, (2, 8)).astype(np.int64), "attention_mask": np.ones((2, 8), np.int64),
            "pixel_values": rng.standard_normal((2, 3, 32, 32)).astype(np.float32)}


def _chunks(path: Path):  # type: ignore[no-untyped-def]
    with open(path, "rb") as f:
        while chunk := f.read(8 << 20):
            yield chunk


def _infer(agent: AgentProcess, name: str, feeds: dict[str, np.ndarray], token: str) -> dict[str, np.ndarray]:
    dtypes = {np.int64: "INT64", np.float32: "FP32"}
    body = {"inputs": [{"name": k, "shape": list(v.shape), "datatype": dtypes[v.dtype.type], "data": v.ravel().tolist()}
                       for k, v in feeds.items()]}
    r = httpx.post(f"{agent.url}/v2/models/{name}/infer", json=body, timeout=120,
                   headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200, r.text
    return {o["name"]: np.asarray(o["data"], np.float32).reshape(o["shape"]) for o in r.json()["outputs"]}


def _flip_byte_in_member(bundle: Path, member: str) -> int:
    """Flip one byte in the middle of ``member``'s data inside the tar, in place; returns its offset."""
    with tarfile.open(bundle) as tf:
        m = tf.getmember(member)
        at = m.offset_data + m.size // 2
    with open(bundle, "r+b") as f:
        f.seek(at)
        b = f.read(1)
        f.seek(at)
        f.write(bytes([b[0] ^ 0xFF]))
    return at


def test_past_2gb_export_inspect_package_agent(tmp_path: Path) -> None:
    if shutil.disk_usage(tmp_path).free < NEED_DISK:
        pytest.skip(f"needs {NEED_DISK / 1e9:.0f} GB free in {tmp_path} for a 2.2 GB model's copies")
    hf, export_dir = tmp_path / "hf", tmp_path / "onnx"
    model = export_dir / "model.onnx"
    agent = None
    try:
        _run("-m", "bench.real_models", "clip-past-2gb", str(hf))
        rep = json.loads(_run("-m", "studio.cli.main", "export", str(hf), "--output", str(model), "--json", "-q").stdout)
        assert rep["status"] == "succeeded", rep.get("diagnosis")
        assert rep["validation"]["checker"] == "passed" and rep["validation"]["shape_inference"] == "passed"
        data = export_dir / "model.onnx.data"
        kinds = {Path(o["path"]).name: o["kind"] for o in rep["outputs"]}
        assert kinds["model.onnx"] == "model" and kinds["model.onnx.data"] == "data"
        assert data.stat().st_size > 2**31 and model.stat().st_size < 16 << 20  # the graph alone is small
        shutil.rmtree(hf)

        insp = json.loads(_run("-m", "studio.cli.main", "inspect", str(model), "--target", "ort-cpu", "--format", "json").stdout)
        assert insp["stats"]["external_data_files"] == ["model.onnx.data"]
        assert insp["stats"]["external_data_bytes"] > 2**31
        assert insp["targets"]["ort-cpu"]["verdict"] == "pass"

        import onnxruntime as ort  # the reference answer: ONNX Runtime on the export (its weights mapped)

        feeds = _feeds()
        sess = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        want = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds), strict=True))
        del sess

        from studio.edge.manifest import Manifest
        from studio.package.bundle import build_bundle
        from studio.package.client import deploy_bundle

        keys = dev_keys(tmp_path / "keys")
        bundle = Path(build_bundle(export_dir, "generic-x86_64", keys.signing_key, tmp_path / "big.tar",
                                   name="bigclip", version="1").bundle)
        with tarfile.open(bundle) as tf:
            manifest = Manifest.parse(tf.extractfile("manifest.json").read())  # type: ignore[union-attr]
        signed = manifest.file_map()["model/model.onnx.data"]
        assert signed.size == data.stat().st_size and len(signed.sha256) == 64  # the data file is signed
        shutil.rmtree(export_dir)

        agent = AgentProcess(tmp_path / "agent", keys.trust, keys.token).start(timeout=120)
        token = keys.token.read_text().strip()
        got = deploy_bundle(bundle, agent.url, token)
        assert got.version == "1"
        answer = _infer(agent, "bigclip", feeds, token)
        for name, ref in want.items():
            np.testing.assert_allclose(answer[name], ref, rtol=1e-5, atol=1e-5)

        _flip_byte_in_member(bundle, "model/model.onnx.data")
        r = httpx.post(f"{agent.url}/agent/bundles", content=_chunks(bundle), timeout=600,
                       headers={"Authorization": f"Bearer {token}", "Content-Length": str(bundle.stat().st_size)})
        assert r.status_code == 422, r.text
        err = r.json()
        assert err["offending"] == "model/model.onnx.data" and "SHA-256" in err["error"]
        answer = _infer(agent, "bigclip", feeds, token)  # version 1 still serves
        np.testing.assert_allclose(answer["logits_per_image"], want["logits_per_image"], rtol=1e-5, atol=1e-5)
        status = httpx.get(f"{agent.url}/agent/status", headers={"Authorization": f"Bearer {token}"}).json()
        assert status["models"]["bigclip"]["active"] == "1"
    finally:
        if agent is not None:
            agent.stop()
        for p in (hf, export_dir, tmp_path / "agent", tmp_path / "big.tar"):
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
