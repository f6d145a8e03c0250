"""Generated transformer-shaped ONNX graphs of a chosen node count, for the graph-view benchmark and tests.

Each block is what an exporter writes for one encoder layer: decomposed LayerNorm, the Shape/Gather/Concat
chain that computes reshape targets from the dynamic batch and sequence dims, attention, GELU MLP and
residuals (56 nodes). Weights are tiny placeholders: the view cares about topology, not values.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

NODES_PER_BLOCK = 56


def transformer_like(num_nodes: int = 10_000, hidden: int = 64, heads: int = 4) -> onnx.ModelProto:
    blocks = max(1, num_nodes // NODES_PER_BLOCK)
    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = []
    counter = [0]

    def uid(prefix: str) -> str:
        counter[0] += 1
        return f"{prefix}_{counter[0]}"

    def const(value: np.ndarray, prefix: str = "c") -> str:
        name = uid(prefix)
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(op: str, inputs: list[str], scope: str, **attrs: object) -> str:
        out = uid(f"{scope}/{op.lower()}_out")
        nodes.append(helper.make_node(op, inputs, [out], name=uid(f"{scope}/{op}"), **attrs))
        return out

    def layer_norm(x: str, scope: str) -> str:
        mean = node("ReduceMean", [x, const(np.array([-1], np.int64))], scope, keepdims=1)
        d = node("Sub", [x, mean], scope)
        sq = node("Pow", [d, const(np.array(2.0, np.float32))], scope)
        var = node("ReduceMean", [sq, const(np.array([-1], np.int64))], scope, keepdims=1)
        ve = node("Add", [var, const(np.array(1e-5, np.float32))], scope)
        sd = node("Sqrt", [ve], scope)
        nx = node("Div", [d, sd], scope)
        g = node("Mul", [nx, const(np.ones(hidden, np.float32), "gamma")], scope)
        return node("Add", [g, const(np.zeros(hidden, np.float32), "beta")], scope)

    w = np.zeros((hidden, hidden), np.float32)
    b = np.zeros(hidden, np.float32)
    x = "hidden_states"
    for i in range(blocks):
        s = f"layer.{i}"
        h = layer_norm(x, f"{s}/ln1")
        shp = node("Shape", [h], f"{s}/attn")
        bdim = node("Gather", [shp, const(np.array(0, np.int64))], f"{s}/attn", axis=0)
        sdim = node("Gather", [shp, const(np.array(1, np.int64))], f"{s}/attn", axis=0)
        bu = node("Unsqueeze", [bdim, const(np.array([0], np.int64))], f"{s}/attn")
        su = node("Unsqueeze", [sdim, const(np.array([0], np.int64))], f"{s}/attn")
        target = node("Concat", [bu, su, const(np.array([heads, hidden // heads], np.int64))], f"{s}/attn",
                      axis=0)
        qkv = []
        for part in ("q", "k", "v"):
            p = node("MatMul", [h, const(w, f"{part}_w")], f"{s}/attn/{part}")
            p = node("Add", [p, const(b, f"{part}_b")], f"{s}/attn/{part}")
            p = node("Reshape", [p, target], f"{s}/attn/{part}")
            perm = [0, 2, 3, 1] if part == "k" else [0, 2, 1, 3]
            qkv.append(node("Transpose", [p], f"{s}/attn/{part}", perm=perm))
        sc = node("MatMul", [qkv[0], qkv[1]], f"{s}/attn")
        sc = node("Div", [sc, const(np.array(4.0, np.float32))], f"{s}/attn")
        sc = node("Add", [sc, "attention_mask"], f"{s}/attn")
        pr = node("Softmax", [sc], f"{s}/attn", axis=-1)
        ctx = node("MatMul", [pr, qkv[2]], f"{s}/attn")
        ctx = node("Transpose", [ctx], f"{s}/attn", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, const(np.array([0, 0, hidden], np.int64))], f"{s}/attn")
        o = node("MatMul", [ctx, const(w, "o_w")], f"{s}/attn/out")
        o = node("Add", [o, const(b, "o_b")], f"{s}/attn/out")
        x1 = node("Add", [x, o], f"{s}/residual1")
        h2 = layer_norm(x1, f"{s}/ln2")
        m = node("MatMul", [h2, const(w, "fc1_w")], f"{s}/mlp")
        m = node("Add", [m, const(b, "fc1_b")], f"{s}/mlp")
        gd = node("Div", [m, const(np.array(1.4142135, np.float32))], f"{s}/mlp")
        ge = node("Erf", [gd], f"{s}/mlp")
        ga = node("Add", [ge, const(np.array(1.0, np.float32))], f"{s}/mlp")
        gm = node("Mul", [m, ga], f"{s}/mlp")
        gm = node("Mul", [gm, const(np.array(0.5, np.float32))], f"{s}/mlp")
        m = node("MatMul", [gm, const(w, "fc2_w")], f"{s}/mlp")
        m = node("Add", [m, const(b, "fc2_b")], f"{s}/mlp")
        x = node("Add", [x1, m], f"{s}/residual2")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output/Identity"))
    graph = helper.make_graph(
        nodes, "transformer_like",
        [helper.make_tensor_value_info("hidden_states", TensorProto.FLOAT, ["batch", "sequence", hidden]),
         helper.make_tensor_value_info("attention_mask", TensorProto.FLOAT, ["batch", 1, 1, "sequence"])],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", hidden])],
        initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="bench")
