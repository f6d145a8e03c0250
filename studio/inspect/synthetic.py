"""A CLIP-text-like transformer built with onnx.helper (no torch): the shape an exporter writes, with
dynamic batch/sequence, shape arithmetic (Shape -> Gather -> Concat -> Reshape), a Range for positions and
an Erf GELU. Used by tests, benchmarks (5,000+ nodes, 300+ MB of external weights) and the GUI's graph bench.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def transformer_model(layers: int = 2, hidden: int = 32, heads: int = 4, vocab: int = 99, max_pos: int = 77,
                      *, opset: int = 17, dynamic: bool = True, seed: int = 0) -> Any:
    """Return an onnx.ModelProto: input_ids[batch, sequence] -> last_hidden_state, pooler_output."""
    import onnx
    import onnx.helper as h
    from onnx import TensorProto as T
    from onnx import numpy_helper

    rng = np.random.default_rng(seed)
    inits: list[Any] = []
    nodes: list[Any] = []
    hd = hidden // heads

    def w(name: str, *shape: int, scale: float = 0.02) -> str:
        arr = (rng.standard_normal(shape, dtype=np.float32) * scale).astype(np.float32)
        inits.append(numpy_helper.from_array(arr, name))
        return name

    def const(name: str, arr: Any) -> str:
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(op: str, ins: list[str], outs: list[str] | None = None, name: str = "", **attrs: Any) -> str:
        out = outs or [f"{name}_out"]
        nodes.append(h.make_node(op, ins, out, name=name, **attrs))
        return out[0]

    const("c_idx0", np.array(0, dtype=np.int64))
    const("c_idx1", np.array(1, dtype=np.int64))
    const("c_one", np.array(1, dtype=np.int64))
    const("c_axes0", np.array([0], dtype=np.int64))
    const("c_heads", np.array([heads, hd], dtype=np.int64))
    const("c_hidden", np.array([hidden], dtype=np.int64))
    const("c_scale", np.array(1.0 / np.sqrt(hd), dtype=np.float32))
    const("c_sqrt2", np.array(np.sqrt(2.0), dtype=np.float32))
    const("c_half", np.array(0.5, dtype=np.float32))
    const("c_onef", np.array(1.0, dtype=np.float32))

    tok = node("Gather", [w("embeddings.token", vocab, hidden), "input_ids"], name="embeddings/token")
    shp = node("Shape", ["input_ids"], name="embeddings/shape")
    seq = node("Gather", [shp, "c_idx1"], name="embeddings/seq_len", axis=0)
    bsz = node("Gather", [shp, "c_idx0"], name="embeddings/batch", axis=0)
    pos_ids = node("Range", ["c_idx0", seq, "c_one"], name="embeddings/position_ids")
    pos = node("Gather", [w("embeddings.position", max_pos, hidden), pos_ids], name="embeddings/position")
    x = node("Add", [tok, pos], name="embeddings/add")
    b_u = node("Unsqueeze", [bsz, "c_axes0"], name="shape/batch_u")
    s_u = node("Unsqueeze", [seq, "c_axes0"], name="shape/seq_u")
    split_shape = node("Concat", [b_u, s_u, "c_heads"], name="shape/split_heads", axis=0)
    merge_shape = node("Concat", [b_u, s_u, "c_hidden"], name="shape/merge_heads", axis=0)

    for i in range(layers):
        p = f"layers.{i}"
        ln1 = node("LayerNormalization", [x, w(f"{p}.ln1.w", hidden, scale=1.0), w(f"{p}.ln1.b", hidden)],
                   name=f"{p}/ln1", axis=-1, epsilon=1e-5)
        heads_out = []
        for proj in ("q", "k", "v"):
            mm = node("MatMul", [ln1, w(f"{p}.{proj}.w", hidden, hidden)], name=f"{p}/{proj}_proj")
            b = node("Add", [mm, w(f"{p}.{proj}.b", hidden)], name=f"{p}/{proj}_bias")
            r = node("Reshape", [b, split_shape], name=f"{p}/{proj}_split")
            perm = [0, 2, 3, 1] if proj == "k" else [0, 2, 1, 3]
            heads_out.append(node("Transpose", [r], name=f"{p}/{proj}_transpose", perm=perm))
        q, k, v = heads_out
        scores = node("MatMul", [q, k], name=f"{p}/qk")
        scaled = node("Mul", [scores, "c_scale"], name=f"{p}/scale")
        probs = node("Softmax", [scaled], name=f"{p}/softmax", axis=-1)
        ctx = node("MatMul", [probs, v], name=f"{p}/attn_v")
        ctx_t = node("Transpose", [ctx], name=f"{p}/ctx_transpose", perm=[0, 2, 1, 3])
        ctx_m = node("Reshape", [ctx_t, merge_shape], name=f"{p}/ctx_merge")
        o = node("MatMul", [ctx_m, w(f"{p}.o.w", hidden, hidden)], name=f"{p}/o_proj")
        o = node("Add", [o, w(f"{p}.o.b", hidden)], name=f"{p}/o_bias")
        x = node("Add", [x, o], name=f"{p}/residual1")
        ln2 = node("LayerNormalization", [x, w(f"{p}.ln2.w", hidden, scale=1.0), w(f"{p}.ln2.b", hidden)],
                   name=f"{p}/ln2", axis=-1, epsilon=1e-5)
        f1 = node("MatMul", [ln2, w(f"{p}.fc1.w", hidden, 4 * hidden)], name=f"{p}/fc1")
        f1 = node("Add", [f1, w(f"{p}.fc1.b", 4 * hidden)], name=f"{p}/fc1_bias")
        g = node("Div", [f1, "c_sqrt2"], name=f"{p}/gelu_div")
        g = node("Erf", [g], name=f"{p}/gelu_erf")
        g = node("Add", [g, "c_onef"], name=f"{p}/gelu_add")
        g = node("Mul", [f1, g], name=f"{p}/gelu_mul")
        g = node("Mul", [g, "c_half"], name=f"{p}/gelu_half")
        f2 = node("MatMul", [g, w(f"{p}.fc2.w", 4 * hidden, hidden)], name=f"{p}/fc2")
        f2 = node("Add", [f2, w(f"{p}.fc2.b", hidden)], name=f"{p}/fc2_bias")
        x = node("Add", [x, f2], name=f"{p}/residual2")
    last = node("LayerNormalization", [x, w("final_ln.w", hidden, scale=1.0), w("final_ln.b", hidden)],
                ["last_hidden_state"], name="final_ln", axis=-1, epsilon=1e-5)
    first = node("Gather", [last, "c_idx0"], name="pooler/first_token", axis=1)
    node("MatMul", [first, w("pooler.w", hidden, hidden)], ["pooler_output"], name="pooler/proj")

    b, s = ("batch", "sequence") if dynamic else (1, 16)
    graph = h.make_graph(nodes, "tiny_transformer",
                         [h.make_tensor_value_info("input_ids", T.INT64, [b, s])],
                         [h.make_tensor_value_info("last_hidden_state", T.FLOAT, [b, s, hidden]),
                          h.make_tensor_value_info("pooler_output", T.FLOAT, [b, hidden])], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], producer_name="studio.synthetic")
    model.ir_version = min(model.ir_version, 10)
    onnx.checker.check_model(model)
    return model


def save_transformer(path: Path | str, *, external_data: bool = False, **kw: Any) -> Path:
    """Write ``transformer_model(**kw)``; with ``external_data`` the weights go to ``<name>.data`` beside it."""
    import onnx

    path = Path(path)
    model = transformer_model(**kw)
    if external_data:
        onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                        location=f"{path.name}.data", size_threshold=1024)
    else:
        onnx.save_model(model, str(path))
    return path
