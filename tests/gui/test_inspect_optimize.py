"""Inspect page, "Optimize…" (real Qt, real ONNX Runtime judging the candidates, real worker processes): the window
shows each candidate as it is judged in the table and the scatter, the chosen one marked; "Use this" makes the
chosen variant the workspace's current model, which the inspector opens and the Compile page follows; Cancel
stops the search with nothing written; a malformed budget is named in the window and starts nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from studio.core.workspace import Workspace
from tests.edge.helpers import make_mlp
from tests.gui.gui_helpers import main_window

pytestmark = pytest.mark.gui
SPECS = [("studio.gui.pages.inspect_page", "InspectPage"), ("studio.gui.pages.compile_page", "CompilePage")]


@pytest.fixture
def model_and_samples(tmp_path: Path) -> tuple[Path, Path]:
    model = make_mlp(tmp_path / "models" / "mlp.onnx")
    cal = tmp_path / "samples"
    cal.mkdir()
    rng = np.random.default_rng(0)
    for i in range(4):
        np.savez(cal / f"s{i}.npz", x=rng.normal(size=(1, 16)).astype(np.float32))
    return model, cal


@pytest.fixture
def window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    from studio.tune import cache

    orig = cache.cache_root
    cache.cache_root = lambda: tmp_path / "optimize-cache"  # type: ignore[assignment]
    w = main_window(qtbot, Workspace.create(tmp_path / "ws", name="opt"), SPECS, 1366, 768)
    yield w
    cache.cache_root = orig  # type: ignore[assignment]


def _open(qtbot, w, model: Path):  # type: ignore[no-untyped-def]
    page = w.page("inspect")
    w.go_to_page("inspect")
    page.open_model(model)
    qtbot.waitUntil(lambda: page.report is not None, timeout=60_000)
    assert page.optimizer.button.isEnabled()
    dlg = page.optimizer.open()
    qtbot.waitExposed(dlg)
    return page, dlg


def test_optimize_window_search_table_scatter_and_use_this(qtbot, window, model_and_samples, tmp_path: Path,
                                                           artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    model, cal = model_and_samples
    page, dlg = _open(qtbot, window, model)
    dlg.target_combo.setCurrentIndex(dlg.target_combo.findData("ort-cpu"))
    dlg.cal_edit.setText(str(cal))
    out = tmp_path / "optimized"
    dlg.out_edit.setText(str(out))
    assert "studio optimize" in dlg.cli_label.text() and "--target ort-cpu" in dlg.cli_label.text()
    dlg.start_button.click()
    assert dlg.cancel_button.isEnabled() and not dlg.start_button.isEnabled()
    qtbot.waitUntil(lambda: dlg.report is not None, timeout=180_000)
    rep = dlg.report
    assert rep.met and "budget met" in dlg.status_label.text()
    n = sum(len(p.candidates) for p in rep.parts)
    assert dlg.table.rowCount() == n >= 3
    assert len(dlg.scatter.points.data) >= 2  # every built candidate with an accuracy is a point
    chosen = rep.parts[0].chosen
    assert dlg.table.selected_id() == chosen and "★" in dlg.table.item(dlg.table.rows[chosen], 1).text()
    assert "recipe:" in dlg.details.toPlainText() and "onnxruntime" in dlg.details.toPlainText()
    dlg.grab().save(str(artifacts_dir / "inspect_optimize.png"))
    # a point click selects its row
    other = next(c.id for c in rep.parts[0].candidates if c.id != chosen and c.accuracy)
    dlg.scatter.sig_chosen.emit(other)
    assert dlg.table.selected_id() == other and dlg.use_button.text() == f"Use the chosen {chosen}"
    # Use this: the chosen variant becomes the current model everywhere
    dlg.use_button.click()
    variant = Path(rep.parts[0].files["model"])
    qtbot.waitUntil(lambda: page.model_path is not None and page.model_path.resolve() == variant.resolve(),
                    timeout=30_000)
    ws = window.state.workspace
    assert ws.model(ws.current_model) is not None and ws.resolve(ws.model(ws.current_model)) == variant.resolve()
    assert window.page("compile").model_edit.text() == str(variant.resolve())


def test_cancel_and_bad_budget(qtbot, window, model_and_samples, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    model, cal = model_and_samples
    _page, dlg = _open(qtbot, window, model)
    dlg.target_combo.setCurrentIndex(dlg.target_combo.findData("ort-cpu"))
    dlg.cal_edit.setText(str(cal))
    out = tmp_path / "never"
    dlg.out_edit.setText(str(out))
    dlg.budget_edit.setText("cosine>0.9")
    dlg.start_button.click()
    assert dlg.error_label.isVisible() and "cosine>0.9" in dlg.error_label.text() and dlg.handle is None
    dlg.budget_edit.setText("cosine>=0.99")
    dlg.start_button.click()
    assert not dlg.error_label.isVisible() and dlg.running()
    dlg.cancel_button.click()
    qtbot.waitUntil(lambda: not dlg.running(), timeout=60_000)
    assert dlg.status_label.text().startswith("cancelled") and dlg.report is None
    assert not out.exists() and dlg.start_button.isEnabled()
