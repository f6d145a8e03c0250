"""FP16 of a model whose weights stay in their data file (studio.optimize.streamed): the same model as the in-memory
converter makes, weight for weight (its clipping included), written without ever loading the weights, and parity
run one session at a time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from studio.core.external_data import check_model_files
from studio.core.runner import OnnxRuntimeRunner
from studio.optimize import passes, streamed
from studio.optimize.api import fix_model
from studio.optimize.pipeline import FixSteps


def _model(folder: Path) -> Path:
    """Two MatMuls on data-file weights (one with values past the converter's 1e4 clip and below its 1e-7 floor),
    a bias kept inline (under 1 KiB) and int64 gather indices in the data file."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    w1 = (0.1 * rng.standard_normal((64, 96))).astype(np.float32)
    w1[:4, 0] = [2e4, -3e4, 1e-9, -1e-9]
    w2 = (0.1 * rng.standard_normal((96, 64))).astype(np.float32)
    w2[0] = 0  # the clipped column reaches no output: parity judges the rest
    idx = rng.integers(0, 64, 200).astype(np.int64)  # 1.6 KB: goes to the data file
    inits = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2"),
             numpy_helper.from_array(rng.standard_normal(96).astype(np.float32), "b1"),
             numpy_helper.from_array(idx, "idx")]
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm1"), helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node("Relu", ["hb"], ["r"]), helper.make_node("MatMul", ["r", "w2"], ["y0"], name="mm2"),
             helper.make_node("Gather", ["y0", "idx"], ["y"], axis=1)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 200])], inits)
    path = folder / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path),
              save_as_external_data=True, location="model.onnx.data", size_threshold=1024)
    return path


def _weights(path: Path) -> dict[str, np.ndarray]:
    return {t.name: numpy_helper.to_array(t) for t in onnx.load(str(path)).graph.initializer}


@pytest.mark.parametrize("keep", [[], ["mm2"]])
def test_streamed_fp16_is_the_converters_model(tmp_path: Path, keep: list[str]) -> None:
    src = _model(tmp_path / "src")
    assert streamed.streamable(FixSteps(precision="fp16"), src)
    out = tmp_path / "out" / "model.onnx"
    rep = fix_model(src, out, fp16=True, keep_fp32=keep, targets=["ort-cpu"])
    f = rep.files[0]
    assert any("tensor by tensor" in s for s in f.steps), f.steps
    assert f.parity is not None and f.parity.passed and len(f.parity.cases) == 2, f.parity
    assert [d.location for d in check_model_files(out)] == ["model.onnx.data"]

    in_memory = passes.to_fp16(onnx.load(str(src)), keep_fp32=keep)  # the converter with every weight loaded
    want = {t.name: numpy_helper.to_array(t) for t in in_memory.graph.initializer}
    got = _weights(out)
    assert set(got) == set(want)
    for name, arr in want.items():
        assert got[name].dtype == arr.dtype and np.array_equal(got[name], arr), name
    assert got["w1"].dtype == np.float16 and got["w1"][0, 0] == np.float16(1e4)  # the converter's clip, streamed
    assert (got["w2"].dtype == np.float32) == bool(keep)  # a weight of a kept node is copied as it is
    assert [n.op_type for n in onnx.load(str(out), load_external_data=False).graph.node] == \
        [n.op_type for n in in_memory.graph.node]

    x = np.random.default_rng(1).standard_normal((3, 64)).astype(np.float32)
    with OnnxRuntimeRunner(src) as a, OnnxRuntimeRunner(out) as b:
        np.testing.assert_allclose(b.infer({"x": x})["y"], a.infer({"x": x})["y"], rtol=2e-2, atol=2e-2)


def test_weight_reading_steps_take_the_in_memory_path(tmp_path: Path) -> None:
    src = _model(tmp_path / "src")
    assert not streamed.streamable(FixSteps(precision="fp16", simplify=True), src)  # onnxslim folds weights
    assert not streamed.streamable(FixSteps(precision="int8"), src)
    inline = tmp_path / "inline.onnx"
    onnx.save(onnx.load(str(src)), str(inline))
    assert not streamed.streamable(FixSteps(precision="fp16"), inline)  # nothing on disk to stream


def test_the_fp16_estimate_of_a_streamed_part_is_its_own(tmp_path: Path) -> None:
    from studio.optimize.memory import BASE_BYTES, STREAMED, check_fix_fits, weight_bytes

    src = _model(tmp_path / "src")
    est = check_fix_fits([("model", src, "fp16", True)])
    assert est.files["model"][1] == BASE_BYTES + int(STREAMED["fp16"] * weight_bytes(src))
    assert est.streamed == ["model"]


def test_a_truncated_data_file_stops_the_streamed_fix_with_nothing_written(tmp_path: Path) -> None:
    from studio.core.errors import ModelError

    src = _model(tmp_path / "src")
    data = src.with_name("model.onnx.data")
    data.write_bytes(data.read_bytes()[:-100])
    out = tmp_path / "out" / "model.onnx"
    with pytest.raises(ModelError, match="model.onnx.data of model.onnx is truncated"):
        fix_model(src, out, fp16=True, targets=["ort-cpu"])
    assert not out.exists() and not out.with_name("model.onnx.data").exists()
