"""Compile page under real Qt: compile a small CNN for llvm (artifacts + parity table), then a model whose TVM
import fails (failing node listed, "Show in inspector" asks for the inspect page on that node); screenshots."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")
pytest.importorskip("tvm")

from PySide6.QtWidgets import QApplication  # noqa: E402

from studio.core.workspace import Workspace  # noqa: E402
from studio.gui.jobs_qt import JobRunner  # noqa: E402
from studio.gui.pages.compile_page import CompilePage  # noqa: E402
from studio.gui.theme import apply_theme  # noqa: E402
from tests.gui.gui_helpers import shown  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compile"))
from models import import_failure, small_cnn  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.slow, pytest.mark.qt_log_level_fail("WARNING"),
              pytest.mark.qt_log_ignore("propagateSizeHints")]


def _wait(qtbot, jobs: JobRunner) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: any(h.kind == "compile" for h in jobs.handles.values()) and
                    all(h.status != "running" for h in jobs.handles.values()), timeout=180000)


def test_compile_page_compiles_and_localises(qtbot, tmp_path: Path, artifacts_dir: Path) -> None:  # noqa: ANN001
    apply_theme(QApplication.instance(), "light")
    ws = Workspace.create(tmp_path / "ws", name="compile-ws")
    small_cnn(ws.models_dir / "cnn.onnx")
    ws.add_model(ws.models_dir / "cnn.onnx", name="cnn", kind="onnx")
    bad = import_failure(ws.models_dir / "fails_import.onnx")
    jobs = JobRunner()
    page = shown(qtbot, CompilePage(jobs), 1300, 820)

    page.set_context(ws, "cnn", "tvm-relax")
    assert page.model_edit.text().endswith("cnn.onnx")
    assert page.compile_btn.isEnabled()
    assert "mlc_llm" in page.mlc_label.text()
    page.select_target("llvm")
    page.out_edit.setText(str(tmp_path / "cnn-llvm"))
    page.shapes_edit.setText("x=2,3,16,16")
    page.start_compile()
    _wait(qtbot, jobs)
    rep = page.report
    assert rep is not None and rep.ok, page.error_label.text()
    assert page.parity_table.rowCount() == 1
    assert page.parity_table.item(0, 0).text() == "logits" and page.parity_table.item(0, 5).text() == "pass"
    assert page.parity_table.item(0, 1).text() == "2x10"
    files = {page.artifacts_table.item(r, 0).text() for r in range(page.artifacts_table.rowCount())}
    assert {"model.so", "params.bin", "compiled.json"} <= files
    assert "TVM" in page.latency_label.text() and "ONNX Runtime" in page.latency_label.text()
    assert not page.show_node_btn.isEnabled()
    page.grab().save(str(artifacts_dir / "compile_page_ok.png"))

    # a model whose every op is on TVM's list but that TVM cannot import (an empty-shape fill): the pre-check's
    # profile predicts it before TVM runs; the node list, one click to the graph
    page.model_edit.setText(str(bad))
    page.shapes_edit.setText("")
    page.out_edit.setText(str(tmp_path / "bad-llvm"))
    problems: list = []
    page.sig_problem.connect(problems.append)
    page.start_compile()
    _wait(qtbot, jobs)
    rep = page.report
    assert rep.status == "failed"
    assert page.nodes_table.rowCount() >= 1
    assert page.nodes_table.item(page.nodes_table.rowCount() - 1, 0).text() == "bias_fill"
    assert page.nodes_table.item(page.nodes_table.rowCount() - 1, 1).text() == "ConstantOfShape"
    assert "ConstantOfShape" in page.failure_label.text() and "Hint:" in page.failure_label.text()
    assert problems and problems[-1].location == "bias_fill" and problems[-1].page == "inspect"
    with qtbot.waitSignal(page.sig_open_page, timeout=2000) as blocker:
        page.show_node_btn.click()
    assert blocker.args[0] == "inspect"
    assert blocker.args[1]["node"] == "bias_fill" and blocker.args[1]["model"] == str(bad)
    page.grab().save(str(artifacts_dir / "compile_page_failure.png"))

    # bad input is shown in place, no job starts
    page.shapes_edit.setText("x=oops")
    n = len(jobs.handles)
    page.start_compile()
    assert page.error_label.isVisible() and "x=oops" in page.error_label.text()
    assert len(jobs.handles) == n
    jobs.shutdown()
