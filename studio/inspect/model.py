"""Reading an ONNX file for analysis: never the external weights, always a clear ModelError on bad input.

``load_for_analysis`` parses the protobuf with ``load_external_data=False`` (dims of external tensors are in
their TensorProto), runs shape inference once and builds the tables every analysis pass reads: tensor
types/shapes, producers, constants, and the nodes of every nested graph with the path that reaches them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from studio.core.errors import InputError, ModelError

if TYPE_CHECKING:
    from studio.inspect.shape_fork import PendingInference

Dim = int | str | None  # static size, symbolic name, or unknown


@dataclass
class TensorInfo:
    elem_type: int = 0  # onnx.TensorProto data type, 0 = unknown
    shape: list[Dim] | None = None  # None = rank unknown

    @property
    def dynamic(self) -> bool:
        return self.shape is None or any(not isinstance(d, int) for d in self.shape)


@dataclass(slots=True)
class NodeRef:
    """A node anywhere in the model: ``key`` is unique (subgraph path + name), ``graph`` its subgraph path.

    ``op_type``, ``domain`` (normalised: "" is "ai.onnx"), ``inputs`` and ``outputs`` are read from the
    protobuf once: every pass reads them, and each protobuf field access costs more than the pass's own work."""

    key: str
    name: str
    graph: str  # "" for the main graph, else e.g. "loop_1/body"
    node: Any  # onnx.NodeProto (attributes are read from it)
    index: int
    op_type: str = ""
    domain: str = "ai.onnx"
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()


@dataclass
class LoadedModel:
    path: Path
    model: Any  # onnx.ModelProto (weights of external tensors not loaded)
    opsets: dict[str, int]
    nodes: list[NodeRef] = field(default_factory=list)
    tensors: dict[str, TensorInfo] = field(default_factory=dict)
    producers: dict[str, NodeRef] = field(default_factory=dict)
    initializers: dict[str, Any] = field(default_factory=dict)  # name -> TensorProto (maybe external)
    constants: set[str] = field(default_factory=set)  # initializers, Constant outputs and foldable results
    graph_inputs: list[str] = field(default_factory=list)
    graph_outputs: list[str] = field(default_factory=list)
    shape_inference_error: str | None = None
    graphs: list[tuple[str, Any, Any]] = field(default_factory=list)  # iter_graphs of the inferred model
    cache: dict[str, Any] = field(default_factory=dict, repr=False)  # derived tables shared by the passes

    @property
    def consumers(self) -> dict[str, list[NodeRef]]:
        """Tensor name -> the nodes reading it, in graph order; built on first use (no pass of the inspector
        needs it, graph views do)."""
        table = self.cache.get("consumers")
        if table is None:
            table = self.cache["consumers"] = {}
            for ref in self.nodes:
                for inp in ref.inputs:
                    if inp:
                        c = table.get(inp)
                        if c is None:
                            table[inp] = [ref]
                        else:
                            c.append(ref)
        return table


def _dims(type_proto: Any) -> TensorInfo | None:
    if type_proto.WhichOneof("value") != "tensor_type":
        return None
    tt = type_proto.tensor_type
    if not tt.HasField("shape"):
        return TensorInfo(tt.elem_type, None)
    dims: list[Dim] = []
    for d in tt.shape.dim:
        which = d.WhichOneof("value")
        if which == "dim_value":
            dims.append(d.dim_value)
        elif which == "dim_param" and isinstance(d.dim_param, str):
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return TensorInfo(tt.elem_type, dims)


# extensions onnx.load reads as text (onnx.serialization's text, JSON and ONNX text serializers)
_TEXT_FORMATS = frozenset({".txtpb", ".textproto", ".prototxt", ".pbtxt", ".json", ".onnxjson", ".onnxtxt",
                           ".onnxtext"})


def read_model_proto(path: Path | str) -> Any:
    """Parse the file without external weights; any failure is a ModelError naming the file. A binary model is
    parsed with onnx's generated classes alone (studio.core.onnx_light: no numpy at start-up); the text formats
    onnx.load reads by extension go through onnx.load."""
    from google.protobuf.message import DecodeError

    p = Path(path)
    if not p.exists():
        raise InputError("model file not found", offending=str(p), hint="check the path (an .onnx file)")
    if p.is_dir():
        raise InputError("expected an .onnx file, got a folder", offending=str(p),
                         hint="pass the model file inside the folder, e.g. model.onnx")
    if p.stat().st_size == 0:
        raise ModelError("model file is empty", offending=str(p), hint="re-export the model")
    try:
        if p.suffix.lower() in _TEXT_FORMATS:
            import onnx

            model = onnx.load(str(p), load_external_data=False)
        else:
            from studio.core.onnx_light import proto

            model = proto().ModelProto.FromString(p.read_bytes())
    except (DecodeError, RuntimeError, ValueError, TypeError, OSError, UnicodeDecodeError,
            IndexError, KeyError, AttributeError) as exc:
        raise ModelError(f"not a readable ONNX model ({type(exc).__name__}: {str(exc)[:200]})", offending=str(p),
                         hint="the file is corrupt, truncated or not ONNX; re-export or re-download it") from None
    except Exception as exc:  # protobuf raises assorted internal errors on garbage
        raise ModelError(f"not a readable ONNX model ({type(exc).__name__})", offending=str(p),
                         hint="the file is corrupt, truncated or not ONNX; re-export or re-download it") from None
    if not model.HasField("graph") or model.ir_version <= 0 or not model.opset_import:
        raise ModelError("file parses but is not an ONNX model (no graph, IR version or opset import)",
                         offending=str(p), hint="the file is truncated or not ONNX; re-export the model")
    return model


