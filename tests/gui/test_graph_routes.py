"""Edges of the grouped layout (studio/gui/graph/compound.py), no Qt: groups stacked in the flow even when graph
order disagrees, long edges routed beside the groups they pass, igraph's routing read per component."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from bench.graph_metrics import count_crossings, native_edge_polyline
from studio.gui.graph.compound import compound_layout
from studio.gui.graph.expansion import Expansion
from studio.gui.graph.layout import LayoutResult, igraph_core, sugiyama_by_component
from studio.gui.graph.model import graph_from_onnx


def _model() -> onnx.ModelProto:
    """a -> b (two branches) -> c, a residual from a to c past b; b's Constant is the graph's first node, so in
    graph order (a group's first node) b comes before a."""
    nodes: list[onnx.NodeProto] = []

    def op(kind: str, inputs: list[str], name: str) -> str:
        nodes.append(helper.make_node(kind, inputs, [f"{name}_out"], name=name))
        return f"{name}_out"

    value = helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])
    nodes.append(helper.make_node("Constant", [], ["/b/Constant_out"], name="/b/Constant", value=value))
    a1 = op("Relu", ["x"], "/a/Relu")
    a2 = op("Neg", [a1], "/a/Neg")
    left = op("Abs", [op("Tanh", [op("Sigmoid", [a2], "/b/left/Sigmoid")], "/b/left/Tanh")], "/b/left/Abs")
    right = op("Sqrt", [op("Log", [op("Exp", [a2], "/b/right/Exp")], "/b/right/Log")], "/b/right/Sqrt")
    b = op("Mul", [op("Add", [left, right], "/b/Add"), "/b/Constant_out"], "/b/Mul")
    out = op("Add", [op("Add", [a2, b], "/c/Add"), a1], "/c/Add_1")
    graph = helper.make_graph(nodes, "t", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1])])
    return helper.make_model(graph)


def _open_all() -> tuple[LayoutResult, list[str]]:
    base = graph_from_onnx(_model())
    exp = Expansion.of(base)
    exp.expand_all()
    vis = exp.visible()
    return compound_layout(vis, exp.hier), [n.name for n in vis.graph.nodes]


def test_groups_follow_the_flow_and_every_edge_runs_down() -> None:
    lay, _names = _open_all()
    box = {f.path: f for f in lay.frames}
    assert box["a"].y1 < box["b"].y0 and box["b"].y1 < box["c"].y0  # not side by side in graph order
    assert not any(lay.edge_cut)
    for pts in lay.edge_points:
        p = np.asarray(pts)
        assert np.isfinite(p).all()
        assert (np.diff(p[:, 1]) >= -1e-6).all()


def test_the_residual_runs_beside_the_group_it_passes_and_nothing_crosses() -> None:
    lay, names = _open_all()
    b = next(f for f in lay.frames if f.path == "b")
    k = lay.edge_pairs.index((names.index("/a/Neg"), names.index("/c/Add")))
    pts = lay.edge_points[k]
    assert len(pts) > 2
    beside = [x for x, y in pts if b.y0 <= y <= b.y1]
    assert beside and all(x < b.x0 or x > b.x1 for x in beside)
    edges = [[native_edge_polyline(p)] for p in lay.edge_points]
    assert count_crossings(edges, lay.edge_pairs) == 0


@pytest.mark.skipif(igraph_core() is None, reason="python-igraph not installed")
def test_routing_is_read_per_component() -> None:
    # two separate chains with one skip edge each, and an isolated vertex: igraph 1.0 garbles this routing
    edges = [(0, 2), (0, 1), (1, 2), (3, 5), (3, 4), (4, 5)]
    layers = [0, 1, 2, 0, 1, 2, 1]
    xs, routing = sugiyama_by_component(igraph_core(), 7, edges, layers, 50)
    assert np.isfinite(xs).all() and len(set(zip(layers, xs, strict=True))) == 7
    for (a, b), bends in zip(edges, routing, strict=True):
        assert [y for _x, y in bends] == list(range(layers[a] + 1, layers[b]))
        assert all(np.isfinite(x) for x, _y in bends)
