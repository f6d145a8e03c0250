"""A small graph ORT rewrites in every way the lineage handles: fusion (Gemm, QuickGelu), folding, removal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnx.helper as h
from onnx import TensorProto as T
from onnx import numpy_helper as nh


def rewritten_by_ort(path: Path) -> Path:
    rng = np.random.default_rng(0)
    inits = [nh.from_array(rng.standard_normal((8, 8)).astype(np.float32), "W"),
             nh.from_array(rng.standard_normal((8,)).astype(np.float32), "bias"),
             nh.from_array(np.array(1.702, np.float32), "alpha")]
    nodes = [h.make_node("Identity", ["x"], ["xi"], name="/block/Identity"),
             h.make_node("MatMul", ["xi", "W"], ["a"], name="/block/fc/MatMul"),
             h.make_node("Add", ["a", "bias"], ["b"], name="/block/fc/Add"),
             h.make_node("Mul", ["b", "alpha"], ["ba"], name="/block/act/Mul"),
             h.make_node("Sigmoid", ["ba"], ["s"], name="/block/act/Sigmoid"),
             h.make_node("Mul", ["b", "s"], ["g"], name="/block/act/Mul_1"),
             h.make_node("Shape", ["x"], ["shp"], name="/block/Shape"),
             h.make_node("Reshape", ["g", "shp"], ["r"], name="/block/Reshape"),
             h.make_node("Relu", ["r"], ["r2"]),  # unnamed: keyed Relu_8 like studio.inspect keys it
             h.make_node("Relu", ["r2"], ["y"], name="/head/Relu")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [2, 8])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 8])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 10
    onnx.save(m, str(path))
    return path
