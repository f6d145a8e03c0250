"""Model statistics without loading weights: node counts, op histogram, parameters, initializer and
external-data bytes, estimated FLOPs and activation memory (peak by liveness over the main graph)."""

from __future__ import annotations

import functools
import math
from pathlib import Path

from studio.inspect.model import LoadedModel, NodeRef, dtype_bytes, dtype_name, iter_graphs
from studio.inspect.report import ModelStats

ELEMENTWISE = {"Add", "Sub", "Mul", "Div", "Pow", "Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Log", "Sqrt",
               "Neg", "Abs", "Max", "Min", "Where", "Gelu", "LeakyRelu", "Clip", "HardSigmoid", "HardSwish",
               "Reciprocal", "Sin", "Cos", "Elu", "Selu", "PRelu", "Softplus", "Mish", "Equal", "Less",
               "Greater", "And", "Or", "Not", "Cast"}
COST_PER_ELEMENT = {"Softmax": 5, "LogSoftmax": 5, "LayerNormalization": 8, "BatchNormalization": 2,
                    "InstanceNormalization": 8, "GroupNormalization": 8, "SimplifiedLayerNormalization": 6,
                    "SkipLayerNormalization": 9, "RMSNormalization": 6}


def _numel(shape: list | None, assumed: list[bool]) -> int:
    if shape is None:
        assumed.append(True)
        return 0
    n, dynamic = _numel_of(tuple(shape))
    if dynamic:
        assumed.append(True)
    return n


@functools.lru_cache(maxsize=4096)
def _numel_of(shape: tuple) -> tuple[int, bool]:
    """(element count with unknown dims as 1, whether a dim was unknown): thousands of tensors share a few
    hundred shapes."""
    n, dynamic = 1, False
    for d in shape:
        if isinstance(d, int):
            n *= max(d, 0)
        else:
            dynamic = True
    return n, dynamic


def _shape(lm: LoadedModel, name: str) -> list | None:
    t = lm.tensors.get(name)
    return None if t is None else t.shape


def _int(d: object) -> int:
    return d if isinstance(d, int) else 1


def node_flops(lm: LoadedModel, ref: NodeRef, assumed: list[bool]) -> int:
    op = ref.op_type
    if op not in _COUNTED and not op.startswith("Reduce"):
        return 0
    node = ref.node
    ins = ref.inputs
    outs = [o for o in ref.outputs if o]
    if not outs:
        return 0
    out_shape = _shape(lm, outs[0])
    if op in ("MatMul", "MatMulInteger", "FusedMatMul"):
        a = _shape(lm, ins[0])
        if a and out_shape is not None:
            return 2 * _numel(out_shape, assumed) * _int(a[-1])
    elif op == "Gemm":
        a, b = _shape(lm, ins[0]), _shape(lm, ins[1])
        if a and b and out_shape is not None:
            trans_a = any(at.name == "transA" and at.i for at in node.attribute)
            k = _int(a[0] if trans_a else a[-1])
            return 2 * _numel(out_shape, assumed) * k
    elif op in ("Conv", "ConvInteger", "QLinearConv"):
        w = _shape(lm, ins[3 if op == "QLinearConv" else 1])
        if w and out_shape is not None:
            return 2 * _numel(out_shape, assumed) * math.prod(_int(d) for d in w[1:])
    elif op == "ConvTranspose":
        x, w = _shape(lm, ins[0]), _shape(lm, ins[1])
        if x and w:
            return 2 * _numel(x, assumed) * math.prod(_int(d) for d in w[1:])
    elif op.startswith("Reduce") or op in ("GlobalAveragePool", "GlobalMaxPool"):
        return _numel(_shape(lm, ins[0]), assumed) if ins else 0
    elif op in ("AveragePool", "MaxPool"):
        k = next((list(a.ints) for a in node.attribute if a.name == "kernel_shape"), [1])
        return _numel(out_shape, assumed) * math.prod(k)
    elif op in ELEMENTWISE:
        return _numel(out_shape, assumed)
    elif op in COST_PER_ELEMENT:
        return COST_PER_ELEMENT[op] * _numel(out_shape, assumed)
    return 0


_COUNTED = {"MatMul", "MatMulInteger", "FusedMatMul", "Gemm", "Conv", "ConvInteger", "QLinearConv",
            "ConvTranspose", "GlobalAveragePool", "GlobalMaxPool", "AveragePool", "MaxPool",
            *ELEMENTWISE, *COST_PER_ELEMENT}


