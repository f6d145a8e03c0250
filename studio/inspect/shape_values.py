"""A dataflow rule for importers that keep shape values apart from tensors (TVM Relax's ONNX frontend).

TVM's ``from_onnx`` (apache-tvm 0.27, python/tvm/relax/frontend/onnx/onnx_frontend.py) turns the output of
``Shape`` into a Relax shape value (``R.Shape``, a ``ShapeExpr``), not a tensor. Before each converter runs,
``ONNXGraphImporter._construct_nodes`` raises "Node cannot handle ShapeExpr inputs" when a shape-typed input
reaches an op outside its ``shape_compatible_ops`` list (the profile's ``shape_values.accepts``). Whether a
value is a shape value depends on the converters upstream, so a per-op list cannot say it; this module walks
the main graph in order and gives every value TVM's kind, as those converters decide it:

- ``const``: a Relax constant (initializers, Constant, and converters that fold constant inputs);
- ``shape``: a ShapeExpr (Shape; Concat of shape values and 1-D int64 constants; Slice of a shape with
  constant bounds and a symbolic result; Where of shape values; Reshape of a shape to [-1]; Unsqueeze of a
  scalar dimension);
- ``prim``: a scalar dimension (Gather of a shape at a 0-D constant index, Squeeze of a one-element shape,
  arithmetic between dimensions and constants);
- ``tensor``: anything else.

Where the dims are static, Cast/Slice of a shape fold to a constant instead. The rule then flags, with TVM's
own words: a shape value read by an op outside ``accepts``; Reshape whose new shape is a runtime tensor
("Reshape requires the input new shape to be Shape"); Squeeze / Slice / Unsqueeze forms the shape paths
refuse. If-branch bodies are converted without that check and are not walked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from studio.inspect.model import LoadedModel

CONST, SHAPE, PRIM, TENSOR = "const", "shape", "prim", "tensor"
# Binary converters (BinaryBase.base_impl): constant or scalar-dimension operands are computed at import.
_BINARY = {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "And", "Or", "Xor", "Less", "LessOrEqual", "Greater",
           "GreaterOrEqual", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitShift"}
# Converters that return a constant when every input is one (numpy at import time).
_FOLD_ALL_CONST = {"Concat", "Cast", "Reshape", "Unsqueeze", "Squeeze", "Equal", "Where", "Gather", "Min", "Max",
                   "Mean", "Sum", "Neg", "Abs", "Log", "Transpose", "Range"}
_WHERE = "onnx_frontend.py, apache-tvm 0.27"


@dataclass
class Value:
    kind: str
    static: bool = True  # every dimension known at import time
    dims: tuple[bool, ...] | None = None  # shape values: per dim, known at import time (None: length unknown)

    @property
    def length(self) -> int | None:
        return None if self.dims is None else len(self.dims)


@dataclass
class ShapeFinding:
    node: str  # NodeRef.key
    tensor: str
    reason: str
    hint: str


def _const_array(lm: LoadedModel, name: str, limit: int = 4096) -> tuple[tuple[int, ...], list[Any]] | None:
    """``(dims, flat values)`` of a small initializer or Constant output, else None."""
    from studio.core.onnx_light import const_values

    t = lm.initializers.get(name)
    if t is None:
        ref = lm.producers.get(name)
        if ref is None or ref.op_type != "Constant" or ref.graph:
            return None
        t = next((a.t for a in ref.node.attribute if a.name == "value"), None)
    if t is None or t.data_location == 1:  # external data is not loaded
        return None
    return const_values(t, limit)


def _rank(lm: LoadedModel, name: str) -> int | None:
    info = lm.tensors.get(name)
    return None if info is None or info.shape is None else len(info.shape)


def _is_1d_int64_const(lm: LoadedModel, name: str) -> bool:
    info = lm.tensors.get(name)
    return info is not None and info.elem_type == 7 and info.shape is not None and len(info.shape) == 1


class _Walk:
    def __init__(self, lm: LoadedModel, accepts: set[str]):
        self.lm, self.accepts = lm, accepts
        self.values: dict[str, Value] = {}
        self.findings: list[ShapeFinding] = []
        for name in lm.initializers:
            self.values[name] = Value(CONST)

    def kind(self, name: str) -> Value | None:
        if not name:
            return None
        return self.values.get(name, _TENSOR)  # graph inputs, outer-scope or unknown values

    def flag(self, ref: Any, tensor: str, reason: str, hint: str) -> None:
        self.findings.append(ShapeFinding(ref.key, tensor, reason, hint))

    def run(self) -> None:
        values = self.values
        for ref in self.lm.nodes:
            if ref.graph:
                continue
            op = ref.op_type
            ins = [values.get(i, _TENSOR) if i else None for i in ref.inputs]
            kinds = {v.kind for v in ins if v is not None}
            if SHAPE not in kinds and (op not in _NAMED or (TENSOR in kinds and op in _TENSOR_WINS)):
                # what transfer() gives these (most nodes of a model), decided without it
                for o in ref.outputs:
                    if o:
                        values[o] = _TENSOR
                continue
            shape_in = [(i, name) for i, (name, v) in enumerate(zip(ref.inputs, ins, strict=True))
                        if v is not None and v.kind == SHAPE]
            if shape_in and op not in self.accepts:
                i, name = shape_in[0]
                src = self._origin(name)
                self.flag(ref, name, f"input {i} ('{name}') is a Relax shape value ({src}); TVM's importer passes "
                          f"shape values only to {', '.join(sorted(self.accepts))} and stops here with 'Node "
                          f"cannot handle ShapeExpr inputs' (ONNXGraphImporter._construct_nodes, {_WHERE})",
                          "Cast the shape to int64 first (Cast is in TVM's list and turns it into a tensor), "
                          "or fold it with static input shapes (studio fix --static ... --simplify)")
                out = Value(TENSOR)
            else:
                out = self.transfer(ref, ins)
            for o in ref.outputs:
                if o:
                    values[o] = out if o == ref.outputs[0] else _TENSOR

    def _origin(self, name: str) -> str:
        ref = self.lm.producers.get(name)
        if ref is not None and ref.op_type == "Shape":
            return "the output of Shape"
        return f"made a shape value by {ref.op_type}'s converter" if ref is not None else "a shape value"

    def transfer(self, ref: Any, ins: list[Value | None]) -> Value:  # noqa: C901 - one branch per converter
        op, n, lm = ref.op_type, ref.node, self.lm
        present = [v for v in ins if v is not None]
        if op == "Constant":
            return Value(CONST)
        if op == "Shape":
            x = ins[0] if ins else None
            if x is not None and x.kind == SHAPE:
                return Value(SHAPE, True, (True,))
            info = lm.tensors.get(ref.inputs[0]) if ref.inputs else None
            if info is None or info.shape is None:  # rank unknown here: TVM's shape_of, still shape-typed
                return Value(SHAPE, False, None)
            dims = tuple(isinstance(d, int) for d in info.shape)[_attr_int(n, "start", 0):_attr_int(n, "end", None)]
            return _shape(dims)
        if op in _BINARY:
            if present and all(v.kind in (CONST, PRIM) for v in present):
                if any(v.kind == PRIM for v in present):
                    return Value(PRIM, all(v.static for v in present))
                return Value(CONST)
            return Value(TENSOR)
        if op == "Gather" and ins and ins[0] is not None and ins[0].kind == SHAPE:
            if len(ins) > 1 and ins[1] is not None and ins[1].kind == CONST and _rank(lm, ref.inputs[1]) == 0:
                idx, dims = _const_ints(lm, ref.inputs[1]), ins[0].dims
                if idx and dims is not None and -len(dims) <= idx[0] < len(dims):
                    return Value(PRIM, dims[idx[0]])
                return Value(PRIM, ins[0].static)
            return Value(TENSOR)
        if op == "Concat":
            if present and all(v.kind == SHAPE or (v.kind == CONST and _is_1d_int64_const(lm, name))
                               for name, v in zip(ref.inputs, ins, strict=True) if v is not None):
                parts = [v.dims if v.kind == SHAPE else _const_dims(lm, name)
                         for name, v in zip(ref.inputs, ins, strict=True) if v is not None]
                if all(p is not None for p in parts):
                    return _shape(tuple(d for p in parts for d in p))
                return Value(SHAPE, all(v.static for v in present), None)
        if op in ("Cast", "CastLike") and ins and ins[0] is not None:
            x = ins[0]
            if x.kind == SHAPE:
                return Value(CONST) if x.static else Value(TENSOR)
            if x.kind in (CONST, PRIM):
                return Value(x.kind, x.static)
            return Value(TENSOR)
        if op == "Equal" and present and all(v.kind in (CONST, SHAPE) for v in present):
            return Value(CONST)
        if op == "Where" and present and all(v.kind in (CONST, SHAPE) for v in present):
            if all(v.kind == CONST for v in present):
                return Value(CONST)
            if all(v.kind == SHAPE or _rank(lm, name) == 1 for name, v in zip(ref.inputs, ins, strict=True) if v is not None):
                return Value(SHAPE, all(v.static for v in present), None)
            return Value(TENSOR)
        if op == "Reshape":
            return self._reshape(ref, ins)
        if op == "Squeeze" and ins and ins[0] is not None and ins[0].kind == SHAPE:
            x = ins[0]
            axes = _axes(lm, n, 1)
            if x.length == 1 and (axes is None or axes in ([0], [-1])):
                return Value(PRIM, x.static)
            if axes is None:
                return x
            self.flag(ref, ref.inputs[0], "Squeeze of a Relax shape value only removes the sole axis of a one-element "
                      f"shape: 'Squeeze on symbolic shape tensors only supports removing the sole axis' ({_WHERE})",
                      "Cast the shape to int64 before the Squeeze")
            return Value(TENSOR)
        if op == "Slice" and ins and ins[0] is not None and ins[0].kind == SHAPE:
            x = ins[0]
            params = ins[1:5]
            if all(v is None or v.kind in (CONST, SHAPE, PRIM) for v in params):
                b = [_const_ints(lm, name) if i < len(ref.inputs) and ref.inputs[i] else None
                     for i, name in ((i, ref.inputs[i] if i < len(ref.inputs) else "") for i in (1, 2, 4))]
                if x.dims is not None and b[0] and b[1] and len(b[0]) == 1:
                    step = b[2][0] if b[2] else 1
                    sliced = _shape(x.dims[b[0][0]:b[1][0]:step])
                else:
                    sliced = Value(SHAPE, x.static, None)
                return Value(CONST) if sliced.static else sliced
            self.flag(ref, ref.inputs[0], "Slice of a Relax shape value needs constant starts/ends/axes/steps: 'Slice "
                      f"with dynamic parameters does not support ShapeExpr input' ({_WHERE})",
                      "Cast the shape to int64 before the Slice, or make the bounds constants")
            return Value(TENSOR)
        if op == "Unsqueeze" and ins and ins[0] is not None and ins[0].kind == PRIM:
            axes = _axes(lm, n, 1)
            if axes == [0]:
                return Value(SHAPE, ins[0].static, (ins[0].static,))
            self.flag(ref, ref.inputs[0], "Unsqueeze of a scalar dimension supports axis 0 only: 'Unsqueeze with "
                      f"symbolic scalar inputs only supports axis 0' ({_WHERE})", "unsqueeze on axis 0")
            return Value(TENSOR)
        if op == "ConstantOfShape" and ins and ins[0] is not None:
            x = ins[0]
            one_d = (x.kind == SHAPE and x.length == 1) or (x.kind == CONST and _const_len(lm, ref.inputs[0]) == 1)
            return Value(CONST) if one_d and x.static else Value(TENSOR)
        if op == "Identity" and ins and ins[0] is not None:
            return ins[0]
        if op == "Neg" and ins and ins[0] is not None and ins[0].kind == PRIM:
            return ins[0]
        if op in _FOLD_ALL_CONST and present and all(v.kind == CONST for v in present):
            return Value(CONST)
        return Value(TENSOR)

    def _reshape(self, ref: Any, ins: list[Value | None]) -> Value:
        lm = self.lm
        data = ins[0] if ins else None
        new = ins[1] if len(ins) > 1 else None
        if data is not None and data.kind == SHAPE and new is not None and new.kind == CONST:
            arr = _const_array(lm, ref.inputs[1])
            if arr is not None and len(arr[0]) == 1 and arr[1] == [-1]:
                return data
        if new is not None and new.kind in (TENSOR, PRIM):
            why = "a graph input" if ref.inputs[1] in lm.graph_inputs else \
                f"computed at run time by {lm.producers[ref.inputs[1]].op_type}" if ref.inputs[1] in lm.producers else \
                "a runtime tensor"
            self.flag(ref, ref.inputs[1], f"the new shape (input 1, '{ref.inputs[1]}') is {why}, neither a constant nor a "
                      "Relax shape value: 'Reshape requires the input new shape to be Shape' (Reshape converter, "
                      f"{_WHERE}: only constants and values derived from Shape through shape ops are taken)",
                      "compute the new shape from Shape/Gather/Concat of shapes, or fold it to a constant "
                      "(studio fix --static ... --simplify)")
            return Value(TENSOR)
        if data is not None and data.kind == CONST and new is not None and new.kind == CONST:
            return Value(CONST)
        return Value(TENSOR)


_TENSOR = Value(TENSOR)  # shared: values are never changed once made
# Ops transfer() has a branch for; any other op's output is a tensor unless an input is a shape value.
_NAMED = {"Constant", "Shape", "Gather", "Concat", "Cast", "CastLike", "Equal", "Where", "Reshape", "Squeeze",
          "Slice", "Unsqueeze", "ConstantOfShape", "Identity", "Neg", *_BINARY, *_FOLD_ALL_CONST}
# Ops whose branches give a tensor whenever one input is a tensor and none is a shape value.
_TENSOR_WINS = ({"Gather", "Concat", "Cast", "Equal", "Where", "Squeeze", "Slice", *_BINARY, *_FOLD_ALL_CONST}
                - {"Constant", "Shape", "Reshape", "Unsqueeze", "Neg", "Identity", "ConstantOfShape", "CastLike"})


def _shape(dims: tuple[bool, ...]) -> Value:
    return Value(SHAPE, all(dims), dims)


def _const_dims(lm: LoadedModel, name: str) -> tuple[bool, ...] | None:
    """A 1-D int64 constant as shape dims: all known."""
    k = _const_len(lm, name)
    return None if k is None else (True,) * k


def _const_ints(lm: LoadedModel, name: str) -> list[int] | None:
    arr = _const_array(lm, name, limit=64)
    if arr is None:
        return None
    try:
        return [int(x) for x in arr[1]]
    except (TypeError, ValueError, OverflowError):  # NaN or inf in a float constant
        return None


def _attr_int(node: Any, name: str, default: int | None) -> int | None:
    for a in node.attribute:
        if a.name == name:
            return int(a.i)
    return default


def _axes(lm: LoadedModel, node: Any, idx: int) -> list[int] | None:
    """Axes from the attribute (old opsets) or a constant input; None when absent."""
    for a in node.attribute:
        if a.name == "axes":
            return [int(x) for x in a.ints]
    if idx < len(node.input) and node.input[idx]:
        arr = _const_array(lm, node.input[idx])
        try:
            return None if arr is None else [int(x) for x in arr[1]]
        except (TypeError, ValueError, OverflowError):
            return None
    return None


def _const_len(lm: LoadedModel, name: str) -> int | None:
    info = lm.tensors.get(name)
    if info is None or info.shape is None or len(info.shape) != 1 or not isinstance(info.shape[0], int):
        return None
    return info.shape[0]


# Relax's broadcasting ops (InferBinaryBroadcastShape): a dim they cannot prove equal keeps only the rank.
_BROADCAST = {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "And", "Or", "Xor", "Less", "LessOrEqual", "Greater",
              "GreaterOrEqual", "Equal", "Where", "Max", "Min"}


def _shape_loss(lm: LoadedModel, values: dict[str, Value]) -> list[ShapeFinding]:
    """Relax tensors that keep only their rank, and the Reshape that then cannot infer its -1.

    A Range whose bounds are not all constants at import (a dim read from a shape counts: TVM's Range converter
    folds constants only) or a NonZero gives a fresh symbolic length (``range_len_0``). A broadcast of that length
    against any other dim but 1 cannot be proved equal, so Relax keeps ``ndim`` only (the shape is lost, ONNX's
    own inference still says the static dim), and every op after it keeps that; a Reshape
    with a -1 of such a tensor then stops the import (apache-tvm 0.27, Qwen2-VL's vision rotary embedding:
    bench/bench_model_agreement.py). The dims are ONNX shape inference's (a value-read length is a fresh
    ``unk__N`` it carries downstream).
    """
    value_dims: set[str] = set()
    lost: set[str] = set()
    out: list[ShapeFinding] = []
    for ref in lm.nodes:
        if ref.graph:
            continue
        op = ref.op_type
        dims = [lm.tensors[i].shape if i in lm.tensors else None for i in ref.inputs]
        if op == "NonZero" or (op == "Range" and any(values.get(i, _TENSOR).kind != CONST for i in ref.inputs if i)):
            for o in ref.outputs:
                info = lm.tensors.get(o)
                if info is not None and info.shape is not None:
                    value_dims.update(d for d in info.shape if isinstance(d, str))
            continue
        if any(i in lost for i in ref.inputs if i):
            if op == "Reshape" and len(ref.inputs) > 1 and ref.inputs[0] in lost:
                new = _literal_parts(lm, ref.inputs[1])
                if new is not None and -1 in new:
                    out.append(ShapeFinding(ref.key, ref.inputs[0], (
                        f"input 0 ('{ref.inputs[0]}') has lost its shape in Relax (rank only): upstream a dim read "
                        "from run-time values (a Range or NonZero length) was broadcast against a static dim, "
                        "which Relax cannot prove equal; with a -1 in the new shape the import stops with "
                        "'Reshape expects the input tensor to have known shape when there is some dimension "
                        f"length to infer' ({_WHERE})"),
                        "give the Range constant bounds (fold the values it reads, e.g. a static grid), or make "
                        "the new shape fully explicit (no -1)"))
                    continue
                if new is not None and all(d > 0 for d in new):
                    continue  # an explicit new shape (no -1, no 0) gives the shape back
            if op != "Shape":
                lost.update(o for o in ref.outputs if o)
            continue
        if op in _BROADCAST and value_dims and all(d is not None for d in dims):
            rank = max(len(d) for d in dims if d is not None)
            for ax in range(1, rank + 1):
                col = [d[-ax] for d in dims if d is not None and len(d) >= ax]
                fresh = {c for c in col if isinstance(c, str) and c in value_dims}
                if fresh and any(c != 1 and c not in fresh for c in col) or len(fresh) > 1:
                    lost.update(o for o in ref.outputs if o)
                    break
    return out


def _literal_parts(lm: LoadedModel, name: str, depth: int = 0) -> list[int] | None:
    """The literal ints of a new shape TVM folds at import (a constant, or a Concat / Unsqueeze / Cast /
    Identity of constants and of dims read from shapes, which are never negative); None when it cannot tell."""
    got = _const_ints(lm, name)
    ref = lm.producers.get(name)
    if got is not None or ref is None or depth > 8:
        return got
    if ref.op_type in ("Unsqueeze", "Cast", "Identity") and ref.inputs:
        return _literal_parts(lm, ref.inputs[0], depth + 1)
    if ref.op_type == "Gather" and ref.inputs and ref.inputs[0] in lm.producers \
            and lm.producers[ref.inputs[0]].op_type == "Shape":
        return []  # a dim of a shape: known, never -1
    if ref.op_type == "Concat":
        parts = [_literal_parts(lm, i, depth + 1) for i in ref.inputs if i]
        return None if any(p is None for p in parts) else [x for p in parts if p is not None for x in p]
    return None


def shape_value_findings(lm: LoadedModel, accepts: set[str]) -> tuple[dict[str, ShapeFinding], dict[str, Value]]:
    """The first finding per node (by NodeRef.key) and TVM's kind of every main-graph value."""
    w = _Walk(lm, accepts)
    w.run()
    out: dict[str, ShapeFinding] = {}
    for f in [*w.findings, *_shape_loss(lm, w.values)]:
        out.setdefault(f.node, f)
    return out, w.values