def iter_graphs(graph: Any, path: str = "", owner: Any = None) -> Iterator[tuple[str, Any, Any]]:
    """Yield (subgraph path, graph, owning node or None) for the graph and every nested body, depth first."""
    yield path, graph, owner
    for i, node in enumerate(graph.node):
        for attr in node.attribute:
            subs = []
            if attr.type == 5:  # GRAPH
                subs = [(attr.name, attr.g)]
            elif attr.type == 10:  # GRAPHS
                subs = [(f"{attr.name}[{j}]", g) for j, g in enumerate(attr.graphs)]
            for aname, g in subs:
                owner = node.name or f"{node.op_type}_{i}"
                sub_path = f"{path}/{owner}/{aname}" if path else f"{owner}/{aname}"
                yield from iter_graphs(g, sub_path, node)


def analyse_structure(path: Path, model: Any, *, shapes: dict[str, list[int]] | None = None,
                      infer: bool = True, pending: PendingInference | None = None) -> LoadedModel:
    """Shape-infer (optionally with fixed input shapes) and index every tensor and node.

    ``pending`` is shape inference already running in a child (``shape_fork.start`` on the file ``model`` was read
    from, unchanged): the nodes are indexed while it works. Nodes and graphs are always read from ``model``
    (inference only adds types)."""
    if not all(isinstance(o.domain, str) for o in model.opset_import):
        if pending is not None:
            pending.cancel()
        raise ModelError("model holds an opset domain that is not valid UTF-8 text", offending=str(path),
                         hint="the file is corrupt; re-export it")
    opsets = {(o.domain or "ai.onnx"): int(o.version) for o in model.opset_import}
    lm = LoadedModel(path=path, model=model, opsets=opsets)
    g0 = model.graph
    init_names = {t.name for t in g0.initializer}
    lm.graph_inputs = [i.name for i in g0.input if i.name not in init_names]
    lm.graph_outputs = [o.name for o in g0.output]
    if shapes:
        apply_input_shapes(model, shapes)
    try:
        _index_nodes(lm, g0, "", None, set())  # needs no inferred types: runs while a child infers
        from studio.core.external_data import check_data_files

        check_data_files(model, path, lm.initializers.values())  # a missing or short data file: ModelError naming it
    except BaseException:
        if pending is not None:
            pending.cancel()
        raise
    inferred = model
    answer = pending.inferred(path) if pending is not None else None
    if answer is not None:
        data, error = answer
        if error is None:
            from studio.core.onnx_light import proto

            inferred = proto().ModelProto.FromString(data)
        else:
            lm.shape_inference_error = error
    elif infer:  # what onnx.shape_inference.infer_shapes does, without importing the onnx package
        from studio.core.onnx_light import infer_shapes, proto

        try:
            data = infer_shapes(model.SerializeToString())
            inferred = proto().ModelProto.FromString(data)
        except Exception as exc:  # inference errors must not stop the analysis
            lm.shape_inference_error = f"{type(exc).__name__}: {str(exc)[:300]}"
            inferred = model
    _index_types(lm, inferred.graph)
    # Constants: Constant / ConstantOfShape-of-constant outputs and anything computed only from constants
    # (converters fold those). Nodes are topologically ordered within each graph; subgraph-outer refs are fine.
    constants = lm.constants
    had_empty = "" in constants
    constants.add("")  # an absent optional input counts as constant: one issuperset per node
    for ref in lm.nodes:
        op, ins = ref.op_type, ref.inputs
        if op == "Constant" or (op not in _NON_FOLDABLE and ins and constants.issuperset(ins)):
            constants.update(ref.outputs)
        elif op in ("Shape", "Size") and ins:
            info = lm.tensors.get(ins[0])
            if info is not None and not info.dynamic:
                constants.update(ref.outputs)
    if not had_empty:
        constants.discard("")
    return lm


def _index_types(lm: LoadedModel, inferred: Any) -> None:
    """Tensor types of every graph of the inferred model, in ``iter_graphs`` order (the order ``lm.graphs`` holds):
    each graph's inputs, outputs and value_info, then its initializers' dims (which win). Identical TypeProtos
    share their decoded dims (a transformer has a few hundred distinct types among thousands of value_infos)."""
    path = lm.path
    tensors = lm.tensors
    types: dict[bytes, TensorInfo] = {}
    for _, g, _ in iter_graphs(inferred):
        for vi in (*g.input, *g.output, *g.value_info):
            name = vi.name
            if type(name) is not str:
                raise ModelError("model holds tensor names that are not valid UTF-8 text", offending=str(path),
                                 hint="the file is corrupt; re-export it")
            tp = vi.type
            raw = tp.SerializeToString()
            proto_info = types.get(raw)
            if proto_info is None:
                proto_info = types[raw] = _dims(tp) or _NOT_TENSOR
            if proto_info is not _NOT_TENSOR:
                old = tensors.get(name)
                if old is None or old.shape is None:
                    shape = proto_info.shape
                    tensors[name] = TensorInfo(proto_info.elem_type, None if shape is None else shape.copy())
        for t in g.initializer:
            tensors[t.name] = TensorInfo(t.data_type, list(t.dims))


