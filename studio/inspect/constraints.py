"""Per-node constraints of a target profile (const inputs, attributes, batch 1, dtypes, rank, static shapes):
the node-level part of a verdict, checked against the constants the target sees (its own folding, when the
profile models one: studio.inspect.graph_model).

Each reason is a template (``N_``) around the profile's sentence as its ``{reason}``: the catalogue translates the
frame and, through its entry for that sentence (every shipped profile's is there), the sentence too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from studio.core.catalogue import N_
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
    reason = c.reason  # the profile's sentence: {reason} in each template below
    if c.kind == "const_input":
        for idx in c.inputs:
            if idx < len(n_in) and n_in[idx] and n_in[idx] not in consts:
                tensor = n_in[idx]
                return NodeVerdict(c.verdict, "constraint-const-input",
                                   N_(f"input {idx} ('{tensor}') must be a constant: {reason}"),
                                   N_("fold it to a constant (studio fix --static ... --simplify) or compute it "
                                      "outside the model"), tensor=tensor)
    elif c.kind == "attr" and c.name:
        name, allowed = c.name, c.allowed
        value = _attr(n, name)
        if value is None:
            value = c.default
        if value is None:
            return None
        if allowed is not None and _norm(value) not in [_norm(a) for a in allowed]:
            return NodeVerdict(c.verdict, "constraint-attr", N_(f"{name}={value!r} not in {allowed}: {reason}"),
                               N_(f"re-export with {name} in {allowed}"))
        if c.forbidden is not None and _norm(value) in [_norm(a) for a in c.forbidden]:
            return NodeVerdict(c.verdict, "constraint-attr", N_(f"{name}={value!r} is refused: {reason}"),
                               N_(f"re-export without {name}={value!r}"))
        limit = c.max_value
        if limit is not None and isinstance(value, (int, float)) and value > limit:
            return NodeVerdict(c.verdict, "constraint-attr", N_(f"{name}={value} above {limit}: {reason}"))
    elif c.kind == "batch1":
        x = n_in[0] if n_in else ""
        info = lm.tensors.get(x)
        if info is not None and info.shape:
            b = info.shape[0]
            if isinstance(b, int) and b != 1:
                return NodeVerdict(c.verdict, "constraint-batch", N_(f"batch is {b}; {reason}"),
                                   N_("export or fix with batch 1 (studio fix --static batch=1)"), tensor=x)
            if not isinstance(b, int):
                return NodeVerdict("risky", "constraint-batch", N_(f"batch dim is dynamic ('{b}'); {reason}"),
                                   N_("fix the batch to 1 (studio fix --static batch=1)"), tensor=x)
    elif c.kind == "dtype":
        for idx in c.inputs or [0]:
            if idx < len(n_in) and n_in[idx]:
                info = lm.tensors.get(n_in[idx])
                if info is not None and info.elem_type:
                    dt, allowed = dtype_name(info.elem_type), c.allowed
                    if allowed is not None and dt not in allowed:
                        return NodeVerdict(c.verdict, "constraint-dtype",
                                           N_(f"input {idx} is {dt}, allowed {allowed}: {reason}"),
                                           N_(f"cast to one of {allowed} before this node"), tensor=n_in[idx])
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
            return NodeVerdict(c.verdict, "constraint-dtype", N_(f"element types differ ({said}): {reason}"),
                               N_("cast so the types match before this node"))
    elif c.kind == "max_rank":
        info = lm.tensors.get(n_in[0]) if n_in else None
        limit = c.value
        if info is not None and info.shape is not None and limit is not None and len(info.shape) > limit:
            rank = len(info.shape)
            return NodeVerdict(c.verdict, "constraint-rank", N_(f"rank {rank} > {limit}: {reason}"),
                               N_("reshape to a lower rank around this node"))
    elif c.kind == "nonempty":
        for idx in c.inputs or [0]:
            info = lm.tensors.get(n_in[idx]) if idx < len(n_in) and n_in[idx] else None
            if info is not None and info.shape is not None and 0 in info.shape:
                tensor, shape = n_in[idx], info.shape
                return NodeVerdict(c.verdict, "constraint-empty", N_(f"input {idx} ('{tensor}') is empty "
                                   f"(shape {shape}): {reason}"), N_("give it at least one element, or fold "
                                   "the node to a constant before the import"), tensor=tensor)
    elif c.kind == "static_shape":
        for i in list(n_in) + list(ref.outputs):
            if i and i in dyn.tensors:
                tensor = i
                return NodeVerdict(c.verdict, "constraint-static", N_(f"tensor '{tensor}' is dynamic: {reason}"),
                                   N_("make its dims static (studio fix --static ...)"), tensor=tensor)
    return None
