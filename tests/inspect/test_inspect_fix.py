"""`studio fix`: static dims, onnxslim, FP16 / INT8 per part, parity and before/after analysis."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnx.helper as h
import pytest
from inspect_models import make, vi
from onnx import TensorProto as T
from onnx import numpy_helper

from studio.cli.main import main
from studio.core.errors import InputError
from studio.inspect.api import inspect_model
from studio.inspect.synthetic import save_transformer
from studio.optimize.api import find_parts, fix_model


def _vision_part(path: Path) -> Path:
    rng = np.random.default_rng(1)
    w1 = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.2, "conv.w")
    w2 = numpy_helper.from_array(rng.standard_normal((8, 16)).astype(np.float32) * 0.2, "proj.w")
    m = make([h.make_node("Conv", ["pixel_values", "conv.w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
              h.make_node("Relu", ["c"], ["r"], name="relu"),
              h.make_node("GlobalAveragePool", ["r"], ["p"], name="gap"),
              h.make_node("Flatten", ["p"], ["f"], name="flatten"),
              h.make_node("MatMul", ["f", "proj.w"], ["image_embeds"], name="proj")],
             [vi("pixel_values", T.FLOAT, ["batch", 3, 16, 16])], [vi("image_embeds", T.FLOAT, ["batch", 16])],
             [w1, w2])
    onnx.save(m, str(path))
    return path


@pytest.fixture()
def split_export(tmp_path: Path) -> Path:
    d = tmp_path / "export"
    d.mkdir()
    save_transformer(d / "model.onnx", layers=1, hidden=16, heads=2)
    save_transformer(d / "model.text.onnx", layers=1, hidden=16, heads=2)
    _vision_part(d / "model.vision.onnx")
    return d / "model.onnx"


def test_static_dims_and_simplify(tmp_path: Path) -> None:
    src = save_transformer(tmp_path / "m.onnx", layers=2)
    out = tmp_path / "out" / "m.onnx"
    rep = fix_model(src, out, static={"batch": 1, "sequence": 16}, simplify=True, targets=["rk3588", "qnn-htp"])
    f = rep.files[0]
    assert rep.passed and f.parity and f.parity.passed and f.parity.cases[0].input_shapes == {"input_ids": [1, 16]}
    m = onnx.load(str(out))
    assert [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim] == [1, 16]
    assert len(m.graph.node) < len(onnx.load(str(src)).graph.node)  # onnxslim folded the shape arithmetic
    assert not any(n.op_type in ("Shape", "Range") for n in m.graph.node)
    d = f.diff
    assert d and d.dynamic_before and d.dynamic_after == []
    # rknn-toolkit2 2.5.0 builds a Range once static shapes fold it: the dynamic dims were rk3588's problem
    assert d.targets["rk3588"].before == "risky" and d.targets["rk3588"].after != "fail"
    assert any("dynamic-shape" in r for r in d.targets["rk3588"].resolved)
    assert inspect_model(out, ["qnn-htp"]).dynamic.is_static


def test_static_rejects_unknown_dims(tmp_path: Path) -> None:
    src = save_transformer(tmp_path / "m.onnx", layers=1)
    with pytest.raises(InputError, match="nope") as ei:
        fix_model(src, tmp_path / "o.onnx", static={"nope": 3})
    assert "batch" in (ei.value.hint or "")
    assert not (tmp_path / "o.onnx").exists()
    with pytest.raises(InputError, match="nothing to fix"):
        fix_model(src, tmp_path / "o.onnx")


def test_fp16_and_int8_whole_model(tmp_path: Path) -> None:
    src = save_transformer(tmp_path / "m.onnx", layers=2)
    r16 = fix_model(src, tmp_path / "m16.onnx", fp16=True, targets=["ort-cpu"])
    assert r16.passed and r16.files[0].precision == "fp16"
    assert any(t.data_type == T.FLOAT16 for t in onnx.load(str(tmp_path / "m16.onnx")).graph.initializer)
    r8 = fix_model(src, tmp_path / "m8.onnx", int8=True, targets=["ort-cpu"])
    assert r8.passed and r8.files[0].parity.cases[0].outputs[0].cosine > 0.98
    ops = {n.op_type for n in onnx.load(str(tmp_path / "m8.onnx")).graph.node}
    assert "DynamicQuantizeLinear" in ops or "MatMulInteger" in ops
    d = r8.files[0].diff
    assert d.initializer_bytes_after < d.initializer_bytes_before / 2


def test_per_modality_parts_vision_int8_text_fp16(split_export: Path, tmp_path: Path) -> None:
    assert set(find_parts(split_export)) == {"text", "vision"}
    out = tmp_path / "fixed" / "model.onnx"
    rc = main(["fix", str(split_export), "--out", str(out), "--int8", "vision", "--fp16", "text",
               "--static", "batch=1", "-t", "qnn-htp", "--report", str(tmp_path / "fix.json")])
    assert rc == 0
    rep = json.loads((tmp_path / "fix.json").read_text())
    by_part = {f["part"]: f for f in rep["files"]}
    assert by_part["vision"]["precision"] == "int8" and by_part["text"]["precision"] == "fp16"
    for f in rep["files"]:
        assert all(c["passed"] for c in f["parity"]["cases"]) and Path(f["output"]).exists()
        assert "qnn-htp" in f["diff"]["targets"]
    assert (out.parent / "model.vision.onnx").exists() and (out.parent / "model.text.onnx").exists()
    assert main(["fix", str(split_export), "--out", str(tmp_path / "x.onnx"), "--int8", "audio"]) == 2


def test_fix_cli_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x00garbage")
    assert main(["fix", str(bad), "--out", str(tmp_path / "o.onnx"), "--simplify"]) == 2
    assert "not a readable ONNX model" in capsys.readouterr().err
    assert not (tmp_path / "o.onnx").exists()
