"""Small models built with onnx.helper for the verifier tests: each one a known answer of a real tool."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx.helper as h
from onnx import TensorProto as T
from onnx import numpy_helper

from tests.inspect.inspect_models import make, save, vi  # the inspector tests' model builders

__all__ = ["save"]  # the verifier tests save these models through this module (vm.save)


def custom_op_model() -> Any:
    """Relu -> Foo (domain custom.x, no tool knows it) -> Neg: only 'foo' is refused."""
    return make([h.make_node("Relu", ["x"], ["r"], name="relu"),
                 h.make_node("Foo", ["r"], ["y"], name="foo", domain="custom.x"),
                 h.make_node("Neg", ["y"], ["z"], name="neg")],
                [vi("x", T.FLOAT, [2, 3])], [vi("z", T.FLOAT, [2, 3])], extra_opsets={"custom.x": 1})


def roialign_22_model() -> Any:
    """RoiAlign at opset 22: ORT 1.32 registers RoiAlign-16 open-ended, which its lookup does not extend to 22."""
    node = h.make_node("RoiAlign", ["X", "rois", "idx"], ["Y"], name="roi", output_height=2, output_width=2)
    relu = h.make_node("Relu", ["X"], ["xr"], name="relu")
    return make([relu, node], [vi("X", T.FLOAT, [1, 1, 4, 4]), vi("rois", T.FLOAT, [1, 4]),
                               vi("idx", T.INT64, [1])],
                [vi("Y", T.FLOAT, [1, 1, 2, 2]), vi("xr", T.FLOAT, [1, 1, 4, 4])], opset=22)


def relu_model(opset: int = 17) -> Any:
    return make([h.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", T.FLOAT, [1, 4])],
                [vi("y", T.FLOAT, [1, 4])], opset=opset)


def range_bf16_model() -> Any:
    """Range on bfloat16: no CPU kernel for that type, yet ORT runs it (it falls back to Range's function body).
    The static ort-cpu profile says unsupported, the real session builds: a disagreement the tool wins."""
    ins = [vi(n, T.BFLOAT16, []) for n in ("start", "limit", "delta")]
    return make([h.make_node("Range", ["start", "limit", "delta"], ["y"], name="range")], ins,
                [vi("y", T.BFLOAT16, None)], opset=27)


def runtime_k_topk_model() -> Any:
    """TopK whose k is a graph input: TVM's converter takes a constant k only."""
    return make([h.make_node("TopK", ["x", "k"], ["v", "i"], name="topk")],
                [vi("x", T.FLOAT, [3, 4]), vi("k", T.INT64, [1])],
                [vi("v", T.FLOAT, [3, None]), vi("i", T.INT64, [3, None])], opset=17)


def float_mod_model() -> Any:
    """Mod of floats with fmod=0: OpenVINO's frontend refuses it (integral types only); its profile lists Mod."""
    return make([h.make_node("Mod", ["a", "b"], ["c"], name="mod", fmod=0),
                 h.make_node("Relu", ["c"], ["d"], name="relu")],
                [vi("a", T.FLOAT, [2, 3]), vi("b", T.FLOAT, [2, 3])], [vi("d", T.FLOAT, [2, 3])], opset=17)


def const_axes_model() -> Any:
    """ReduceSum with a Constant-node axes: one-node checks must keep the axes a constant."""
    axes = h.make_node("Constant", [], ["axes"], name="axes", value=numpy_helper.from_array(
        np.array([1], dtype=np.int64)))
    return make([axes, h.make_node("ReduceSum", ["x", "axes"], ["y"], name="sum", keepdims=0)],
                [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2])], opset=17)
