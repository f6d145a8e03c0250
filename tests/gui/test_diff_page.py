"""Diff page, real Qt offscreen: a model and its `fix --static` output side by side, changes coloured and listed
(shape-only changes apart from op changes, each counted), a row selecting the node in both views; A and B named,
A = the fix's source and B = its output by default (from the workspace state the inspector's real fix records);
plugin targets offered; identical files, unrelated models and a missing file."""

from __future__ import annotations

from pathlib import Path

import pytest
from onnx import TensorProto, helper, save

from studio.gui.graph import palette
from studio.gui.pages.diff_page import DiffPage
from tests.gui.gui_helpers import shown

pytestmark = pytest.mark.gui


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from studio.inspect.synthetic import save_transformer
    from studio.optimize.api import fix_model

    d = tmp_path_factory.mktemp("diffpage")
    a = d / "t.onnx"
    save_transformer(str(a), external_data=False, layers=8, hidden=32, heads=2, vocab=50, max_pos=16)
    b = d / "t.static.onnx"
    fix_model(a, b, static={"batch": 1, "sequence": 8}, targets=["ort-cpu"], parity_cases=1)
    return a, b


@pytest.fixture(scope="module")
def simplified(models: tuple[Path, Path]) -> Path:
    """The same model made static and simplified: shape arithmetic folded away (removed nodes, rewired ops)."""
    from studio.optimize.api import fix_model

    a, _b = models
    c = a.with_name("t.simplified.onnx")
    fix_model(a, c, static={"batch": 1, "sequence": 8}, simplify=True, targets=["ort-cpu"], parity_cases=1)
    return c


@pytest.fixture
def page(qtbot):  # type: ignore[no-untyped-def]
    p = shown(qtbot, DiffPage(), 1500, 950, exposed=False)
    yield p
    p.jobs.shutdown()


def _compare(qtbot, page: DiffPage, a: Path, b: Path) -> None:  # type: ignore[no-untyped-def]
    page.a_edit.setText(str(a))
    page.b_edit.setText(str(b))
    page.report = None
    page.compare()
    def done() -> bool:
        failed = [v.message for v in (page.view_a, page.view_b) if v.message.startswith("Layout failed")]
        assert not failed, failed  # say why at once instead of waiting for the timeout
        return page.report is not None and page.view_a.ready and page.view_b.ready

    qtbot.waitUntil(done, timeout=90_000)


def test_static_fix_changes_coloured_listed_and_linked(qtbot, page: DiffPage, models, artifacts_dir) -> None:
    a, b = models
    _compare(qtbot, page, a, b)
    rep = page.report
    s = rep.summary
    assert s.changed > 0 and s.changed_by_kind.get("shape", 0) > 0
    # a static-dims fix only re-shapes: every change is a shape-only one, counted and coloured apart
    assert s.changed_shape_only == s.changed
    assert f"{s.changed_shape_only:,} in shapes only" in page.summary.text()
    assert "0 changed</b> in op, attributes or wiring" in page.summary.text()
    assert page.changes.rowCount() == len(rep.nodes) + len(rep.tensors)
    changed = next(n for n in rep.nodes if n.status == "changed")
    shape_only = palette.VERDICT_INDEX["unknown"]  # the diff's "shape only" colour, not the op changes' amber
    for view, name in ((page.view_a, changed.a), (page.view_b, changed.b)):
        idx = view.graph.index_of(name)
        assert view.gscene.verdict_index[idx] == shape_only
    assert any("shape only" in t for t in page.view_b.gscene.rollups.values())
    assert f"shapes only <b>{s.changed_shape_only:,}</b>" in page.legend.text()
    # a row selects the node in both views (opening the groups on the way)
    row = next(i for i, r in enumerate(page.changes.rows) if r[1] == changed.a and r[2] == changed.b)
    assert page.changes.cell(page.changes.rows[row], 0, 0) == "shape only"
    page.table.selectRow(row)
    qtbot.waitUntil(lambda: page.view_a.selected_name == changed.a and page.view_b.selected_name == changed.b,
                    timeout=20_000)
    page.grab().save(str(artifacts_dir / "diff_page_static_fix.png"))


def test_op_changes_apart_from_shape_only_and_read_forwards(qtbot, page: DiffPage, models, simplified,
                                                            artifacts_dir) -> None:
    """Simplified: nodes the fix dropped are removed (A only), rewired ones amber, re-shaped ones lavender."""
    a, _b = models
    _compare(qtbot, page, a, simplified)
    s = page.report.summary
    assert s.removed > 50 and s.removed > s.added  # the fix folds shape arithmetic away: it reads as removed
    ops = s.changed - s.changed_shape_only
    assert ops > 0 and s.changed_shape_only > 0
    text = page.summary.text()
    assert f"<b>{s.removed:,} removed</b> (in A only)" in text and f"<b>{ops:,} changed</b> in op" in text
    assert "From A (t.onnx) to B (t.simplified.onnx)" in text
    assert page.label_a.text().startswith("A (before): t.onnx") and page.label_b.text().startswith("B (after)")
    risky, lavender = palette.VERDICT_INDEX["risky"], palette.VERDICT_INDEX["unknown"]
    op_node = next(n for n in page.report.nodes if n.status == "changed" and not n.shape_only)
    shape_node = next(n for n in page.report.nodes if n.shape_only)
    page.view_b.expand_all()
    qtbot.waitUntil(lambda: page.view_b.graph.index_of(op_node.b) is not None and page.view_b.ready
                    and page.view_b.graph.nodes[page.view_b.graph.index_of(op_node.b)].kind == "op", timeout=30_000)
    gs = page.view_b.gscene
    assert gs.verdict_index[page.view_b.graph.index_of(op_node.b)] == risky
    assert gs.verdict_index[page.view_b.graph.index_of(shape_node.b)] == lavender
    page.grab().save(str(artifacts_dir / "diff_page_simplified.png"))
    # the other way round is offered, and then it reads the other way
    page.swap()
    assert page.a_edit.text() == str(simplified) and page.b_edit.text() == str(a)


