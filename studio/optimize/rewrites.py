"""Target rewrites, each ModelProto -> ModelProto: what a target's verdicts ask of a graph beyond dims and dtypes.

- ``drop_nan_guards``: ``Where(IsNaN(x), C, x)`` -> ``x``. The exporter's guard for fully masked attention rows
  (SDPA's fallback) is an IsNaN the Rockchip NPU has no lowering for; without it such a row gives NaN instead of
  C. Rows are fully masked only for padding queries, which is why the search keeps a candidate only when parity
  on the calibration set holds.
- ``unfuse_attention``: ``studio.fused::FusedAttention`` back to MatMul / Softmax / MatMul, for tools that do
  not know the studio's domain.
- ``host_split`` (with ``studio.optimize.host_split``): the work a target places on the host at the graph's
  inputs becomes a separate host graph.

Each returns the new model and a list of what it changed (the fix report's steps).
"""

from __future__ import annotations

from typing import Any

from studio.core.catalogue import N_
from studio.optimize.custom_ops import DOMAIN, FUSED_ATTENTION


def _copy(model: Any) -> Any:
    import onnx

    m = onnx.ModelProto()
    m.CopyFrom(model)
    return m


def _consumers(graph: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for n in graph.node:
        for i in n.input:
            if i:
                out.setdefault(i, []).append(n)
    return out


def _rename_input(graph: Any, old: str, new: str) -> None:
    for n in graph.node:
        for k, name in enumerate(n.input):
            if name == old:
                n.input[k] = new


def drop_nan_guards(model: Any) -> tuple[Any, list[str]]:
    """Remove every ``Where(IsNaN(x), C, x)`` (C any constant-like value): consumers read ``x`` itself."""
    m = _copy(model)
    g = m.graph
    producers = {o: n for n in g.node for o in n.output if o}
    outputs = {o.name for o in g.output}
    removed: list[str] = []
    drop: set[int] = set()
    for n in g.node:
        if n.op_type != "Where" or n.domain not in ("", "ai.onnx") or len(n.input) != 3:
            continue
        cond = producers.get(n.input[0])
        if cond is None or cond.op_type != "IsNaN" or cond.input[0] != n.input[2]:
            continue
        if n.output[0] in outputs:
            continue  # a graph output keeps its producer
        _rename_input(g, n.output[0], n.input[2])
        drop.add(id(n))
        removed.append(n.name or n.output[0])
    consumers = _consumers(g)
    for n in g.node:  # the IsNaN nodes nothing reads any more
        if n.op_type == "IsNaN" and all(id(c) in drop for c in consumers.get(n.output[0], [])) \
                and n.output[0] not in outputs:
            drop.add(id(n))
    keep = [n for n in g.node if id(n) not in drop]
    del g.node[:]
    g.node.extend(keep)
    count = len(removed)
    names = ", ".join(removed[:4]) + (" ..." if count > 4 else "")
    return m, ([N_(f"dropped {count} NaN guard(s) Where(IsNaN(x), C, x) -> x: {names}")] if removed else [])


def _attr(node: Any, name: str, default: Any) -> Any:
    import onnx

    for a in node.attribute:
        if a.name == name:
            v = onnx.helper.get_attribute_value(a)
            return v.decode() if isinstance(v, bytes) else v
    return default


def unfuse_attention(model: Any) -> tuple[Any, list[str]]:
    """Each ``studio.fused::FusedAttention`` as the ONNX ops it stands for (custom_ops.fused_attention)."""
    import numpy as np
    import onnx
    import onnx.helper as h

    m = _copy(model)
    g = m.graph
    out_nodes: list[Any] = []
    count = 0
    for n in g.node:
        if n.op_type != FUSED_ATTENTION or n.domain != DOMAIN:
            out_nodes.append(n)
            continue
        count += 1
        base = n.name or n.output[0]
        q, k, v = n.input[0], n.input[1], n.input[2]
        mask = n.input[3] if len(n.input) > 3 and n.input[3] else None
        fmt = _attr(n, "key_format", "BHSd")
        kt = k
        if fmt in ("BHSd", "BSHd"):
            kt = f"{base}/unfused/key_t"
            perm = [0, 1, 3, 2] if fmt == "BHSd" else [0, 2, 3, 1]
            out_nodes.append(h.make_node("Transpose", [k], [kt], name=f"{base}/unfused/Transpose", perm=perm))
        scale = f"{base}/unfused/scale"
        g.initializer.append(onnx.numpy_helper.from_array(np.array(float(_attr(n, "scale", 1.0)), np.float32),
                                                           scale))
        out_nodes.append(h.make_node("MatMul", [q, kt], [f"{base}/unfused/qk"], name=f"{base}/unfused/MatMul"))
        s = f"{base}/unfused/scaled"
        out_nodes.append(h.make_node("Mul", [f"{base}/unfused/qk", scale], [s], name=f"{base}/unfused/Mul"))
        if mask:
            out_nodes.append(h.make_node("Add", [s, mask], [f"{base}/unfused/masked"], name=f"{base}/unfused/Add"))
            s = f"{base}/unfused/masked"
        p = f"{base}/unfused/weights"
        out_nodes.append(h.make_node("Softmax", [s], [p], name=f"{base}/unfused/Softmax", axis=-1))
        if int(_attr(n, "nan_to_zero", 0)):
            zero = f"{base}/unfused/zero"
            g.initializer.append(onnx.numpy_helper.from_array(np.zeros((1,), np.float32), zero))
            out_nodes.append(h.make_node("IsNaN", [p], [f"{base}/unfused/isnan"], name=f"{base}/unfused/IsNaN"))
            out_nodes.append(h.make_node("Where", [f"{base}/unfused/isnan", zero, p], [f"{base}/unfused/guarded"],
                                         name=f"{base}/unfused/Where"))
            p = f"{base}/unfused/guarded"
        out_nodes.append(h.make_node("MatMul", [p, v], [n.output[0]], name=f"{base}/unfused/MatMul_1"))
    if not count:
        return m, []
    del g.node[:]
    g.node.extend(out_nodes)
    if not any(n.domain == DOMAIN for n in g.node):
        keep = [o for o in m.opset_import if o.domain != DOMAIN]
        del m.opset_import[:]
        m.opset_import.extend(keep)
    return m, [N_(f"unfused {count} {DOMAIN}::{FUSED_ATTENTION} node(s) into MatMul / Softmax / MatMul")]
