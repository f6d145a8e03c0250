"""Per-op profiling on the inspector page, real Qt offscreen and real ONNX Runtime: Profile gives every node a
time or a status, heat colours the graph (and Netron), the top-N rows and the graph select each other, the
profile is saved with the workspace and reloaded, and a fix can be compared with its original."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QApplication

from studio.core.workspace import Workspace
from studio.gui.graph import palette
from studio.gui.inspector.profile_panel import ProfileShapesDialog, heat_colour
from studio.gui.pages.inspect_page import InspectPage
from studio.gui.theme import apply_theme
from studio.profiling.api import workspace_profile_path
from studio.profiling.report import STATUSES
from tests.gui.gui_helpers import css_hex

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "profiling"))
from small_models import rewritten_by_ort  # noqa: E402

pytestmark = pytest.mark.gui


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace.create(tmp_path / "ws")


@pytest.fixture
def new_page(qtbot, ws: Workspace):  # type: ignore[no-untyped-def]
    """Opens an inspector page on the workspace as a new session would (nothing profiled in it yet)."""
    pages: list[InspectPage] = []

    def make() -> InspectPage:
        apply_theme(QApplication.instance(), "light")
        p = InspectPage()
        qtbot.addWidget(p)
        p.resize(1500, 960)
        p.set_context(ws, None, None)
        p.show()
        qtbot.waitExposed(p)
        pages.append(p)
        return p

    yield make
    for p in pages:
        p.shutdown()
        p.jobs.shutdown()


@pytest.fixture
def page(new_page: Callable[[], InspectPage]) -> InspectPage:
    return new_page()


def _load(qtbot, page: InspectPage, path: Path) -> None:  # type: ignore[no-untyped-def]
    page.open_model(path)
    qtbot.waitUntil(lambda: page.report is not None and page.view.ready, timeout=60_000)


def _profile(qtbot, page: InspectPage, **kw) -> None:  # type: ignore[no-untyped-def]
    before = page.profile
    page.profile_current(runs=5, ask=False, **kw)
    qtbot.waitUntil(lambda: page.profile is not None and page.profile is not before, timeout=60_000)


def _fill(page: InspectPage, name: str) -> str:
    return page.view.gscene.color_index(page.graph.index_of(name))[1].name()


def _pixel(page: InspectPage, name: str) -> str:
    """The colour actually painted inside the node's box, left of its label."""
    i = page.graph.index_of(name)
    r = page.view.gscene.geometry.rect_of(i)
    page.view.center_on(i, animate=False, readable=False)
    spot = page.view.mapFromScene(QPointF(r.left() + 7, r.bottom() - 4))
    return page.view.viewport().grab().toImage().pixelColor(spot).name()


