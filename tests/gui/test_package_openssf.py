"""The Package page's OpenSSF box under real Qt: a model folder signed by the real `model_signing` CLI shows its
signer, is checked against the publisher's key as a job (a changed file is named in place, another key is
refused), and a bundle built with a signing key carries model.sig that `model_signing verify key` accepts."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")
pytest.importorskip("model_signing", reason="the openssf extra (model-signing) is not installed")

from PySide6.QtWidgets import QApplication  # noqa: E402

from studio.core.workspace import Workspace  # noqa: E402
from studio.gui.jobs_qt import JobRunner  # noqa: E402
from studio.gui.pages.packaging_page import PackagingPage  # noqa: E402
from studio.gui.theme import apply_theme  # noqa: E402
from studio.package.keys import KeyStore  # noqa: E402
from tests.edge.helpers import trust_key  # noqa: E402
from tests.edge.test_openssf import ec_key, flip_byte, model_folder  # noqa: E402
from tests.gui.gui_helpers import shown  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_level_fail("WARNING"), pytest.mark.qt_log_ignore("propagateSizeHints")]
BIN = Path(sys.executable).parent
PASS = "gui passphrase"


def _wait_job(qtbot, jobs: JobRunner, kind: str, timeout: int = 120000) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: any(h.kind == kind for h in jobs.handles.values()) and
                    all(h.status != "running" for h in jobs.handles.values() if h.kind == kind), timeout=timeout)


def test_openssf_box_checks_the_source_and_signs_the_bundle(qtbot, tmp_path: Path, artifacts_dir: Path) -> None:  # noqa: ANN001
    apply_theme(QApplication.instance(), "light")
    ws = Workspace.create(tmp_path / "ws", name="ssf-ws")
    src = model_folder(tmp_path)
    k1, k1pub = ec_key(tmp_path, "publisher")
    _, k2pub = ec_key(tmp_path, "stranger")
    signed = subprocess.run([str(BIN / "model_signing"), "sign", "key", "--private_key", str(k1), "--signature",
                             str(src / "model.sig"), str(src)], capture_output=True, text=True, timeout=120)
    assert signed.returncode == 0, signed.stderr
    trust_key(KeyStore(), "release", PASS, tmp_path / "release.pub")
    jobs = JobRunner()
    page = shown(qtbot, PackagingPage(jobs), 1400, 900)
    try:
        page.set_context(ws, None, "ort-cpu")
        page.source_edit.setText(str(src))
        box = page.openssf
        assert "not checked yet" in box.status.text() and "ECDSA key sha256:" in box.status.text()
        assert box.check_btn.isEnabled()

        box.trust_edit.setText(str(k2pub))
        box.check_btn.click()
        _wait_job(qtbot, jobs, "package:openssf")
        assert box.status.text().startswith("✘") and "another key" in box.status.text()

        box.trust_edit.setText(str(k1pub))
        box.check_btn.click()
        _wait_job(qtbot, jobs, "package:openssf")
        assert box.status.text().startswith("✔") and "publisher.pub" in box.status.text(), box.status.text()
        page.grab().save(str(artifacts_dir / "package-openssf.png"))

        box.key_edit.setText(str(k1))
        page.board_combo.setCurrentIndex(page.board_combo.findData("generic-x86_64"))
        page.pass_edit.setText(PASS)
        page.version_edit.setText("1")
        page.build_btn.click()
        _wait_job(qtbot, jobs, "package")
        assert page.bundle_path is not None and page.package_report.openssf["file"] == "model.sig"
        assert "OpenSSF: model/ signed by ECDSA key" in page.result_text.text()
        assert "source: OpenSSF signature by ECDSA key" in page.result_text.text()
        x = tmp_path / "x"
        with tarfile.open(page.bundle_path) as tf:
            tf.extractall(x, filter="data")
        ok = subprocess.run([str(BIN / "model_signing"), "verify", "key", "--signature", str(x / "model.sig"),
                             "--public_key", str(k1pub), str(x / "model")], capture_output=True, text=True,
                            timeout=120)
        assert ok.returncode == 0, ok.stderr

        flip_byte(src / "model.onnx")
        page.source_edit.setText("")
        page.source_edit.setText(str(src))
        box.check_btn.click()
        _wait_job(qtbot, jobs, "package:openssf")
        assert "changed: model.onnx" in box.status.text(), box.status.text()
        page.version_edit.setText("2")
        page.build_btn.click()
        _wait_job(qtbot, jobs, "package")
        assert page.error.isVisible() and "changed: model.onnx" in page.error.text()
        assert not (ws.root / "bundles" / f"{src.name}-2.tar").exists()
    finally:
        jobs.shutdown()
