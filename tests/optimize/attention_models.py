"""Hand-built attention graphs (onnx.helper) with the patterns exporters write, and a tiny-clip export helper."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx.helper as h
from onnx import TensorProto as T
from onnx import numpy_helper

B, S, H, D = "batch", "seq", 2, 4
E = H * D


def _w(name: str, shape: tuple[int, ...], rng: np.random.Generator) -> Any:
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.5, name)


def attention_model(*, mask: bool = True, style: str = "eager", layers: int = 1, seed: int = 0) -> Any:
    """x [batch, seq, E] -> ``layers`` self-attention blocks -> y. ``style``: "eager" (MatMul(Q, Transpose(K)) /
    sqrt(d)) or "sdpa" (Q * s and Transpose(K, 0,2,3,1) * s before the MatMul, as TorchScript writes CLIP)."""
    rng = np.random.default_rng(seed)
    nodes, inits = [], [numpy_helper.from_array(np.array([0, 0, H, D], dtype=np.int64), "heads_shape"),
                        numpy_helper.from_array(np.array([0, 0, E], dtype=np.int64), "merge_shape")]
    inputs = [h.make_tensor_value_info("x", T.FLOAT, [B, S, E])]
    if mask:
        inputs.append(h.make_tensor_value_info("mask", T.FLOAT, [B, 1, 1, S]))
    x = "x"
    for li in range(layers):
        p = f"/encoder/layers.{li}/self_attn"
        for n in ("q", "k", "v", "o"):
            inits.append(_w(f"{p}.{n}.w", (E, E), rng))
        for n in ("q", "k", "v"):
            nodes.append(h.make_node("MatMul", [x, f"{p}.{n}.w"], [f"{p}/{n}"], name=f"{p}/{n}_proj/MatMul"))
            nodes.append(h.make_node("Reshape", [f"{p}/{n}", "heads_shape"], [f"{p}/{n}4"],
                                     name=f"{p}/{n}_proj/Reshape"))
        nodes.append(h.make_node("Transpose", [f"{p}/q4"], [f"{p}/qt"], perm=[0, 2, 1, 3], name=f"{p}/Transpose_q"))
        nodes.append(h.make_node("Transpose", [f"{p}/v4"], [f"{p}/vt"], perm=[0, 2, 1, 3], name=f"{p}/Transpose_v"))
        if style == "eager":
            nodes.append(h.make_node("Transpose", [f"{p}/k4"], [f"{p}/kh"], perm=[0, 2, 1, 3], name=f"{p}/Transpose_k"))
            nodes.append(h.make_node("Transpose", [f"{p}/kh"], [f"{p}/kT"], perm=[0, 1, 3, 2], name=f"{p}/Transpose_kT"))
            nodes.append(h.make_node("MatMul", [f"{p}/qt", f"{p}/kT"], [f"{p}/s0"], name=f"{p}/MatMul"))
            inits.append(numpy_helper.from_array(np.array(np.sqrt(D), dtype=np.float32), f"{p}.sqrt_d"))
            nodes.append(h.make_node("Div", [f"{p}/s0", f"{p}.sqrt_d"], [f"{p}/s1"], name=f"{p}/Div"))
        else:
            nodes.append(h.make_node("Transpose", [f"{p}/k4"], [f"{p}/kT"], perm=[0, 2, 3, 1], name=f"{p}/Transpose_k"))
            c = float(D ** -0.25)
            nodes.append(h.make_node("Constant", [], [f"{p}/c"], value=numpy_helper.from_array(
                np.array(c, dtype=np.float32)), name=f"{p}/Constant"))
            nodes.append(h.make_node("Mul", [f"{p}/qt", f"{p}/c"], [f"{p}/qs"], name=f"{p}/Mul"))
            nodes.append(h.make_node("Mul", [f"{p}/kT", f"{p}/c"], [f"{p}/ks"], name=f"{p}/Mul_1"))
            nodes.append(h.make_node("MatMul", [f"{p}/qs", f"{p}/ks"], [f"{p}/s1"], name=f"{p}/MatMul"))
        if mask:
            nodes.append(h.make_node("Add", [f"{p}/s1", "mask"], [f"{p}/s2"], name=f"{p}/Add"))
        nodes.append(h.make_node("Softmax", [f"{p}/s2" if mask else f"{p}/s1"], [f"{p}/pr"], axis=-1,
                                 name=f"{p}/Softmax"))
        nodes.append(h.make_node("MatMul", [f"{p}/pr", f"{p}/vt"], [f"{p}/ctx"], name=f"{p}/MatMul_1"))
        nodes.append(h.make_node("Transpose", [f"{p}/ctx"], [f"{p}/ctxt"], perm=[0, 2, 1, 3], name=f"{p}/Transpose_o"))
        nodes.append(h.make_node("Reshape", [f"{p}/ctxt", "merge_shape"], [f"{p}/m"], name=f"{p}/Reshape_o"))
        y = "y" if li == layers - 1 else f"{p}/out"
        nodes.append(h.make_node("MatMul", [f"{p}/m", f"{p}.o.w"], [y], name=f"{p}/out_proj/MatMul"))
        x = y
    g = h.make_graph(nodes, "attention", inputs, [h.make_tensor_value_info("y", T.FLOAT, [B, S, E])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 10
    onnx.checker.check_model(m)
    return m


def save(model: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def export_tiny_clip(root: Path) -> Path:
    """The exported tiny-clip (export helper's API): ``root/export/model.onnx`` beside its config.json."""
    from studio.export.api import ExportOptions, export_model, write_sample

    src = write_sample("tiny-clip", root / "tiny-clip")
    rep = export_model(ExportOptions(model_dir=src, output=root / "export" / "model.onnx", validation_cases=1))
    assert rep.status == "succeeded", rep.diagnosis
    return root / "export" / "model.onnx"
