"""One model from a sample to a board, through the public UI only (real Qt, real tritonserver, a real agent).

sample -> export -> inspect -> Triton build + serve -> test inference -> package -> deploy to a real agent
process -> test inference on the agent -> Dashboards on the agent -> rollback. Every step is clicks on the
window's widgets (and text a user would type: a key name, a passphrase, a prompt, the new agent's URL and
token file); each step asserts that what the studio already knew (paths, URLs, model names) arrived
pre-filled, checks that no control is clipped, and saves a screenshot (artifacts/walkthrough/NN-step.png).

The same walk runs on a real X display (Xvfb 1366x768 + openbox, xcb) in test_walkthrough_on_a_real_screen,
which also checks the window's frame never exceeds the screen.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWidget
from screen_checks import clipped_controls, save_shot

from studio.core.settings import Settings
from studio.core.workspace import Workspace
from studio.gui.main_window import MainWindow
from studio.gui.theme import apply_theme
from studio.gui.widgets.confirm import pending, press
from studio.package.client import AgentClient
from tests.edge.helpers import AgentProcess

pytestmark = [pytest.mark.gui, pytest.mark.slow, pytest.mark.export, pytest.mark.triton,
              pytest.mark.timeout(900)]

REAL = os.environ.get("STUDIO_WALK_REAL_DISPLAY") == "1"  # set by the real-screen twin below
PASS = "walk-through passphrase"


class Walk:
    """Clicks, typing, waiting and one screenshot + clipping check per step."""

    def __init__(self, qtbot, window: MainWindow, shots: Path) -> None:  # type: ignore[no-untyped-def]
        self.qtbot, self.w, self.shots, self.n = qtbot, window, shots, 0
        self.clipped: dict[str, list[str]] = {}

    def click(self, button: QWidget) -> None:
        assert button.isEnabled(), f"{button.text()} is disabled"  # type: ignore[attr-defined]
        self.qtbot.mouseClick(button, Qt.MouseButton.LeftButton)

    def type(self, edit: QWidget, text: str) -> None:
        edit.setFocus()
        edit.clear()  # type: ignore[attr-defined]
        self.qtbot.keyClicks(edit, text)

    def page(self, page_id: str) -> QWidget:
        """Switch pages the way a user does: the sidebar entry."""
        row = self.w.page_index(page_id)
        item = self.w.sidebar.item(row)
        self.qtbot.mouseClick(self.w.sidebar.viewport(), Qt.MouseButton.LeftButton,
                              pos=self.w.sidebar.visualItemRect(item).center())
        assert self.w.current_page() is self.w.page(page_id)
        return self.w.page(page_id)

    def infer(self, devices: QWidget) -> None:
        """Test inference on the Devices page: its outputs, the image embeddings among them, and no error."""
        out = devices.infer_out  # type: ignore[attr-defined]
        self.click(devices.infer_btn)  # type: ignore[attr-defined]
        self.qtbot.waitUntil(lambda: "outputs:" in out.toPlainText() or "error" in out.toPlainText(),
                             timeout=60_000)
        text = out.toPlainText()
        assert "outputs:" in text and "error" not in text and "image_embeds" in text, text

    def jobs_done(self, kind: str, timeout: int = 120_000) -> None:
        def done() -> bool:
            hs = [h for h in self.w.jobs.handles.values() if h.kind == kind or h.kind.startswith(kind + ":")]
            return bool(hs) and all(h.status != "running" for h in hs)

        self.qtbot.waitUntil(done, timeout=timeout)

    def step(self, name: str) -> None:
        self.n += 1
        self.qtbot.wait(150)
        QApplication.processEvents()
        self.clipped[name] = clipped_controls(self.w)
        save_shot(self.w, self.shots / f"{self.n:02d}-{name}.png")
        if REAL:  # the window manager's frame must stay on the screen at every step
            frame, screen = self.w.frameGeometry(), self.w.screen().availableGeometry()
            assert frame.width() <= screen.width() and frame.height() <= screen.height(), (name, frame, screen)


def run_walk(qtbot, tmp_path: Path, artifacts_dir: Path, name: str, story, *args) -> None:  # type: ignore[no-untyped-def]
    """A fresh workspace in the full window (1366x740 offscreen; the screen's size on a real display), then
    ``story(walk, workspace, *args)``; no control may be clipped at any step. Shots: artifacts/NAME[-1366x768]."""
    shots = artifacts_dir / (f"{name}-1366x768" if REAL else name)
    shots.mkdir(exist_ok=True)
    for old in shots.glob("*.png"):
        old.unlink()
    apply_theme(QApplication.instance(), "light")
    ws = Workspace.create(tmp_path / "ws", name=name)
    w = MainWindow(ws, settings=Settings.load(), restore_state=False)
    qtbot.addWidget(w)
    if not REAL:
        w.resize(1366, 740)
    w.show()
    qtbot.waitExposed(w)
    walk = Walk(qtbot, w, shots)
    try:
        story(walk, ws, *args)
    finally:
        w.close()
    clipped = {k: v for k, v in walk.clipped.items() if v}
    assert not clipped, "clipped controls:\n" + "\n".join(f"{k}: {v}" for k, v in clipped.items())


def test_walkthrough_sample_to_board(qtbot, tmp_path: Path, artifacts_dir: Path, board) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("torch")
    run_walk(qtbot, tmp_path, artifacts_dir, "walkthrough", _walk, *board)


def _walk(walk: Walk, ws: Workspace, agent: AgentProcess, token: Path) -> None:  # noqa: PLR0915 (one story)
    w, qtbot = walk.w, walk.qtbot
    export_dir = ws.models_dir / "tiny-clip-onnx"

    # 1. sample -> export: the wizard picks the sample, reads its signature, proposes the output in the workspace
    export = walk.page("export")
    walk.click(export.source.rb_sample)
    export.source.sample_combo.setCurrentIndex(export.source.sample_combo.findText("tiny-clip"))
    walk.step("export-source")
    walk.click(export.next_btn)
    qtbot.waitUntil(lambda: export.current_step() == 1 or export.source.error.isVisible(), timeout=240_000)
    assert not export.source.error.isVisible(), export.source.error.text()
    assert [s.name for s in export.signature.signature()] == ["input_ids", "attention_mask", "pixel_values"]
    walk.click(export.next_btn)
    assert Path(export.options.output.text()) == export_dir / "model.onnx"  # pre-filled, not typed
    walk.step("export-options")
    walk.click(export.next_btn)
    qtbot.waitUntil(lambda: export.report is not None, timeout=600_000)
    assert export.report.status == "succeeded", export.report.diagnosis
    assert w.model_combo.currentData() == "tiny-clip-onnx"  # the toolbar's model is the export
    walk.step("export-result")

    # 2. inspect: "Open in inspector" opens the export, the target is the toolbar's
    walk.click(export.result.btn_inspect)
    inspect = w.page("inspect")
    assert w.current_page() is inspect
    qtbot.waitUntil(lambda: inspect.report is not None and inspect.view.ready, timeout=120_000)
    assert inspect.model_path is not None and inspect.model_path.resolve() == (export_dir / "model.onnx").resolve()
    walk.step("inspect")

    # 3. Triton: model, repository and name pre-filled; build, then serve on the local CPU tritonserver
    triton = walk.page("triton")
    assert Path(triton.source_edit.text()).resolve() in (export_dir.resolve(), (export_dir / "model.onnx").resolve())
    assert Path(triton.repo_edit.text()) == ws.root / "triton-repo"
    assert triton.name_edit.text() == "tiny-clip"
    walk.click(triton.build_btn)
    walk.jobs_done("triton:build")
    assert triton.build_report is not None, triton.error.text()
    walk.step("triton-built")
    walk.click(triton.serve_btn)
    qtbot.waitUntil(lambda: triton.server_state in ("running", "failed"), timeout=180_000)
    assert triton.server_state == "running", triton.log_view.toPlainText()[-2000:]
    walk.step("triton-serving")

    # 4. test inference on Triton: Devices has the local server selected, tokenizer/processor/image pre-filled
    walk.click(triton.devices_btn)
    devices = w.page("devices")
    assert w.current_page() is devices and devices.current_server() == "local-triton"
    qtbot.waitUntil(lambda: devices.infer_model.findText("tiny-clip") >= 0, timeout=60_000)
    devices.infer_model.setCurrentIndex(devices.infer_model.findText("tiny-clip"))
    assert Path(devices.infer_tokenizer.edit.text()).name == "tokenizer.json"
    assert Path(devices.infer_processor.edit.text()).name in ("preprocessor_config.json", "processor_config.json")
    assert devices.infer_image.edit.text() and Path(devices.infer_image.edit.text()).is_file()  # workspace sample
    walk.type(devices.infer_text, "a photo of a cat")
    devices.detail_tabs.setCurrentIndex(devices.detail_tabs.indexOf(devices.infer_out.parentWidget())
                                        if devices.detail_tabs.indexOf(devices.infer_out.parentWidget()) >= 0
                                        else devices.detail_tabs.count() - 1)
    walk.infer(devices)
    walk.step("triton-test-inference")

    # 5. package: the export folder is the source; a new key; the board's agent added (its URL and token file
    #    are the only things the studio could not know); the key pushed to the agent's trust store
    package = walk.page("package")
    assert Path(package.source_edit.text()).resolve() in (export_dir.resolve(), (export_dir / "model.onnx").resolve())
    package.board_combo.setCurrentIndex(package.board_combo.findData("generic-x86_64"))
    walk.type(package.key_name_edit, "release")
    walk.type(package.pass_edit, PASS)
    walk.click(package.new_key_btn)
    assert package.key_combo.currentData() == "release"
    walk.type(package.agents.url_edit, agent.url)
    walk.type(package.agents.token_edit, str(token))
    walk.click(package.agents.add_btn)
    assert package.agent_combo.count() == 1 and package.agent_combo.currentData() == agent.url
    walk.click(package.pub_btn)
    from studio.gui.widgets.bundle_actions import PublicKeyDialog

    dlg = package.findChild(PublicKeyDialog)
    assert dlg is not None and dlg.agent_combo.currentData().url == agent.url  # the agent just added
    walk.click(dlg.push_btn)
    walk.jobs_done("trust")
    assert "now trusts key" in dlg.status.text(), dlg.status.text()
    dlg.close()
    walk.type(package.version_edit, "1")
    walk.click(package.build_btn)
    walk.jobs_done("package", 300_000)
    assert package.bundle_path is not None and package.verify_report.ok, package.error.text()
    assert package.bundle_path.parent == ws.root / "bundles"
    walk.step("package-built")

    # 6. deploy v1 to the real agent, then v2 (so that there is something to roll back)
    walk.click(package.deploy_btn)
    walk.jobs_done("deploy", 300_000)
    assert package.deploy_report is not None and package.deploy_report.version == "1", package.error.text()
    walk.type(package.version_edit, "2")
    walk.click(package.build_btn)
    walk.jobs_done("package", 300_000)
    walk.click(package.deploy_btn)
    walk.jobs_done("deploy", 300_000)
    assert package.deploy_report.version == "2" and package.deploy_report.previous == "1"
    served = package.deploy_report.served_models
    assert served == ["tiny-clip-onnx"]  # named after the export, not its generic model.onnx
    assert w.state.selected_device is not None and w.state.selected_device.url == agent.url  # the next step's
    walk.step("package-deployed")

    # 7. test inference on the agent: Devices shows the agent selected, the same form, nothing re-typed
    devices = walk.page("devices")
    assert devices.current_server() == w.state.selected_device.name
    qtbot.waitUntil(lambda: all(devices.infer_model.findText(m) >= 0 for m in served), timeout=60_000)
    devices.infer_model.setCurrentIndex(devices.infer_model.findText(served[0]))
    assert Path(devices.infer_tokenizer.edit.text()).name == "tokenizer.json"
    assert devices.infer_text.text() == "a photo of a cat"  # what the user typed before stays
    devices.infer_out.clear()
    walk.infer(devices)
    walk.step("agent-test-inference")

    # 8. Dashboards aim at the agent: its URL, served model and /metrics, then a short live load
    dashboards = walk.page("dashboards")
    assert dashboards.url_edit.text() == agent.url
    assert dashboards.metrics_edit.text() == agent.url + "/metrics"
    assert dashboards.model_edit.text() in served
    walk.click(dashboards.add_btn)
    walk.click(dashboards.start_btn)
    qtbot.waitUntil(lambda: sum(n for n in dashboards.plotted_series().values()) > 20, timeout=60_000)
    walk.step("dashboards-agent")
    walk.click(dashboards.stop_btn)
    qtbot.waitUntil(lambda: not dashboards.running(), timeout=30_000)

    # 9. rollback from Devices > Edge agents: asks first, then v1 serves again
    devices = walk.page("devices")
    devices.sections.setCurrentWidget(devices.agents_panel)
    panel = devices.agents_panel
    qtbot.waitUntil(lambda: panel.rollback_btn.isEnabled(), timeout=30_000)
    walk.click(panel.rollback_btn)
    box = pending(panel)
    assert box is not None and "previous version" in box.text()
    walk.step("rollback-confirm")
    press(box, "Roll back")
    walk.jobs_done("agents-rollback", 60_000)
    client = AgentClient(agent.url, token.read_text().strip())
    qtbot.waitUntil(lambda: all(m["active"] == "1" for m in client.status()["models"].values()), timeout=30_000)
    walk.step("rolled-back")
    errors = [p.message for p in w.log_panel.problems if p.severity == "error"]
    assert not errors, errors  # a clean walk reports no error (the export's tracer warnings are honest)


def test_walkthrough_on_a_real_screen(tmp_path: Path, artifacts_dir: Path, desktop) -> None:  # type: ignore[no-untyped-def]
    """The same walk in a real xcb window on a 1366x768 screen with openbox (the frame checked at each step)."""
    if REAL:
        pytest.skip("this is the twin's launcher")
    env = {**desktop, "STUDIO_WALK_REAL_DISPLAY": "1", "QT_QPA_PLATFORM": "xcb"}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                          f"{__file__}::test_walkthrough_sample_to_board", "--basetemp", str(tmp_path / "twin")],
                         env=env, capture_output=True, text=True, timeout=900, cwd=Path(__file__).parents[2])
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-3000:]
    shots = sorted((artifacts_dir / "walkthrough-1366x768").glob("*.png"))
    assert len(shots) >= 10
    from PIL import Image

    assert all(Image.open(s).size == (1366, 768) for s in shots)  # whole-screen grabs
