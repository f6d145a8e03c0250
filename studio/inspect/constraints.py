"""Per-node constraints of a target profile (const inputs, attributes, batch 1, dtypes, rank, static shapes):
the node-level part of a verdict, checked against the constants the target sees (its own folding, when the
profile models one: studio.inspect.graph_model)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from studio.inspect.dynamic import DynamicReport
from studio.inspect.model import LoadedModel, NodeRef, dtype_name
from studio.inspect.profiles import Constraint


@dataclass
class NodeVerdict:
    verdict: str
    rule: str
    reason: str
    hint: str = ""
    tensor: str | None = None


def _attr(node: Any, name: str) -> Any:
    from studio.core.onnx_light import attribute_value

    for a in node.attribute:
        if a.name == name:
            v = attribute_value(a)
            return v.decode() if isinstance(v, bytes) else v
    return None


def _norm(v: Any) -> Any:
    return v.decode() if isinstance(v, bytes) else v


def check_constraint(c: Constraint, ref: NodeRef, lm: LoadedModel, dyn: DynamicReport,
                     constants: set[str] | None = None) -> NodeVerdict | None:
    """The node breaks ``c`` (its verdict, rule and reason) or not (None); ``constants``: the tensors the target
    knows at build (default: the model's own constants)."""
    n = ref.node
    n_in = ref.inputs
    consts = lm.constants if constants is None else constants
    if c.kind == "const_input":
        for idx in c.inputs:
            if idx < len(n_in) and n_in[idx] and n_in[idx] not in consts:
                return NodeVerdict(c.verdict, "constraint-const-input",
                                   f"input {idx} ('{n_in[idx]}') must be a constant: {c.reason}",
                                   "fold it to a constant (studio fix --static ... --simplify) or compute it "
                                   "outside the model", tensor=n_in[idx])
    elif c.kind == "attr" and c.name:
        v = _attr(n, c.name)
        if v is None:
            v = c.default
        if v is None:
            return None
        if c.allowed is not None and _norm(v) not in [_norm(a) for a in c.allowed]:
            return NodeVerdict(c.verdict, "constraint-attr", f"{c.name}={v!r} not in {c.allowed}: {c.reason}",
                               f"re-export with {c.name} in {c.allowed}")
        if c.forbidden is not None and _norm(v) in [_norm(a) for a in c.forbidden]:
            return NodeVerdict(c.verdict, "constraint-attr", f"{c.name}={v!r} is refused: {c.reason}",
                               f"re-export without {c.name}={v!r}")
        if c.max_value is not None and isinstance(v, (int, float)) and v > c.max_value:
            return NodeVerdict(c.verdict, "constraint-attr", f"{c.name}={v} above {c.max_value}: {c.reason}")
    elif c.kind == "batch1":
        x = n_in[0] if n_in else ""
        info = lm.tensors.get(x)
        if info is not None and info.shape:
            b = info.shape[0]
            if isinstance(b, int) and b != 1:
                return NodeVerdict(c.verdict, "constraint-batch", f"batch is {b}; {c.reason}",
                                   "export or fix with batch 1 (studio fix --static batch=1)", tensor=x)
            if not isinstance(b, int):
                return NodeVerdict("risky", "constraint-batch", f"batch dim is dynamic ('{b}'); {c.reason}",
                                   "fix the batch to 1 (studio fix --static batch=1)", tensor=x)
    elif c.kind == "dtype":
        for idx in c.inputs or [0]:
            if idx < len(n_in) and n_in[idx]:
                info = lm.tensors.get(n_in[idx])
                if info is not None and info.elem_type:
                    dt = dtype_name(info.elem_type)
                    if c.allowed is not None and dt not in c.allowed:
                        return NodeVerdict(c.verdict, "constraint-dtype",
                                           f"input {idx} is {dt}, allowed {c.allowed}: {c.reason}",
                                           f"cast to one of {c.allowed} before this node", tensor=n_in[idx])
    elif c.kind == "same_dtype":
        names = [n_in[i] for i in c.inputs if i < len(n_in) and n_in[i]]
        if names and all(x in consts for x in names):
            return None  # computed at import time
        types = {f"input {i}": lm.tensors[n_in[i]].elem_type for i in c.inputs
                 if i < len(n_in) and n_in[i] in lm.tensors and lm.tensors[n_in[i]].elem_type}
        if c.name and _attr(n, c.name) is not None:
            types[f"{c.name}="] = int(_attr(n, c.name))
        if len(set(types.values())) > 1:
            said = ", ".join(f"{k} {dtype_name(t)}" if k.startswith("input") else f"{k}{dtype_name(t)}"
                             for k, t in types.items())
            return NodeVerdict(c.verdict, "constraint-dtype", f"element types differ ({said}): {c.reason}",
                               "cast so the types match before this node")
    elif c.kind == "max_rank":
        info = lm.tensors.get(n_in[0]) if n_in else None
        if info is not None and info.shape is not None and c.value is not None and len(info.shape) > c.value:
            return NodeVerdict(c.verdict, "constraint-rank", f"rank {len(info.shape)} > {c.value}: {c.reason}",
                               "reshape to a lower rank around this node")
    elif c.kind == "nonempty":
        for idx in c.inputs or [0]:
            info = lm.tensors.get(n_in[idx]) if idx < len(n_in) and n_in[idx] else None
            if info is not None and info.shape is not None and 0 in info.shape:
                return NodeVerdict(c.verdict, "constraint-empty", f"input {idx} ('{n_in[idx]}') is empty "
                                   f"(shape {info.shape}): {c.reason}", "give it at least one element, or fold "
                                   "the node to a constant before the import", tensor=n_in[idx])
    elif c.kind == "static_shape":
        for i in list(n_in) + list(ref.outputs):
            if i and i in dyn.tensors:
                return NodeVerdict(c.verdict, "constraint-static", f"tensor '{i}' is dynamic: {c.reason}",
                                   "make its dims static (studio fix --static ...)", tensor=i)
    return None
