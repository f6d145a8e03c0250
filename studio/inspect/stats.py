"""Model statistics without loading weights: node counts, op histogram, parameters, initializer and
external-data bytes, estimated FLOPs and activation memory (peak by liveness over the main graph)."""

from __future__ import annotations

import math
from pathlib import Path

from studio.core.catalogue import N_
from studio.inspect.flops import numel, total_flops
from studio.inspect.model import LoadedModel, dtype_bytes, dtype_name, iter_graphs
from studio.inspect.report import ModelStats


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
    st.flops = total_flops(lm, assumed)
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
        return int(numel(t.shape, assumed) * dtype_bytes(t.elem_type))

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
        st.estimate_note += (N_("dynamic or unknown dims counted as 1; pass --shape NAME=DIMS for exact figures")
                             if not input_shapes else N_("some dims stayed unknown after shape inference"))
    return st
