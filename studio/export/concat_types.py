"""Concat nodes that mix int32 and int64 inputs, made consistent after a TorchScript export.

Why: ``x.view(h // 2, 2, w // 2, 2, d)`` with ``h`` and ``w`` read from an int32 tensor (MiniCPM-V's
``target_sizes``) traces to a shape ``Concat`` of int32 pieces and int64 constants; ONNX requires one type, so the
checker refuses the graph ("Concat: inputs has inconsistent type"). Casting the int32 pieces to int64 is lossless
and is what torch itself does when it builds the shape. Only a Concat whose inputs are all integers of different
widths is touched; a well-typed graph comes back unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

INT64 = 7
INTEGERS = {2, 3, 4, 5, 6, 7, 12, 13}  # uint8, int8, uint16, int16, int32, int64, uint32, uint64


def _types(model: Any) -> dict[str, int]:
    """Every value's element type the graph states or ONNX shape inference (lenient) finds."""
    import onnx

    g = model.graph
    types = {v.name: v.type.tensor_type.elem_type for v in [*g.input, *g.output, *g.value_info]}
    types.update((t.name, t.data_type) for t in g.initializer)
    for n in g.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    types[n.output[0]] = a.t.data_type
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
        types.update((v.name, v.type.tensor_type.elem_type) for v in inferred.graph.value_info
                     if v.type.tensor_type.elem_type)
    except Exception:  # noqa: BLE001 - inference is best effort: what the graph states is used
        pass
    return types


def align_concat_types(path: Path | str) -> int:
    """Cast the narrower integer inputs of mixed-integer ``Concat`` nodes in the graph file at ``path`` (its data
    file untouched) to int64; returns how many inputs were cast (0: the file is not rewritten)."""
    import onnx
    from onnx import helper

    path = Path(path)
    model = onnx.load(str(path), load_external_data=False)
    types = _types(model)
    g = model.graph
    cast = 0
    nodes = []
    for n in g.node:
        if n.op_type == "Concat" and n.domain in ("", "ai.onnx"):
            kinds = {types.get(i, 0) for i in n.input}
            if len(kinds) > 1 and kinds <= INTEGERS and INT64 in kinds:
                for k, name in enumerate(n.input):
                    if types.get(name) != INT64:
                        out = f"{name}__as_int64_{n.name or len(nodes)}_{k}"
                        nodes.append(helper.make_node("Cast", [name], [out], to=INT64, name=f"{out}__cast"))
                        n.input[k] = out
                        cast += 1
        nodes.append(n)
    if cast:
        del g.node[:]
        g.node.extend(nodes)
        onnx.save(model, str(path))
    return cast
