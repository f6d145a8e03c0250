"""From one toolkit run to a verdict per ONNX node: NPU, CPU fallback, failed, with the toolkit's words.

The toolkit names a node by its ONNX name, or by its first output when it has none; rewrites rename it
(``mm1`` -> ``mm1#2``), which ``logparse.lineage`` follows to the compiled layers. A node's placement comes
from the layers it became: one of its own on the CPU is a fallback ("risky", it runs), all on the NPU is
"accelerator". Layout glue the toolkit adds around a node (4-D reshapes, transposes; the output reshape it runs
on the CPU for every model) does not make the node a fallback; a layout op of the model itself on the CPU is
reported with placement "cpu" but verdict "supported" (moving data, not a missing kernel).
"""

from __future__ import annotations

import re
from typing import Any

from studio.verify.api import NodeCheck
from studio_rknn.logparse import Layer, ToolkitLog, lineage

GLUE = {"Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "InputOperator", "OutputOperator",
        "exDataConvert", "Identity"}
_QUOTED = re.compile(r"'([^']+)'")


def toolkit_name(node: Any) -> str:
    """The name the toolkit's log uses for an ONNX node."""
    return node.name or (node.output[0] if node.output else "")


def _named_in(message: str, refs: list[Any]) -> list[Any]:
    """Main-graph nodes a toolkit error names: "Resize('Y')", "The Loop('res_y')", "Name:'z'", or an op type
    ("The Op of 'SequenceConstruct'"), or a graph input ("input shape [1] of 'axes'": its consumers)."""
    quoted = _QUOTED.findall(message)
    hits = [r for r in refs if toolkit_name(r.node) in quoted]
    if hits:
        return hits
    hits = [r for r in refs if r.node.op_type in quoted]
    if hits:
        return hits
    return [r for r in refs if any(i in quoted for i in r.node.input)]


def _layer_text(layers: list[Layer]) -> str:
    return ", ".join(f"{ly.full_name or ly.op_type} ({ly.op_type}, {ly.target})" for ly in layers[:4]) + (
        f" and {len(layers) - 4} more" if len(layers) > 4 else "")


def _own_layers(ref: Any, desc: dict[str, set[str]], by_name: dict[str, list[Layer]]) -> list[Layer]:
    tname = toolkit_name(ref.node)
    layers = [ly for d in sorted(desc.get(tname, {tname})) for ly in by_name.get(d, [])]
    return [ly for ly in layers if ly.op_type not in GLUE]


def _edges(refs: list[Any]) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """(tensor -> producing ref, tensor -> consuming refs) of the main graph, built once per check."""
    producers = {o: r for r in refs for o in r.node.output if o}
    consumers: dict[str, list[Any]] = {}
    for r in refs:
        for i in r.node.input:
            consumers.setdefault(i, []).append(r)
    return producers, consumers


def _nearest_layers(ref: Any, edges: tuple[dict[str, Any], dict[str, list[Any]]], desc: dict[str, set[str]],
                    by_name: dict[str, list[Layer]], depth: int = 3, all_found: bool = False) -> list[Layer]:
    """The compiled layer of the closest ONNX neighbour (producer first, then consumers) that has one: the
    compiler fuses an Add into the ConvAdd before it or a Sigmoid*Mul into ConvExSwish without logging it.
    ``all_found``: every layer of the neighbours within ``depth``, nearest first."""
    producers, consumers = edges
    seen, frontier = {id(ref)}, [ref]
    collected: list[Layer] = []
    for _ in range(depth):
        nxt = []
        for r in frontier:
            for cand in [producers[i] for i in r.node.input if i in producers] + \
                    [c for o in r.node.output for c in consumers.get(o, [])]:
                if id(cand) in seen or cand.node.op_type == "Constant":
                    continue
                seen.add(id(cand))
                found = _own_layers(cand, desc, by_name)
                if found and not all_found:
                    return found[:1]
                collected.extend(found)
                nxt.append(cand)
        frontier = nxt
    return collected


