"""studio.core.external_data and studio.core.big_proto on small real models: the layouts written, the errors for a
missing, truncated or escaping data file, the streamed fold-back, and shape inference of an in-memory model past
the (lowered) protobuf limit. The 2 GB end to end run is tests/edge/test_past_2gb.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from studio.core import big_proto
from studio.core.errors import ModelError
from studio.core.external_data import (
    ALIGN,
    check_model_files,
    data_name,
    read_graph,
    uses_external_data,
    weight_bytes,
    write_inline,
    write_layout,
)


def _model() -> onnx.ModelProto:
    """x[2,16] -> (x @ W1 + b) @ W2, reshaped by a constant shape: big and small initializers, a Constant."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((16, 300)).astype(np.float32), "W1"),
             numpy_helper.from_array(rng.standard_normal(300).astype(np.float32), "b"),
             numpy_helper.from_array(rng.standard_normal((300, 8)).astype(np.float32), "W2"),
             numpy_helper.from_array(np.array([-1, 4, 2], np.int64), "shape")]
    nodes = [helper.make_node("MatMul", ["x", "W1"], ["h"]), helper.make_node("Add", ["h", "b"], ["h2"]),
             helper.make_node("MatMul", ["h2", "W2"], ["y"]), helper.make_node("Reshape", ["y", "shape"], ["z"]),
             helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(
                 rng.standard_normal((40, 40)).astype(np.float32), "kv")),
             helper.make_node("ReduceSum", ["k"], ["ks"], keepdims=0), helper.make_node("Add", ["z", "ks"], ["out"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 16])],
                          [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["a", 4, 2])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    return m


def _run(path: Path) -> np.ndarray:
    x = np.random.default_rng(1).standard_normal((2, 16)).astype(np.float32)
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def test_layout_and_fold_back(tmp_path: Path) -> None:
    src = tmp_path / "src" / "m.onnx"
    src.parent.mkdir()
    onnx.save(_model(), str(src))
    want = _run(src)
    # torch's past-2 GB layout: one file per tensor, named after it
    spread = tmp_path / "spread" / "m.onnx"
    spread.parent.mkdir()
    onnx.save_model(_model(), str(spread), save_as_external_data=True, all_tensors_to_one_file=False,
                    size_threshold=0)
    assert len(list(spread.parent.iterdir())) > 3

    for source in (src, spread):
        dest = tmp_path / f"out-{source.parent.name}" / "model.onnx"
        dest.parent.mkdir()
        res = write_layout(source, dest)
        assert res.data == dest.with_name("model.onnx.data") and sorted(p.name for p in dest.parent.iterdir()) == \
            ["model.onnx", "model.onnx.data"]
        g = read_graph(dest)
        offsets = [int({e.key: e.value for e in t.external_data}["offset"]) for t in g.graph.initializer
                   if t.data_location == 1]
        assert offsets and all(o % ALIGN == 0 for o in offsets)  # page-aligned: ORT maps the file
        assert {t.name for t in g.graph.initializer if t.data_location == 1} == {"W1", "b", "W2"}  # small ones stay
        np.testing.assert_array_equal(_run(dest), want)
        one = dest.with_name("one.onnx")
        write_inline(dest, one)
        assert not uses_external_data(read_graph(one))
        np.testing.assert_array_equal(_run(one), want)
        onnx.checker.check_model(str(one), full_check=True)
        assert weight_bytes(read_graph(one)) == weight_bytes(g)
    # the export's own private files: each one-tensor file deleted as soon as it is copied
    (tmp_path / "consumed").mkdir()
    write_layout(spread, tmp_path / "consumed" / "model.onnx", consume=True)
    assert sorted(p.name for p in spread.parent.iterdir()) == ["m.onnx"]
    np.testing.assert_array_equal(_run(tmp_path / "consumed" / "model.onnx"), want)


def test_missing_truncated_and_escaping_data_files(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    onnx.save_model(_model(), str(path), save_as_external_data=True, location=data_name(path), size_threshold=0)
    assert [d.location for d in check_model_files(path)] == ["m.onnx.data"]
    data = path.with_name("m.onnx.data")
    full = data.read_bytes()
    data.write_bytes(full[:-10])
    with pytest.raises(ModelError, match="m.onnx.data of m.onnx is truncated") as e:
        check_model_files(path)
    assert e.value.offending == str(data)
    data.unlink()
    with pytest.raises(ModelError, match="m.onnx.data of m.onnx is missing") as e:
        check_model_files(path)
    assert e.value.offending == str(data) and "together" in (e.value.hint or "")
    with pytest.raises(ModelError, match="missing"):
        write_layout(path, tmp_path / "x.onnx")
    g = read_graph(path)
    for t in g.graph.initializer:
        for e2 in t.external_data:
            if e2.key == "location":
                e2.value = "../outside.bin"
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(g.SerializeToString())
    with pytest.raises(ModelError, match="points outside its folder"):
        check_model_files(bad)


def test_fold_back_refuses_past_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import studio.core.external_data as ed

    path = tmp_path / "m.onnx"
    onnx.save_model(_model(), str(path), save_as_external_data=True, location=data_name(path), size_threshold=0)
    monkeypatch.setattr(ed, "PROTOBUF_LIMIT", (64 << 20) + 1000)
    with pytest.raises(ModelError, match="cannot be one file"):
        write_inline(path, tmp_path / "one.onnx")
    assert not (tmp_path / "one.onnx").exists() and not list(tmp_path.glob(".*partial"))


def test_shape_inference_of_an_in_memory_model_past_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    m = _model()
    del m.graph.output[:]
    m.graph.output.append(helper.make_tensor_value_info("out", TensorProto.FLOAT, None))
    want = onnx.shape_inference.infer_shapes(m, strict_mode=True, data_prop=True)
    monkeypatch.setattr(big_proto, "LIMIT", 100)  # every model is "past 2 GB" now: the skeleton path
    got = big_proto.infer_shapes(m, strict_mode=True, data_prop=True)
    assert {v.name: v.SerializeToString() for v in got.graph.value_info} == \
        {v.name: v.SerializeToString() for v in want.graph.value_info}
    assert got.graph.output[0].type.tensor_type.shape.dim[1].dim_value == 4
    assert len(got.graph.initializer[0].raw_data) == 16 * 300 * 4  # the weights stayed in the model
