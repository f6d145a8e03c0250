"""Single-node models cut out of a bigger one, so a tool that stops at the first failure still answers per node.

A real tool (an ORT session, TVM's importer) usually reports only the first node it cannot handle. To give a
verdict for every node, each node is rebuilt as a one-node model at the model's opsets, with its inputs as
graph inputs typed from shape inference (small initializers kept as initializers: some converters need
constant inputs), the model's local functions and, for If/Loop/Scan, the bodies with their outer-scope names
added as inputs. Node keys are the inspector's (``studio.inspect.model``), so verdicts line up with the report.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studio.verify.api import VerifyResult

SMALL_INIT_BYTES = 1 << 20  # initializers up to this size travel with the node (as constants)


@dataclass
class NodeModel:
    """One node of the original model as a standalone model (``model`` None: why in ``problem``)."""

    key: str
    op_type: str
    domain: str
    name: str
    model: Any | None
    problem: str = ""
    same_as: str = ""  # key of an earlier node asking the tool the same question (answer reused)


def inferred(model: Any) -> Any:
    """Shape-inferred copy (the original on failure): the types the single-node inputs get."""
    import onnx

    try:
        return onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except Exception:
        return model


def _types(model: Any) -> dict[str, Any]:
    """name -> TypeProto over every graph (inputs, outputs, value_info, initializers)."""
    import onnx.helper as h

    from studio.inspect.model import iter_graphs

    out: dict[str, Any] = {}
    for _p, g, _o in iter_graphs(model.graph):
        for t in g.initializer:
            out.setdefault(t.name, h.make_tensor_type_proto(t.data_type, list(t.dims)))
        for vi in list(g.input) + list(g.output) + list(g.value_info):
            if vi.type.WhichOneof("value") is not None:
                out.setdefault(vi.name, vi.type)
    return out


def _initializers(model: Any) -> dict[str, Any]:
    """Initializers and Constant-node values by name: both are constants to a converter."""
    from studio.inspect.model import iter_graphs

    out = {t.name: t for _p, g, _o in iter_graphs(model.graph) for t in g.initializer}
    for _p, g, _o in iter_graphs(model.graph):
        for n in g.node:
            if n.op_type == "Constant" and n.domain in ("", "ai.onnx") and n.output and n.output[0] not in out:
                t = _constant_tensor(n)
                if t is not None:
                    out[n.output[0]] = t
    return out


def _constant_tensor(node: Any) -> Any | None:
    """The TensorProto a Constant node holds (value, value_float(s), value_int(s)); None for the rest."""
    import numpy as np
    import onnx.helper as h
    from onnx import numpy_helper

    for a in node.attribute:
        name = node.output[0]
        if a.name == "value":
            t = type(a.t)()
            t.CopyFrom(a.t)
            t.name = name
            return t
        v = h.get_attribute_value(a)
        if a.name in ("value_float", "value_floats"):
            return numpy_helper.from_array(np.asarray(v, dtype=np.float32), name)
        if a.name in ("value_int", "value_ints"):
            return numpy_helper.from_array(np.asarray(v, dtype=np.int64), name)
    return None


def _subgraph_free_names(node: Any) -> list[str]:
    """Names a node's bodies read from the enclosing scope (recursively), in first-use order."""
    out: list[str] = []

    def walk(g: Any, outer_defined: set[str]) -> None:
        defined = set(outer_defined) | {i.name for i in g.input} | {t.name for t in g.initializer}
        for n in g.node:
            for i in n.input:
                if i and i not in defined and i not in out:
                    out.append(i)
            for a in n.attribute:
                for sub in ([a.g] if a.type == 5 else list(a.graphs) if a.type == 10 else []):
                    walk(sub, defined)
            defined.update(o for o in n.output if o)

    for a in node.attribute:
        for sub in ([a.g] if a.type == 5 else list(a.graphs) if a.type == 10 else []):
            walk(sub, set())
    return out


