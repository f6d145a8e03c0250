"""In-memory ModelProtos past protobuf's 2 GB: what still works on them, and how.

A model whose weights are loaded (``onnx.load`` with its data files) may pass 2 GB in memory, but it can no longer
be serialized, and ``onnx.shape_inference.infer_shapes`` serializes. ``infer_shapes`` here infers such a model's
weightless skeleton instead (every initializer's name, type and dims kept: what inference reads) and copies the
result back. Used by the fixes (static dims, FP16, fusion) and the compiler's probes; the onnx package is imported
only inside the functions.
"""

from __future__ import annotations

from typing import Any

LIMIT = 2**31 - 2**26  # protobuf's 2 GB, less room for the graph: past it the weights must live in a data file


def _copy_fields(dst: Any, src: Any, skip: str) -> None:
    """Every set field of ``src`` into ``dst`` but ``skip`` (the weights are what is left behind)."""
    for fd, value in src.ListFields():
        if fd.name == skip:
            continue
        if fd.label == fd.LABEL_REPEATED:
            getattr(dst, fd.name).extend(value)
        elif fd.message_type is not None:
            getattr(dst, fd.name).CopyFrom(value)
        else:
            setattr(dst, fd.name, value)


def _skeleton(model: Any) -> Any:
    """``model`` without its main-graph weights: each initializer's name, type and dims kept (marked external, no
    data), so shape inference sees everything it reads and the proto stays far below protobuf's 2 GB."""
    import onnx

    sk = onnx.ModelProto()
    _copy_fields(sk, model, "graph")
    _copy_fields(sk.graph, model.graph, "initializer")
    for t in model.graph.initializer:
        if len(t.raw_data) >= 1024 or len(t.float_data) > 256 or len(t.int64_data) > 128:  # shape values stay
            head = sk.graph.initializer.add(name=t.name, data_type=t.data_type, dims=t.dims)
            head.data_location = onnx.TensorProto.EXTERNAL
            head.external_data.add(key="location", value="studio-skeleton")
        else:
            sk.graph.initializer.add().CopyFrom(t)
    return sk


def infer_shapes(model: Any, **kw: Any) -> Any:
    """``onnx.shape_inference.infer_shapes`` for any size: past protobuf's 2 GB (weights held in memory) it infers
    the weightless skeleton and copies its value_info and output types into ``model`` (returned, changed)."""
    import onnx

    if model.ByteSize() < LIMIT:
        return onnx.shape_inference.infer_shapes(model, **kw)
    inferred = onnx.shape_inference.infer_shapes(_skeleton(model), **kw)
    del model.graph.value_info[:]
    model.graph.value_info.extend(inferred.graph.value_info)
    for out, got in zip(model.graph.output, inferred.graph.output, strict=True):
        out.CopyFrom(got)
    return model
