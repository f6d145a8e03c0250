"""Models the diff tests build with onnx.helper: a small conv net, long unnamed chains, renamed copies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx.helper as h
from onnx import TensorProto as T
from onnx import numpy_helper


def conv_net(path: Path) -> Path:
    """An image model with nothing in common with the synthetic transformer (names, ops, shapes)."""
    rng = np.random.default_rng(3)
    w1 = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "stem.weight")
    w2 = numpy_helper.from_array(rng.standard_normal((16, 8, 3, 3)).astype(np.float32), "block.weight")
    nodes = [h.make_node("Conv", ["image", "stem.weight"], ["s"], name="stem/conv", pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["s"], ["sr"], name="stem/relu"),
             h.make_node("MaxPool", ["sr"], ["p"], name="stem/pool", kernel_shape=[2, 2], strides=[2, 2]),
             h.make_node("Conv", ["p", "block.weight"], ["c"], name="block/conv", pads=[1, 1, 1, 1]),
             h.make_node("Sigmoid", ["c"], ["cs"], name="block/act"),
             h.make_node("GlobalAveragePool", ["cs"], ["logits"], name="head/gap")]
    g = h.make_graph(nodes, "convnet", [h.make_tensor_value_info("image", T.FLOAT, [1, 3, 32, 32])],
                     [h.make_tensor_value_info("logits", T.FLOAT, [1, 16, 1, 1])], [w1, w2])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), str(path))
    return path


def chain(n: int, *, changed: int | None = None) -> Any:
    """``n`` unnamed nodes alternating Add(x, bias) and Relu; node ``changed`` is a Sigmoid instead."""
    nodes = []
    prev = "x"
    for i in range(n):
        op = "Add" if i % 2 == 0 else "Relu"
        if i == changed:
            op = "Sigmoid"
        out = "y" if i == n - 1 else f"t{i}"
        nodes.append(h.make_node(op, [prev, "bias"] if op == "Add" else [prev], [out]))
        prev = out
    g = h.make_graph(nodes, "chain", [h.make_tensor_value_info("x", T.FLOAT, ["batch", 8])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["batch", 8])],
                     [numpy_helper.from_array(np.ones(8, np.float32), "bias")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def renamed(model: Any) -> Any:
    """The same graph as another exporter run might write it: no node names, every inner tensor renamed
    (graph inputs, outputs and initializers keep theirs), nodes in the same order."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    keep = {i.name for i in m.graph.input} | {o.name for o in m.graph.output} | {t.name for t in m.graph.initializer}
    names: dict[str, str] = {}

    def new(t: str) -> str:
        if not t or t in keep:
            return t
        return names.setdefault(t, f"v{len(names)}")

    for node in m.graph.node:
        node.name = ""
        node.input[:] = [new(t) for t in node.input]
        node.output[:] = [new(t) for t in node.output]
    del m.graph.value_info[:]
    return m
