"""A traced shape Concat mixing int32 and int64 pieces (MiniCPM-V's ``view(h // 2, ...)`` on int32 sizes) is made
int64 after the export, so the checker and ONNX Runtime take it; a well-typed graph is left byte for byte."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from studio.export.concat_types import align_concat_types


def _model(path: Path, piece_type: int) -> Path:
    """x [6, 4] reshaped to [h, 24 / h] where h comes from an int tensor input of type ``piece_type``."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 4])
    h = helper.make_tensor_value_info("h", piece_type, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["rows", "cols"])
    rest = numpy_helper.from_array(np.array([-1], np.int64), "rest")
    nodes = [helper.make_node("Concat", ["h", "rest"], ["shape"], axis=0, name="shape_concat"),
             helper.make_node("Reshape", ["x", "shape"], ["y"])]
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x, h], [y], [rest]),
                                opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_mixed_concat_gets_int64_and_runs(tmp_path: Path) -> None:
    path = _model(tmp_path / "m.onnx", TensorProto.INT32)
    with pytest.raises(onnx.shape_inference.InferenceError, match="inconsistent type"):
        onnx.checker.check_model(str(path), full_check=True)
    assert align_concat_types(path) == 1
    onnx.checker.check_model(str(path), full_check=True)
    x = np.arange(24, dtype=np.float32).reshape(6, 4)
    y = ort.InferenceSession(str(path)).run(None, {"x": x, "h": np.array([3], np.int32)})[0]
    np.testing.assert_array_equal(y, x.reshape(3, 8))


def test_a_well_typed_graph_is_left_as_it_is(tmp_path: Path) -> None:
    path = _model(tmp_path / "m.onnx", TensorProto.INT64)
    before = path.read_bytes()
    assert align_concat_types(path) == 0
    assert path.read_bytes() == before