def _initializer_small(t: Any) -> bool:
    if t.data_location == 1:  # EXTERNAL: weights are not loaded for analysis
        return False
    return t.ByteSize() <= SMALL_INIT_BYTES


def node_model(node: Any, model: Any, types: dict[str, Any], inits: dict[str, Any]) -> tuple[Any | None, str]:
    """The one-node model for ``node`` (None and the reason when an input's type is not known)."""
    import onnx.helper as h

    inputs, initializers, seen = [], [], set()
    for name in list(node.input) + _subgraph_free_names(node):
        if not name or name in seen:
            continue
        seen.add(name)
        t = inits.get(name)
        if t is not None and _initializer_small(t):
            initializers.append(t)
            continue
        tp = types.get(name)
        if tp is None:
            return None, f"type of input '{name}' is not known (shape inference could not type it)"
        vi = h.make_value_info(name, tp)
        inputs.append(vi)
    outputs = []
    for name in node.output:
        if not name:
            continue
        tp = types.get(name)
        outputs.append(h.make_value_info(name, tp) if tp is not None else h.make_empty_tensor_value_info(name))
    if not outputs:
        return None, "node has no outputs"
    g = h.make_graph([node], f"single_{node.op_type}", inputs, outputs, initializers)
    m = h.make_model(g, opset_imports=list(model.opset_import), ir_version=model.ir_version)
    m.functions.extend(model.functions)
    return m, ""


def iter_node_models(model: Any) -> Iterator[NodeModel]:
    """Every node of ``model`` (nested graphs included) as a single-node model, keyed like the inspector."""
    full = inferred(model)
    types, inits = _types(full), _initializers(model)
    cache: dict[bytes, NodeModel] = {}
    for ref in node_refs(model):
        sig = signature(ref.node, types, inits)
        hit = cache.get(sig)
        if hit is not None:  # the same op, attributes and input types: the same question
            yield NodeModel(key=ref.key, op_type=hit.op_type, domain=hit.domain, name=ref.node.name,
                            model=hit.model, problem=hit.problem, same_as=hit.key)
            continue
        m, problem = node_model(ref.node, model, types, inits)
        nm = NodeModel(key=ref.key, op_type=ref.node.op_type, domain=ref.node.domain or "ai.onnx",
                       name=ref.node.name, model=m, problem=problem)
        cache[sig] = nm
        yield nm


def node_refs(model: Any) -> list[Any]:
    """The inspector's NodeRefs (key, node) without shape inference (only the key spelling is needed)."""
    from studio.inspect.model import analyse_structure

    return analyse_structure(Path("<model>"), model, infer=False).nodes


def read_model(res: VerifyResult, model: Path, *, external_data: bool = False) -> tuple[Any, list[Any]] | None:
    """A verifier's first step: the model's proto and its node refs; None when the file cannot be read (``res``
    then says so: not run, ``cannot read the model: ...``)."""
    import onnx

    try:
        proto = onnx.load(str(model), load_external_data=external_data)
    except Exception as exc:
        res.ran, res.error = False, f"cannot read the model: {exc}"
        return None
    return proto, node_refs(proto)


def signature(node: Any, types: dict[str, Any], inits: dict[str, Any]) -> bytes:
    """What makes two nodes the same question to a tool: the node (names cleared), its input types and
    constant inputs; nodes with bodies are never shared (their bodies read outer names)."""
    import onnx

    if any(a.type in (5, 10) for a in node.attribute):
        return b"body:" + node.SerializeToString() + id(node).to_bytes(8, "little")
    n = onnx.NodeProto()
    n.CopyFrom(node)
    n.name = ""
    del n.input[:]
    del n.output[:]
    parts = [n.SerializeToString()]
    for i in node.input:
        t = inits.get(i)
        if t is not None and _initializer_small(t):
            parts.append(b"c" + t.SerializeToString())
            continue
        tp = types.get(i)
        parts.append(b"" if not i else tp.SerializeToString() if tp is not None else b"?")
    parts.append(str([bool(o) for o in node.output]).encode())
    return b"|".join(parts)
