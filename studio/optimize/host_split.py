"""Move the work a target places on the host at the graph's inputs into a host graph of its own.

A Rockchip NPU computes fp16 / int8: integer and boolean work left after folding (attention-mask casts, the EOS
token's ArgMax) and lookups by a runtime index (the token embedding of ``input_ids``) run on its CPU, each a
host <-> NPU round trip inside the model. When that work depends on the graph's inputs only, it is input
preparation, like tokenizing: ``host_split`` cuts it out into a *host graph* (ONNX Runtime runs it, exact
integer arithmetic) whose float outputs are the device graph's inputs, so the device graph holds only what the
accelerator computes.

- The host set starts from the nodes the target places on the host (the inspector's verdict) whose inputs are
  graph inputs, constants or other host nodes; it then takes every node that only reads those and computes with
  a non-float tensor (a ``Where`` on a boolean mask, a ``Flatten`` of it), so the tensors that cross are floats.
- Float tensors that cross are clipped to float16's finite range (+-65504) on the host: the device computes in
  fp16 / int8, and an attention mask filled with float32's lowest value would make an int8 calibration's ranges
  infinite (rknn-toolkit2: "cannot convert float NaN to integer"); past that range fp16 holds only infinities.
- A ``Gather`` of device data by a host-computed index (the pooled token picked by ArgMax) becomes a one-hot
  ``MatMul``: the host graph makes the one-hot rows (``OneHot``), the device multiplies them with the data.

``host_split(model, host_nodes)`` returns (device model, host model or None, SplitInfo).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from studio.core.catalogue import N_

FLOAT_TYPES = (1, 10, 11, 16)  # FLOAT, FLOAT16, DOUBLE, BFLOAT16


@dataclass
class SplitInfo:
    """What moved: host nodes (by the verdict and taken along), tensors crossing, one-hot rewrites, and the host
    nodes that stayed in the device graph (not at the inputs: the split cannot move them)."""

    host_nodes: list[str] = field(default_factory=list)
    taken_along: list[str] = field(default_factory=list)
    crossing: list[dict[str, Any]] = field(default_factory=list)  # {name, dtype, shape}
    one_hot: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)

    def steps(self) -> list[str]:
        if not self.host_nodes:
            return []
        nodes, tensors = len(self.host_nodes), len(self.crossing)
        moved = ", ".join(self.host_nodes[:4]) + (" ..." if nodes > 4 else "")
        crossing = ", ".join(f"{c['name']} {c['dtype']}{c['shape']}" for c in self.crossing[:4])
        out = [N_(f"host split: {nodes} input-preparation node(s) moved to the host graph ({moved}); "
                  f"{tensors} tensor(s) cross: {crossing}")]
        if self.one_hot:
            gathers = ", ".join(self.one_hot)
            out.append(N_(f"runtime-index Gather as one-hot MatMul: {gathers}"))
        if self.left:
            left = ", ".join(self.left[:6])
            out.append(N_(f"host nodes left in the device graph (not input preparation): {left}"))
        return out


def node_keys(graph: Any) -> list[str]:
    """The inspector's key of each main-graph node (studio.inspect.model): its name, else OP_INDEX, unique."""
    seen: set[str] = set()
    out = []
    for i, n in enumerate(graph.node):
        key = n.name or f"{n.op_type}_{i}"
        if key in seen:
            key = f"{key}#{i}"
        seen.add(key)
        out.append(key)
    return out


def _types(model: Any) -> dict[str, tuple[int, list[Any]]]:
    g = model.graph
    out: dict[str, tuple[int, list[Any]]] = {}
    for vi in [*g.input, *g.value_info, *g.output]:
        tt = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tt.shape.dim]
        out[vi.name] = (tt.elem_type, dims)
    for t in g.initializer:
        out[t.name] = (t.data_type, list(t.dims))
    return out


def _static(dims: list[Any] | None) -> bool:
    return dims is not None and all(isinstance(d, int) and d > 0 for d in dims)