def test_a_is_the_fix_source_and_b_the_fix_by_default(qtbot, tmp_path: Path, artifacts_dir) -> None:
    """The inspector's real fix records the output's source in the workspace state; the Diff page on the same
    state opens with A = that original and B = the output, named as such, whichever of the two is current."""
    from studio.core.state import StudioState
    from studio.core.workspace import Workspace
    from studio.gui.pages.inspect_page import InspectPage
    from studio.gui.state_qt import StateSignals
    from studio.inspect.synthetic import save_transformer

    ws = Workspace.create(tmp_path / "ws", name="diffws")
    src = ws.models_dir / "t.onnx"
    src.parent.mkdir(parents=True, exist_ok=True)
    save_transformer(str(src), external_data=False, layers=2, hidden=32, heads=2, vocab=50, max_pos=16)
    state = StudioState(ws)
    signals = StateSignals(state)
    state.add_model(src, name="t", kind="onnx")
    inspect = shown(qtbot, InspectPage(), 1400, 900, exposed=False)
    diff = shown(qtbot, DiffPage(), 1400, 900, exposed=False)
    for pg in (inspect, diff):
        pg.bind_state(state, signals)
        pg.set_context(ws, "t", "ort-cpu")
    assert diff.a_edit.text() == str(src) and diff.b_edit.text() == ""  # no fix yet: A is the current model
    inspect.open_model(src)
    qtbot.waitUntil(lambda: inspect.report is not None and inspect.view.ready, timeout=60_000)
    inspect.request_fix("static", {"dims": {"batch": 1, "sequence": 8}})
    qtbot.waitUntil(lambda: getattr(inspect, "last_fix", None) is not None, timeout=120_000)
    fixed = inspect.last_fix.path
    entry = next(m for m in ws.models if Path(ws.resolve(m)) == fixed)
    assert Path(state.artifact("fix_source", entry.name)) == src
    state.set_model(entry.name)  # the fix's output is the current model now (as the fix flow leaves it)
    diff.set_context(ws, entry.name, "ort-cpu")
    assert diff.a_edit.text() == str(src) and diff.b_edit.text() == str(fixed)
    assert diff.a_why.text().startswith("before: the original") and diff.b_why.text().startswith("after:")
    state.set_model("t")  # the original current: the same two, the same way round
    diff.set_context(ws, "t", "ort-cpu")
    assert diff.a_edit.text() == str(src) and diff.b_edit.text() == str(fixed)
    assert "static fix" in diff.b_why.text()
    diff.compare()
    qtbot.waitUntil(lambda: diff.report is not None and diff.view_b.ready, timeout=90_000)
    assert diff.report.summary.added == 0 and diff.report.summary.changed_shape_only > 0
    diff.grab().save(str(artifacts_dir / "diff_page_fix_defaults.png"))
    for pg in (inspect, diff):
        pg.jobs.shutdown()
        if getattr(pg, "netron", None) is not None:
            pg.netron.shutdown()


DIFF_TARGETS = """
import json
from PySide6.QtWidgets import QApplication
app = QApplication([])
from studio.gui.pages.diff_page import DiffPage
page = DiffPage()
print(json.dumps([page.target_combo.itemData(i) for i in range(page.target_combo.count())]))
page.jobs.shutdown()
"""


def test_plugin_targets_are_offered(tmp_path: Path) -> None:
    """The example plugin installed as a real distribution: its target is a choice, next to the built-in ones."""
    import json
    import os
    import subprocess
    import sys

    from tests.plugins.conftest import install_plugin

    site = install_plugin("studio-example", tmp_path)
    env = {**os.environ, "PYTHONPATH": str(site), "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([sys.executable, "-c", DIFF_TARGETS], capture_output=True, text=True, env=env,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    offered = json.loads(proc.stdout.strip().splitlines()[-1])
    assert offered[0] is None and "ort-cpu" in offered and "rk3588" in offered
    assert "example-npu" in offered  # the plugin's profile


def test_identical_unrelated_and_missing(qtbot, page: DiffPage, models, tmp_path: Path) -> None:
    a, _b = models
    _compare(qtbot, page, a, a)
    assert not page.report.has_changes and "No change" in page.summary.text()
    other = tmp_path / "other.onnx"
    g = helper.make_graph([helper.make_node("Sigmoid", ["u"], ["v"], name="s0"),
                           helper.make_node("Neg", ["v"], ["w"], name="n0")], "other",
                          [helper.make_tensor_value_info("u", TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info("w", TensorProto.FLOAT, [3])])
    save(helper.make_model(g), str(other))
    _compare(qtbot, page, a, other)
    assert page.report.summary.unrelated and "Nothing matched" in page.summary.text()
    page.b_edit.setText(str(tmp_path / "nope.onnx"))
    page.compare()
    assert page.error.isVisible() and "no such file" in page.error.text()
