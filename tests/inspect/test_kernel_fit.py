"""A Conv or Pool window longer than its input fails every target at the shapes that make it so, and only then."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from studio.inspect.api import inspect_model


def _model(path: Path, samples: int | str, *, pool: bool = False, dilation: int = 1) -> Path:
    """``x [1, 1, samples]`` -> Conv (kernel 10) or MaxPool (kernel 10) -> ReduceMean."""
    w = numpy_helper.from_array(np.ones((2, 1, 10), dtype=np.float32), "w")
    first = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[10]) if pool else \
        helper.make_node("Conv", ["x", "w"], ["y"], dilations=[dilation])  # kernel_shape from the weight
    graph = helper.make_graph(
        [first, helper.make_node("ReduceMean", ["y"], ["out"], keepdims=0)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, samples])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)], [] if pool else [w])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def _rule(rep, target: str) -> list:
    return [f for f in rep.findings if f.rule == "kernel-exceeds-input" and f.target == target]


@pytest.mark.parametrize("pool", [False, True])
def test_too_short_at_the_shapes_given_fails_every_target(tmp_path: Path, pool: bool) -> None:
    model = _model(tmp_path / "m.onnx", "samples", pool=pool)
    short = inspect_model(model, ["ort-cpu", "tensorrt", "rk3588"], shapes={"x": [1, 1, 4]})
    for target in ("ort-cpu", "tensorrt", "rk3588"):
        found = _rule(short, target)
        assert len(found) == 1, (target, short.findings)
        assert "spans 10" in found[0].message and "is 4 long" in found[0].message
        assert "the shapes given" in found[0].message
        assert short.targets[target].verdict == "fail"
    # what ORT itself says of the same feed: the finding is no stricter than the runtime
    sess = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception):  # noqa: B017 - ORT's own error type varies by op
        sess.run(None, {"x": np.zeros((1, 1, 4), np.float32)})
    long = inspect_model(model, ["ort-cpu"], shapes={"x": [1, 1, 16000]})
    assert not _rule(long, "ort-cpu")
    assert not _rule(inspect_model(model, ["ort-cpu"]), "ort-cpu")  # symbolic: nothing to say


def test_static_dims_and_dilation(tmp_path: Path) -> None:
    # kernel 10 with dilation 2 spans 19: a 12-sample static input is too short, a 19-sample one fits
    short = inspect_model(_model(tmp_path / "s.onnx", 12, dilation=2), ["ort-cpu"])
    found = _rule(short, "ort-cpu")
    assert found and "spans 19 (dilation 2)" in found[0].message and "static dims" in found[0].message
    assert not _rule(inspect_model(_model(tmp_path / "ok.onnx", 19, dilation=2), ["ort-cpu"]), "ort-cpu")
