"""Compile page -> "Package for a board" -> Packaging page with a compiled folder (runtime tvm, parity figures,
arch check), built and verified under real Qt; screenshot for a person to look at."""

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
from studio.gui.pages.packaging_page import PackagingPage  # noqa: E402
from studio.gui.theme import apply_theme  # noqa: E402
from studio.package.keys import KeyStore  # noqa: E402
from tests.gui.gui_helpers import shown  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compile"))
from models import small_cnn  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.slow, pytest.mark.qt_log_level_fail("WARNING"),
              pytest.mark.qt_log_ignore("propagateSizeHints")]

PASS = "gui passphrase"


def test_compile_page_packages_for_a_board(qtbot, tmp_path: Path, artifacts_dir: Path) -> None:  # noqa: ANN001
    from studio.compile.api import CompileOptions, compile_model
    from studio.compile.pipeline import load_report

    apply_theme(QApplication.instance(), "light")
    ws = Workspace.create(tmp_path / "ws", name="tvm-ws")
    model = small_cnn(ws.models_dir / "cnn.onnx")
    out = tmp_path / "cnn-llvm"
    assert compile_model(CompileOptions(model=model, target="llvm", out=out, shapes={"x": [1, 3, 16, 16]},
                                        latency_runs=2)).ok
    KeyStore().generate("release", PASS)
    jobs = JobRunner()
    cpage = CompilePage(jobs)
    qtbot.addWidget(cpage)
    assert not cpage.package_btn.isEnabled()  # nothing compiled yet
    cpage.show_report(load_report(out))
    assert cpage.package_btn.isEnabled()
    with qtbot.waitSignal(cpage.sig_open_page, timeout=2000) as sig:
        cpage.package_btn.click()
    page_id, payload = sig.args
    assert page_id == "package" and payload == {"model": str(out), "board": "generic-x86_64"}

    page = shown(qtbot, PackagingPage(jobs), 1400, 860)
    page.set_context(ws, None, None)
    page.open_payload(payload)
    assert page.board_combo.currentData() == "generic-x86_64"
    info = page.source_info.text()
    assert page.source_info.isVisible() and info.startswith("runtime: tvm ")
    assert "model.so" in info and "x86_64" in info and "parity vs ONNX Runtime: passed, max abs" in info

    # the board with another CPU: flagged before building, and the build is refused
    page.board_combo.setCurrentIndex(page.board_combo.findData("rk3588"))
    assert "packaging is refused" in page.source_info.text()
    page.pass_edit.setText(PASS)
    page.version_edit.setText("1")
    page.build_btn.click()
    qtbot.waitUntil(lambda: page.build_btn.isEnabled() and bool(page.error.text()), timeout=60000)
    assert "aarch64" in page.error.text() and page.bundle_path is None
    page.grab().save(str(artifacts_dir / "packaging_compiled_refused.png"))

    page.board_combo.setCurrentIndex(page.board_combo.findData("generic-x86_64"))
    assert "packaging is refused" not in page.source_info.text()
    page.build_btn.click()
    qtbot.waitUntil(lambda: page.bundle_path is not None, timeout=60000)
    assert page.verify_report.ok and page.package_report.runtime == "tvm"
    assert "runtime: tvm" in page.result_text.text()
    files = {page.files.item(r, 0).text() for r in range(page.files.rowCount())}
    assert {"compiled/model.so", "compiled/params.bin", "compiled/compiled.json",
            "compiled/compile_report.json", "runtime.json"} <= files
    page.grab().save(str(artifacts_dir / "packaging_compiled.png"))