def host_split(model: Any, host_nodes: set[str]) -> tuple[Any, Any, SplitInfo]:
    """Split ``model`` (shapes inferred here) by ``host_nodes`` (inspector keys); see the module docstring."""
    import onnx

    from studio.core.big_proto import infer_shapes
    from studio.optimize.rewrites import _copy

    m = infer_shapes(_copy(model), strict_mode=False)
    g = m.graph
    keys = node_keys(g)
    types = _types(m)
    info = SplitInfo()
    consts = {t.name for t in g.initializer} | {o for n in g.node if n.op_type == "Constant" for o in n.output}
    inputs = {i.name for i in g.input}
    made: set[str] = set()  # tensors the host graph makes
    host_idx: set[int] = set()

    def avail(t: str) -> bool:
        return not t or t in consts or t in inputs or t in made

    def take(i: int, n: Any) -> None:
        host_idx.add(i)
        made.update(o for o in n.output if o)

    for i, n in enumerate(g.node):
        if n.op_type != "Constant" and keys[i] in host_nodes and all(avail(t) for t in n.input):
            take(i, n)
            info.host_nodes.append(keys[i])
    changed = bool(host_idx)
    while changed:  # non-float work reading only host tensors goes along, so floats cross
        changed = False
        for i, n in enumerate(g.node):
            if i in host_idx or n.op_type == "Constant" or not all(avail(t) for t in n.input):
                continue
            live = [t for t in n.input if t and t not in consts]
            if not live or not any(t in made or t in inputs for t in live):
                continue
            dtypes = [types.get(t, (0, None))[0] for t in [*live, *n.output]]
            if any(d not in FLOAT_TYPES for d in dtypes):
                take(i, n)
                info.taken_along.append(keys[i])
                changed = True
    info.host_nodes += info.taken_along
    if not host_idx:
        return _copy(model), None, info
    outputs = {o.name for o in g.output}
    if made & outputs:
        from studio.core.errors import InputError

        raise InputError("the host part of the model reaches its outputs: nothing is left for the device",
                         offending=", ".join(sorted(made & outputs)), hint="run the model on the host target instead")
    device_nodes: list[Any] = []
    extra_host: list[Any] = []
    crossing_made: list[tuple[str, int, list[Any]]] = []  # one-hot tensors made for the device
    for i, n in enumerate(g.node):
        if i in host_idx or n.op_type == "Constant":  # constants go with whichever side reads them
            continue
        if keys[i] in host_nodes and n.op_type == "Gather" and len(n.input) == 2 and n.input[1] in made \
                and not avail(n.input[0]):
            rewritten = _one_hot_gather(n, types, keys[i])
            if rewritten is not None:
                host_part, dev_part, oh = rewritten
                extra_host += host_part
                device_nodes += dev_part
                crossing_made.append(oh)
                info.one_hot.append(keys[i])
                continue
        if keys[i] in host_nodes:
            info.left.append(keys[i])
        device_nodes.append(n)
    host_list = [n for i, n in enumerate(g.node) if i in host_idx] + extra_host
    host_made = made | {c[0] for c in crossing_made}
    read_by_device = [t for n in device_nodes for t in n.input if t]
    crossing = list(dict.fromkeys(t for t in read_by_device if t in host_made))
    host_list += _clip_crossing(host_list, [t for t in crossing if t in made and types.get(t, (0,))[0] == 1])
    oh_types = {c[0]: (c[1], c[2]) for c in crossing_made}
    for t in crossing:
        et, dims = oh_types.get(t) or types.get(t, (1, None))
        info.crossing.append({"name": t, "dtype": onnx.helper.tensor_dtype_to_np_dtype(et).name,
                              "shape": list(dims) if dims is not None else None})
    device = _subgraph(m, device_nodes, [i for i in g.input if i.name in set(read_by_device)],
                       [_vi(t, *(oh_types.get(t) or types.get(t, (1, None)))) for t in crossing], list(g.output))
    host_inputs = {t for n in host_list for t in n.input}
    host = _subgraph(m, host_list, [i for i in g.input if i.name in host_inputs],
                     [], [_vi(t, *(oh_types.get(t) or types.get(t, (1, None)))) for t in crossing])
    host.graph.name = f"{g.name or 'model'}_host"
    return device, host, info


def _clip_crossing(host_nodes: list[Any], names: list[str]) -> list[Any]:
    """``Clip`` each float32 crossing tensor to float16's finite range: the producer writes ``NAME/unclipped``,
    the Clip writes ``NAME`` (what the device graph reads)."""
    import numpy as np
    import onnx
    import onnx.helper as h

    if not names:
        return []
    lo, hi = "studio_fp16_lowest", "studio_fp16_max"
    out = [h.make_node("Constant", [], [lo], value=onnx.numpy_helper.from_array(np.array(-65504.0, np.float32))),
           h.make_node("Constant", [], [hi], value=onnx.numpy_helper.from_array(np.array(65504.0, np.float32)))]
    for name in names:
        raw = f"{name}/unclipped"
        for n in host_nodes:
            for k, o in enumerate(n.output):
                if o == name:
                    n.output[k] = raw
            for k, i in enumerate(n.input):
                if i == name:
                    n.input[k] = raw
        out.append(h.make_node("Clip", [raw, lo, hi], [name], name=f"{name}/fp16_range"))
    return out


def _vi(name: str, elem: int, dims: list[Any] | None) -> Any:
    import onnx.helper as h

    return h.make_tensor_value_info(name, elem, dims)


