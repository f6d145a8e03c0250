"""Diff page, real Qt offscreen: a model and its `fix --static` output side by side, changes coloured and listed,
a row selecting the node in both views; identical files, unrelated models and a missing file."""

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
    assert rep.summary.changed > 0 and rep.summary.changed_by_kind.get("shape", 0) > 0
    assert "changed" in page.summary.text() and "shape" in page.summary.text()
    assert page.changes.rowCount() == len(rep.nodes) + len(rep.tensors)
    # changed nodes take the diff's amber in both views (through the groups' counts too)
    changed = next(n for n in rep.nodes if n.status == "changed")
    risky = palette.VERDICT_INDEX["risky"]
    for view, name in ((page.view_a, changed.a), (page.view_b, changed.b)):
        idx = view.graph.index_of(name)
        assert view.gscene.verdict_index[idx] == risky
    assert any("changed" in t for t in page.view_b.gscene.rollups.values())
    # a row selects the node in both views (opening the groups on the way)
    row = next(i for i, r in enumerate(page.changes.rows) if r[1] == changed.a and r[2] == changed.b)
    page.table.selectRow(row)
    qtbot.waitUntil(lambda: page.view_a.selected_name == changed.a and page.view_b.selected_name == changed.b,
                    timeout=20_000)
    page.grab().save(str(artifacts_dir / "diff_page_static_fix.png"))


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
