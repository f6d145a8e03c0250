"""Tiny models for the rollout tests: the edge helpers' MLP, and one with the same inputs and outputs that is slow
(a Loop of MatMuls: latency injected inside the graph, so the agent's own histogram sees it)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from tests.edge.helpers import _save


def make_slow(path: Path, iterations: int = 40000, width: int = 256) -> Path:
    """x[batch,16] -> W1 -> ``iterations`` x tanh(h @ M) -> W2 -> out[batch,8]: same I/O as make_mlp, about
    300 ms a request on one core."""
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((16, width)).astype(np.float32) * 0.1, "W1")
    m = numpy_helper.from_array(rng.standard_normal((width, width)).astype(np.float32) / np.sqrt(width), "M")
    w2 = numpy_helper.from_array(rng.standard_normal((width, 8)).astype(np.float32) * 0.1, "W2")
    trips = numpy_helper.from_array(np.array(iterations, dtype=np.int64), "trips")
    cond = numpy_helper.from_array(np.array(True), "cond")
    body = helper.make_graph(
        [helper.make_node("MatMul", ["h_in", "M"], ["hm"]), helper.make_node("Tanh", ["hm"], ["h_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_in", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_out", TensorProto.FLOAT, None)])
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W1"], ["h0"]),
         helper.make_node("Loop", ["trips", "cond", "h0"], ["h"], body=body),
         helper.make_node("MatMul", ["h", "W2"], ["out"])], "slow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", 8])], [w1, m, w2, trips, cond])
    return _save(g, path)


def make_erroring(path: Path) -> Path:
    """Same I/O as make_mlp; row i reads table[int(10 * x[i, 0])], out of bounds (an ORT error) when
    |x[i, 0]| >= 0.4: most random requests fail, zeros (the agent's warm-up) pass."""
    table = numpy_helper.from_array(np.arange(32, dtype=np.float32).reshape(4, 8), "table")
    zero = numpy_helper.from_array(np.array(0, dtype=np.int64), "zero")
    ten = numpy_helper.from_array(np.array(10.0, dtype=np.float32), "ten")
    g = helper.make_graph(
        [helper.make_node("Gather", ["x", "zero"], ["x0"], axis=1), helper.make_node("Mul", ["x0", "ten"], ["s"]),
         helper.make_node("Cast", ["s"], ["idx"], to=TensorProto.INT64),
         helper.make_node("Gather", ["table", "idx"], ["out"], axis=0)], "erroring",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", 8])], [table, zero, ten])
    return _save(g, path)