def test_profile_overlay_and_linked_top_nodes(qtbot, page: InspectPage, new_page: Callable[[], InspectPage],
                                              ws: Workspace, tmp_path: Path, artifacts_dir: Path) -> None:
    model = rewritten_by_ort(tmp_path / "block.onnx")
    _load(qtbot, page, model)
    assert page.profile is None and not page.color_mode.model().item(2).isEnabled()
    verdict_fill = _fill(page, "/block/fc/MatMul")
    verdict_px = _pixel(page, "/block/fc/MatMul")

    _profile(qtbot, page)
    rep = page.profile
    # every op node of the graph has a profile entry: a time, or a status saying where its time went
    ops = [n for n in page.graph.nodes if n.kind == "op"]
    assert len(ops) == len(rep.nodes)
    for n in ops:
        nt = rep.node(page.profile_keys[n.name])
        assert nt is not None and nt.status in STATUSES, n.name
        assert (nt.mean_ms > 0) == (nt.status == "measured"), n.name
        if nt.status != "measured":
            assert nt.reason, n.name
    assert rep.node("/block/fc/Add").status == "fused" and rep.node("/block/fc/Add").fused_into == "/block/fc/MatMul"
    assert rep.node("Relu_8").mean_ms > 0  # an unnamed node, keyed as the graph names it

    # kept for this session, saved with the workspace; the page switched to heat colouring and the Profile tab
    assert page.profiles[model.resolve()] is rep
    assert workspace_profile_path(ws, model).is_file()
    assert page.color_mode.currentData() == "profile"
    assert page.side.currentWidget() is page.profile_panel
    assert page.heat_legend.isVisible() and page.heat_max_label.text().endswith("ms")
    top_share = max(n.share for n in rep.nodes)
    hot = _fill(page, "/block/fc/MatMul")
    assert hot != verdict_fill and hot == heat_colour(rep.node("/block/fc/MatMul").share, top_share)
    assert _pixel(page, "/block/fc/MatMul") != verdict_px  # really repainted
    assert _fill(page, "/block/fc/Add") == palette.verdict_colors("light")["none"][1]  # fused: no time of its own
    page.color_mode.setCurrentIndex(page.color_mode.findData("verdict"))
    assert _fill(page, "/block/fc/MatMul") == verdict_fill and not page.heat_legend.isVisible()
    page.color_mode.setCurrentIndex(page.color_mode.findData("profile"))
    assert _fill(page, "/block/fc/MatMul") == hot

    # the top-N table: slowest first; a row click selects and centres the node in the graph
    panel = page.profile_panel
    model_rows = panel.nodes_model.rows
    assert [r.key for r in model_rows] == [r.key for r in rep.top(25)]
    assert all(a.mean_ms >= b.mean_ms for a, b in zip(model_rows, model_rows[1:], strict=False))
    row = panel.nodes_model.row_of("/head/Relu")
    page.view.center_on(page.graph.index_of("/block/Identity"), animate=False, readable=False)
    panel.nodes_table.selectRow(row)
    assert page.view.selected_name == "/head/Relu"
    assert page.side.currentWidget() is panel  # the table stays in view
    text = page.node_panel.toPlainText()
    assert "Profiled time" in text and "ms" in text
    # ... and the other way: clicking a node in the graph selects its row
    i = page.graph.index_of("/block/Reshape")
    page.view.center_on(i, animate=False)
    page.view.click_at(page.view.mapFromScene(page.view.gscene.geometry.rect_of(i).center()))
    assert panel.selected_key() == "/block/Reshape"
    # all nodes: fused ones are listed with where their time went
    panel.show_combo.setCurrentIndex(panel.show_combo.findData(-1))
    assert panel.nodes_model.rowCount() == len(rep.nodes)
    r = panel.nodes_model.row_of("/block/fc/Add")
    assert panel.nodes_model.index(r, 5).data() == "fused into /block/fc/MatMul"
    panel.show_combo.setCurrentIndex(1)
    # modules from the exporter-style scopes
    assert rep.module_source == "node names"
    assert {"block", "block.fc", "block.act", "head"} <= {m.module for m in panel.modules_model.rows}
    assert panel.tabs.isTabEnabled(1)

    page.focus_node("/block/fc/MatMul")
    page.view.fit_all()
    page.grab().save(str(artifacts_dir / "inspect_profile.png"))
    panel.grab().save(str(artifacts_dir / "inspect_profile_panel.png"))
    page.side.setCurrentWidget(page.node_panel)
    assert "Profiled time" in page.node_panel.toPlainText()
    page.node_panel.grab().save(str(artifacts_dir / "inspect_profile_node.png"))

    # reopening the model in a new session loads the saved profile from the workspace (not only this session's)
    later = new_page()
    assert not later.profiles
    _load(qtbot, later, rewritten_by_ort(tmp_path / "other.onnx"))
    assert later.profile is None
    _load(qtbot, later, model)
    assert later.profile is not None and len(later.profile.nodes) == len(rep.nodes)
    assert model.resolve() not in later.profiles  # it came from the workspace
    panel = later.profile_panel
    assert "saved to block.profile.json" in panel.summary.text()
    assert "model changed" not in panel.summary.text()
    assert later.color_mode.model().item(2).isEnabled()
    # a model rewritten after its profile was taken: the profile still shows, marked as out of date
    saved = workspace_profile_path(ws, model).stat().st_mtime
    os.utime(model, (saved + 60, saved + 60))
    again = new_page()
    _load(qtbot, again, tmp_path / "other.onnx")
    _load(qtbot, again, model)
    panel = again.profile_panel
    assert again.profile is not None and "model changed after this profile" in panel.summary.text()


def test_compare_fix_with_original(qtbot, page: InspectPage, tmp_path: Path, artifacts_dir: Path) -> None:
    model = rewritten_by_ort(tmp_path / "block.onnx")
    _load(qtbot, page, model)
    _profile(qtbot, page)
    original = page.profile
    assert page.profile_panel.compare_button.isHidden()
    page.request_fix("simplify")
    qtbot.waitUntil(lambda: page.last_fix is not None, timeout=120_000)
    qtbot.waitUntil(lambda: page.model_path == page.last_fix.path and page.view.ready, timeout=60_000)
    assert page.profile is None  # the fixed model has no profile of its own yet
    assert not page.profile_panel.compare_button.isHidden()
    page.compare_with_original()
    qtbot.waitUntil(lambda: page.profile_comparison is not None, timeout=60_000)
    c = page.profile_comparison
    assert Path(c.before) == model and Path(c.after) == page.last_fix.path
    assert page.profile.input_shapes == original.input_shapes  # profiled exactly like the original
    assert c.nodes and c.scopes and c.run_before_ms > 0 and c.run_after_ms > 0
    panel = page.profile_panel
    assert panel.tabs.currentWidget() is panel.compare_view
    text = panel.compare_view.toPlainText()
    assert "block.onnx → block.simplified.onnx" in text and "Run time" in text and "By scope" in text
    panel.grab().save(str(artifacts_dir / "inspect_profile_compare.png"))


