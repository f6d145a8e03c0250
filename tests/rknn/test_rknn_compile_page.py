"""The Compile page with the RKNN backend under real Qt: the backend and its NPU targets come from the plugin,
an int8 build of tiny-clip's vision part runs as a job with the real toolkit, the report shows the .rknn, the
simulator parity with cosine and the toolkit's per-layer error, and "Per-layer error on the graph" opens the
inspector coloured by it (heat on the nodes the toolkit's layers map to). Screenshots for the record."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QApplication  # noqa: E402

from studio.gui.jobs_qt import JobRunner  # noqa: E402
from studio.gui.pages.compile_page import CompilePage  # noqa: E402
from studio.gui.pages.inspect_page import InspectPage  # noqa: E402
from studio.gui.theme import apply_theme  # noqa: E402
from tests.gui.gui_helpers import shown  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.export, pytest.mark.timeout(600),
              pytest.mark.qt_log_ignore("propagateSizeHints")]


def test_rknn_int8_compile_and_per_layer_error_on_the_graph(qtbot, rknn_env: Path, clip_parts: dict[str, Path],  # noqa: ANN001
                                                             tmp_path: Path, artifacts_dir: Path) -> None:
    apply_theme(QApplication.instance(), "light")
    jobs = JobRunner()
    page = shown(qtbot, CompilePage(jobs), 1366, 740)

    assert page.backend_combo.findData("rknn") >= 0, "the studio-rknn plugin contributes the rknn compiler"
    page.select_backend("rknn")
    targets = [page.target_combo.itemData(i) for i in range(page.target_combo.count())]
    assert targets == ["rk3588", "rk3576", "rk3566"]
    assert page.precision_combo.isEnabled() and not page.simplify_check.isEnabled()
    assert "rknn-toolkit2 2.5.0" in page.tvm_label.text() and page.compile_btn.isEnabled()
    page.model_edit.setText(str(clip_parts["vision"]))
    assert page.default_output() is not None and page.default_output().name.endswith("-rk3588-rknn")
    page.precision_combo.setCurrentIndex(page.precision_combo.findData("int8"))
    page.shapes_edit.setText("pixel_values=1,3,32,32")
    page.out_edit.setText(str(tmp_path / "vision-rk3588-int8"))
    page.start_compile()
    qtbot.waitUntil(lambda: page.report is not None or page.error_label.isVisible(), timeout=400_000)
    rep = page.report
    assert rep is not None and rep.ok, page.error_label.text()
    files = {page.artifacts_table.item(r, 0).text() for r in range(page.artifacts_table.rowCount())}
    assert {"model.rknn", "model.onnx", "compiled.json"} <= files
    assert page.parity_table.item(0, 5).text() == "pass" and float(page.parity_table.item(0, 4).text()) >= 0.98
    assert "simulator" in page.parity_label.text() and "rknn-toolkit2 2.5.0" in page.view.toolchain_label.text()
    assert page.view.layer_btn.isVisible() and "worst cosine" in page.view.layer_label.text()
    page.grab().save(str(artifacts_dir / "compile_page_rknn_int8.png"))

    opened: list[tuple[str, object]] = []
    page.sig_open_page.connect(lambda pid, payload: opened.append((pid, payload)))
    page.view.layer_btn.click()
    assert opened and opened[0][0] == "inspect"
    payload = opened[0][1]
    assert isinstance(payload, dict) and len(payload["heat"]) >= 20 and "1 - cosine" in payload["heat_label"]

    insp = shown(qtbot, InspectPage(JobRunner()), 1366, 740, exposed=False)
    insp.open_payload(payload)
    qtbot.waitUntil(lambda: insp.view.ready and insp.toolbar.mode() == "heat", timeout=120_000)
    assert insp.colours.heat == payload["heat"]
    worst = max(payload["heat"], key=payload["heat"].get)
    i = insp.view.graph.index_of(worst)  # its collapsed group (the vision part opens grouped) or itself
    assert insp.view.gscene.heat is not None and insp.view.gscene.heat[i] == pytest.approx(1.0)  # max, not sum
    insp.grab().save(str(artifacts_dir / "inspect_rknn_layer_error.png"))
    jobs.wait_all()


def test_verify_asks_for_static_shapes_and_rknn_answers(qtbot, rknn_env: Path, clip_parts: dict[str, Path],  # noqa: ANN001
                                                        artifacts_dir: Path) -> None:
    """The vision part has a dynamic batch: the Verify tab offers its shapes (batch 1), which is what the rknn
    toolkit builds at; a bad entry is refused in place, naming it; the toolkit's answer then lists every node."""
    insp = shown(qtbot, InspectPage(JobRunner()), 1366, 740, exposed=False)
    insp.open_model(clip_parts["vision"])
    qtbot.waitUntil(lambda: insp.report is not None and insp.view.ready, timeout=60_000)
    panel = insp.side.verify_panel
    assert panel.shapes_edit.text() == "pixel_values=1,3,32,32"
    panel.shapes_edit.setText("pixel_values=1,three")
    insp.verifier.button.click()
    assert panel.shapes_error.isVisible() and "pixel_values" in panel.shapes_error.text()
    assert insp.verifier.report is None  # nothing ran
    panel.shapes_edit.setText("pixel_values=1,3,32,32")
    insp.verifier.button.click()
    qtbot.waitUntil(lambda: insp.verifier.report is not None and insp.verifier.button.isEnabled(), timeout=400_000)
    assert not panel.shapes_error.isVisible()
    [res] = [r for r in insp.verifier.report.verification["results"] if r["verifier"] == "rknn-rk3588"]
    assert res["ran"] and res["tool"] == "rknn-toolkit2 2.5.0" and res["shapes"] == {"pixel_values": [1, 3, 32, 32]}
    assert len(res["nodes"]) == len([n for n in insp.graph.nodes if n.kind == "op"])
    insp.grab().save(str(artifacts_dir / "inspect_verify_rknn.png"))
    insp.jobs.shutdown()