def _index_nodes(lm: LoadedModel, g: Any, sub_path: str, owner: Any, seen: set[str]) -> None:
    """Index one graph's nodes and initializers, then its nested bodies depth first (the order of
    ``iter_graphs``), in one pass over the nodes: the subgraph attributes are found while the nodes are read."""
    path = lm.path
    lm.graphs.append((sub_path, g, owner))
    initializers, constants = lm.initializers, lm.constants
    for t in g.initializer:
        tname = t.name
        if not isinstance(tname, str):
            raise ModelError("model holds initializer names that are not valid UTF-8 text",
                             offending=str(path), hint="the file is corrupt; re-export it")
        initializers[tname] = t
        constants.add(tname)
    producers, nodes = lm.producers, lm.nodes
    join = "".join
    subs: list[tuple[str, Any, Any]] = []
    for i, node in enumerate(g.node):
        op_type, raw_name, domain = node.op_type, node.name, node.domain
        inputs, outputs = tuple(node.input), tuple(node.output)
        try:  # protobuf gives bytes for a string field that is not UTF-8; joining them fails
            join((op_type, raw_name, domain, *inputs, *outputs))
        except TypeError:
            raise ModelError("model holds node names that are not valid UTF-8 text", offending=str(path),
                             hint="the file is corrupt; re-export it") from None
        name = raw_name or f"{op_type}_{i}"
        key = f"{sub_path}/{name}" if sub_path else name
        if key in seen:  # duplicate node names would merge verdicts; keep every node addressable
            key = f"{key}#{i}"
        seen.add(key)
        ref = NodeRef(key, name, sub_path, node, i, op_type, domain if domain and domain != "ai.onnx"
                      else "ai.onnx", inputs, outputs)
        nodes.append(ref)
        for o in outputs:
            if o:
                producers[o] = ref
        attrs = node.attribute
        if attrs:
            for attr in attrs:
                at = attr.type
                if at == 5:  # GRAPH
                    found = [(attr.name, attr.g)]
                elif at == 10:  # GRAPHS
                    found = [(f"{attr.name}[{j}]", sg) for j, sg in enumerate(attr.graphs)]
                else:
                    continue
                for aname, sg in found:
                    own = raw_name or f"{op_type}_{i}"
                    subs.append((f"{sub_path}/{own}/{aname}" if sub_path else f"{own}/{aname}", sg, node))
    for sp, sg, own_node in subs:
        _index_nodes(lm, sg, sp, own_node, seen)  # the owner: trace_dynamic's Loop/Scan body-input rule


_NOT_TENSOR = TensorInfo(-1, None)  # a value_info of a sequence/map/optional type: not in ``tensors``


_NON_FOLDABLE = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
                 "Bernoulli", "If", "Loop", "Scan"}


def apply_input_shapes(model: Any, shapes: dict[str, list[int]]) -> None:
    """Set the dims of named graph inputs in place; unknown names are an InputError."""
    from studio.core.shapes import check_against

    by_name = {i.name: i for i in model.graph.input}
    ranks = {n: [None] * len(i.type.tensor_type.shape.dim) or None for n, i in by_name.items()}  # sizes may change
    check_against(shapes, ranks)
    for name, dims in shapes.items():
        tt = by_name[name].type.tensor_type
        tt.shape.ClearField("dim")
        for d in dims:
            tt.shape.dim.add().dim_value = int(d)
    del model.graph.value_info[:]  # stale inferred shapes would contradict the new input shapes


DTYPE_NAMES: dict[int, str] = {}


def dtype_name(elem_type: int) -> str:
    if not DTYPE_NAMES:
        from studio.core.onnx_light import proto

        for name, val in proto().TensorProto.DataType.items():
            DTYPE_NAMES[val] = name.lower()
        DTYPE_NAMES[0] = "unknown"
    return DTYPE_NAMES.get(elem_type, f"type{elem_type}")


# Bytes per element by TensorProto.DataType, as numpy / ml_dtypes itemsize gives them (the 4-bit, 2-bit and
# float8 types are one byte there); STRING and UNDEFINED count 0, any newer type 1.
_DTYPE_BYTES = {0: 0, 1: 4.0, 2: 1.0, 3: 1.0, 4: 2.0, 5: 2.0, 6: 4.0, 7: 8.0, 8: 0, 9: 1.0, 10: 2.0, 11: 8.0,
                12: 4.0, 13: 8.0, 14: 8.0, 15: 16.0, 16: 2.0}


def dtype_bytes(elem_type: int) -> float:
    return _DTYPE_BYTES.get(elem_type, 1.0)
