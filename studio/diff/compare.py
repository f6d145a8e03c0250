"""What changed in a matched node pair, and in the graph's inputs, outputs and initializers.

Attributes are read from the NodeProto only for matched pairs; tensor attributes compare dtype, dims and a
SHA-1 of their stored bytes (an external tensor's location / offset / length: its data is never read).
A tensor's shape or dtype change is listed once, at the node that writes it (graph inputs and initializers in
their own sections), so a static-dims fix lists each re-shaped tensor exactly once.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from studio.diff.match import Side
from studio.diff.report import ADDED, CHANGED, REMOVED, FieldChange, TensorChange
from studio.inspect.model import LoadedModel, TensorInfo, dtype_name

MAX_SHOWN = 12  # list attributes longer than this show their head and length


_GENERATED = re.compile(r"unk__\d+$")  # names ONNX shape inference makes up for dims it cannot name


def _symbolic(d: Any) -> bool:
    return not isinstance(d, int)


def _unknown(d: Any) -> bool:
    return d is None or (isinstance(d, str) and _GENERATED.match(d) is not None)


def same_shape(sa: list[Any] | None, sb: list[Any] | None) -> bool:
    """Equal dims, where an unknown or inference-named dim equals any other symbolic one (``unk__3`` vs
    ``batch`` is the inference's spelling, not a change; ``batch`` -> 1 is)."""
    if sa is None or sb is None:
        return sa is sb
    if len(sa) != len(sb):
        return False
    for x, y in zip(sa, sb, strict=True):
        if x == y:
            continue
        if _symbolic(x) and _symbolic(y) and (_unknown(x) or _unknown(y)):
            continue
        return False
    return True


def _shape(info: TensorInfo | None) -> list[Any] | None:
    return None if info is None or info.shape is None else list(info.shape)


def _dtype(info: TensorInfo | None) -> str | None:
    return None if info is None or not info.elem_type else dtype_name(info.elem_type)


def tensor_digest(t: Any) -> str:
    """dtype[dims] plus a short SHA-1 of the stored data (never external data: its reference is hashed)."""
    import onnx

    h = hashlib.sha1()
    if t.data_location == onnx.TensorProto.EXTERNAL:
        h.update(repr(sorted((e.key, e.value) for e in t.external_data)).encode())
        where = " external"
    else:
        c = onnx.TensorProto()
        c.CopyFrom(t)
        c.ClearField("name")
        c.ClearField("doc_string")
        h.update(c.SerializeToString(deterministic=True))
        where = ""
    dims = ",".join(str(int(d)) for d in t.dims)
    return f"{dtype_name(t.data_type)}[{dims}] sha1:{h.hexdigest()[:12]}{where}"


def _short(values: list[Any]) -> str:
    if len(values) <= MAX_SHOWN:
        return repr(values)
    return repr(values[:MAX_SHOWN])[:-1] + f", ... ({len(values)} values)]"


def attribute_value(attr: Any) -> tuple[Any, str]:
    """(value to compare, text to show) of one AttributeProto."""
    t = attr.type
    if t == 1:
        return attr.f, repr(attr.f)
    if t == 2:
        return attr.i, str(attr.i)
    if t == 3:
        s = attr.s.decode("utf-8", "replace")
        return s, repr(s)
    if t == 4:
        d = tensor_digest(attr.t)
        return d, d
    if t == 5:  # the body's nodes are matched and compared as nodes of their own
        return ("graph",), f"graph ({len(attr.g.node)} nodes)"
    if t == 6:
        v = list(attr.floats)
        return tuple(v), _short(v)
    if t == 7:
        v = list(attr.ints)
        return tuple(v), _short(v)
    if t == 8:
        v = [s.decode("utf-8", "replace") for s in attr.strings]
        return tuple(v), _short(v)
    if t == 9:
        v = [tensor_digest(x) for x in attr.tensors]
        return tuple(v), _short(v)
    if t == 10:
        return ("graphs", len(attr.graphs)), f"{len(attr.graphs)} graphs"
    raw = attr.SerializeToString(deterministic=True)  # sparse tensors, type protos: compared by their bytes
    digest = hashlib.sha1(raw).hexdigest()[:12]
    return digest, f"type {t} sha1:{digest}"


def attribute_changes(node_a: Any, node_b: Any) -> list[FieldChange]:
    attrs_a, attrs_b = node_a.attribute, node_b.attribute
    if attrs_a == attrs_b:  # compared in C; the usual case
        return []
    aa = {x.name: x for x in attrs_a}
    bb = {x.name: x for x in attrs_b}
    out: list[FieldChange] = []
    for name in dict.fromkeys([*aa, *bb]):
        xa, xb = aa.get(name), bb.get(name)
        if xa is not None and xb is not None and xa.type == xb.type and xa.type not in (5, 10) \
                and xa.SerializeToString(deterministic=True) == xb.SerializeToString(deterministic=True):
            continue
        va, sa = attribute_value(xa) if xa is not None else (None, None)
        vb, sb = attribute_value(xb) if xb is not None else (None, None)
        if xa is not None and xb is not None and xa.type == xb.type and va == vb:
            continue
        out.append(FieldChange("attribute", name, sa, sb))
    return out


def node_changes(a: Side, b: Side, i: int, j: int) -> list[FieldChange]:
    """Differences of A node i and its partner B node j (op, domain, attributes, wiring, output shapes/dtypes)."""
    ra, rb = a.refs[i], b.refs[j]
    out: list[FieldChange] = []
    if ra.op_type != rb.op_type:
        out.append(FieldChange("op_type", "op", ra.op_type, rb.op_type))
    if ra.domain != rb.domain:
        out.append(FieldChange("domain", "domain", ra.domain, rb.domain))
    out.extend(attribute_changes(ra.node, rb.node))
    if len(ra.inputs) != len(rb.inputs):
        out.append(FieldChange("inputs", "count", len(ra.inputs), len(rb.inputs)))
    if len(ra.outputs) != len(rb.outputs):
        out.append(FieldChange("outputs", "count", len(ra.outputs), len(rb.outputs)))
    return out


def wiring_changes(a: Side, b: Side, i: int, j: int, a2b: list[int]) -> list[FieldChange]:
    """Inputs that now come from another node (or another graph input)."""
    ra, rb = a.refs[i], b.refs[j]
    out: list[FieldChange] = []
    for slot, (x, y) in enumerate(zip(ra.inputs, rb.inputs, strict=False)):
        if bool(x) != bool(y):
            out.append(FieldChange("inputs", f"input {slot}", x or None, y or None))
            continue
        if not x:
            continue
        px, py = a.producer.get(x), b.producer.get(y)
        if px is not None:
            if py is None or a2b[px] != py:
                out.append(FieldChange("inputs", f"input {slot}", f"{x} (from {a.refs[px].key})",
                                       f"{y} (from {b.refs[py].key})" if py is not None else y))
        elif py is not None:
            out.append(FieldChange("inputs", f"input {slot}", x, f"{y} (from {b.refs[py].key})"))
        elif x != y and (x in a.graph_inputs or y in b.graph_inputs):
            out.append(FieldChange("inputs", f"input {slot}", x, y))  # another graph input (renamed weights are not)
    return out


def tensor_changes(a: Side, b: Side, i: int, j: int) -> list[FieldChange]:
    """Output dtype / shape changes by slot (each tensor is reported where it is written)."""
    ra, rb = a.refs[i], b.refs[j]
    out: list[FieldChange] = []
    for x, y in zip(ra.outputs, rb.outputs, strict=False):
        if not x or not y:
            continue
        ia, ib = a.tensors.get(x), b.tensors.get(y)
        if ia == ib:
            continue
        what = x if x == y else f"{x} -> {y}"
        da, db = _dtype(ia), _dtype(ib)
        if da != db:
            out.append(FieldChange("dtype", what, da, db))
        sa, sb = _shape(ia), _shape(ib)
        if not same_shape(sa, sb):
            out.append(FieldChange("shape", what, sa, sb))
    return out


def graph_tensor_changes(la: LoadedModel, lb: LoadedModel) -> list[TensorChange]:
    """Graph inputs and outputs by name (dtype + shape), initializers by name (dtype + dims only)."""
    out: list[TensorChange] = []
    for section, na, nb in (("input", la.graph_inputs, lb.graph_inputs),
                            ("output", la.graph_outputs, lb.graph_outputs)):
        set_b = set(nb)
        set_a = set(na)
        for name in na:
            ia = la.tensors.get(name)
            if name not in set_b:
                out.append(TensorChange(section, name, REMOVED, _dtype(ia), None, _shape(ia), None))
                continue
            ib = lb.tensors.get(name)
            if _dtype(ia) != _dtype(ib) or not same_shape(_shape(ia), _shape(ib)):
                out.append(TensorChange(section, name, CHANGED, _dtype(ia), _dtype(ib), _shape(ia), _shape(ib)))
        for name in nb:
            if name not in set_a:
                ib = lb.tensors.get(name)
                out.append(TensorChange(section, name, ADDED, None, _dtype(ib), None, _shape(ib)))
    ia_, ib_ = la.initializers, lb.initializers
    for name, t in ia_.items():
        u = ib_.get(name)
        if u is None:
            out.append(TensorChange("initializer", name, REMOVED, dtype_name(t.data_type), None, list(t.dims), None))
        elif t.data_type != u.data_type or list(t.dims) != list(u.dims):
            out.append(TensorChange("initializer", name, CHANGED, dtype_name(t.data_type), dtype_name(u.data_type),
                                    list(t.dims), list(u.dims)))
    for name, u in ib_.items():
        if name not in ia_:
            out.append(TensorChange("initializer", name, ADDED, None, dtype_name(u.data_type), None, list(u.dims)))
    return out
