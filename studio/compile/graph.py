"""ONNX graph helpers for the compile path: inputs and static shapes, sub-graph extraction.

Sub-graphs are cut by hand (a node set, its outside inputs turned into graph inputs or constants) rather than
with ``onnx.utils.Extractor``, because the bisection needs to feed cut tensors either as inputs or as the
constant values ONNX Runtime computed for them. No TVM here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper

from studio.core.catalogue import N_
from studio.core.errors import InputError, ModelError
from studio.core.shapes import check_against

BATCH_NAMES = {"batch", "batch_size", "n", "b", "bs", "batch_dim", "unk__batch"}


@dataclass
class InputInfo:
    name: str
    dtype: str  # numpy dtype name, e.g. "float32", "int64"
    dims: list[int | str | None]  # int for static, str for a named dynamic dim, None for unnamed

    @property
    def static(self) -> bool:
        return all(isinstance(d, int) and d >= 0 for d in self.dims)


def load_model(path: Path | str) -> onnx.ModelProto:
    """Load an ONNX file (with external data) or raise ModelError naming it."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"model file not found: {p}", offending=str(p),
                         hint="pass the path of an .onnx file (for example one written by `studio export`)")
    from studio.core.external_data import check_model_files

    check_model_files(p)  # a missing or truncated data file: a ModelError naming it, before any weight is read
    try:
        return onnx.load(str(p))
    except Exception as exc:
        raise ModelError(f"cannot read {p.name} as ONNX: {exc}", offending=str(p),
                         hint="check the file is a complete .onnx model (re-export it if it was cut short)") from exc


def np_dtype(elem_type: int) -> str:
    return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type)).name


def graph_inputs(model: onnx.ModelProto) -> list[InputInfo]:
    """The real inputs of the graph (initializers listed as inputs by old exporters are skipped)."""
    inits = {i.name for i in model.graph.initializer}
    out = []
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        dims: list[int | str | None] = []
        for d in tt.shape.dim:
            if d.HasField("dim_value") and d.dim_value >= 0:  # 0 is a real (empty) dim
                dims.append(int(d.dim_value))
            elif d.HasField("dim_param") and d.dim_param:
                dims.append(d.dim_param)
            else:
                dims.append(None)
        out.append(InputInfo(vi.name, np_dtype(tt.elem_type) if tt.elem_type else "float32", dims))
    return out


def graph_output_names(model: onnx.ModelProto) -> list[str]:
    return [o.name for o in model.graph.output]


@dataclass
class ShapePlan:
    shapes: dict[str, list[int]]
    dtypes: dict[str, str]
    dynamic: list[dict[str, Any]]  # {input, axis, dim, value, source}
    warnings: list[str]


def resolve_shapes(inputs: list[InputInfo], overrides: dict[str, list[int]]) -> ShapePlan:
    """Static shapes for every input: the model's own dims, ``--shape`` overrides, batch-like dims set to 1.

    Any other dynamic dim without an override is an InputError naming the input and the dim.
    """
    check_against(overrides, {i.name: i.dims or None for i in inputs})
    shapes, dtypes, dynamic, warnings = {}, {}, [], []
    missing: list[str] = []
    for inp in inputs:
        dtypes[inp.name] = inp.dtype
        if inp.name in overrides:
            shape = overrides[inp.name]
            for axis, (want, have) in enumerate(zip(shape, inp.dims, strict=False)):
                if not isinstance(have, int):
                    dynamic.append({"input": inp.name, "axis": axis, "dim": have, "value": want, "source": "--shape"})
            shapes[inp.name] = list(shape)
            continue
        shape = []
        for axis, d in enumerate(inp.dims):
            if isinstance(d, int):
                shape.append(d)
            elif axis == 0 and (d is None or str(d).lower() in BATCH_NAMES):
                shape.append(1)
                dynamic.append({"input": inp.name, "axis": 0, "dim": d, "value": 1, "source": "batch default"})
                warnings.append(N_(f"{inp.name}: dynamic batch dim '{d or '?'}' compiled as 1 (set it with --shape)"))
            else:
                missing.append(f"{inp.name}[{axis}] ('{d or '?'}')")
                shape.append(-1)
        shapes[inp.name] = shape
    if missing:
        example = next(i for i in inputs if -1 in shapes[i.name])
        ex_dims = ",".join(str(v if v > 0 else 8) for v in shapes[example.name])
        raise InputError("TVM needs static input shapes; these dims are dynamic: " + ", ".join(missing),
                         offending=missing[0].split("[")[0],
                         hint=f"give each dynamic input a shape, e.g. --shape {example.name}={ex_dims}")
    return ShapePlan(shapes, dtypes, dynamic, warnings)


# -- sub-graphs ----------------------------------------------------------------------------------------------


def node_label(node: onnx.NodeProto, index: int) -> str:
    return node.name or f"{node.op_type}_{index}"


