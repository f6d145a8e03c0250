"""What the graph view draws, built from an ONNX ModelProto: nodes, edges, tensors. No Qt here.

Graph inputs and outputs become their own small nodes (as in Netron); initializers are not nodes (their names
are listed in the node details instead). Nodes inside If/Loop/Scan bodies are not drawn: their names map to the
top-level node that owns the body, so a finding in a nested graph still selects something visible.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from studio.core.gc_pause import gc_paused
from studio.profiling.modules import node_scope

KIND_OP, KIND_INPUT, KIND_OUTPUT, KIND_GROUP = "op", "input", "output", "group"
_GRAPH, _GRAPHS = 5, 10  # onnx.AttributeProto.GRAPH / GRAPHS (enum lookups on the proto class are slow)
_BODY_OPS = frozenset({"If", "Loop", "Scan", "SequenceMap"})  # standard ops with graph attributes
_STANDARD_DOMAINS = frozenset({"", "ai.onnx", "ai.onnx.ml", "ai.onnx.preview.training"})


@dataclass
class TensorInfo:
    name: str
    dtype: str = ""
    shape: list[int | str | None] | None = None  # None: rank unknown; str: a symbolic dim; None entry: unknown dim
    initializer: bool = False

    def shape_text(self) -> str:
        if self.shape is None:
            return "?"
        return "×".join("?" if d is None else str(d) for d in self.shape) or "scalar"

    @property
    def symbolic(self) -> bool:
        return self.shape is None or any(not isinstance(d, int) for d in self.shape)


class TensorTable:
    """Tensor name -> TensorInfo, built from the model's value_info on first access (most are never shown)."""

    def __init__(self, protos: dict[str, Any], initializers: dict[str, Any]) -> None:
        self._protos = protos
        self._inits = initializers
        self._cache: dict[str, TensorInfo] = {}

    def get(self, name: str, default: TensorInfo | None = None) -> TensorInfo | None:
        info = self._cache.get(name)
        if info is not None:
            return info
        vi, init = self._protos.get(name), self._inits.get(name)
        if vi is None and init is None:
            return default
        info = _tensor_info(vi) if vi is not None else TensorInfo(name)
        if init is not None:
            info.initializer = True
            info.dtype = info.dtype or _dtype_name(init.data_type)
            if info.shape is None:
                info.shape = [int(d) for d in init.dims]
        self._cache[name] = info
        return info

    def __getitem__(self, name: str) -> TensorInfo:
        info = self.get(name)
        if info is None:
            raise KeyError(name)
        return info

    def __contains__(self, name: object) -> bool:
        return name in self._protos or name in self._inits

    def __len__(self) -> int:
        return len(self._protos.keys() | self._inits.keys())

    def is_initializer(self, name: str) -> bool:
        return name in self._inits


@dataclass(slots=True)
class GNode:
    index: int
    name: str  # unique key: the ONNX name, or "<op>_<index>" when the model leaves it empty or repeats it
    op_type: str
    domain: str = ""
    kind: str = KIND_OP
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    attribute_protos: Any = field(default_factory=list, repr=False)  # list or the proto's repeated field
    subgraph_nodes: list[str] = field(default_factory=list)  # names of nodes inside its If/Loop/Scan bodies
    scope: str = ""  # exporter module scope (dotted) of an op; a group unit's path

    @property
    def attributes(self) -> dict[str, str]:
        """Attribute name -> readable value (formatted on demand: only the details panel needs them)."""
        return {a.name: _format_attr(a) for a in self.attribute_protos}


@dataclass(slots=True)
class GEdge:
    src: int
    dst: int
    tensor: str


