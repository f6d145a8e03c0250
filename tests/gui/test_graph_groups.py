"""Module groups in the native graph view (real Qt offscreen): collapsed at Fit, open in place, roll-ups equal to
the per-node verdicts, search opening the way to a hidden node, the op-type-run fallback for unnamed graphs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from studio.gui.graph.expansion import Expansion
from studio.gui.graph.hierarchy import FLAT_LIMIT, RUN_SOURCE, SCOPE_SOURCE, build_hierarchy, visible_graph
from studio.gui.graph.model import KIND_GROUP, KIND_OP, graph_from_onnx
from studio.gui.graph.view import GraphView
from tests.gui.gui_helpers import shown

pytestmark = pytest.mark.gui


@pytest.fixture(scope="module")
def transformer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from studio.inspect.synthetic import save_transformer

    path = tmp_path_factory.mktemp("groups") / "t.onnx"
    save_transformer(str(path), external_data=False, layers=8, hidden=32, heads=2, vocab=50, max_pos=16)
    return path


def _view(qtbot, graph, size=(1100, 700)) -> GraphView:  # type: ignore[no-untyped-def]
    view = GraphView(theme="light")
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    view.set_graph(graph)
    qtbot.waitUntil(lambda: view.ready, timeout=30_000)
    return view


def _relaid(qtbot, view: GraphView, action) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(view.sig_layout_ready, timeout=30_000):
        assert action()


def test_fit_shows_only_collapsed_groups_and_opening_adds_exactly_the_children(qtbot, transformer,
                                                                             artifacts_dir) -> None:
    base = graph_from_onnx(onnx.load(str(transformer)))
    assert sum(n.kind == KIND_OP for n in base.nodes) > FLAT_LIMIT
    view = _view(qtbot, base)
    view.fit_all()
    exp = view.expansion
    assert exp is not None and exp.hier.source == SCOPE_SOURCE
    drawn = view.graph
    assert drawn is not None and not view.gscene.frames
    kinds = Counter(n.kind for n in drawn.nodes)
    assert kinds[KIND_OP] == 0 and kinds[KIND_GROUP] >= 2, kinds  # boxes and the graph's inputs/outputs only
    view.grab().save(str(artifacts_dir / "graph_groups_collapsed.png"))

    layers = next(n for n in drawn.nodes if n.kind == KIND_GROUP and n.scope == "layers")
    g = exp.hier.groups["layers"]
    before = len(drawn.nodes)
    _relaid(qtbot, view, lambda: view.expand("layers"))
    assert len(view.graph.nodes) == before - 1 + len(g.nodes) + len(g.children)
    assert [f.frame.path for f in view.gscene.frames] == ["layers"]
    assert {n.scope for n in view.graph.nodes if n.kind == KIND_GROUP} >= set(g.children)
    del layers

    # opening a layer lays out that layer, then re-packs its parent and the root; an open sibling layer keeps its
    # layout (from the cache): layers.5 opened after layers.3 recomputes 3 containers, not 4
    _relaid(qtbot, view, lambda: view.expand("layers.3"))
    assert view.expansion.cache.computed == 3
    _relaid(qtbot, view, lambda: view.expand("layers.5"))
    assert view.expansion.cache.computed == 3
    view.fit_all()
    view.grab().save(str(artifacts_dir / "graph_groups_one_open.png"))

    _relaid(qtbot, view, view.expand_all)
    assert len(view.graph.nodes) == len(base.nodes) and not any(n.kind == KIND_GROUP for n in view.graph.nodes)
    view.grab().save(str(artifacts_dir / "graph_groups_expanded.png"))
    _relaid(qtbot, view, lambda: view.collapse("layers"))
    assert not any(f.frame.path.startswith("layers") for f in view.gscene.frames)
    _relaid(qtbot, view, view.collapse_all)
    assert not view.gscene.frames


def test_rollups_equal_the_per_node_verdicts(qtbot, transformer) -> None:
    from studio.inspect.api import inspect_model

    rep = inspect_model(transformer, ["rk3588"])
    verdicts = rep.node_verdicts["rk3588"]
    base = graph_from_onnx(onnx.load(str(transformer)))
    view = _view(qtbot, base)
    _relaid(qtbot, view, lambda: view.expand("layers"))
    view.set_verdicts(verdicts)
    exp, gs = view.expansion, view.gscene
    assert exp is not None and gs is not None
    checked = 0
    for unit in view.graph.nodes:
        if unit.kind != KIND_GROUP:
            continue
        want = Counter(verdicts[base.nodes[i].name] for i in exp.hier.descendants(unit.scope)
                       if base.nodes[i].name in verdicts)
        text = gs.rollups[unit.index]
        for v in ("unsupported", "risky", "unknown"):
            assert (f"{want[v]:,} {v}" in text) == bool(want[v]), (unit.scope, text, want)
        assert f"{exp.hier.groups[unit.scope].size:,} nodes" in text
        worst = next((v for v in ("unsupported", "risky", "unknown", "supported") if want[v]), None)
        if worst is not None:  # the box takes its worst member's colour
            from studio.gui.graph import palette

            assert gs.verdict_index[unit.index] == palette.VERDICT_INDEX[worst]
        checked += 1
    assert checked >= 8
    frame_text = gs.frame_rollups["layers"]
    total = Counter(verdicts[base.nodes[i].name] for i in exp.hier.descendants("layers"))
    assert all((f"{total[v]:,} {v}" in frame_text) == bool(total[v]) for v in ("unsupported", "risky"))


def test_search_and_select_open_the_way_to_a_hidden_node(qtbot, transformer) -> None:
    base = graph_from_onnx(onnx.load(str(transformer)))
    view = _view(qtbot, base)
    deep = next(n.name for n in base.nodes if n.name.startswith("layers.5/") and n.kind == KIND_OP)
    assert view.graph.nodes[view.graph.index_of(deep)].kind == KIND_GROUP  # hidden at first
    with qtbot.waitSignal(view.sig_layout_ready, timeout=30_000):
        assert deep in view.search(deep)
    qtbot.waitUntil(lambda: view.selected_name == deep, timeout=10_000)
    assert {"layers", "layers.5"} <= view.expansion.expanded
    assert view.graph.nodes[view.graph.index_of(deep)].kind == KIND_OP
    # a finding's node in another closed layer: select() opens it too
    other = next(n.name for n in base.nodes if n.name.startswith("layers.1/") and n.kind == KIND_OP)
    with qtbot.waitSignal(view.sig_layout_ready, timeout=30_000):
        assert view.select(other)
    qtbot.waitUntil(lambda: view.selected_name == other, timeout=10_000)


def test_double_click_and_keys_open_and_close(qtbot, transformer) -> None:
    from PySide6.QtCore import Qt

    base = graph_from_onnx(onnx.load(str(transformer)))
    view = _view(qtbot, base)
    view.set_scale(1.0)
    idx = next(n.index for n in view.graph.nodes if n.kind == KIND_GROUP and n.scope == "layers")
    view.center_on(idx, animate=False)
    pos = view.mapFromScene(view.gscene.geometry.rect_of(idx).center())
    with qtbot.waitSignal(view.sig_layout_ready, timeout=30_000):
        qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert "layers" in view.expansion.expanded
    child = next(n.index for n in view.graph.nodes if n.kind == KIND_GROUP and n.scope == "layers.2")
    _click_node(qtbot, view, child)
    with qtbot.waitSignal(view.sig_layout_ready, timeout=30_000):
        qtbot.keyClick(view, Qt.Key.Key_Right)
    assert "layers.2" in view.expansion.expanded
    inside = next(n.index for n in view.graph.nodes if n.kind == KIND_OP and n.scope.startswith("layers.2"))
    _click_node(qtbot, view, inside)
    with qtbot.waitSignal(view.sig_layout_ready, timeout=30_000):
        qtbot.keyClick(view, Qt.Key.Key_Left)
    assert "layers.2" not in view.expansion.expanded and "layers" in view.expansion.expanded


def test_unnamed_graph_of_100k_nodes_groups_by_op_type_runs() -> None:
    n = 100_000
    nodes, x = [], "x"
    for i in range(n):
        op = ("Relu", "Neg", "Abs", "Sigmoid")[(i // 250) % 4]
        nodes.append(helper.make_node(op, [x], [f"t{i}"]))  # no names at all
        x = f"t{i}"
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [4])])
    base = graph_from_onnx(helper.make_model(graph))
    hier = build_hierarchy(base)
    assert hier.source == RUN_SOURCE
    top = visible_graph(base, hier, set()).graph
    assert len(top.nodes) <= 40 and sum(u.kind == KIND_GROUP for u in top.nodes) >= 10
    # runs are cut where the op type changes, and nested until a level holds at most FLAT_LIMIT nodes
    for g in hier.groups.values():
        assert len(g.nodes) <= FLAT_LIMIT
    exp = Expansion(base, hier)
    assert exp.reveal(n // 2) and visible_graph(base, hier, exp.expanded).graph.index_of(base.nodes[n // 2].name) \
        is not None


def test_a_finding_in_a_closed_group_opens_it_on_the_inspector_page(qtbot, transformer, artifacts_dir) -> None:
    from studio.gui.pages.inspect_page import InspectPage

    page = shown(qtbot, InspectPage(), 1500, 960, exposed=False)
    try:
        page.open_model(transformer)
        qtbot.waitUntil(lambda: page.report is not None and page.view.ready, timeout=60_000)
        page.set_target("rk3588")
        assert page.view.grouped and not page.view.gscene.frames
        # the closed groups carry the target's risky count on their boxes
        assert any("risky" in t for t in page.view.gscene.rollups.values())
        # a node deep in the graph, inside a closed group, with a finding (which one depends on the profile)
        keys = [k for k, v in page.report.node_verdicts["rk3588"].items()
                if "/" in k and v in ("risky", "unsupported") and page.findings_model.rows_for_node(k)]
        key = max(keys, key=lambda k: (k.startswith("layers."), k))
        rows = page.findings_model.rows_for_node(key)
        assert rows
        first = page.findings_model.finding(rows[0]).node  # a grouped finding goes to its first node
        group = first.split("/")[0]
        with qtbot.waitSignal(page.view.sig_layout_ready, timeout=30_000):
            page.table.select_rows(rows[:1])
        qtbot.waitUntil(lambda: page.view.selected_name == first, timeout=10_000)
        assert group in page.view.expansion.expanded
        assert page.selected_node == first
        page.grab().save(str(artifacts_dir / "inspector_groups_finding.png"))
    finally:
        page.jobs.shutdown()


def _click_node(qtbot, view, idx: int) -> None:  # type: ignore[no-untyped-def]
    """Select a node the way a user does: bring it into view and click it."""
    from PySide6.QtCore import Qt

    view.center_on(idx, animate=False)
    pos = view.mapFromScene(view.gscene.geometry.rect_of(idx).center())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert view.node_at(pos) == idx


def test_clicking_a_closed_group_sums_it_up_in_the_node_panel(qtbot, transformer) -> None:  # type: ignore[no-untyped-def]
    """A click on a collapsed module box fills the Node panel with its counts per target (equal to its members'
    verdicts) and its ops, and selects its members' findings (it used to leave "Select a node" there)."""
    from studio.gui.pages.inspect_page import InspectPage

    page = shown(qtbot, InspectPage(), 1500, 960, exposed=False)
    try:
        page.open_model(transformer)
        qtbot.waitUntil(lambda: page.report is not None and page.view.ready, timeout=60_000)
        page.set_target("rk3588")
        exp, drawn = page.view.expansion, page.view.graph
        verdicts = page.report.node_verdicts["rk3588"]

        def ops_in(path: str) -> list[str]:
            return [exp.base.nodes[i].name for i in exp.hier.descendants(path) if exp.base.nodes[i].kind == KIND_OP]

        box = next(n for n in drawn.nodes if n.kind == KIND_GROUP  # a box with a risky member (the embeddings)
                   and any(verdicts.get(m) == "risky" for m in ops_in(n.scope)))
        members = ops_in(box.scope)
        _click_node(qtbot, page.view, box.index)
        html = " ".join(page.node_panel.toPlainText().replace("\xa0", " ").split())
        assert box.scope in html and f"{len(members):,} nodes" in html, html[:300]
        risky = sum(1 for m in members if verdicts.get(m) == "risky")
        assert f"risky {risky:,}" in html and f"supported {len(members) - risky:,}" in html, html
        assert page.side.currentWidget() is page.node_panel
        want = {r for m in members for r in page.findings_model.rows_for_node(m)}
        got = {i.row() for i in page.table.selectionModel().selectedRows()}
        assert want and got == want
    finally:
        page.jobs.shutdown()


