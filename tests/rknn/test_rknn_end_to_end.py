"""RKNN to the board, end to end through the public command lines, with the real toolkit and a real agent:
export tiny-clip -> `studio inspect --verify --target rk3588` -> `studio compile --backend rknn` -> `studio package
--board rk3588` -> a real studio-agent process (board rk3588, rknn runtime in the toolkit's simulator) answers a
tritonclient request that matches ONNX Runtime within the tolerance the compile reported. Then the refusals: a
model without static shapes, a .rknn built for rk3566 (packaging refuses it, and the agent refuses it at load
while version 1 keeps serving), and a control-flow model whose branch the toolkit fixes differently from ORT."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.edge.conftest import keys, token_file, trust_file  # noqa: F401  (fixtures)
from tests.edge.helpers import PASSPHRASE, AgentProcess

pytestmark = [pytest.mark.export, pytest.mark.timeout(900)]
VISION_SHAPE = "pixel_values=1,3,32,32"


def studio(*argv: str, cwd: Path, keys_dir: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "STUDIO_KEY_PASSPHRASE": PASSPHRASE}
    return subprocess.run([sys.executable, "-m", "studio.cli.main", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def _compile(part: Path, out: Path, cwd: Path, *extra: str) -> dict:
    res = studio("compile", str(part), "--backend", "rknn", "--shape", VISION_SHAPE, "--out", str(out), "--json",
                 *extra, cwd=cwd)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout)


def test_export_verify_compile_package_deploy_and_infer(rknn_env: Path, clip_parts: dict[str, Path], tmp_path: Path,
                                                        keys, trust_file: Path, token_file: Path) -> None:  # noqa: F811
    import tritonclient.http as httpclient
    from onnxruntime import InferenceSession

    part = clip_parts["vision"]
    keys_dir = str(keys.root)
    # no static shape: exit 2, the dynamic input and the fix named
    res = studio("compile", str(part), "--target", "rk3588", "--backend", "rknn", cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert "pixel_values" in res.stderr and "--shape pixel_values=1,3,32,32" in res.stderr
    assert not (tmp_path / "compiled").exists()

    # the toolkit's own verdict on every node, where it came from
    res = studio("inspect", str(part), "--verify", "--target", "rk3588", "--shape", VISION_SHAPE, "--format", "json",
                 cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    runs = [r for r in json.loads(res.stdout)["verification"]["results"] if r["verifier"] == "rknn-rk3588"]
    assert runs and runs[0]["ran"] and runs[0]["tool"] == "rknn-toolkit2 2.5.0", res.stdout[:2000]
    assert not [n for n in runs[0]["nodes"] if n["placement"] in ("cpu", "failed")]

    rep = _compile(part, tmp_path / "compiled" / "vision-rk3588", tmp_path, "--target", "rk3588")
    assert rep["status"] == "succeeded" and rep["backend"] == "rknn"
    assert rep["toolchain"]["platform"] == "rk3588" and rep["toolchain"]["version"] == "2.5.0"
    assert rep["parity"]["mode"] == "simulator" and rep["parity"]["status"] == "passed"
    folder = Path(rep["out_dir"])
    assert {p.name for p in folder.iterdir()} == {"model.rknn", "model.onnx", "compiled.json", "compile_report.json"}
    assert (folder / "model.rknn").read_bytes()[:4] == b"RKNN"

    res = studio("package", str(folder), "--board", "rk3588", "--key", "dev", "--keys-dir", keys_dir, "--out",
                 str(tmp_path / "v1.tar"), "--name", "clipv", "--version", "1", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    pkg = json.loads(res.stdout)
    assert pkg["runtime"] == "rknn" and pkg["compiled"]["platform"] == "rk3588"
    import tarfile

    with tarfile.open(tmp_path / "v1.tar") as tf:
        manifest = json.loads(tf.extractfile("manifest.json").read())  # type: ignore[union-attr]
        runtime = json.loads(tf.extractfile("runtime.json").read())  # type: ignore[union-attr]
    assert manifest["requires"]["rknn"] == {"toolkit": "rknn-toolkit2", "toolkit_version": "2.5.0",
                                            "platform": "rk3588", "dtype": "fp16"}
    assert runtime["runtime"] == "rknn" and runtime["models"][0]["runtime"] == "rknn"

    agent = AgentProcess(tmp_path / "agent-data", trust_file, token_file, extra=["--board", "rk3588"]).start()
    try:
        res = studio("deploy", str(tmp_path / "v1.tar"), "--agent", agent.url, "--token-file", str(token_file),
                     cwd=tmp_path)
        assert res.returncode == 0, res.stderr[-2000:] + agent.log.read_text()[-3000:]
        client = httpclient.InferenceServerClient(agent.url.split("://")[1])
        md = client.get_model_metadata("clipv")
        assert md["platform"] == "rknn" and md["inputs"][0]["shape"] == [1, 3, 32, 32]
        x = np.random.default_rng(7).standard_normal((1, 3, 32, 32)).astype(np.float32)
        inp = httpclient.InferInput("pixel_values", [1, 3, 32, 32], "FP32")
        inp.set_data_from_numpy(x)
        got = client.infer("clipv", [inp])
        want = InferenceSession(str(part), providers=["CPUExecutionProvider"]).run(None, {"pixel_values": x})
        atol, rtol = rep["parity"]["atol"], rep["parity"]["rtol"]
        for out, w in zip(md["outputs"], want, strict=True):
            np.testing.assert_allclose(got.as_numpy(out["name"]), w, atol=atol, rtol=rtol)

        # a .rknn for rk3566: packaging for rk3588 refuses it; forced, the agent refuses it and v1 keeps serving
        rep66 = _compile(part, tmp_path / "compiled" / "vision-rk3566", tmp_path, "--target", "rk3566",
                         "--no-verify")
        res = studio("package", rep66["out_dir"], "--board", "rk3588", "--key", "dev", "--keys-dir", keys_dir,
                     "--out", str(tmp_path / "v2.tar"), "--name", "clipv", "--version", "2", cwd=tmp_path)
        assert res.returncode == 2 and "rk3566" in res.stderr and not (tmp_path / "v2.tar").exists()
        res = studio("package", rep66["out_dir"], "--board", "rk3588", "--key", "dev", "--keys-dir", keys_dir,
                     "--out", str(tmp_path / "v2.tar"), "--name", "clipv", "--version", "2", "--force",
                     cwd=tmp_path)
        assert res.returncode == 0, res.stderr[-2000:]
        res = studio("deploy", str(tmp_path / "v2.tar"), "--agent", agent.url, "--token-file", str(token_file),
                     cwd=tmp_path)
        assert res.returncode != 0
        assert "built for rk3566" in res.stderr and "rk3588" in res.stderr and "version 1 is still serving" in \
            res.stderr, res.stderr
        assert client.get_model_metadata("clipv")["versions"] == ["1"]
        again = client.infer("clipv", [inp])
        np.testing.assert_array_equal(again.as_numpy(md["outputs"][0]["name"]), got.as_numpy(md["outputs"][0]["name"]))
    finally:
        agent.stop()


def _branch_model(path: Path, on_values: bool) -> Path:
    """y = If(cond, Relu(x), Neg(x)) * x; cond = batch == 1 (shapes only) or sum(x) > 0 (values)."""
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h

    then_g = h.make_graph([h.make_node("Relu", ["x"], ["t"], name="then_relu")], "then", [],
                          [h.make_tensor_value_info("t", T.FLOAT, None)])
    else_g = h.make_graph([h.make_node("Neg", ["x"], ["e"], name="else_neg")], "else", [],
                          [h.make_tensor_value_info("e", T.FLOAT, None)])
    if on_values:
        cond = [h.make_node("ReduceSum", ["x"], ["s"], name="sum", keepdims=0),
                h.make_node("Constant", [], ["zero"], value=h.make_tensor("z", T.FLOAT, [], [0.0])),
                h.make_node("Greater", ["s", "zero"], ["c"], name="positive")]
    else:
        cond = [h.make_node("Shape", ["x"], ["sh"], name="shape"),
                h.make_node("Constant", [], ["idx"], value=h.make_tensor("i", T.INT64, [], [0])),
                h.make_node("Gather", ["sh", "idx"], ["b"], name="batch"),
                h.make_node("Constant", [], ["one"], value=h.make_tensor("o", T.INT64, [], [1])),
                h.make_node("Equal", ["b", "one"], ["c"], name="single")]
    nodes = [*cond, h.make_node("If", ["c"], ["y0"], name="branch", then_branch=then_g, else_branch=else_g),
             h.make_node("Mul", ["y0", "x"], ["y"], name="mul")]
    g = h.make_graph(nodes, "cf", [h.make_tensor_value_info("x", T.FLOAT, ["N", 8])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["N", 8])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


def test_control_flow_the_toolkit_folds_wrongly_is_caught_by_parity_and_fixed_by_folding(rknn_env: Path,
                                                                                        tmp_path: Path) -> None:
    model = _branch_model(tmp_path / "branch.onnx", on_values=False)
    res = studio("compile", str(model), "--target", "rk3588", "--backend", "rknn", "--shape", "x=1,8", "--out",
                 str(tmp_path / "c1"), "--json", cwd=tmp_path)
    rep = json.loads(res.stdout)
    # rknn-toolkit2 2.5.0 builds it, but its simulator takes the other branch: parity says so, nothing written
    assert res.returncode == 1 and rep["status"] == "failed" and rep["diagnosis"]["stage"] == "verify"
    assert rep["parity"]["outputs"][0]["cosine"] < 0.9
    assert "If 'branch'" in rep["diagnosis"]["hint"] and "--static N=1 --simplify" in rep["diagnosis"]["hint"]
    assert not (tmp_path / "c1").exists()
    # the fold the hint names, then the same compile: built, and the simulator matches ORT
    res = studio("fix", str(model), "--static", "N=1", "--simplify", "--out", str(tmp_path / "static.onnx"),
                 cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    res = studio("compile", str(tmp_path / "static.onnx"), "--target", "rk3588", "--backend", "rknn", "--out",
                 str(tmp_path / "c2"), "--json", cwd=tmp_path)
    rep = json.loads(res.stdout)
    assert res.returncode == 0 and rep["parity"]["status"] == "passed", res.stderr[-2000:]

    on_values = _branch_model(tmp_path / "values.onnx", on_values=True)
    res = studio("compile", str(on_values), "--target", "rk3588", "--backend", "rknn", "--shape", "x=1,8",
                 "--out", str(tmp_path / "c3"), "--json", cwd=tmp_path)
    rep = json.loads(res.stdout)
    assert res.returncode == 1 and rep["diagnosis"]["stage"] == "build"
    assert rep["diagnosis"]["culprit"] == "branch" and rep["diagnosis"]["culprit_op"] == "If"
    assert "depends on values" in rep["diagnosis"]["hint"]


def test_int8_build_reports_per_layer_error_mapped_to_nodes(rknn_env: Path, clip_parts: dict[str, Path],
                                                           tmp_path: Path) -> None:
    from studio.inspect.layer_errors import node_error_heat

    part = clip_parts["vision"]
    rep = _compile(part, tmp_path / "v8", tmp_path, "--target", "rk3588", "--quantize", "int8")
    assert rep["toolchain"]["dtype"] == "int8" and rep["parity"]["status"] == "passed"
    assert rep["parity"]["outputs"][0]["cosine"] >= 0.98
    rows = rep["layer_errors"]
    assert len(rows) > 20 and all({"tensor", "entire_cos"} <= set(r) for r in rows)
    heat = node_error_heat(part, rows)
    import onnx

    names = {n.name for n in onnx.load(str(part), load_external_data=False).graph.node}
    assert len(heat) >= 20 and set(heat) <= names and all(v >= 0 for v in heat.values())