@dataclass
class GraphData:
    nodes: list[GNode]
    edges: list[GEdge]
    tensors: TensorTable
    name: str = ""
    opset: dict[str, int] = field(default_factory=dict)
    nested_owner: dict[str, int] = field(default_factory=dict)  # nested node name -> top-level node index
    base: GraphData | None = None  # the full graph this one shows with groups collapsed (hierarchy.visible_graph)
    members: dict[int, list[int]] = field(default_factory=dict)  # group unit -> its base node indices
    _by_name: dict[str, int] = field(default_factory=dict, repr=False)
    _producer: dict[str, int] = field(default_factory=dict, repr=False)
    _consumers: dict[str, list[int]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self._by_name or not self.nodes:  # graph_from_onnx hands its maps in (one pass over 100k edges)
            return
        self._by_name = {n.name: n.index for n in self.nodes}
        for e in self.edges:
            self._producer.setdefault(e.tensor, e.src)
            self._consumers.setdefault(e.tensor, []).append(e.dst)

    def __len__(self) -> int:
        return len(self.nodes)

    def index_of(self, name: str) -> int | None:
        """A node's index by name; nested-graph node names resolve to their owning top-level node."""
        idx = self._by_name.get(name)
        return idx if idx is not None else self.nested_owner.get(name)

    def producer(self, tensor: str) -> int | None:
        return self._producer.get(tensor)

    def consumers(self, tensor: str) -> list[int]:
        return self._consumers.get(tensor, [])

    def op_histogram(self) -> Counter[str]:
        return Counter(n.op_type for n in self.nodes if n.kind == KIND_OP)

    def search(self, text: str, limit: int = 500) -> list[int]:
        """Nodes whose name, op type or any input/output tensor name contains ``text`` (case-insensitive).

        Exact op-type matches come first, then name matches, then tensor matches.
        """
        q = text.strip().lower()
        if not q:
            return []
        exact_op, by_name, by_tensor = [], [], []
        for n in self.nodes:
            if n.op_type.lower() == q:
                exact_op.append(n.index)
            elif q in n.name.lower() or q in n.op_type.lower():
                by_name.append(n.index)
            elif any(q in t.lower() for t in n.inputs) or any(q in t.lower() for t in n.outputs):
                by_tensor.append(n.index)
        return (exact_op + by_name + by_tensor)[:limit]


_DTYPES: dict[int, str] = {}


def _dtype_name(elem_type: int) -> str:
    if not _DTYPES:
        import onnx

        for name, value in onnx.TensorProto.DataType.items():
            _DTYPES[value] = name.lower()
    return _DTYPES.get(elem_type, str(elem_type))


def _tensor_info(vi: Any) -> TensorInfo:
    t = vi.type
    if not t.HasField("tensor_type"):
        kind = t.WhichOneof("value") or "?"
        return TensorInfo(vi.name, dtype=kind.replace("_type", ""))
    tt = t.tensor_type
    shape: list[int | str | None] | None = None
    if tt.HasField("shape"):
        shape = []
        for d in tt.shape.dim:
            if d.HasField("dim_value"):
                shape.append(int(d.dim_value))
            elif d.HasField("dim_param") and d.dim_param:
                shape.append(d.dim_param)
            else:
                shape.append(None)
    return TensorInfo(vi.name, dtype=_dtype_name(tt.elem_type), shape=shape)


def _format_attr(attr: Any) -> str:
    import onnx
    from onnx import helper

    if attr.type == onnx.AttributeProto.GRAPH:
        return f"<graph {attr.g.name or ''}: {len(attr.g.node)} nodes>"
    if attr.type == onnx.AttributeProto.GRAPHS:
        return f"<{len(attr.graphs)} graphs>"
    if attr.type == onnx.AttributeProto.TENSOR:
        dims = "×".join(str(d) for d in attr.t.dims) or "scalar"
        if attr.t.ByteSize() <= 256:
            try:
                from onnx import numpy_helper

                arr = numpy_helper.to_array(attr.t)
                return f"{_dtype_name(attr.t.data_type)}[{dims}] = {arr.tolist()!r}"[:200]
            except Exception:  # an odd tensor type: the dims are still worth showing
                pass
        return f"{_dtype_name(attr.t.data_type)}[{dims}]"
    value = helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    elif isinstance(value, list):
        value = [v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in value]
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _nested_names(attr: Any, out: list[str], parent_path: str) -> None:
    """Keys of the nodes inside ``attr``'s graph(s), spelled like studio.inspect's node keys.

    (subgraph path ``<owner>/<attr>`` or ``<owner>/<attr>[j]``, then ``/<node name or Op_i>``), so the
    inspector's findings on nested nodes resolve to the owning node drawn here.
    """
    subs = [(attr.name, attr.g)] if attr.type == _GRAPH else [(f"{attr.name}[{j}]", g)
                                                               for j, g in enumerate(attr.graphs)]
    for aname, g in subs:
        path = f"{parent_path}/{aname}"
        for i, n in enumerate(g.node):
            name = n.name or f"{n.op_type}_{i}"
            out.append(f"{path}/{name}")
            for a in n.attribute:
                if a.type == _GRAPH or a.type == _GRAPHS:
                    _nested_names(a, out, f"{path}/{name}")


def graph_from_onnx(model: Any) -> GraphData:
    """Build the drawable graph of a ModelProto (shape-inferred or not; value_info is used where present)."""
    with gc_paused():  # 100k GNodes, lists and edges, no cycles: the collector's scans cost a third of the time
        return _graph_from_onnx(model)


def _graph_from_onnx(model: Any) -> GraphData:
    g = model.graph
    protos = {vi.name: vi for vi in list(g.input) + list(g.value_info) + list(g.output)}
    init_protos = {init.name: init for init in g.initializer}
    tensors = TensorTable(protos, init_protos)
    initializers = set(init_protos) | {s.values.name for s in g.sparse_initializer}

    nodes: list[GNode] = []
    producer: dict[str, int] = {}
    for vi in g.input:
        if vi.name in initializers:
            continue
        idx = len(nodes)
        nodes.append(GNode(idx, vi.name, "Input", kind=KIND_INPUT, outputs=[vi.name]))
        producer[vi.name] = idx

    seen: set[str] = set()
    nested_owner: dict[str, int] = {}
    scope_of_prefix: dict[str, str] = {}  # "model/layers.0/attn" -> "model.layers.0.attn" (shared by many nodes)
    add_node, seen_add = nodes.append, seen.add
    # Each protobuf field access builds a Python object (about 1 us): every field is read once, attributes are
    # kept as the repeated container (formatted on demand), and only ops that can own a body are searched for
    # graph attributes (If/Loop/Scan/SequenceMap in the standard domains; any op of another domain).
    for i, n in enumerate(g.node):
        op, raw_name, domain = n.op_type, n.name, n.domain
        name = raw_name or f"{op}_{i}"
        if name in seen:
            name = f"{name}_{i}"
        seen_add(name)
        idx = len(nodes)
        attrs = n.attribute
        nested: list[str] = []
        if (op in _BODY_OPS or domain not in _STANDARD_DOMAINS) and len(attrs):
            for a in attrs:
                if a.type == _GRAPH or a.type == _GRAPHS:
                    _nested_names(a, nested, raw_name or f"{op}_{i}")
            for nn in nested:
                nested_owner.setdefault(nn, idx)
        if len(n.metadata_props):
            scope = node_scope(n) or ""
        else:
            stripped = raw_name.strip("/")
            if "/" in stripped:
                prefix = stripped.rpartition("/")[0]
                scope = scope_of_prefix.get(prefix)
                if scope is None:
                    scope = scope_of_prefix[prefix] = ".".join(p for p in prefix.split("/") if p)
            else:
                scope = ""
        outputs = list(n.output)
        add_node(GNode(idx, name, op, domain or "ai.onnx", KIND_OP, list(n.input), outputs, attrs, nested, scope))
        for o in outputs:
            if o:
                producer[o] = idx

    edges: list[GEdge] = []
    add_edge = edges.append
    edge_producer: dict[str, int] = {}
    consumers: dict[str, list[int]] = {}

    def link(src: int, dst: int, t: str) -> None:
        add_edge(GEdge(src, dst, t))
        edge_producer.setdefault(t, src)
        consumers.setdefault(t, []).append(dst)

    get_producer = producer.get
    for node in nodes:
        dst = node.index
        for t in node.inputs:
            src = get_producer(t) if t else None
            if src is not None:
                add_edge(GEdge(src, dst, t))
                edge_producer.setdefault(t, src)
                got = consumers.get(t)
                if got is None:
                    consumers[t] = [dst]
                else:
                    got.append(dst)
        # values a nested body reads from the outer scope are real dependencies too
        if node.subgraph_nodes:
            proto = g.node[node.index - _first_op_index(nodes)]
            for t in sorted(_outer_refs(proto)):
                src = get_producer(t)
                if src is not None and src != node.index:
                    link(src, dst, t)

    for vi in g.output:
        idx = len(nodes)
        nodes.append(GNode(idx, f"{vi.name} (output)", "Output", kind=KIND_OUTPUT, inputs=[vi.name]))
        src = get_producer(vi.name)
        if src is not None:
            link(src, idx, vi.name)

    opset = {(o.domain or "ai.onnx"): int(o.version) for o in model.opset_import}
    by_name = {n.name: n.index for n in nodes}
    return GraphData(nodes, edges, tensors, name=g.name, opset=opset, nested_owner=nested_owner,
                     _by_name=by_name, _producer=edge_producer, _consumers=consumers)


def _first_op_index(nodes: list[GNode]) -> int:
    for n in nodes:
        if n.kind == KIND_OP:
            return n.index
    return len(nodes)


def _outer_refs(node: Any) -> set[str]:
    """Names a node's subgraphs read but do not define (implicit inputs from the enclosing scope)."""
    import onnx

    refs: set[str] = set()

    def walk(graph: Any, defined: set[str]) -> None:
        local = set(defined) | {i.name for i in graph.input} | {i.name for i in graph.initializer}
        for n in graph.node:
            for t in n.input:
                if t and t not in local:
                    refs.add(t)
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g, local)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for sg in a.graphs:
                        walk(sg, local)
            local.update(o for o in n.output if o)

    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            walk(a.g, set())
        elif a.type == onnx.AttributeProto.GRAPHS:
            for sg in a.graphs:
                walk(sg, set())
    return refs
