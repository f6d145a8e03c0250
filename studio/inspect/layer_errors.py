"""Per-layer error of a compiled build (rknn-toolkit2's ``accuracy_analysis``) as numbers per ONNX node.

The toolkit names its layers after the ONNX tensors and nodes it came from, with suffixes for what it inserted
or fused (``/encoder/layers.0/mlp/fc1/MatMul_output_0_mm_tp_sw``, ``.../LayerNormalization#1``). A row is matched
to the node whose output (or own name) is the longest prefix ending at one of those suffix separators; the
value is the error ``1 - cosine`` (worst row per node), which the inspector paints with its heat hook.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SEPARATORS = "_-#"


def node_error_heat(model: Path | str, rows: list[dict[str, Any]], key: str = "entire_cos") -> dict[str, float]:
    """Node name -> 1 - cosine (``key``: the error of the whole model up to that layer, or "single_cos")."""
    import onnx

    graph = onnx.load(str(model), load_external_data=False).graph
    owner: dict[str, str] = {}
    for n in graph.node:
        for o in n.output:
            owner.setdefault(o, n.name)
        owner.setdefault(n.name, n.name)
    heat: dict[str, float] = {}
    for row in rows:
        node = match(str(row.get("tensor", "")), owner)
        cos = row.get(key)
        if node is None or not isinstance(cos, int | float):
            continue
        heat[node] = max(heat.get(node, 0.0), max(0.0, 1.0 - float(cos)))
    return heat


def match(tensor: str, owner: dict[str, str]) -> str | None:
    """The node a toolkit tensor name comes from: exact, else the longest prefix cut at a separator."""
    if tensor in owner:
        return owner[tensor]
    for i in range(len(tensor) - 1, 0, -1):
        if tensor[i] in SEPARATORS and tensor[:i] in owner:
            return owner[tensor[:i]]
    return None