def test_shapes_dialog_for_dynamic_dims(qtbot) -> None:  # type: ignore[no-untyped-def]
    inputs = {"pixel_values": {"dtype": "float", "shape": ["batch", 3, 16, 16]},
              "ids": {"dtype": "int64", "shape": ["batch", "sequence"]}}
    dlg = ProfileShapesDialog(inputs, runs=7)
    qtbot.addWidget(dlg)
    assert list(dlg.fields) == ["batch", "sequence"]  # a named dim is asked once
    assert dlg.shapes() == {"pixel_values": [1, 3, 16, 16], "ids": [1, 64]}
    dlg.fields["sequence"].setText("0")
    dlg.ok_button.click()
    assert "positive integer" in dlg.error.text() and dlg.result() == 0
    dlg.fields["sequence"].setText("32")
    dlg.ok_button.click()
    assert dlg.result() == 1 and dlg.shapes()["ids"] == [1, 32] and dlg.runs.value() == 7


def test_netron_heat(qtbot, page: InspectPage, tmp_path: Path, artifacts_dir: Path) -> None:
    from studio.gui.inspector.netron_view import webengine_problem

    problem = webengine_problem()
    if problem is not None:
        pytest.skip(problem)
    _load(qtbot, page, rewritten_by_ort(tmp_path / "block.onnx"))
    _profile(qtbot, page)
    page.views.setCurrentIndex(1)
    netron = page.netron
    qtbot.waitUntil(lambda: netron.is_ready or netron.problem is not None, timeout=60_000)
    assert netron.problem is None, netron.problem
    js = ("(function(){var g=document.getElementById('node-name-/head/Relu');"
          "return g ? g.querySelector('.node-item-type > path').style.fill : 'missing';})()")

    def fill() -> str:
        got: list[str] = []
        netron.run_js(js, got.append)
        qtbot.waitUntil(lambda: bool(got), timeout=5000)
        return css_hex(got[0])

    want = netron.heat_fills()["/head/Relu"][0]
    qtbot.waitUntil(lambda: fill() == want, timeout=10_000)
    page.color_mode.setCurrentIndex(page.color_mode.findData("verdict"))
    qtbot.waitUntil(lambda: fill() != want, timeout=10_000)  # back to verdict colours
    page.color_mode.setCurrentIndex(page.color_mode.findData("profile"))
    qtbot.waitUntil(lambda: fill() == want, timeout=10_000)
    qtbot.wait(200)
    page.grab().save(str(artifacts_dir / "inspect_profile_netron.png"))



def test_module_table_shows_pytorch_next_to_onnx(qtbot, artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    from studio.gui.inspector.profile_panel import ProfilePanel
    from studio.profiling.report import ModuleTime, NodeTime, ProfileReport

    nodes = [NodeTime(key=f"/model/vision_model/encoder/layers.{i}/mlp/fc1/MatMul", name="", op_type="MatMul",
                      mean_ms=0.2 + i, p95_ms=0.3 + i, share=(0.2 + i) / 2.4, module=f"encoder.layers.{i}.mlp")
             for i in range(2)]
    rep = ProfileReport(model="model.onnx", runs=5, warmup=1, run_mean_ms=2.5, node_total_ms=2.4, nodes=nodes,
                        module_source="node names",
                        modules=[ModuleTime(module=f"encoder.layers.{i}.mlp", type="CLIPMLP", torch_mean_ms=0.5 + i,
                                            onnx_mean_ms=0.2 + i, onnx_nodes=[nodes[i].key]) for i in (1, 0)])
    panel = ProfilePanel()
    qtbot.addWidget(panel)
    panel.resize(520, 420)
    highlighted: list[list[str]] = []
    panel.sig_nodes_highlighted.connect(highlighted.append)
    panel.set_report(rep)
    assert panel.tabs.isTabEnabled(1) and panel.tabs.tabText(1) == "Modules (2)"
    m = panel.modules_model
    assert [m.index(0, c).data() for c in range(5)] == ["encoder.layers.1.mlp", "CLIPMLP", "1.500", "1.200", "1"]
    assert "PyTorch times" in panel.modules_note.text()
    panel.modules_table.selectRow(1)
    assert highlighted == [[nodes[0].key]]  # a module row rings the nodes it exported to
    panel.tabs.setCurrentIndex(1)
    panel.show()
    qtbot.waitExposed(panel)
    panel.grab().save(str(artifacts_dir / "inspect_profile_modules.png"))
