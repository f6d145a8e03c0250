"""The individual fixes, each ModelProto -> ModelProto: static dims, onnxslim simplification, FP16, INT8.

No home-made graph passes: simplification is onnxslim, FP16 is onnxconverter-common (with two Cast repairs around
it, for what its 1.16 rewrite gets wrong), INT8 is ONNX Runtime's dynamic quantization. Static dims rewrite only the declared input dims and re-run ONNX shape inference.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from studio.core.big_proto import LIMIT, infer_shapes
from studio.core.errors import DependencyMissing, InputError, ValidationError


def symbols_of(model: Any) -> dict[str, list[str]]:
    """dim_param -> ["input:axis", ...] over the graph inputs."""
    out: dict[str, list[str]] = {}
    for i in model.graph.input:
        tt = i.type.tensor_type
        for ax, d in enumerate(tt.shape.dim):
            if d.HasField("dim_param"):
                out.setdefault(d.dim_param, []).append(f"{i.name}:{ax}")
    return out


def _copy(model: Any) -> Any:
    """A deep copy, so a pass never changes the caller's ModelProto."""
    import onnx

    m = onnx.ModelProto()
    m.CopyFrom(model)
    return m


def make_static(model: Any, dims: dict[str, int], *, strict: bool = True) -> tuple[Any, list[str]]:
    """Replace symbolic dims by sizes (by symbol name, or ``input:axis``), then re-infer shapes.

    Returns the new model and a list of what changed. Unknown names are an InputError when ``strict``.
    """

    m = _copy(model)
    syms = symbols_of(m)
    changed: list[str] = []
    used: set[str] = set()
    for key, size in dims.items():
        if size <= 0:
            raise InputError(f"--static {key}={size}: sizes must be positive", offending=key,
                             hint="e.g. --static batch=1,sequence=64")
    n_inputs = len(m.graph.input)
    for idx, vi in enumerate(list(m.graph.input) + list(m.graph.output)):
        for ax, d in enumerate(vi.type.tensor_type.shape.dim):
            for key in (d.dim_param, f"{vi.name}:{ax}"):
                if key and key in dims:
                    old = d.dim_param or "?"
                    d.Clear()
                    d.dim_value = int(dims[key])
                    used.add(key)
                    if idx < n_inputs:
                        changed.append(f"{vi.name}[{ax}]: {old} -> {dims[key]}")
                    break
    missing = [k for k in dims if k not in used]
    if missing and strict:
        raise InputError(f"--static names dims the model does not have: {', '.join(missing)}",
                         offending=", ".join(missing),
                         hint="symbolic dims: " + (", ".join(f"{s} ({', '.join(w)})" for s, w in syms.items())
                                                   or "none (the model is static)") + "; or use INPUT:AXIS=N")
    del m.graph.value_info[:]
    try:
        m = infer_shapes(m, strict_mode=True, data_prop=True)
    except Exception as exc:
        raise ValidationError(f"shape inference failed after fixing dims: {str(exc)[:300]}",
                              offending=", ".join(f"{k}={v}" for k, v in dims.items()),
                              hint="the sizes contradict the graph (e.g. a Reshape); choose other sizes") from None
    return m, changed


def simplify(model: Any) -> Any:
    """Constant folding and graph simplification by onnxslim."""
    try:
        import onnxslim
    except ImportError:
        raise DependencyMissing.for_module("onnxslim", "optimize", "simplification") from None
    out = onnxslim.slim(_copy(model))
    if out is None:
        raise ValidationError("onnxslim could not simplify the model", hint="run without --simplify")
    return out


def to_fp16(model: Any, keep_fp32: list[str] | tuple[str, ...] = ()) -> Any:
    """FP16 weights and compute, float32 inputs/outputs kept (onnxconverter-common); nodes named in
    ``keep_fp32`` stay float32 (the converter's node block list)."""
    try:
        from onnxconverter_common import float16
    except ImportError:
        raise DependencyMissing.for_module("onnxconverter-common", "optimize", "FP16 conversion") from None
    src = _copy(model)
    _separate_consumed_outputs(src)
    _drop_noop_casts(src)
    del src.graph.value_info[:]
    if src.ByteSize() < LIMIT:
        out = float16.convert_float_to_float16(src, keep_io_types=True, disable_shape_infer=False,
                                               node_block_list=list(keep_fp32) or None)
    else:
        src = infer_shapes(src)  # past 2 GB: the converter's own inference would serialize the whole model
        out = float16.convert_float_to_float16(src, keep_io_types=True, disable_shape_infer=True,
                                               node_block_list=list(keep_fp32) or None)
    _align_float_casts(out)
    return out


