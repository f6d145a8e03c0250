"""Model Explorer node data: the studio's overlays (verdicts, profile heat, divergence) as the JSON files Google's
Model Explorer (``ai-edge-model-explorer``) paints on its graph, and those files read back.

The format (``model_explorer/node_data_builder.py``: ModelNodeData / GraphNodeData / NodeDataResult; the UI's
``NodeDataProviderData``)::

    {GRAPH_ID: {"name": "rk3588 verdicts",
                "results": {NODE_ID: {"value": "unsupported", "bgColor": "#e0524d"}, ...},
                "gradient": [{"stop": 0, "bgColor": "#e3eefa"}, {"stop": 1, "bgColor": "#d6332e"}],  # or
                "thresholds": [{"value": 10, "bgColor": "red"}, ...]}}

or one graph's object alone (``{"results": ...}``; the UI applies it to the graph on screen). One file is one
overlay. A result's ``bgColor`` wins over ``gradient`` (stops 0 and 1 = the smallest and largest value), which
wins over ``thresholds``; string values are counted per group ("3 unsupported") on collapsed namespaces.

Node ids: Model Explorer has no ONNX reader of its own; ONNX files open through its ONNX adapter
(``model-explorer-onnx``), which makes one graph node per ONNX node with id = the node's name after
onnx_ir's ``NameFixPass`` (an unnamed node becomes ``node``, ``node_1``, ...; a repeated name gets ``_1``,
``_2``; one counter per preferred name across the whole model, one set of used names per graph), and graph
id = the ONNX graph's name. If branches are inlined into the graph holding the If, as
``<if id>/<branch>/<node id>``; the bodies of Loop / Scan nodes of the main graph are graphs of their own, id
``<node id>/<attribute>``; deeper bodies are not shown. Output tensor names are not accepted as keys for ONNX
(the adapter writes no ``tensor_name`` metadata), so ``explorer_ids`` replays those rules on the model.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.atomic import write_text_atomic
from studio.core.errors import InputError
from studio.inspect.model import LoadedModel

# the graph view's verdict colours (studio/gui/graph/palette.py, light theme, solid) and heat ramp
VERDICT_COLORS = {"supported": "#3fae6a", "risky": "#e9a516", "unsupported": "#e0524d", "unknown": "#8b7fc7"}
HEAT_GRADIENT = [{"stop": 0, "bgColor": "#e3eefa"}, {"stop": 0.5, "bgColor": "#f6c34f"},
                 {"stop": 1, "bgColor": "#d6332e"}]
AGGREGATED_STATS = ("min", "max", "sum", "avg")
_FLAGS = ("hideInAggregatedStatsTable", "hideInChildrenStatsTable", "showExpandedSummaryOnGroupNode",
          "showLabelCountColumnsInChildrenStatsTable")
HINT = ("a Model Explorer node data file: {GRAPH_ID: {\"results\": {NODE_ID: {\"value\": V, \"bgColor\": \"#rrggbb\"}}}} "
        "or one graph's {\"results\": ...}; write one with `studio inspect MODEL --node-data OUT.json`")


@dataclass
class Overlay:
    """Per-node values keyed by the inspector's node keys (``LoadedModel.nodes[i].key``)."""

    name: str
    values: dict[str, Any] = field(default_factory=dict)  # node key -> verdict text or a number
    colors: dict[str, str] = field(default_factory=dict)  # node key -> background colour (wins over gradient)
    gradient: list[dict[str, Any]] = field(default_factory=list)
    thresholds: list[dict[str, Any]] = field(default_factory=list)
    labels: bool = False  # text values (verdicts): counted per label on collapsed groups
    unknown: list[str] = field(default_factory=list)  # read back: ids in the file that name no node of the model


# -- ids ------------------------------------------------------------------------------------------------------

def explorer_ids(lm: LoadedModel) -> dict[str, tuple[str, str]]:
    """Node key -> (graph id, node id) as Model Explorer's ONNX adapter names them (module docstring)."""
    by_place: dict[tuple[str, int], tuple[str, str]] = {}
    main = lm.model.graph
    _walk(main, "", main.name, "", True, True, Counter(), by_place)
    out: dict[str, tuple[str, str]] = {}
    for ref in lm.nodes:
        hit = by_place.get((ref.graph, ref.index))
        if hit is not None:
            out[ref.key] = hit
    return out