def _subgraph(m: Any, nodes: list[Any], graph_inputs: list[Any], extra_inputs: list[Any], outputs: list[Any]) -> Any:
    """A model of ``nodes`` with the Constant nodes and initializers they read, the given inputs and outputs."""
    import onnx

    g = m.graph
    read = {t for n in nodes for t in n.input if t}
    const_nodes = [n for n in g.node if n.op_type == "Constant" and any(o in read for o in n.output)]
    out = onnx.ModelProto()
    out.CopyFrom(m)
    del out.graph.node[:], out.graph.input[:], out.graph.output[:], out.graph.initializer[:], out.graph.value_info[:]
    out.graph.node.extend(const_nodes + list(nodes))
    out.graph.input.extend(graph_inputs + extra_inputs)
    out.graph.output.extend(outputs)
    out.graph.initializer.extend(t for t in g.initializer if t.name in read)
    return out


def _one_hot_gather(n: Any, types: dict[str, tuple[int, list[Any]]], key: str) -> tuple[list[Any], list[Any], tuple[
        str, int, list[int]]] | None:
    """``Gather(data, idx)`` with a host index: host ``OneHot(idx)`` rows [K, N], device ``MatMul`` (and the
    Transpose / Reshape that put the gathered axis first and back). None when shapes are not static."""
    import numpy as np
    import onnx
    import onnx.helper as h

    data, idx = n.input
    dshape = types.get(data, (0, None))[1]
    ishape = types.get(idx, (0, None))[1]
    if not _static(dshape) or ishape is None or not all(isinstance(d, int) and d > 0 for d in ishape):
        return None
    if types.get(data, (0, None))[0] not in FLOAT_TYPES:
        return None
    rank = len(dshape)
    axis = int(_attr_i(n, "axis", 0)) % rank
    depth, rest = dshape[axis], dshape[:axis] + dshape[axis + 1:]
    k = int(np.prod(ishape)) if ishape else 1
    base = f"{key}/one_hot"
    oh_raw, oh = f"{base}/rows_raw", f"{base}/rows"
    consts = [h.make_node("Constant", [], [f"{base}/depth"], value=onnx.numpy_helper.from_array(
        np.array(depth, np.int64))),
              h.make_node("Constant", [], [f"{base}/values"], value=onnx.numpy_helper.from_array(
                  np.array([0.0, 1.0], np.float32))),
              h.make_node("Constant", [], [f"{base}/rows_shape"], value=onnx.numpy_helper.from_array(
                  np.array([k, depth], np.int64)))]
    host = consts + [h.make_node("OneHot", [idx, f"{base}/depth", f"{base}/values"], [oh_raw], name=f"{base}/OneHot",
                                 axis=-1),
                     h.make_node("Reshape", [oh_raw, f"{base}/rows_shape"], [oh], name=f"{base}/Reshape")]
    dev: list[Any] = []
    src = data
    if axis != 0:
        perm = [axis] + [i for i in range(rank) if i != axis]
        dev.append(h.make_node("Transpose", [src], [f"{base}/data_t"], name=f"{base}/Transpose", perm=perm))
        src = f"{base}/data_t"
    flat = int(np.prod(rest)) if rest else 1
    if rank != 2 or axis != 0:
        dev.append(h.make_node("Constant", [], [f"{base}/flat_shape"], value=onnx.numpy_helper.from_array(
            np.array([depth, flat], np.int64))))
        dev.append(h.make_node("Reshape", [src, f"{base}/flat_shape"], [f"{base}/data_2d"], name=f"{base}/Flatten"))
        src = f"{base}/data_2d"
    picked = f"{base}/picked"
    dev.append(h.make_node("MatMul", [oh, src], [picked], name=f"{base}/MatMul"))
    shaped = list(ishape) + list(rest)
    final = n.output[0] if axis == 0 else f"{base}/shaped"
    dev.append(h.make_node("Constant", [], [f"{base}/out_shape"], value=onnx.numpy_helper.from_array(
        np.array(shaped, np.int64))))
    dev.append(h.make_node("Reshape", [picked, f"{base}/out_shape"], [final], name=f"{base}/Reshape_out"))
    if axis != 0:
        m_ = len(ishape)
        perm = list(range(m_, m_ + axis)) + list(range(m_)) + list(range(m_ + axis, m_ + rank - 1))
        dev.append(h.make_node("Transpose", [final], [n.output[0]], name=f"{base}/Transpose_out", perm=perm))
    return host, dev, (oh, onnx.TensorProto.FLOAT, [k, depth])


def _attr_i(node: Any, name: str, default: int) -> int:
    for a in node.attribute:
        if a.name == name:
            return int(a.i)
    return default
