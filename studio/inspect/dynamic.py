"""Dynamic dims traced to where they come from, and marked on every tensor they reach.

Origins are: symbolic or unknown dims of graph inputs; data-dependent ops (NonZero, Unique, Compress,
NonMaxSuppression, Loop, Range / TopK / Reshape / ... whose shape-giving input is computed from tensor
values); and nested-graph inputs of Loop / Scan. Shape arithmetic (Shape -> Gather -> Concat -> Reshape)
carries the origins of the dims it read, so a Reshape fed by ``Shape(input_ids)`` traces back to the input.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from studio.core.catalogue import N_
from studio.inspect.model import Dim, LoadedModel, iter_graphs

ALWAYS_DATA_DEPENDENT = {
    "NonZero": N_("output length is the number of non-zero elements (known only at run time)"),
    "Unique": N_("output length is the number of distinct values (known only at run time)"),
    "Compress": N_("output length depends on the condition tensor's values"),
    "NonMaxSuppression": N_("number of selected boxes depends on the scores"),
    "Loop": N_("iteration count and scan-output length are decided at run time"),
    "StringSplit": N_("output length depends on the strings"),
}
# op -> indices of inputs that give an output shape; a non-constant one makes the output data-dependent
SHAPE_INPUTS: dict[str, tuple[int, ...]] = {
    "Reshape": (1,), "Expand": (1,), "ConstantOfShape": (0,), "Tile": (1,), "Slice": (1, 2, 3, 4),
    "Pad": (1,), "Resize": (2, 3), "Upsample": (1,), "OneHot": (1,), "Range": (0, 1, 2), "TopK": (1,),
    "Squeeze": (1,), "Unsqueeze": (1,), "Split": (1,), "CenterCropPad": (1,), "RandomNormalLike": (),
}
INT_TYPES = {6, 7, 12, 13}  # int32, int64, uint32, uint64


@dataclass
class DynamicOrigin:
    """Where dynamism starts. ``reaches`` counts the tensors whose dims depend on it."""

    id: str
    kind: str  # "input" | "data-dependent" | "control-flow"
    description: str
    tensor: str | None = None
    node: str | None = None  # node key
    op_type: str | None = None
    axis: int | None = None
    symbol: str | None = None
    reaches: int = 0


@dataclass
class DynamicTensor:
    shape: list[Dim] | None
    origins: list[str]
    producer: str | None = None  # node key


@dataclass
class DynamicReport:
    dynamic_inputs: dict[str, list[Dim] | None] = field(default_factory=dict)
    origins: list[DynamicOrigin] = field(default_factory=list)
    tensors: dict[str, DynamicTensor] = field(default_factory=dict)
    data_dependent_nodes: list[str] = field(default_factory=list)

    @property
    def is_static(self) -> bool:
        return not self.origins

    def origin(self, origin_id: str) -> DynamicOrigin | None:
        return next((o for o in self.origins if o.id == origin_id), None)


def trace_dynamic(lm: LoadedModel) -> DynamicReport:
    rep = DynamicReport()
    origins: dict[str, DynamicOrigin] = {}
    shape_org: dict[str, frozenset[str]] = {}  # tensor -> origins of its dynamic dims
    value_org: dict[str, frozenset[str]] = {}  # integer shape-like tensor -> origins of its values
    symbol_org: dict[str, list[str]] = {}  # dim_param -> origin ids (graph input axes sharing the name)

    def add(o: DynamicOrigin) -> str:
        origins.setdefault(o.id, o)
        return o.id

    for name in lm.graph_inputs:
        info = lm.tensors.get(name)
        if info is None or not info.dynamic:
            continue
        rep.dynamic_inputs[name] = info.shape
        ids = []
        for axis, d in enumerate(info.shape or [None]):
            if isinstance(d, int):
                continue
            sym = d if isinstance(d, str) else None
            oid = f"input:{name}[{axis}]" + (f"={sym}" if sym else "")
            desc = (N_(f"graph input '{name}' axis {axis} is symbolic ('{sym}')") if sym
                    else N_(f"graph input '{name}' axis {axis} has no fixed size") if info.shape is not None
                    else N_(f"graph input '{name}' has unknown rank"))
            ids.append(add(DynamicOrigin(id=oid, kind="input", description=desc, tensor=name, axis=axis,
                                         symbol=sym)))
            if sym:
                symbol_org.setdefault(sym, []).append(oid)
        shape_org[name] = frozenset(ids)

    # Formal inputs of Loop / Scan bodies get their shapes from the iteration, not from the graph.
    for sub_path, g, owner in lm.graphs or iter_graphs(lm.model.graph):
        if owner is None or owner.op_type not in ("Loop", "Scan"):
            continue
        for vi in g.input:
            info = lm.tensors.get(vi.name)
            if info is not None and info.dynamic:
                oid = add(DynamicOrigin(id=f"body:{sub_path}:{vi.name}", kind="control-flow",
                                        description=N_(f"{owner.op_type} body input '{vi.name}' changes per iteration"),
                                        tensor=vi.name, op_type=owner.op_type, node=sub_path.rsplit("/", 1)[0]))
                shape_org[vi.name] = frozenset([oid])

    empty: frozenset[str] = frozenset()
    axis_org: dict[str, list[frozenset[str]]] = {}  # Shape output -> origins of each element (axis)

    def dim_origins(tensor: str) -> list[frozenset[str]] | None:
        info = lm.tensors.get(tensor)
        if info is None or info.shape is None:
            return None
        whole = shape_org.get(tensor, empty)
        return [empty if isinstance(d, int) else
                frozenset(o for o in symbol_org.get(d, []) if o in whole) or whole if isinstance(d, str) else whole
                for d in info.shape]

    by_syms: dict[tuple[Dim, ...], frozenset[str] | None] = {}  # symbolic dims -> their origins
    ordered: dict[frozenset[str], list[str]] = {}  # origins -> sorted ids
    syms_of: dict[tuple[Dim, ...], tuple[Dim, ...]] = {}  # shape -> its dims that are not static
    reach: dict[frozenset[str], int] = {}  # origins -> number of tensors in rep.tensors with them
    for ref in lm.nodes:
        n = ref.node
        op, n_in = ref.op_type, ref.inputs
        inputs = [i for i in n_in if i]
        carried = empty
        for i in inputs:  # unions only when they add something: most inputs carry the same few origins
            so, vo = shape_org.get(i), value_org.get(i)
            if so and so is not carried:
                carried = so if not carried else carried | so
            if vo and vo is not carried:
                carried = vo if not carried else carried | vo
        own = None
        if op in ALWAYS_DATA_DEPENDENT:
            own = (ALWAYS_DATA_DEPENDENT[op], "data-dependent")
        elif op in SHAPE_INPUTS:
            for idx in SHAPE_INPUTS[op]:
                if idx < len(n_in) and n_in[idx] and n_in[idx] not in lm.constants \
                        and not value_org.get(n_in[idx]):
                    what = {"TopK": "K", "Range": "start/limit/delta"}.get(op, f"input {idx}")
                    own = (N_(f"{what} ('{n_in[idx]}') is computed from tensor values, not from shapes"),
                           "data-dependent")
                    break
        if own is not None:
            oid = add(DynamicOrigin(id=f"node:{ref.key}", kind=own[1], description=f"{op}: {own[0]}",
                                    node=ref.key, op_type=op))
            rep.data_dependent_nodes.append(ref.key)
            carried = carried | {oid}
        for out in ref.outputs:
            if not out:
                continue
            info = lm.tensors.get(out)
            if op in ("Shape", "Size"):
                src = shape_org.get(n_in[0], empty) if n_in else empty
                if src:
                    value_org[out] = src
                    per_axis = dim_origins(n_in[0]) if op == "Shape" else None
                    if per_axis is not None:
                        start, end = _attr_int(n, "start", 0), _attr_int(n, "end", None)
                        axis_org[out] = per_axis[start:end]
            elif op == "Gather" and len(n_in) > 1 and n_in[0] in axis_org:
                idx = _const_ints(lm, n_in[1])
                per_axis = axis_org[n_in[0]]
                if idx is not None and all(-len(per_axis) <= i < len(per_axis) for i in idx):
                    picked = empty.union(*(per_axis[i] for i in idx))
                    if picked:
                        value_org[out] = picked
                    if len(idx) > 1 or _is_vector(lm, n_in[1]):
                        axis_org[out] = [per_axis[i] for i in idx]
                else:
                    value_org[out] = value_org.get(n_in[0], empty)
            elif carried and info is not None and info.elem_type in INT_TYPES and \
                    info.shape is not None and len(info.shape) <= 1:
                v = empty
                for i in inputs:
                    v = v | value_org.get(i, empty)
                if own is not None:
                    v = v | {f"node:{ref.key}"}
                if v:
                    value_org[out] = v
            shape = info.shape if info is not None else None
            org = carried
            if shape is not None:
                dims = tuple(shape)
                syms = syms_of.get(dims)
                if syms is None:
                    syms = syms_of[dims] = tuple(d for d in dims if not isinstance(d, int))
                if not syms:
                    continue
                if own is None:  # the same symbols give the same origins: worked out once per tuple
                    known = by_syms.get(syms)
                    if known is None:
                        known = by_syms[syms] = (frozenset(o for d in syms for o in symbol_org[d])
                                                 if all(isinstance(d, str) and d in symbol_org for d in syms)
                                                 else None)
                    if known is not None:
                        org = known
                elif all(isinstance(d, str) and d in symbol_org for d in syms):
                    org = frozenset(o for d in syms for o in symbol_org[d]) | frozenset([f"node:{ref.key}"])
            elif not carried:
                continue
            if not org:
                continue
            shape_org[out] = org
            names = ordered.get(org)
            if names is None:
                names = ordered[org] = sorted(org)
            if out not in rep.tensors:
                reach[org] = reach.get(org, 0) + 1
            else:  # a tensor written twice (nested graphs) counts once, with its last origins
                old = frozenset(rep.tensors[out].origins)
                reach[old] -= 1
                reach[org] = reach.get(org, 0) + 1
            rep.tensors[out] = DynamicTensor(shape=shape, origins=names.copy(), producer=ref.key)
    for name, ids in shape_org.items():
        if name not in rep.tensors:
            info = lm.tensors.get(name)
            rep.tensors[name] = DynamicTensor(shape=info.shape if info else None, origins=sorted(ids))
            reach[ids] = reach.get(ids, 0) + 1
    for org, count in reach.items():  # tensors reached, counted per set of origins instead of per tensor
        for oid in org:
            if oid in origins:
                origins[oid].reaches += count
    rep.origins = list(origins.values())
    return rep


def _attr_int(node, name: str, default):  # type: ignore[no-untyped-def]
    for a in node.attribute:
        if a.name == name:
            return int(a.i)
    return default


def _is_vector(lm: LoadedModel, name: str) -> bool:
    t = lm.initializers.get(name)
    return t is not None and len(t.dims) == 1


def _const_ints(lm: LoadedModel, name: str) -> list[int] | None:
    """Small integer initializers (Gather indices) as a list; None when not a readable constant."""
    t = lm.initializers.get(name)
    if t is None or t.data_location == 1 or t.data_type not in (6, 7):
        return None
    from studio.core.onnx_light import const_values

    read = const_values(t, limit=16)
    return None if read is None else [int(v) for v in read[1]]
