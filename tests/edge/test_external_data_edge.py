"""A model whose weights live in a data file beside its graph (the layout past 2 GB), at tiny size: inspect, package
and a real agent take it; the data file is carried and signed like the graph; a missing data file is exit 2 at
inspect and package, and a 422 naming it at the agent (a flipped byte in it, or a signed bundle that left it out),
while the version the agent already serves keeps answering. The 2 GB run is tests/edge/test_past_2gb.py."""

from __future__ import annotations

import dataclasses
import tarfile
from pathlib import Path

import httpx
import numpy as np
import pytest

from studio.cli.main import main as studio_main
from studio.edge.manifest import MANIFEST_NAME, SIGNATURE_NAME, SIGNING_DOMAIN, Manifest, signature_doc
from studio.edge.trust import key_id
from studio.edge.verify import verify_bundle
from studio.package.bundle import build_bundle
from studio.package.client import deploy_bundle
from tests.edge.helpers import AgentProcess, make_mlp, mlp_ref, read_members, write_members


def _infer(agent: AgentProcess, token: str, x: np.ndarray) -> np.ndarray:
    body = {"inputs": [{"name": "x", "shape": list(x.shape), "datatype": "FP32", "data": x.ravel().tolist()}]}
    r = httpx.post(f"{agent.url}/v2/models/tiny/infer", json=body, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200, r.text
    out = r.json()["outputs"][0]
    return np.asarray(out["data"], np.float32).reshape(out["shape"])


def _upload(agent: AgentProcess, token: str, bundle: Path) -> httpx.Response:
    return httpx.post(f"{agent.url}/agent/bundles", content=bundle.read_bytes(), timeout=60,
                      headers={"Authorization": f"Bearer {token}"})


def _without(bundle: Path, member: str, signing_key, out: Path) -> Path:  # type: ignore[no-untyped-def]
    """``bundle`` without ``member``, its manifest re-signed without the entry: a bundle from a tool that forgot
    the data file, signed by a trusted key all the same."""
    members = read_members(bundle)
    raw = next(d for ti, d in members if ti.name == MANIFEST_NAME)
    assert raw is not None
    m = Manifest.parse(raw)
    m = dataclasses.replace(m, files=[f for f in m.files if f.path != member])
    canon = m.canonical()
    pub = bytes(signing_key.verify_key)
    sig = signature_doc(pub, signing_key.sign(SIGNING_DOMAIN + canon).signature, key_id(pub))
    kept = []
    for ti, data in members:
        if ti.name == member:
            continue
        kept.append((ti, canon if ti.name == MANIFEST_NAME else sig if ti.name == SIGNATURE_NAME else data))
    return write_members(out, kept)


def test_package_signs_the_data_file_and_refuses_without_it(tmp_path: Path, signing_key, keys,  # type: ignore[no-untyped-def]
                                                           trust_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = make_mlp(tmp_path / "src" / "tiny.onnx", external_data=True)
    data = model.with_name("tiny.onnx.data")
    assert data.stat().st_size == 16 * 8 * 4
    rep = build_bundle(model, "generic-x86_64", signing_key, tmp_path / "t.tar", version="1")
    with tarfile.open(rep.bundle) as tf:
        manifest = Manifest.parse(tf.extractfile(MANIFEST_NAME).read())  # type: ignore[union-attr]
    entry = manifest.file_map()["model/tiny.onnx.data"]
    assert entry.size == data.stat().st_size
    assert verify_bundle(rep.bundle, trust_file).files == len(manifest.files)

    data.unlink()
    args = ["package", str(model), "--board", "generic-x86_64", "--key", "dev", "--keys-dir", str(keys.root),
            "--out", str(tmp_path / "t2.tar"), "--version", "2"]
    assert studio_main(args) == 2
    err = capsys.readouterr().err
    assert "tiny.onnx.data of tiny.onnx is missing" in err and str(data) in err
    assert not (tmp_path / "t2.tar").exists()
    assert studio_main(["inspect", str(model)]) == 2
    assert "tiny.onnx.data of tiny.onnx is missing" in capsys.readouterr().err


@pytest.mark.slow
def test_agent_serves_it_and_refuses_a_bad_data_file(tmp_path: Path, signing_key, agent: AgentProcess,  # type: ignore[no-untyped-def]
                                                     token_file: Path) -> None:
    token = token_file.read_text().strip()
    v1 = build_bundle(make_mlp(tmp_path / "s1" / "tiny.onnx", external_data=True), "generic-x86_64", signing_key,
                      tmp_path / "v1.tar", version="1").bundle
    deploy_bundle(v1, agent.url, token)
    x = np.random.default_rng(0).random((3, 16), dtype=np.float32)
    np.testing.assert_allclose(_infer(agent, token, x), mlp_ref(x), rtol=1e-6, atol=1e-6)

    v2 = Path(build_bundle(make_mlp(tmp_path / "s2" / "tiny.onnx", scale=3.0, external_data=True),
                           "generic-x86_64", signing_key, tmp_path / "v2.tar", version="2").bundle)
    flipped = tmp_path / "flipped.tar"
    flipped.write_bytes(v2.read_bytes())
    with tarfile.open(flipped) as tf:
        at = tf.getmember("model/tiny.onnx.data").offset_data + 17
    with open(flipped, "r+b") as f:
        f.seek(at)
        b = f.read(1)
        f.seek(at)
        f.write(bytes([b[0] ^ 0x01]))
    r = _upload(agent, token, flipped)
    assert r.status_code == 422 and r.json()["offending"] == "model/tiny.onnx.data", r.text

    r = _upload(agent, token, _without(v2, "model/tiny.onnx.data", signing_key, tmp_path / "nodata.tar"))
    assert r.status_code == 422, r.text
    err = r.json()
    assert "tiny.onnx.data of tiny.onnx is missing" in err["error"] and err["offending"].endswith("tiny.onnx.data")
    assert "version 1 is still serving" in err["hint"]
    np.testing.assert_allclose(_infer(agent, token, x), mlp_ref(x), rtol=1e-6, atol=1e-6)  # v1 untouched

    deploy_bundle(v2, agent.url, token)  # the intact bundle goes in
    np.testing.assert_allclose(_infer(agent, token, x), mlp_ref(x, 3.0), rtol=1e-5, atol=1e-5)
