"""Hand-built ONNX models (onnx.helper) for the inspector tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx.helper as h
from onnx import TensorProto as T
from onnx import numpy_helper


def save(model: Any, path: Path) -> Path:
    onnx.save(model, str(path))
    return path


def make(nodes: list, inputs: list, outputs: list, inits: list | None = None, opset: int = 17,
         extra_opsets: dict[str, int] | None = None) -> Any:
    g = h.make_graph(nodes, "g", inputs, outputs, inits or [])
    ops = [h.make_opsetid("", opset)] + [h.make_opsetid(d, v) for d, v in (extra_opsets or {}).items()]
    m = h.make_model(g, opset_imports=ops)
    m.ir_version = 10
    return m


def vi(name: str, dtype: int = T.FLOAT, shape: list | None = None) -> Any:
    return h.make_tensor_value_info(name, dtype, shape)


def nonzero_model() -> Any:
    return make([h.make_node("Relu", ["x"], ["r"], name="relu"),
                 h.make_node("NonZero", ["r"], ["nz"], name="nonzero"),
                 h.make_node("Transpose", ["nz"], ["idx"], name="transpose")],
                [vi("x", T.FLOAT, [2, 4])], [vi("idx", T.INT64, None)])


def single_op_model(op: str, n_inputs: int = 1, domain: str = "", opset: int = 17, dtype: int = T.FLOAT,
                    shape: list | None = None, **attrs: Any) -> Any:
    ins = [f"in{i}" for i in range(n_inputs)]
    node = h.make_node(op, ins, ["y"], name=f"the_{op}", domain=domain, **attrs)
    extra = {domain: 1} if domain else None
    return make([node], [vi(n, dtype, shape or [1, 4]) for n in ins], [vi("y", dtype, None)], opset=opset,
                extra_opsets=extra)


def nested_model() -> Any:
    """If whose then-branch holds a Loop whose body holds NonZero; else-branch a plain Relu."""
    body = h.make_graph(
        [h.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond"),
         h.make_node("NonZero", ["x"], ["nz_b"], name="body_nonzero"),
         h.make_node("Shape", ["nz_b"], ["s_b"], name="body_shape")],
        "loop_body",
        [vi("iter", T.INT64, []), vi("cond_in", T.BOOL, []), vi("carry", T.FLOAT, [2, 4])],
        [vi("cond_out", T.BOOL, []), vi("carry", T.FLOAT, [2, 4]), vi("s_b", T.INT64, [2])])
    # carry passes straight through: body output 'carry' == input 'carry'
    then_g = h.make_graph(
        [h.make_node("Loop", ["trip", "cond0", "x"], ["carry_final", "shapes"], name="the_loop", body=body)],
        "then_branch", [], [vi("carry_final", T.FLOAT, [2, 4])])
    else_g = h.make_graph([h.make_node("Relu", ["x"], ["relu_out"], name="else_relu")], "else_branch", [],
                          [vi("relu_out", T.FLOAT, [2, 4])])
    trip = numpy_helper.from_array(np.array(3, dtype=np.int64), "trip")
    cond0 = numpy_helper.from_array(np.array(True), "cond0")
    nodes = [h.make_node("ReduceSum", ["x"], ["s"], name="sum", keepdims=0),
             h.make_node("Greater", ["s", "zero"], ["c"], name="gt"),
             h.make_node("If", ["c"], ["y"], name="the_if", then_branch=then_g, else_branch=else_g)]
    zero = numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero")
    return make(nodes, [vi("x", T.FLOAT, [2, 4])], [vi("y", T.FLOAT, [2, 4])], [trip, cond0, zero])
