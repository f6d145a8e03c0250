"""Native graph view: layered layout properties, nested-graph keys, centring, every level of detail painted."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from studio.gui.graph.layout import MAX_SPAN, X_UNIT, compute_layout
from studio.gui.graph.model import graph_from_onnx
from studio.gui.graph.scene import LOD_OVERVIEW
from studio.gui.graph.view import GraphView

pytestmark = pytest.mark.gui


def _ladder(blocks: int) -> onnx.ModelProto:
    """Residual blocks (Relu -> Mul -> Add(skip)) reading one shared input in every block, plus an If node."""
    nodes = []
    x = "x"
    for i in range(blocks):
        nodes += [helper.make_node("Relu", [x], [f"r{i}"], name=f"b{i}/relu"),
                  helper.make_node("Mul", [f"r{i}", "scale"], [f"m{i}"], name=f"b{i}/mul"),
                  helper.make_node("Add", [x, f"m{i}"], [f"a{i}"], name=f"b{i}/add")]
        x = f"a{i}"
    then_g = helper.make_graph([helper.make_node("Identity", [x], ["t_out"], name="then_id")], "then", [],
                               [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, None)])
    else_g = helper.make_graph([helper.make_node("Neg", [x], ["e_out"], name="else_neg")], "else", [],
                               [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, None)])
    nodes.append(helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g))
    graph = helper.make_graph(nodes, "ladder",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8]),
                               helper.make_tensor_value_info("scale", TensorProto.FLOAT, [8]),
                               helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_layout_is_layered_without_overlaps() -> None:
    graph = graph_from_onnx(_ladder(60))
    lay = compute_layout(graph)
    assert lay.engine == "igraph"
    for s, d in lay.edge_pairs:
        assert lay.layer[s] < lay.layer[d], "every edge points down"
    for layer in np.unique(lay.layer):
        xs = np.sort(lay.x[lay.layer == layer])
        assert len(xs) < 2 or np.diff(xs).min() >= X_UNIT * 0.99, f"boxes overlap in layer {layer}"
    # 'scale' feeds all 60 blocks: its far edges are cut into stubs instead of crossing the graph
    cut = [lay.layer[d] - lay.layer[s] for (s, d), c in zip(lay.edge_pairs, lay.edge_cut, strict=True) if c]
    assert cut and min(cut) > MAX_SPAN
    # nested nodes resolve to the If that owns them, with the inspector's key spelling
    assert graph.nodes[graph.index_of("branch/then_branch/then_id")].name == "branch"
    assert graph.nodes[graph.index_of("branch/else_branch/else_neg")].op_type == "If"


def test_view_centres_selects_and_paints_every_level(qtbot) -> None:  # type: ignore[no-untyped-def]
    graph = graph_from_onnx(_ladder(120))
    view = GraphView(theme="light")
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    view.set_graph(graph, grouped=False)  # the flat layered view (groups: tests/gui/test_graph_groups.py)
    qtbot.waitUntil(lambda: view.ready, timeout=30_000)
    view.set_verdicts({"b3/relu": "unsupported", "b4/mul": "risky", "branch/then_branch/then_id": "unknown"})
    view.set_dynamic({"r3", "m3"})
    gs = view.gscene
    assert gs.verdict_index[graph.index_of("branch")] == 4  # nested verdict colours the owner
    assert gs.dynamic_edge.sum() >= 2

    assert view.select("b100/add", animate=False)
    target = gs.geometry.rect_of(graph.index_of("b100/add")).center()
    assert abs(view.view_center().y() - target.y()) < 2  # a tall graph: really centred
    assert not view.select("no such node")

    for zoom in (2.0, 1.0, 0.5, 0.2, LOD_OVERVIEW / 2):
        view.set_scale(zoom)
        assert gs.overview_mode == (zoom < LOD_OVERVIEW)
        image = view.viewport().grab().toImage()
        assert not image.isNull()
    view.fit_all()
    assert gs.overview_mode  # 360 nodes in one column do not fit at a readable zoom

    # clicking empty canvas clears the selection and says so
    seen: list[str] = []
    view.sig_node_selected.connect(lambda name: seen.append(name))
    view.set_scale(1.0)
    view.click_at(view.mapFromScene(gs.geometry.scene_rect.topLeft()) + view.rect().topLeft())
    assert seen[-1] == "" and view.selected_name is None


def test_two_layouts_at_once_load_igraph_once() -> None:
    """Two views laying out in the same instant (the Diff page's A and B) in a fresh process: igraph's C
    module is initialised once (a second initialisation raised 'already initialized in a different Python
    interpreter' and one view showed 'Layout failed')."""
    import subprocess
    import sys

    code = ("import threading\nfrom studio.gui.graph.layout import igraph_core\nout, errs = [], []\n"
            "def go():\n    try:\n        out.append(igraph_core())\n    except Exception as e:\n"
            "        errs.append(repr(e))\n"
            "ts = [threading.Thread(target=go) for _ in range(4)]\n[t.start() for t in ts]\n[t.join() for t in ts]\n"
            "assert not errs, errs\nassert len({id(m) for m in out}) == 1 and out[0] is not None\nprint('ok')\n")
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_a_view_closed_mid_layout_leaves_its_worker_running_to_the_end(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The layout thread is not the view's child: deleting the view while it runs must not destroy a running
    QThread (which aborts the process); the worker finishes, lets go of the graph and leaves RUNNING."""
    from PySide6.QtCore import QCoreApplication, QEvent

    from studio.gui.graph import layout_worker

    view = GraphView()
    view.set_graph(graph_from_onnx(_ladder(400)))
    worker = view._workers[-1]
    assert worker.parent() is None and worker in layout_worker.RUNNING
    view.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # the view is gone now
    qtbot.waitUntil(lambda: worker.isFinished(), timeout=30000)
    assert worker.graph is None
    qtbot.waitUntil(lambda: (layout_worker.forget_finished(), worker not in layout_worker.RUNNING)[1], timeout=5000)
