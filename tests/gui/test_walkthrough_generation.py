"""A generation model from the wizard to a board, through the public UI only (real Qt, a real agent process):

wizard export of a decoder (its KV cache on by default) -> Try it -> one target chosen once on the Inspector and
seen on Compile and Package -> package -> deploy -> Generate (stream) on the agent from the Devices page. Each
step checks for clipped controls and saves a screenshot (artifacts/walkthrough-generation/NN-step.png).

The twin test_generation_walk_on_a_real_screen runs it in a real xcb window on Xvfb 1366x768 with openbox, from a
working folder that holds build/ and verify/ folders (the rknn worker once took the action "build" for a path).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_walkthrough import PASS, REAL, Walk, run_walk

from studio.core.workspace import Workspace
from tests.edge.helpers import AgentProcess

pytestmark = [pytest.mark.gui, pytest.mark.slow, pytest.mark.export, pytest.mark.timeout(900)]


def test_generation_walk(qtbot, tmp_path: Path, artifacts_dir: Path, board) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("torch")
    run_walk(qtbot, tmp_path, artifacts_dir, "walkthrough-generation", _walk, *board)


def _walk(walk: Walk, ws: Workspace, agent: AgentProcess, token: Path) -> None:  # noqa: PLR0915 (one story)
    w, qtbot = walk.w, walk.qtbot
    export_dir = ws.models_dir / "tiny-qwen2-onnx"

    # 1. the wizard: a decoder sample, defaults only; the options say the KV cache is on before the run
    export = walk.page("export")
    walk.click(export.source.rb_sample)
    export.source.sample_combo.setCurrentIndex(export.source.sample_combo.findText("tiny-qwen2"))
    walk.click(export.next_btn)
    qtbot.waitUntil(lambda: export.current_step() == 1 or export.source.error.isVisible(), timeout=240_000)
    assert not export.source.error.isVisible(), export.source.error.text()
    walk.click(export.next_btn)
    gen = export.options.generation
    assert gen.kv_note.text().startswith("on:"), gen.kv_note.text()
    assert "--input-signature" not in export.options.command.text()
    walk.step("export-options")
    walk.click(export.next_btn)
    qtbot.waitUntil(lambda: export.report is not None, timeout=600_000)
    assert export.report.status == "succeeded", export.report.diagnosis
    assert export.report.generation is not None and export.report.generation.status == "passed"
    assert (export_dir / "generation.json").is_file()

    # 2. Try it on the result: the answer streams from the exported graph on this machine
    try_it = export.result.try_it
    assert not try_it.isHidden()
    walk.type(try_it.prompt_edit, "Hello")
    walk.click(try_it.run_btn)
    qtbot.waitUntil(lambda: try_it.result is not None, timeout=120_000)
    assert try_it.answer.toPlainText().strip()
    walk.step("export-try-it")

    # 3. one target, chosen once on the Inspector's chips: the toolbar, Compile and Package follow
    walk.click(export.result.btn_inspect)
    inspect = w.page("inspect")
    qtbot.waitUntil(lambda: inspect.report is not None and inspect.view.ready, timeout=120_000)
    # Verify: the real ONNX Runtime session answers for ort-cpu, and its answer is the chip's (with its source)
    walk.click(inspect.verifier.button)
    qtbot.waitUntil(lambda: inspect.verifier.report is not None and inspect.verifier.button.isEnabled(),
                    timeout=300_000)
    assert inspect.chips["ort-cpu"].text().endswith("✓"), inspect.chips["ort-cpu"].text()
    assert "verified by onnxruntime" in inspect.chips["ort-cpu"].toolTip()
    walk.step("inspect-verified")
    walk.click(inspect.chips["rk3588"])
    assert w.target_combo.currentData() == "rk3588" and inspect.current_target == "rk3588"
    walk.step("inspect-rk3588")
    compile_ = walk.page("compile")
    assert compile_.target_combo.currentData() == "rk3588"
    walk.step("compile-follows-target")
    _rknn_compile(walk, compile_, ws)
    package = walk.page("package")
    assert package.board_combo.currentData() == "rk3588"
    w.select_target("ort-cpu")  # the toolbar: back to the CPU, which the board's agent runs
    assert inspect.current_target == "ort-cpu"

    # 4. package for the agent's board (derived, not picked), push the key, build and deploy
    assert Path(package.source_edit.text()).resolve() in (export_dir.resolve(),
                                                          (export_dir / "model.onnx").resolve())
    walk.type(package.key_name_edit, "release")
    walk.type(package.pass_edit, PASS)
    walk.click(package.new_key_btn)
    walk.type(package.agents.url_edit, agent.url)
    walk.type(package.agents.token_edit, str(token))
    walk.click(package.agents.add_btn)
    qtbot.waitUntil(lambda: package.board_combo.currentData() == "generic-x86_64", timeout=30_000)
    walk.click(package.pub_btn)
    from studio.gui.widgets.bundle_actions import PublicKeyDialog

    dlg = package.findChild(PublicKeyDialog)
    walk.click(dlg.push_btn)
    walk.jobs_done("trust")
    dlg.close()
    walk.type(package.version_edit, "1")
    walk.click(package.build_btn)
    walk.jobs_done("package", 300_000)
    assert package.bundle_path is not None and package.verify_report.ok, package.error.text()
    walk.click(package.deploy_btn)
    walk.jobs_done("deploy", 300_000)
    assert package.deploy_report is not None, package.error.text()
    served = package.deploy_report.served_models
    walk.step("package-deployed")

    # 5. Generate (stream) on the agent from Devices: the agent selected, the model listed and generating
    devices = walk.page("devices")
    assert devices.current_server() == w.state.selected_device.name
    qtbot.waitUntil(lambda: devices.infer_model.findText(served[0]) >= 0, timeout=60_000)
    devices.infer_model.setCurrentIndex(devices.infer_model.findText(served[0]))
    qtbot.waitUntil(lambda: devices.inference.gen_btn.isEnabled(), timeout=30_000)
    devices.detail_tabs.setCurrentWidget(devices.inference)
    walk.type(devices.infer_text, "Hello")
    walk.click(devices.inference.gen_btn)
    qtbot.waitUntil(lambda: "tokens/s" in devices.infer_out.toPlainText()
                    or "error" in devices.infer_out.toPlainText().lower(), timeout=120_000)
    assert "tokens/s" in devices.infer_out.toPlainText(), devices.infer_out.toPlainText()
    walk.step("agent-generate-stream")
    errors = [p.message for p in w.log_panel.problems if p.severity == "error"]
    assert not errors, errors


def _rknn_compile(walk: Walk, compile_, ws: Workspace) -> None:  # type: ignore[no-untyped-def]
    """An NPU build from the Compile page, wherever the studio runs (the twin: a folder holding build/)."""
    from studio_rknn import env

    if not env.check_env().ok:
        return  # the toolkit's environment is made by `make rknn-env`; tests/rknn say why when it is missing
    from tests.edge.helpers import make_mlp

    mlp = make_mlp(ws.root / "models" / "mlp" / "mlp.onnx")
    compile_.open_payload({"model": str(mlp)})
    assert compile_.backend.id == "rknn" and compile_.target_combo.currentData() == "rk3588"  # from the target
    walk.type(compile_.shapes_edit, "x=1,16")
    walk.click(compile_.compile_btn)
    walk.qtbot.waitUntil(lambda: compile_.report is not None or compile_.error_label.isVisible(), timeout=300_000)
    assert compile_.report is not None and compile_.report.ok, compile_.error_label.text()
    walk.step("compile-rknn")


def test_generation_walk_on_a_real_screen(tmp_path: Path, artifacts_dir: Path, desktop) -> None:  # type: ignore[no-untyped-def]
    """The same walk in a real xcb window on 1366x768 with openbox, run from a folder holding build/ and verify/."""
    if REAL:
        pytest.skip("this is the twin's launcher")
    work = tmp_path / "work"
    for name in ("build", "verify"):
        (work / name).mkdir(parents=True)
    root = Path(__file__).parents[2]
    env = {**desktop, "STUDIO_WALK_REAL_DISPLAY": "1", "QT_QPA_PLATFORM": "xcb",
           "PYTHONPATH": os.pathsep.join([str(root), str(root / "tests" / "gui")])}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "--rootdir", str(root),
                          "-c", str(root / "pyproject.toml"), f"{__file__}::test_generation_walk",
                          "--basetemp", str(tmp_path / "twin")],
                         env=env, capture_output=True, text=True, timeout=900, cwd=work)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-3000:]
    shots = sorted((artifacts_dir / "walkthrough-generation-1366x768").glob("*.png"))
    assert len(shots) >= 6
