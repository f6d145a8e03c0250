"""Packaging page end to end under real Qt: build + verify a signed bundle, deploy it to a real agent process,
see the agent's versions, deploy v2 and roll back from the agents panel; screenshot for a person to look at."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QApplication  # noqa: E402

from studio.core.workspace import Workspace  # noqa: E402
from studio.gui.jobs_qt import JobRunner  # noqa: E402
from studio.gui.pages.packaging_page import PackagingPage  # noqa: E402
from studio.gui.theme import apply_theme  # noqa: E402
from studio.gui.widgets.confirm import pending, press  # noqa: E402
from studio.package.client import AgentClient  # noqa: E402
from studio.package.keys import KeyStore  # noqa: E402
from tests.edge.helpers import AgentProcess, make_einsum, make_mlp, mlp_ref, trust_key, write_token  # noqa: E402
from tests.gui.gui_helpers import shown  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.slow, pytest.mark.qt_log_level_fail("WARNING"),
              pytest.mark.qt_log_ignore("propagateSizeHints")]

PASS = "gui passphrase"


def _wait_job(qtbot, jobs: JobRunner, kind: str, timeout: int = 60000) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: any(h.kind == kind for h in jobs.handles.values()) and
                    all(h.status != "running" for h in jobs.handles.values() if h.kind == kind), timeout=timeout)


def test_packaging_page_build_verify_deploy_rollback(qtbot, tmp_path: Path, artifacts_dir: Path) -> None:  # noqa: ANN001
    apply_theme(QApplication.instance(), "light")
    ws = Workspace.create(tmp_path / "ws", name="edge-ws")
    make_mlp(ws.models_dir / "tiny-mlp" / "model.onnx", scale=1.0)
    ws.add_model(ws.models_dir / "tiny-mlp", name="tiny-mlp", kind="onnx")
    trust = trust_key(KeyStore(), "release", PASS, tmp_path / "release.pub")
    token = write_token(tmp_path / "agent.token")
    agent = AgentProcess(tmp_path / "agent", trust, token).start()
    jobs = JobRunner()
    page = shown(qtbot, PackagingPage(jobs), 1400, 860)
    try:
        page.set_context(ws, "tiny-mlp", "ort-cpu")
        assert page.source_edit.text().endswith("tiny-mlp")
        assert page.key_combo.count() == 1
        page.board_combo.setCurrentIndex(page.board_combo.findData("generic-x86_64"))
        assert "ort-cpu" in page.board_info.text()

        # wrong passphrase: shown in place, nothing written
        page.pass_edit.setText("wrong")
        page.version_edit.setText("1")
        page.build_btn.click()
        _wait_job(qtbot, jobs, "package")
        assert page.error.isVisible() and "wrong passphrase" in page.error.text()
        assert not (ws.root / "bundles" / "tiny-mlp-1.tar").exists()

        page.pass_edit.setText(PASS)
        page.build_btn.click()
        _wait_job(qtbot, jobs, "package")
        assert page.bundle_path == ws.root / "bundles" / "tiny-mlp-1.tar" and page.bundle_path.is_file()
        assert page.verify_report.ok and "signed and verified" in page.result_title.text()
        assert page.state.artifact("bundle") == str(page.bundle_path)  # Fleet offers it from the state
        assert page.files.rowCount() == 3  # runtime.json, compat-report.json, model/model.onnx
        assert not page.deploy_btn.isEnabled()  # no agent yet

        # add the agent by URL with its token file, then deploy with progress
        page.agents.url_edit.setText(agent.url)
        page.agents.token_edit.setText(str(token))
        page.agents.add_btn.click()
        assert page.agent_combo.count() == 1 and page.deploy_btn.isEnabled()
        assert ws.devices[-1].kind == "agent" and ws.devices[-1].extra["token_file"] == str(token)
        page.deploy_btn.click()
        _wait_job(qtbot, jobs, "deploy")
        assert page.deploy_report is not None and page.deploy_report.version == "1"
        qtbot.waitUntil(lambda: page.agents.versions.rowCount() == 1, timeout=20000)

        # v2 (other weights) -> deploy -> the panel lists both, then roll back from the panel
        make_mlp(ws.models_dir / "tiny-mlp" / "model.onnx", scale=3.0)
        page.version_edit.setText("2")
        page.build_btn.click()
        _wait_job(qtbot, jobs, "package")
        page.deploy_btn.click()
        _wait_job(qtbot, jobs, "deploy")
        assert page.deploy_report.version == "2" and page.deploy_report.previous == "1"
        qtbot.waitUntil(lambda: page.agents.versions.rowCount() == 2 and page.agents.rollback_btn.isEnabled(),
                        timeout=20000)
        import tritonclient.http as th

        def served() -> np.ndarray:
            c = th.InferenceServerClient(f"127.0.0.1:{agent.port}")
            x = np.ones((1, 16), np.float32)
            i = th.InferInput("x", [1, 16], "FP32")
            i.set_data_from_numpy(x)
            return c.infer("tiny-mlp", [i]).as_numpy("out")

        np.testing.assert_allclose(served(), mlp_ref(np.ones((1, 16), np.float32), 3.0), rtol=1e-5)
        page.agents.rollback_btn.click()
        box = pending(page.agents)  # a rollback asks first
        assert box is not None and "back to its previous version" in box.text()
        press(box, "Cancel")
        assert "agents-rollback" not in {h.kind for h in jobs.handles.values()}  # nothing rolled back
        page.agents.rollback_btn.click()
        press(pending(page.agents), "Roll back")
        _wait_job(qtbot, jobs, "agents-rollback")
        qtbot.waitUntil(lambda: AgentClient(agent.url, token.read_text().strip()).status()["models"]["tiny-mlp"]["active"]
                        == "1", timeout=20000)
        np.testing.assert_allclose(served(), mlp_ref(np.ones((1, 16), np.float32), 1.0), rtol=1e-5)
        qtbot.waitUntil(lambda: page.agents.versions.item(1, 2) is not None
                        and page.agents.versions.item(1, 2).text() == "✔ active", timeout=20000)
        page.grab().save(str(artifacts_dir / "packaging_page.png"))

        # a model that fails the board's target: refused in place unless forced
        make_einsum(tmp_path / "ein" / "ein.onnx")
        page.source_edit.setText(str(tmp_path / "ein" / "ein.onnx"))
        page.name_edit.setText("ein")
        page.board_combo.setCurrentIndex(page.board_combo.findData("rk3588"))
        page.build_btn.click()
        _wait_job(qtbot, jobs, "package")
        assert "fails the rk3588 target" in page.error.text() and "Package even if the board check fails" in page.error.text()
        page.grab().save(str(artifacts_dir / "packaging_page_refused.png"))
    finally:
        jobs.shutdown()
        agent.stop()