def _fixed_name(name: str, used: set[str], counter: Counter[str]) -> str:
    """onnx_ir NameFixPass: a free name is kept, else ``<preferred>_<n>`` with n counted per preferred name."""
    if name and name not in used:
        used.add(name)
        return name
    preferred = name or "node"
    new = preferred
    while new in used:
        counter[preferred] += 1
        new = f"{preferred}_{counter[preferred]}"
    used.add(new)
    return new


def _walk(graph: Any, path: str, me_graph: str, prefix: str, visible: bool, in_main: bool,
          counter: Counter[str], out: dict[tuple[str, int], tuple[str, str]]) -> None:
    """Name ``graph``'s nodes in NameFixPass order (a node, then its bodies; one used-name set per graph).

    ``path``: the inspector's subgraph path; ``me_graph`` / ``prefix``: where the adapter puts these nodes;
    ``in_main``: they end up in the adapter's main graph (the main graph itself or If branches inlined there)."""
    used: set[str] = set()
    for i, node in enumerate(graph.node):
        me_id = prefix + _fixed_name(node.name, used, counter)
        if visible:
            out[(path, i)] = (me_graph, me_id)
        owner = node.name or f"{node.op_type}_{i}"  # the inspector's spelling (model.iter_graphs)
        is_if = node.op_type == "If" and node.domain in ("", "ai.onnx")
        for attr in node.attribute:
            if attr.type == 5:  # GRAPH
                subs = [(attr.name, attr.g)]
            elif attr.type == 10:  # GRAPHS: not shown by the adapter
                subs = [(f"{attr.name}[{j}]", g) for j, g in enumerate(attr.graphs)]
            else:
                continue
            for aname, g in subs:
                sub_path = f"{path}/{owner}/{aname}" if path else f"{owner}/{aname}"
                if attr.type == 5 and is_if:  # inlined into the graph that holds the If
                    _walk(g, sub_path, me_graph, f"{me_id}/{aname}/", visible, in_main, counter, out)
                elif attr.type == 5 and visible and in_main:  # a Loop / Scan body of the main graph
                    _walk(g, sub_path, f"{me_id}/{aname}", "", True, False, counter, out)
                else:
                    _walk(g, sub_path, "", "", False, False, counter, out)


# -- overlays from the studio's reports -----------------------------------------------------------------------

def verdict_overlay(report: Any, target: str, lm: LoadedModel) -> Overlay:
    """Every node's verdict for ``target`` (an InspectionReport), coloured as in the graph view."""
    if target not in report.targets:
        raise InputError(f"the report has no verdicts for target '{target}'", offending=target,
                         hint=f"targets in the report: {', '.join(report.targets) or 'none'}")
    ov = Overlay(name=f"{target} verdicts", labels=True)
    for ref in lm.nodes:
        v = report.verdict_of(target, ref.key)
        ov.values[ref.key] = v
        ov.colors[ref.key] = VERDICT_COLORS.get(v, VERDICT_COLORS["unknown"])
    return ov


def heat_overlay(profile: Any) -> Overlay:
    """Mean ms per node of a ProfileReport (0 where ORT fused or folded it), on the graph view's heat ramp."""
    ov = Overlay(name=f"profile heat (ms, {profile.runtime or 'onnxruntime'})".replace(" ()", ""),
                 gradient=[dict(g) for g in HEAT_GRADIENT])
    ov.values = {n.key: round(float(n.mean_ms), 6) for n in profile.nodes}
    return ov


def divergence_overlay(errors: dict[str, float], name: str = "divergence (1 - cosine)") -> Overlay:
    """Per-node error (e.g. ``studio.inspect.layer_errors.node_error_heat``: 1 - cosine per node) on the heat ramp."""
    return Overlay(name=name, values={k: float(v) for k, v in errors.items()},
                   gradient=[dict(g) for g in HEAT_GRADIENT])


# -- writing --------------------------------------------------------------------------------------------------

