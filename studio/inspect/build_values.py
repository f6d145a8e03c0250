"""The values of the small tensors a toolchain computes at build: shape arithmetic at the build's static input
shapes, the way its constant folding evaluates it (rknn-toolkit2's fold_constant runs the subgraph).

Only what a whole-graph rule needs to read (is this operand all zeros?), in plain Python on flat lists: Shape,
Size, Gather, Unsqueeze / Squeeze / Reshape / Flatten / Identity, Concat and Slice on vectors, element-wise
arithmetic and comparisons with scalar or same-shape broadcasting, Cast, Range, ConstantOfShape, Expand of a
scalar, Where. Anything else (or anything above LIMIT elements) is simply not known.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

Value = tuple[tuple[int, ...], list[Any]]
LIMIT = 4096
_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "Add": operator.add, "Sub": operator.sub, "Mul": operator.mul, "Max": max, "Min": min,
    "Equal": operator.eq, "Less": operator.lt, "Greater": operator.gt, "LessOrEqual": operator.le,
    "GreaterOrEqual": operator.ge, "And": lambda a, b: bool(a and b), "Or": lambda a, b: bool(a or b),
    "Div": lambda a, b: (int(a / b) if isinstance(a, int) and isinstance(b, int) else a / b) if b else 0,
}
_UNARY: dict[str, Callable[[Any], Any]] = {"Neg": operator.neg, "Abs": abs, "Not": operator.not_,
                                           "Identity": lambda a: a}
_INT_TYPES = {2, 3, 4, 5, 6, 7, 12, 13}


def _attr(node: Any, name: str, default: Any = None) -> Any:
    from studio.core.onnx_light import attribute_value

    for a in node.attribute:
        if a.name == name:
            return attribute_value(a)
    return default


def _numel(shape: tuple[int, ...]) -> int:
    return math.prod(shape) if shape else 1


def _vec(v: Value | None) -> list[int] | None:
    """A rank-0/1 value as a list of ints (what shape-like inputs are)."""
    if v is None or len(v[0]) > 1:
        return None
    return [int(x) for x in v[1]]


def _binary(op: str, a: Value, b: Value) -> Value | None:
    fn = _BINARY[op]
    if a[0] == b[0]:
        return a[0], [fn(x, y) for x, y in zip(a[1], b[1], strict=True)]
    if _numel(b[0]) == 1 and len(b[0]) <= len(a[0]):
        return a[0], [fn(x, b[1][0]) for x in a[1]]
    if _numel(a[0]) == 1 and len(a[0]) <= len(b[0]):
        return b[0], [fn(a[1][0], y) for y in b[1]]
    return None


def _reshaped(data: Value, shape: list[int]) -> Value | None:
    shape = [data[0][i] if d == 0 and i < len(data[0]) else d for i, d in enumerate(shape)]
    if shape.count(-1) == 1:
        rest = _numel(tuple(d for d in shape if d != -1)) or 1
        shape[shape.index(-1)] = len(data[1]) // rest
    return (tuple(shape), data[1]) if _numel(tuple(shape)) == len(data[1]) else None


def _eval(op: str, node: Any, ins: list[Value | None], dims: Callable[[str], list[Any] | None],
          names: tuple[str, ...]) -> Value | None:
    """One node's output 0, or None when an input is unknown or the op is not covered."""
    if op in ("Shape", "Size"):
        shape = dims(names[0]) if names else None
        if shape is None or not all(isinstance(d, int) for d in shape):
            return None
        if op == "Size":
            return (), [_numel(tuple(shape))]
        start, end = _attr(node, "start", 0), _attr(node, "end", None)
        got = shape[start:end]
        return (len(got),), list(got)
    if any(v is None for v in ins[:1]) or not ins:
        return None
    x = ins[0]
    assert x is not None
    if op in _UNARY:
        return x[0], [_UNARY[op](v) for v in x[1]]
    if op in _BINARY and len(ins) == 2 and ins[1] is not None:
        return _binary(op, x, ins[1])
    if op == "Cast":
        to = _attr(node, "to", 0)
        conv = int if to in _INT_TYPES else bool if to == 9 else float
        return x[0], [conv(v) for v in x[1]]
    if op in ("Unsqueeze", "Squeeze", "Reshape", "Flatten"):
        if op == "Reshape":
            shape = _vec(ins[1]) if len(ins) > 1 else None
            return _reshaped(x, shape) if shape is not None else None
        if op == "Flatten":
            axis = _attr(node, "axis", 1) % (len(x[0]) or 1)
            return (_numel(x[0][:axis]), _numel(x[0][axis:])), x[1]
        axes = _attr(node, "axes") or (_vec(ins[1]) if len(ins) > 1 else None)
        if op == "Squeeze":
            keep = [d for i, d in enumerate(x[0]) if (axes is not None and i not in
                                                      [a % len(x[0]) for a in axes]) or (axes is None and d != 1)]
            return tuple(keep), x[1]
        if axes is None:
            return None
        shape = list(x[0])
        for a in sorted(a % (len(shape) + len(axes)) for a in axes):
            shape.insert(a, 1)
        return tuple(shape), x[1]
    if op == "Gather" and len(ins) > 1 and ins[1] is not None and len(x[0]) == 1:
        idx = ins[1]
        return idx[0], [x[1][int(i)] for i in idx[1]]
    if op == "Concat" and all(v is not None and len(v[0]) <= 1 for v in ins):
        flat = [e for v in ins if v is not None for e in v[1]]
        return (len(flat),), flat
    if op == "Slice" and len(x[0]) == 1 and len(ins) >= 3:
        starts, ends = _vec(ins[1]), _vec(ins[2])
        steps = _vec(ins[4]) if len(ins) > 4 and ins[4] is not None else [1]
        if starts is None or ends is None or steps is None:
            return None
        got = x[1][slice(starts[0], ends[0], steps[0])]
        return (len(got),), got
    if op == "Range" and len(ins) == 3 and all(v is not None for v in ins):
        start, limit, delta = (v[1][0] for v in ins if v is not None)
        n = max(math.ceil((limit - start) / delta), 0) if delta else 0
        return (n,), [start + i * delta for i in range(min(n, LIMIT + 1))]
    if op == "ConstantOfShape":
        shape = _vec(x)
        t = _attr(node, "value")
        fill = 0
        if t is not None:
            from studio.core.onnx_light import tensor_values

            got = tensor_values(t)
            fill = got[1][0] if got and got[1] else 0
        return (tuple(shape), [fill] * _numel(tuple(shape))) if shape is not None else None
    if op == "Expand" and len(ins) > 1 and _numel(x[0]) == 1:
        shape = _vec(ins[1])
        return (tuple(shape), x[1] * _numel(tuple(shape))) if shape is not None else None
    if op == "Where" and len(ins) == 3 and all(v is not None for v in ins):
        c, a, b = ins
        assert c is not None and a is not None and b is not None
        if c[0] == a[0] == b[0]:
            return c[0], [p if q else r for q, p, r in zip(c[1], a[1], b[1], strict=True)]
    return None


