"""Compile page: an empty Output field compiles into WORKSPACE/compiled/<model>-<target>, never into the export
folder (issue 12: the next bundle of that folder carried the module); the placeholder says where, and an
explicit Output inside the export folder is refused on the page before any job starts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from studio.core.workspace import Workspace  # noqa: E402
from studio.gui.jobs_qt import JobRunner  # noqa: E402
from studio.gui.pages.compile_page import CompilePage  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compile"))
from models import small_cnn  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_level_fail("WARNING"),
              pytest.mark.qt_log_ignore("propagateSizeHints")]


def test_default_output_is_in_the_workspace_not_the_export(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    ws = Workspace.create(tmp_path / "ws", name="out-ws")
    exp = ws.models_dir / "tiny-onnx"
    exp.mkdir()
    small_cnn(exp / "model.onnx")
    (exp / "config.json").write_text('{"model_type": "cnn"}')
    ws.add_model(exp, name="tiny", kind="onnx")
    jobs = JobRunner()
    page = CompilePage(jobs)
    qtbot.addWidget(page)
    page.set_context(ws, "tiny", "tvm-relax")
    page.select_target("rk3588")
    assert page.model_edit.text() == str(exp / "model.onnx")
    want = ws.root / "compiled" / "tiny-rk3588"
    assert page.default_output() == want and page.out_edit.placeholderText() == f"default: {want}"
    opts = page.options()
    assert opts.out == want and exp not in opts.out.parents and opts.out != exp
    page.select_target("llvm")  # the placeholder follows the target
    assert page.out_edit.placeholderText() == f"default: {ws.root / 'compiled' / 'tiny-llvm'}"

    # a typed Output inside the export folder: the core refuses it before anything is written
    if page.compile_btn.isEnabled():  # apache-tvm installed: the job starts and fails with the reason
        page.out_edit.setText(str(exp / "tvm"))
        page.start_compile()
        qtbot.waitUntil(lambda: not page.error_label.isHidden(), timeout=60000)
        assert "inside the export folder" in page.error_label.text() and str(exp) in page.error_label.text()
        assert not (exp / "tvm").exists() and sorted(p.name for p in exp.iterdir()) == ["config.json", "model.onnx"]
    jobs.shutdown()