def to_node_data(overlay: Overlay, lm: LoadedModel) -> dict[str, Any]:
    """The ModelNodeData JSON object; values of nodes Model Explorer does not show are left out."""
    ids = explorer_ids(lm)
    graphs: dict[str, dict[str, Any]] = {}
    for key, value in overlay.values.items():
        where = ids.get(key)
        if where is None:
            continue
        g = graphs.get(where[0])
        if g is None:
            g = graphs[where[0]] = {"name": overlay.name, "results": {}}
            if overlay.gradient:
                g["gradient"] = overlay.gradient
            if overlay.thresholds:
                g["thresholds"] = overlay.thresholds
            if overlay.labels:
                g["showExpandedSummaryOnGroupNode"] = True
                g["showLabelCountColumnsInChildrenStatsTable"] = True
        result: dict[str, Any] = {"value": value}
        color = overlay.colors.get(key)
        if color:
            result["bgColor"] = color
        g["results"][where[1]] = result
    if not graphs:
        graphs[lm.model.graph.name] = {"name": overlay.name, "results": {}}
    return graphs


def write_node_data(overlay: Overlay, lm: LoadedModel, path: Path | str) -> Path:
    return write_text_atomic(path, json.dumps(to_node_data(overlay, lm), indent=2) + "\n")


# -- reading --------------------------------------------------------------------------------------------------

def _bad(path: Path, where: str, message: str) -> InputError:
    return InputError(f"node data {path.name}: {where}: {message}", offending=f"{path} [{where}]", hint=HINT)


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def load_node_data(path: Path | str) -> dict[str, dict[str, Any]]:
    """Read and validate a node data file: graph id -> graph data (a one-graph file under ``CURRENT``)."""
    graphs, single = _load(Path(path))
    return {CURRENT: graphs[""]} if single else graphs


CURRENT = "<current graph>"  # the key of a one-graph file: Model Explorer applies it to the graph on screen


def _load(p: Path) -> tuple[dict[str, Any], bool]:
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("node data file not found", offending=str(p), hint=HINT) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read node data: {exc}", offending=str(p), hint=HINT) from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputError(f"node data {p.name} is not valid JSON: {exc}", offending=str(p), hint=HINT) from None
    if not isinstance(data, dict):
        raise _bad(p, "(top level)", f"expected an object, got {type(data).__name__}")
    single = isinstance(data.get("results"), dict) and "results" not in data["results"]  # as the UI decides
    graphs = {"": data} if single else data
    if not graphs:
        raise _bad(p, "(top level)", "no graph in the file")
    for gid, g in graphs.items():
        _check_graph(p, "" if single else f"[{json.dumps(gid)}]", g)
    return graphs, single


def _check_graph(p: Path, where: str, g: Any) -> None:
    if not isinstance(g, dict):
        raise _bad(p, where or "(top level)", f"expected a graph's node data object, got {type(g).__name__}")
    pre = f"{where}." if where else ""
    results = g.get("results")
    if not isinstance(results, dict):
        raise _bad(p, f"{pre}results", "missing, or not an object of node id -> result")
    for nid, r in results.items():
        at = f"{pre}results[{json.dumps(nid)}]"
        if not isinstance(r, dict):
            raise _bad(p, at, f"expected an object with 'value', got {type(r).__name__}")
        if "value" not in r:
            raise _bad(p, f"{at}.value", "missing")
        v = r["value"]
        if not (_is_num(v) or isinstance(v, str | bool)):
            raise _bad(p, f"{at}.value", f"expected a number or a string, got {json.dumps(v)[:60]}")
        for k in ("bgColor", "textColor"):
            if k in r and not isinstance(r[k], str):
                raise _bad(p, f"{at}.{k}", "expected a CSS colour string")
    if "name" in g and not isinstance(g["name"], str):
        raise _bad(p, f"{pre}name", "expected a string")
    for k in _FLAGS:
        if k in g and not isinstance(g[k], bool):
            raise _bad(p, f"{pre}{k}", "expected true or false")
    stats = g.get("hideAggregatedStats")
    if stats is not None and (not isinstance(stats, list) or any(s not in AGGREGATED_STATS for s in stats)):
        raise _bad(p, f"{pre}hideAggregatedStats", f"expected a list of {', '.join(AGGREGATED_STATS)}")
    _check_items(p, f"{pre}thresholds", g.get("thresholds"), "value", None)
    _check_items(p, f"{pre}gradient", g.get("gradient"), "stop", (0.0, 1.0))