def build_values(lm: Any, known: set[str], fixed: Any = None) -> dict[str, Value]:
    """Values of the tensors in ``known`` (the build-time constants) that this module can compute, using the
    static dims of ``fixed`` (the model at the build's shapes; default ``lm``) for Shape and Size."""
    from studio.core.onnx_light import tensor_values

    tensors = (fixed or lm).tensors
    out: dict[str, Value] = {}
    for name, t in lm.initializers.items():  # integer tensors: the weights are not shape arithmetic
        got = tensor_values(t, LIMIT) if t.data_type in _INT_TYPES else None
        if got is not None:
            out[name] = got

    def dims(name: str) -> list[Any] | None:
        info = tensors.get(name)
        return None if info is None else info.shape

    for ref in lm.nodes:
        if ref.graph or not ref.outputs or ref.outputs[0] not in known or ref.outputs[0] in out:
            continue
        if ref.op_type == "Constant":
            t = _attr(ref.node, "value")
            if t is not None:
                got = tensor_values(t, LIMIT)
            else:
                v = _attr(ref.node, "value_int", None)
                vs = _attr(ref.node, "value_ints", None)
                got = ((), [v]) if v is not None else ((len(vs),), list(vs)) if vs is not None else None
        else:
            try:
                got = _eval(ref.op_type, ref.node, [out.get(i) for i in ref.inputs], dims, ref.inputs)
            except (ValueError, TypeError, IndexError, ZeroDivisionError, OverflowError):
                got = None
        if got is not None and len(got[1]) <= LIMIT:
            out[ref.outputs[0]] = got
    return out