def _drop_noop_casts(model: Any) -> int:
    """Remove ``Cast`` nodes whose input already has the target type (an exporter's ``x.to(weight.dtype)``),
    rewiring their readers to the input; returns how many went. onnxconverter-common drops such a Cast on a graph
    input itself but leaves its readers on the float32 input with no float16 Cast in front: ONNX Runtime then
    refuses the model ("Type parameter (T) of Optype (Conv) bound to different types", CLIP's patch embedding)."""
    g = model.graph
    types = {i.name: i.type.tensor_type.elem_type for i in g.input}
    types.update((t.name, t.data_type) for t in g.initializer)
    if any(n.op_type == "Cast" and n.input and n.input[0] not in types for n in g.node):
        inferred = infer_shapes(_copy(model) if model.ByteSize() < LIMIT else model)
        types.update((v.name, v.type.tensor_type.elem_type) for v in inferred.graph.value_info)
    outputs = {o.name for o in g.output}
    drop = [n for n in g.node if n.op_type == "Cast" and n.domain in ("", "ai.onnx") and n.output[0] not in outputs
            and types.get(n.input[0], 0) != 0
            and types[n.input[0]] == next((a.i for a in n.attribute if a.name == "to"), -1)]
    for cast in drop:
        src, dst = cast.input[0], cast.output[0]
        for n in _all_nodes(g):  # subgraphs (If / Loop bodies) read outer names too
            for k, i in enumerate(n.input):
                if i == dst:
                    n.input[k] = src
        g.node.remove(cast)
    return len(drop)


def _align_float_casts(model: Any) -> int:
    """A ``Cast(to=FLOAT)`` from an integer (rotary position ids, ViLT's and WavLM's masks) whose output the
    converter typed float16 gets ``to=FLOAT16``: onnxconverter-common 1.16 retypes the tensor but not the Cast, and
    ONNX Runtime refuses the mismatch. Returns how many were changed."""
    from onnx import TensorProto

    typed = {v.name: v.type.tensor_type.elem_type for v in model.graph.value_info}
    changed = 0
    for n in _all_nodes(model.graph):
        if n.op_type != "Cast" or typed.get(n.output[0]) != TensorProto.FLOAT16:
            continue
        for a in n.attribute:
            if a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
                changed += 1
    return changed


def _all_nodes(graph: Any) -> Any:
    for n in graph.node:
        yield n
        for a in n.attribute:
            for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                yield from _all_nodes(sub)


def _separate_consumed_outputs(model: Any) -> None:
    """Graph outputs that other nodes also read get an Identity in front, so the converter's float32
    boundary Cast does not change the type those internal consumers see (onnxconverter-common issue)."""
    import onnx.helper as h

    g = model.graph
    outs = {o.name for o in g.output}
    consumed = {i for n in g.node for i in n.input if i in outs}
    for name in consumed:
        inner = f"{name}__internal"
        for n in g.node:
            for k, o in enumerate(n.output):
                if o == name:
                    n.output[k] = inner
            for k, i in enumerate(n.input):
                if i == name:
                    n.input[k] = inner
        g.node.append(h.make_node("Identity", [inner], [name], name=f"{name}__output"))


def to_int8_dynamic(model: Any) -> Any:
    """Dynamic INT8 quantization of MatMul/Gemm/Conv weights (onnxruntime.quantization)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    big = model.ByteSize() >= LIMIT
    with tempfile.TemporaryDirectory(prefix="studio-int8-") as d:
        src, dst = Path(d) / "in.onnx", Path(d) / "out.onnx"
        onnx.save(model, str(src), save_as_external_data=big, all_tensors_to_one_file=True, location="in.onnx.data")
        import logging

        root = logging.getLogger()
        level = root.level
        root.setLevel(logging.ERROR)  # quantize_dynamic logs a pre-processing advice on the root logger
        try:
            quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, use_external_data_format=big)
        finally:
            root.setLevel(level)
        return onnx.load(str(dst))