def _check_items(p: Path, at: str, items: Any, key: str, bounds: tuple[float, float] | None) -> None:
    if items is None:
        return
    if not isinstance(items, list):
        raise _bad(p, at, "expected a list")
    for i, it in enumerate(items):
        here = f"{at}[{i}]"
        if not isinstance(it, dict):
            raise _bad(p, here, "expected an object")
        if not _is_num(it.get(key)):
            raise _bad(p, f"{here}.{key}", "missing or not a number")
        if bounds and not bounds[0] <= it[key] <= bounds[1]:
            raise _bad(p, f"{here}.{key}", f"must be between {bounds[0]:g} and {bounds[1]:g}")
        if key == "value" and not isinstance(it.get("bgColor"), str):
            raise _bad(p, f"{here}.bgColor", "missing or not a CSS colour string")
        for k in ("bgColor", "textColor"):
            if k in it and not isinstance(it[k], str):
                raise _bad(p, f"{here}.{k}", "expected a CSS colour string")
    if bounds and items and {0, 1} - {it[key] for it in items}:
        raise _bad(p, at, "a gradient needs its stops 0 and 1")


def read_node_data(path: Path | str, lm: LoadedModel) -> Overlay:
    """A node data file as an Overlay of ``lm``'s node keys; ids naming no node are kept in ``unknown``."""
    p = Path(path)
    graphs, single = _load(p)
    back = {where: key for key, where in explorer_ids(lm).items()}
    main = lm.model.graph.name
    ov = Overlay(name=p.stem)
    for gid, g in graphs.items():
        graph_id = main if single else gid
        if g.get("name"):
            ov.name = g["name"]
        ov.gradient = ov.gradient or list(g.get("gradient", []))
        ov.thresholds = ov.thresholds or list(g.get("thresholds", []))
        ov.labels = ov.labels or bool(g.get("showExpandedSummaryOnGroupNode"))
        for nid, r in g["results"].items():
            key = back.get((graph_id, nid))
            if key is None:
                ov.unknown.append(nid if graph_id == main else f"{graph_id}: {nid}")
                continue
            ov.values[key] = r["value"]
            if r.get("bgColor"):
                ov.colors[key] = r["bgColor"]
    return ov


# -- what `studio inspect --node-data` writes -----------------------------------------------------------------

def export_overlays(report: Any, model: Path | str, out: Path | str, *, heat: Any = None,
                    divergence: Path | str | None = None) -> list[Path]:
    """Write one node data file per overlay: each target's verdicts, then the heat of a profile report
    (``heat``: a loaded ``studio.profiling.report.ProfileReport``, which the caller reads: profiling sits above
    inspect) and the divergence of a compile report (``layer_errors``) or of a JSON object node -> number.

    One overlay goes to ``out`` itself; several go beside it as ``<out stem>.<target | heat | divergence>.json``."""
    from studio.inspect.api import load_structure

    lm = load_structure(model)
    overlays: list[tuple[str, Overlay]] = [(t, verdict_overlay(report, t, lm)) for t in report.targets]
    if heat is not None:
        overlays.append(("heat", heat_overlay(heat)))
    if divergence is not None:
        overlays.append(("divergence", divergence_overlay(_divergence_values(Path(divergence), Path(model), lm))))
    if not overlays:
        raise InputError("nothing to write as node data: no target was inspected", offending=str(out),
                         hint="give --target ID (or --node-data-heat / --node-data-divergence)")
    out = Path(out)
    written = []
    for label, ov in overlays:
        dest = out if len(overlays) == 1 else out.with_name(f"{out.stem}.{label}.json")
        written.append(write_node_data(ov, lm, dest))
    return written


def _divergence_values(path: Path, model: Path, lm: LoadedModel) -> dict[str, float]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("divergence file not found", offending=str(path)) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read divergence file: {exc}", offending=str(path)) from None
    if isinstance(data, dict) and "layer_errors" in data:
        rows = data["layer_errors"]
        if not rows:
            raise InputError("the compile report has no per-layer errors", offending=f"{path} [layer_errors]",
                             hint="only int8 rknn builds with accuracy analysis record them")
        from studio.inspect.layer_errors import node_error_heat

        by_name = {ref.name: ref.key for ref in lm.nodes if not ref.graph}
        return {by_name.get(n, n): v for n, v in node_error_heat(model, rows).items()}
    if isinstance(data, dict) and all(_is_num(v) for v in data.values()):
        return {str(k): float(v) for k, v in data.items()}
    raise InputError("not a compile report with layer_errors, nor an object of node -> number",
                     offending=str(path), hint="give compile_report.json of an rknn build, or {\"node\": 0.01, ...}")