def _known(shape: Any) -> bool:
    return shape is not None and all(isinstance(d, int) and d >= 0 for d in shape)


def _hint(ref: Any, fixed: Any, values: dict[str, Value]) -> list[int] | None:
    """Output 0's dims from shape-giving inputs whose values are known, where shape inference lost them."""
    op, ins = ref.op_type, ref.inputs
    shape_of = (lambda n: fixed.tensors[n].shape if n in fixed.tensors else None)  # noqa: E731
    if op in ("Reshape", "ConstantOfShape") and ins:
        v = _vec(values.get(ins[1 if op == "Reshape" else 0])) if len(ins) > (op == "Reshape") else None
        if v is None:
            return None
        if op == "Reshape":
            data = shape_of(ins[0])
            if not _known(data):
                return None
            got = _reshaped((tuple(data), [0] * _numel(tuple(data))), v)
            return list(got[0]) if got is not None else None
        return v
    if op == "Expand" and len(ins) > 1:
        data, v = shape_of(ins[0]), _vec(values.get(ins[1]))
        if not _known(data) or v is None:
            return None
        a, b = [1] * (len(v) - len(data)) + list(data), [1] * (len(data) - len(v)) + v
        return [max(x, y) if 1 in (x, y) else x for x, y in zip(a, b, strict=True)]
    if op == "Range" and ref.outputs[0] in values:
        return list(values[ref.outputs[0]][0])
    if op == "Slice" and len(ins) >= 3:
        data = shape_of(ins[0])
        starts, ends = _vec(values.get(ins[1])), _vec(values.get(ins[2]))
        axes = _vec(values.get(ins[3])) if len(ins) > 3 and ins[3] else None
        steps = _vec(values.get(ins[4])) if len(ins) > 4 and ins[4] else None
        if not _known(data) or starts is None or ends is None:
            return None
        out = list(data)
        for k, ax in enumerate(axes if axes is not None else range(len(starts))):
            step = steps[k] if steps else 1
            out[ax % len(out)] = len(range(*slice(starts[k], ends[k], step).indices(out[ax % len(out)])))
        return out
    return None


def refined(fixed: Any, lm: Any, known: set[str], rounds: int = 4) -> tuple[Any, dict[str, Value]]:
    """(the model at the build's shapes, its build values) after giving shape inference the output dims it
    lost at Expand / Slice / Range / Reshape whose shape-giving values are known (onnx's data propagation does
    not evaluate them; the vendor's folding does), a few rounds until nothing changes."""
    from studio.core.onnx_light import proto
    from studio.inspect.model import analyse_structure

    values = build_values(lm, known, fixed)
    for _ in range(rounds):
        hints: dict[str, list[int]] = {}
        for ref in fixed.nodes:
            out = ref.outputs[0] if ref.outputs else ""
            t = fixed.tensors.get(out)
            if ref.graph or not out or t is None or _known(t.shape):
                continue
            dims = _hint(ref, fixed, values)
            if dims is not None and all(isinstance(d, int) and d >= 0 for d in dims):
                hints[out] = dims
        if not hints:
            break
        m = proto().ModelProto()
        m.CopyFrom(fixed.model)
        kept = [vi for vi in m.graph.value_info if vi.name not in hints]
        del m.graph.value_info[:]
        m.graph.value_info.extend(kept)
        for name, dims in hints.items():
            vi = m.graph.value_info.add()
            vi.name = name
            vi.type.tensor_type.elem_type = fixed.tensors[name].elem_type
            for d in dims:
                vi.type.tensor_type.shape.dim.add().dim_value = d
        fixed = analyse_structure(fixed.path, m)
        values = build_values(lm, known, fixed)
    return fixed, values