def _flops(lm: LoadedModel, assumed: list[bool]) -> int:
    """Sum of node_flops; per-element ops (most nodes of a model) are counted inline, as node_flops counts
    them, to spare four calls per node."""
    tget = lm.tensors.get
    total = 0
    for ref in lm.nodes:
        op = ref.op_type
        cost = _PER_ELEMENT.get(op)
        if cost is None:
            if op in _COUNTED or op.startswith("Reduce"):
                total += _safe_flops(lm, ref, assumed)
            continue
        out = next((o for o in ref.outputs if o), None)
        if out is None:
            continue
        t = tget(out)
        if t is None or t.shape is None:
            assumed.append(True)
            continue
        n, dynamic = _numel_of(tuple(t.shape))
        if dynamic:
            assumed.append(True)
        total += cost * n
    return total


_PER_ELEMENT = {**{op: 1 for op in ELEMENTWISE}, **COST_PER_ELEMENT}  # op -> node_flops' cost per element


def _safe_flops(lm: LoadedModel, ref: NodeRef, assumed: list[bool]) -> int:
    """Malformed nodes (missing inputs, odd shapes) count zero rather than break the report."""
    try:
        return int(node_flops(lm, ref, assumed))
    except (IndexError, TypeError, ValueError, OverflowError):
        return 0


def compute_stats(lm: LoadedModel, input_shapes: dict[str, list[int]] | None = None) -> ModelStats:
    st = ModelStats()
    st.nodes = len(lm.nodes)
    st.main_graph_nodes = len(lm.model.graph.node)
    st.subgraphs = len(lm.graphs or list(iter_graphs(lm.model.graph))) - 1
    hist: dict[str, int] = {}
    for ref in lm.nodes:
        k = ref.op_type if ref.domain == "ai.onnx" else f"{ref.domain}:{ref.op_type}"
        hist[k] = hist.get(k, 0) + 1
    st.op_histogram = dict(sorted(hist.items(), key=lambda kv: (-kv[1], kv[0])))
    ext_files: dict[str, int] = {}
    base = lm.path.parent
    for t in lm.initializers.values():
        dims = t.dims
        n = math.prod(dims) if dims else 1
        st.parameters += n
        st.initializers += 1
        nbytes = int(n * dtype_bytes(t.data_type))
        if t.data_location == 1:  # EXTERNAL: dims and the length entry tell the size, no read
            st.external_tensors += 1
            length, loc = None, "?"
            for e in t.external_data:  # the last entry of a key counts, as in a dict of them
                k = e.key
                if k == "length":
                    length = e.value
                elif k == "location":
                    loc = e.value
            if length is not None:
                nbytes = int(length)
            ext_files[loc] = ext_files.get(loc, 0) + nbytes
            st.external_data_bytes += nbytes
        st.initializer_bytes += nbytes
    st.external_data_files = sorted(ext_files)
    for loc in st.external_data_files:
        if not (base / loc).exists():
            st.estimate_note += f"external data file missing: {loc}. "
    try:
        st.file_bytes = Path(lm.path).stat().st_size
    except OSError:
        pass
    for name in lm.graph_inputs:
        t = lm.tensors.get(name)
        st.inputs[name] = {"dtype": dtype_name(t.elem_type) if t else "unknown", "shape": t.shape if t else None}
    for name in lm.graph_outputs:
        t = lm.tensors.get(name)
        st.outputs[name] = {"dtype": dtype_name(t.elem_type) if t else "unknown", "shape": t.shape if t else None}
    st.input_shapes = {k: list(v) for k, v in (input_shapes or {}).items()}

    assumed: list[bool] = []
    st.flops = _flops(lm, assumed)
    # activation memory: liveness over the main graph in its (topological) order
    main = lm.nodes[:st.main_graph_nodes]  # the main graph's nodes come first, in graph order
    last_use: dict[str, int] = {}
    for i, ref in enumerate(main):
        for inp in ref.inputs:
            last_use[inp] = i
    freed: list[list[str]] = [[] for _ in main]  # node position -> the tensors it reads last
    for name, i in last_use.items():
        freed[i].append(name)
    keep = set(lm.graph_outputs)
    tensors, consts = lm.tensors, lm.constants

    def size(name: str) -> int:
        t = tensors.get(name)
        if t is None or name in consts:
            return 0
        return int(_numel(t.shape, assumed) * dtype_bytes(t.elem_type))

    live: dict[str, int] = {n: size(n) for n in lm.graph_inputs}
    cur = sum(live.values())
    peak = cur
    total = cur
    for i, ref in enumerate(main):
        for o in ref.outputs:
            if o and o not in live:
                s = size(o)
                live[o] = s
                cur += s
                total += s
        if cur > peak:
            peak = cur
        for inp in freed[i]:
            if inp in live and inp not in keep:
                cur -= live.pop(inp)
    st.activation_bytes_peak = peak
    st.activation_bytes_total = total
    if assumed:
        st.estimate_note += ("dynamic or unknown dims counted as 1; pass --shape NAME=DIMS for exact figures"
                             if not input_shapes else "some dims stayed unknown after shape inference")
    return st