def node_checks(refs: list[Any], log: ToolkitLog, run: dict[str, Any]) -> list[NodeCheck]:
    """One NodeCheck per main-graph node of ``refs`` (inspector NodeRefs) from a check's log and result."""
    names = [toolkit_name(r.node) for r in refs]
    desc = lineage(log.rewrites, names)
    by_name: dict[str, list[Layer]] = {}
    for ly in log.layers:
        if ly.name:
            by_name.setdefault(ly.name, []).append(ly)
    edges = _edges(refs)
    removed_by = {name: rw.rule for rw in log.rewrites for name in rw.removed}
    built = run.get("reached") in ("build", "init_runtime", "inference")
    error = log.first_error() or run.get("error", "")
    blamed = {id(r) for r in _named_in(error, refs)} if error and run.get("failed_stage") else set()
    out: list[NodeCheck] = []
    for ref in refs:
        n = ref.node
        tname = toolkit_name(n)
        check = NodeCheck(node=ref.key, op_type=n.op_type, verdict="unknown", domain=n.domain or "")
        out.append(check)
        if n.op_type == "Constant" and id(ref) not in blamed:
            check.verdict, check.message = "supported", "a constant: nothing to place"
            continue
        if id(ref) in blamed:
            check.verdict, check.placement, check.message = "unsupported", "failed", error
            continue
        if not built:
            check.message = f"not reached: the toolkit stopped at {run.get('failed_stage') or 'load'}"
            continue
        if tname in log.fallbacks:
            check.verdict, check.placement, check.message = "risky", "cpu", log.fallbacks[tname][1]
            continue
        layers = [ly for d in sorted(desc.get(tname, {tname})) for ly in by_name.get(d, [])]
        own = [ly for ly in layers if ly.op_type not in GLUE] if n.op_type not in GLUE else layers
        direct = [ly for ly in own if ly.name.startswith(tname)]  # "mm1#2" of "mm1": the node's own layer
        own = direct or own  # else layers of a rewrite that merged it with its neighbours
        if not own and not layers and tname in log.folded:
            check.verdict, check.message = "supported", "folded into a constant by the toolkit"
            continue
        if not own and not layers and desc.get(tname) == set():
            # a rewrite removed it and added nothing in its place: a no-op (an Add of zero) or absorbed by a
            # neighbour (a transpose into a matmul); it runs nowhere of its own
            check.verdict = "supported"
            check.message = f"removed by the toolkit's rewrite {removed_by.get(tname, '?')}"
            continue
        if not own and n.op_type not in GLUE:
            # only glue is left (or nothing): the node was fused into a neighbour's layer (Relu -> ConvRelu,
            # Add -> ConvAdd): the nearest layer whose type ends with the node's op, else the nearest layer
            fused = [ly for ly in _nearest_layers(ref, edges, desc, by_name, depth=2, all_found=True)
                     if ly.op_type != n.op_type and ly.op_type.endswith(n.op_type)]
            if fused:
                own = fused[:1]
                check.message = f"fused by the toolkit into {_layer_text(fused[:1])}"
        if not own and not layers and tname not in log.folded:
            near = _nearest_layers(ref, edges, desc, by_name)
            if near:
                own = near
                check.message = f"no layer of its own: fused by the compiler next to {_layer_text(near)}"
        if not own:
            check.verdict = "supported"
            check.message = ("folded into a constant by the toolkit" if tname in log.folded else
                             "no layer of its own in the toolkit's layer table: fused away" if not layers
                             else f"only layout layers: {_layer_text(layers)}")
            check.placement = "cpu" if layers and all(ly.target == "CPU" for ly in layers) else ""
            continue
        cpu = [ly for ly in own if ly.target != "NPU"]
        if cpu and n.op_type in GLUE:
            check.verdict, check.placement = "supported", "cpu"
            check.message = f"layout op run on the CPU by the toolkit: {_layer_text(cpu)}"
        elif cpu:
            check.verdict, check.placement = "risky", "cpu"
            check.message = f"rknn-toolkit2 placed {_layer_text(cpu)} on the CPU"
        else:
            check.verdict, check.placement = "supported", "accelerator"
            check.message = check.message or f"on the NPU: {_layer_text(own)}"
    return out
