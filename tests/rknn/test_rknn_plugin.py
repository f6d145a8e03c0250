"""The studio-rknn plugin seen from the studio: its manifest and verifier contract, a broken environment,
and the real toolkit on the studio's own tiny-clip export (static shapes, IsNaN fallback, simulator parity)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from studio.core.errors import InputError
from studio.verify.api import Verifier, VerifyResult

PLUGIN = Path(__file__).resolve().parents[2] / "plugins" / "studio-rknn"


def test_distribution_declares_its_entry_point_and_console_script() -> None:
    import tomllib

    meta = tomllib.loads((PLUGIN / "pyproject.toml").read_text())["project"]
    assert meta["entry-points"]["studio.plugins"] == {"studio-rknn": "studio_rknn.manifest:manifest"}
    assert meta["scripts"]["studio-rknn-env"] == "studio_rknn.env_cli:main"
    assert not any("rknn" in d for d in meta["dependencies"])  # the toolkit lives in its own environment
    from studio_rknn.manifest import manifest

    m = manifest()
    assert set(m) == {"name", "description", "provides", "module", "requires", "hint", "messages"}
    assert set(m["provides"]) <= {"verifiers", "compilers", "runtimes", "targets", "evaluators"}


def test_verifiers_meet_the_contract_and_import_no_toolkit() -> None:
    from studio_rknn.plugin import verifier, verifiers

    for name in verifiers():
        v = verifier(name)
        assert isinstance(v, Verifier) and v.name == name
    assert "rknn" not in sys.modules  # the toolkit is never imported in the studio's process


def test_broken_environment_is_unavailable_and_inspect_still_works(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from studio_rknn.plugin import verifier

    broken = tmp_path / "env"
    (broken / "bin").mkdir(parents=True)
    (broken / "bin" / "python").write_text("")
    monkeypatch.setenv("STUDIO_RKNN_ENV", str(broken))
    ok, reason = verifier("rknn-rk3588").available()
    assert not ok and str(broken) in reason and "studio-rknn-env create" in reason

    from onnx import TensorProto, helper

    from studio.inspect.api import inspect_model

    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    import onnx

    onnx.save(model, tmp_path / "m.onnx")
    assert inspect_model(tmp_path / "m.onnx", ["rk3588"]).targets["rk3588"].verdict == "pass"
    res = verifier("rknn-rk3588").verify(tmp_path / "m.onnx")
    assert not res.ran and "studio-rknn-env create" in res.error


@pytest.mark.export
def test_exported_vision_part_needs_static_shapes(clip_parts: dict[str, Path]) -> None:
    from studio_rknn.plugin import verifier

    with pytest.raises(InputError) as ei:
        verifier("rknn-rk3588").verify(clip_parts["vision"])
    hint = ei.value.hint or ""
    assert "pixel_values" in ei.value.message and "studio fix" in hint and "--static" in hint
    assert "--shape pixel_values=" in (ei.value.hint or "")


@pytest.mark.export
def test_tiny_clip_vision_builds_and_matches_ort_in_the_simulator(rknn_env: Path,
                                                                  clip_parts: dict[str, Path]) -> None:
    import onnxruntime as ort
    from studio_rknn.plugin import simulate, verifier

    from studio.inspect.api import load_structure

    part = clip_parts["vision"]
    res = verifier("rknn-rk3588").verify(part, {"pixel_values": [1, 3, 32, 32]})
    assert res.ran and not res.error and res.shapes == {"pixel_values": [1, 3, 32, 32]}
    assert VerifyResult.from_dict(res.to_dict()) == res
    keys = {r.key for r in load_structure(part).nodes if not r.graph}
    assert {n.node for n in res.nodes} == keys  # every node, under the inspector's key
    assert not [n for n in res.nodes if n.placement in ("cpu", "failed")]
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    want = ort.InferenceSession(str(part), providers=["CPUExecutionProvider"]).run(None, {"pixel_values": x})
    got = simulate(part, {"pixel_values": x})
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        assert float(np.abs(g - w).max()) <= 2e-2 * float(np.abs(w).max())  # fp16 NPU simulator


@pytest.mark.export
def test_tiny_clip_text_isnan_is_a_cpu_fallback_on_its_nodes(rknn_env: Path, clip_parts: dict[str, Path]) -> None:
    import onnx
    from studio_rknn.plugin import verifier

    part = clip_parts["text"]
    names = [i.name for i in onnx.load(str(part), load_external_data=False).graph.input]
    res = verifier("rknn-rk3588").verify(part, {n: [1, 8] for n in names})
    assert res.ran and not res.error
    isnan = [n for n in res.nodes if n.op_type == "IsNaN"]
    assert isnan and all((n.verdict, n.placement) == ("risky", "cpu") for n in isnan)
    assert all(n.message.startswith(f"No lowering found for: {n.node}, node type = IsNaN") for n in isnan)
    assert all(n.placement == "accelerator" for n in res.nodes if n.op_type == "MatMul")


def test_worker_resolves_only_path_fields_in_a_folder_holding_build_and_verify(
        rknn_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The studio run from a working folder that holds build/ and verify/: the action "build" stays an action
    (it was turned into WORKING_FOLDER/build: "unknown action"), relative model and output paths still resolve."""
    from studio_rknn import client

    from tests.edge.helpers import make_mlp

    work = tmp_path / "work"
    for name in ("build", "verify", "check", "infer"):
        (work / name).mkdir(parents=True)
    make_mlp(work / "models" / "mlp.onnx")
    monkeypatch.chdir(work)
    res = client.call("build", env=rknn_env, model="models/mlp.onnx", platform="rk3588", crop=True,
                      inputs=[{"name": "x", "shape": [1, 16], "dtype": "float32"}], output="out/mlp.rknn")
    assert res["output"] == str(work / "out" / "mlp.rknn") and (work / "out" / "mlp.rknn").stat().st_size > 0


def test_check_and_evaluate_record_the_failed_stage_and_release(rknn_env: Path, tmp_path: Path) -> None:
    """A model the toolkit cannot load: ``check`` and ``evaluate`` answer (never raise) with the stage that failed,
    the toolkit's words and the time taken, and the worker goes on to build a good model in the same run."""
    from studio_rknn import client

    from tests.edge.helpers import make_mlp

    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not an onnx file")
    inputs = [{"name": "x", "shape": [1, 16], "dtype": "float32"}]
    for action, extra in (("check", {}), ("evaluate", {"out_dir": str(tmp_path / "eval")})):
        res = client.call(action, env=rknn_env, model=str(bad), platform="rk3588", inputs=inputs,
                          log=str(tmp_path / f"{action}.log"), **extra)
        assert res["reached"] == "config" and res["failed_stage"] == "load", res
        assert res["error"] and res["seconds"] >= 0 and res["outputs"] == []
    good = make_mlp(tmp_path / "mlp.onnx")
    res = client.call("check", env=rknn_env, model=str(good), platform="rk3588", inputs=inputs, crop=True,
                      log=str(tmp_path / "good.log"))
    assert res["reached"] == "inference" and not res["failed_stage"], res