def test_a_group_summary_fits_the_node_panel_at_1366(qtbot, transformer) -> None:  # type: ignore[no-untyped-def]
    """At 1366x768 the Node panel is about 240 px wide: a target id beside 'unsupported 151' cut the count's last
    digit (seen on a real display). Each target's counts get the panel's whole width, and no verdict word or count
    is broken across lines (the synthetic model's counts are shorter, so the panel here is narrower)."""
    from studio.gui.inspector.group_details import group_details_html
    from studio.gui.inspector.side_tabs import TextPanel
    from studio.gui.pages.inspect_page import InspectPage

    page = shown(qtbot, InspectPage(), 1500, 960, exposed=False)
    try:
        page.open_model(transformer)
        qtbot.waitUntil(lambda: page.report is not None and page.view.ready, timeout=60_000)
        exp, drawn = page.view.expansion, page.view.graph
        box = max((n for n in drawn.nodes if n.kind == KIND_GROUP), key=lambda n: len(exp.hier.descendants(n.scope)))
        panel = shown(qtbot, TextPanel(), 200, 500, exposed=False)  # fewer digits here than on a real model
        panel.setHtml(group_details_html(exp.base, box.scope, exp.hier.descendants(box.scope), page.report,
                                         "ascend-310p"))
        assert "unsupported" in panel.toPlainText()  # the widest chip is there
        doc, over = panel.document(), []
        block = doc.begin()
        while block.isValid():  # a line wider than the room its cell gives it is drawn cut
            layout = block.layout()
            for i in range(layout.lineCount()):
                line = layout.lineAt(i)
                end, text = line.textStart() + line.textLength(), block.text()
                if line.naturalTextWidth() > line.width() + 0.5 or (  # too wide, or a word broken in two
                        0 < end < len(text) and text[end - 1].isalnum() and text[end].isalnum()):
                    over.append((text, round(line.naturalTextWidth()), round(line.width()), end))
            block = block.next()
        assert not over, over
    finally:
        page.jobs.shutdown()