def ancestors(nodes: Sequence[onnx.NodeProto], index: int, depth: int | None = None) -> list[int]:
    """Indices of the nodes feeding ``nodes[index]`` (itself included), up to ``depth`` hops (None: all)."""
    producer = {out: i for i, n in enumerate(nodes) for out in n.output if out}
    keep = {index}
    frontier = [index]
    hops = 0
    while frontier and (depth is None or hops < depth):
        nxt = []
        for i in frontier:
            for t in nodes[i].input:
                j = producer.get(t)
                if j is not None and j not in keep:
                    keep.add(j)
                    nxt.append(j)
        frontier = nxt
        hops += 1
    return sorted(keep)


def subgraph(model: onnx.ModelProto, indices: Sequence[int], *, outputs: Sequence[str] | None = None,
             known: dict[str, np.ndarray] | None = None, as_constants: bool = False,
             shapes: dict[str, list[int]] | None = None) -> tuple[onnx.ModelProto, dict[str, list[int]],
                                                                   dict[str, str]]:
    """A model made of ``model.graph.node[indices]``.

    Tensors the nodes read but do not produce become graph inputs (typed from ``known`` values that ONNX
    Runtime computed, or from the original graph inputs); with ``as_constants`` small integer (shape-like)
    tensors become constant initializers instead, as an importer that folds shape arithmetic would see them.
    Outputs default to every produced tensor nobody inside consumes. Returns (model, shape_dict, dtype_dict).
    """
    g = model.graph
    chosen = [g.node[i] for i in sorted(set(indices))]
    produced = {o for n in chosen for o in n.output if o}
    consumed = {i for n in chosen for i in n.input if i}
    inits = {t.name: t for t in g.initializer}
    orig_inputs = {i.name: i for i in g.input}
    known = known or {}
    new_inputs, new_inits, shape_dict, dtype_dict = [], [], {}, {}
    for name in sorted(consumed - produced, key=_order_key(chosen)):
        if name in inits:
            new_inits.append(inits[name])
        elif name in orig_inputs and name not in known:
            new_inputs.append(orig_inputs[name])
            if shapes and name in shapes:
                shape_dict[name] = list(shapes[name])
            dtype_dict[name] = np_dtype(orig_inputs[name].type.tensor_type.elem_type)
        elif name in known:
            val = np.asarray(known[name])
            if as_constants and val.dtype.kind in "iub" and val.size <= 64:  # shape-like: fold it in
                new_inits.append(onnx.numpy_helper.from_array(val, name))
            else:
                new_inputs.append(helper.make_tensor_value_info(
                    name, helper.np_dtype_to_tensor_dtype(val.dtype), list(val.shape)))
                shape_dict[name] = list(val.shape)
                dtype_dict[name] = val.dtype.name
        else:
            raise KeyError(name)
    if outputs is None:
        inside = {i for n in chosen for i in n.input}
        graph_outs = {o.name for o in g.output}
        outputs = [o for n in chosen for o in n.output if o and (o not in inside or o in graph_outs)]
    vi = {v.name: v for v in list(g.value_info) + list(g.output)}
    outs = []
    for o in outputs:
        if o in vi:
            outs.append(vi[o])
        elif o in known:
            val = np.asarray(known[o])
            outs.append(helper.make_tensor_value_info(o, helper.np_dtype_to_tensor_dtype(val.dtype), list(val.shape)))
        else:
            outs.append(helper.make_empty_tensor_value_info(o))
    sub = helper.make_graph(chosen, f"{g.name or 'graph'}_sub", new_inputs, outs, new_inits)
    m = helper.make_model(sub, opset_imports=list(model.opset_import), ir_version=model.ir_version)
    return m, shape_dict, dtype_dict


def _order_key(nodes: Sequence[onnx.NodeProto]):  # type: ignore[no-untyped-def]
    first: dict[str, int] = {}
    for i, n in enumerate(nodes):
        for t in n.input:
            first.setdefault(t, i)
    return lambda name: (first.get(name, 0), name)


def probe_tensors(model: onnx.ModelProto, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every intermediate tensor's value on ``feed``, computed by ONNX Runtime ({} when ORT cannot run it)."""
    from studio.core.runner import ort_session, session_options

    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    try:
        from studio.core.big_proto import infer_shapes

        inferred = infer_shapes(m)  # past 2 GB: on the weightless skeleton
        types = {v.name: v for v in inferred.graph.value_info}
    except Exception:
        types = {}
    for n in m.graph.node:
        for o in n.output:
            if o and o not in have:
                m.graph.output.append(types.get(o) or helper.make_empty_tensor_value_info(o))
                have.add(o)
    try:
        sess = ort_session(m, session_options(optimization="disable"))
        names = [o.name for o in sess.get_outputs()]
        values = sess.run(names, {k: v for k, v in feed.items() if k in {i.name for i in sess.get_inputs()}})
    except Exception:
        return {}
    out = dict(zip(names, values, strict=True))
    out.update(feed)
    return out
