"""Graph-output dimension names and the opset actually written.

The TorchScript exporter names every undeclared output dim after the node that produced it
(``Transposelogits_per_image_dim_0``); a Triton config or the inspector then shows that instead of
``batch``. After export, ONNX Runtime's symbolic shape inference propagates the input dim names through
the graph: an output dim it resolves to an input's axis name takes that name. Dims it cannot resolve
keep the exporter's name; dims it resolves to a number become static. Declared names (the parts of a split
export declare their outputs) win.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def written_opset(path: Path) -> int | None:
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    return next((int(o.version) for o in model.opset_import if o.domain in ("", "ai.onnx")), None)


def _dims(value_info: Any) -> list[Any]:
    return list(value_info.type.tensor_type.shape.dim)


def name_output_dims(path: Path, declared: dict[str, dict[int, str]] | None = None) -> dict[str, str]:
    """Rename graph-output dims in place; returns ``{"output[axis]": "new name"}`` for what changed."""
    import onnx

    model = onnx.load(str(path), load_external_data=False)  # metadata only: external weights stay where they are
    input_names = {d.dim_param for i in model.graph.input for d in _dims(i) if d.dim_param}
    inferred: dict[str, list[Any]] = {}
    try:
        from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

        out = SymbolicShapeInference.infer_shapes(model, auto_merge=True, guess_output_rank=False)
        if out is not None:
            inferred = {o.name: _dims(o) for o in out.graph.output}
    except Exception:  # noqa: BLE001 - inference is best effort: the exporter's names stay
        inferred = {}
    changes: dict[str, str] = {}
    for o in model.graph.output:
        dims = _dims(o)
        for axis, dim in enumerate(dims):
            want = (declared or {}).get(o.name, {}).get(axis)
            if want is None and dim.dim_param and dim.dim_param not in input_names:
                got = inferred.get(o.name, [])
                if axis < len(got) and got[axis].HasField("dim_value") and got[axis].dim_value > 0:
                    dim.dim_value = got[axis].dim_value  # static once the inputs' static dims are known
                    changes[f"{o.name}[{axis}]"] = str(got[axis].dim_value)
                    continue
                cand = got[axis].dim_param if axis < len(got) and got[axis].HasField("dim_param") else ""
                want = cand if cand in input_names else None
            if want and dim.dim_param != want and not dim.HasField("dim_value"):
                dim.dim_param = want
                changes[f"{o.name}[{axis}]"] = want
    if changes:
        onnx.save(model, str(path))
    return changes


def name_dims_from_runs(path: Path, axis_sizes: list[dict[str, int]],
                        output_shapes: list[dict[str, tuple[int, ...]]]) -> dict[str, str]:
    """Fallback when symbolic inference gives up (it cannot follow every Reshape): an output dim still carrying
    an exporter-generated name takes the input axis name whose size it equalled in *every* validation run, when
    exactly one axis name does (the runs change batch and sequence to distinct sizes, so a match is not luck)."""
    import onnx

    if len(axis_sizes) < 2 or len(axis_sizes) != len(output_shapes):
        return {}
    model = onnx.load(str(path), load_external_data=False)
    input_names = {d.dim_param for i in model.graph.input for d in _dims(i) if d.dim_param}
    names = sorted(set.intersection(*(set(a) for a in axis_sizes)))
    changes: dict[str, str] = {}
    for o in model.graph.output:
        for axis, dim in enumerate(_dims(o)):
            if not dim.dim_param or dim.dim_param in input_names:
                continue
            seen = [shapes[o.name][axis] if o.name in shapes and axis < len(shapes[o.name]) else None
                    for shapes in output_shapes]
            if None in seen:
                continue
            match = [n for n in names if all(sizes[n] == s for sizes, s in zip(axis_sizes, seen, strict=True))]
            if len(match) == 1 and len({sizes[match[0]] for sizes in axis_sizes}) > 1:
                dim.dim_param = match[0]
                changes[f"{o.name}[{axis}]"] = match[0]
    if changes:
        onnx.save(model, str(path))
    return changes
