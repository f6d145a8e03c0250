"""The export wizard under real Qt: in-place input errors, the diagnosis page, and real exports end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from studio.core.parity import OutputParity as OutputCheck  # noqa: E402
from studio.core.workspace import Workspace  # noqa: E402
from studio.export.api import (  # noqa: E402
    Diagnosis,
    ExportReport,
    InputSpec,
    OutputFile,
    Validation,
    ValidationCase,
)
from studio.gui.main_window import MainWindow  # noqa: E402
from studio.gui.pages.export_page import OPTIONS, RESULT, RUN, SIGNATURE, SOURCE, ExportPage  # noqa: E402
from tests.gui.gui_helpers import main_window  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_level_fail("WARNING"),
              pytest.mark.qt_log_ignore("propagateSizeHints")]

EXPORT_ONLY = [("studio.gui.pages.export_page", "ExportPage")]
CLIP_SIGNATURE = [InputSpec("text", "input_ids", {0: "batch", 1: "sequence"}, "int64", [2, 8]),
                  InputSpec("text", "attention_mask", {0: "batch", 1: "sequence"}, "int64", [2, 8]),
                  InputSpec("vision", "pixel_values", {0: "batch"}, "float32", [2, 3, 32, 32])]


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace.create(tmp_path / "ws", name="export-ws")


@pytest.fixture
def window(qtbot, workspace: Workspace):  # noqa: ANN001, ANN201
    w = main_window(qtbot, workspace, EXPORT_ONLY, 1440, 900)
    yield w
    w.jobs.shutdown()


def _page(w: MainWindow) -> ExportPage:
    page = w.page("export")
    assert isinstance(page, ExportPage)
    return page


def _shot(w: MainWindow, artifacts: Path, name: str) -> None:
    QApplication.processEvents()
    w.grab().save(str(artifacts / f"{name}.png"))


def _why(page: ExportPage) -> str:
    """The source step's error plus the prepare job's traceback, for a readable assertion message."""
    h = page.prepare_handle
    tb = h.error.details.get("traceback", "") if h is not None and h.error is not None else ""
    return f"{page.source.error.text()}\n{tb}"


def test_a_short_step_does_not_scroll_into_blank_space(window: MainWindow, qtbot) -> None:  # noqa: ANN001
    """The wizard's scroll area is as tall as the step shown: the Source step at 1440x900 has nothing to scroll,
    while the taller Options step still scrolls at 1366x768 (the plain stack asked for the tallest step, so Source
    showed a scroll bar into blank space on a real 1920x1080 display)."""
    page = _page(window)
    page.set_step(SOURCE)
    qtbot.wait(50)
    assert page.scroller.verticalScrollBar().maximum() == 0, page.stack.sizeHint()
    window.resize(1366, 740)
    page.set_step(OPTIONS)
    qtbot.wait(50)
    assert page.scroller.verticalScrollBar().maximum() > 0
    page.set_step(SOURCE)
    qtbot.wait(50)
    assert page.scroller.verticalScrollBar().maximum() == 0


# -- in-place input errors (no torch needed) --------------------------------------------------------------
def test_source_errors_shown_in_place(window: MainWindow, tmp_path: Path, artifacts_dir: Path) -> None:
    page = _page(window)
    page.source.set_folder(tmp_path / "missing-model")
    page.next_btn.click()
    assert page.current_step() == SOURCE
    assert page.source.error.isVisible() and "does not exist" in page.source.error.text()
    assert page.source.folder.property("invalid") is True
    not_hf = tmp_path / "not-hf"
    not_hf.mkdir()
    page.source.set_folder(not_hf)
    page.next_btn.click()
    assert "no config.json" in page.source.error.text() and page.current_step() == SOURCE
    assert not page.jobs.running()  # nothing was started for bad input
    _shot(window, artifacts_dir, "export_wizard_source_error")


def test_signature_and_options_validation(window: MainWindow, tmp_path: Path) -> None:
    page = _page(window)
    sig = page.signature
    sig.set_signature(CLIP_SIGNATURE, inferred=True)
    assert sig.validate()
    assert sig.cli.text() == "--input-signature text:input_ids,text:attention_mask,vision:pixel_values"
    sig.table.item(2, 5).setText("0:batch, height")
    assert not sig.validate()
    assert "row 3 (pixel_values)" in sig.error.text() and "axis:name" in sig.error.text()
    sig.table.item(2, 5).setText("0:batch")
    sig.table.item(1, 2).setText("input_ids")
    assert not sig.validate() and "appears twice" in sig.error.text()
    sig.set_signature(sig.inferred)
    sig.table.cellWidget(2, 1).setCurrentText("audio")
    assert [s.modality for s in sig.signature()] == ["text", "text", "audio"]
    assert sig.validate()

    opts = page.options
    model_dir = tmp_path / "m"
    model_dir.mkdir()
    opts.set_source(model_dir, "m", sig.signature(), tmp_path / "out" / "model.onnx")
    assert sorted(opts.dynamic_checks) == ["batch", "sequence"]
    opts.output.setText(str(tmp_path / "out" / "model.txt"))
    assert opts.options() is None and "must end in .onnx" in opts.output_error.text()
    opts.output.setText(str(tmp_path / "out" / "model.onnx"))
    opts.atol.setText("abc")
    assert opts.options() is None and "must be a number" in opts.atol_error.text()
    opts.atol.setText("1e-5")
    opts.dynamic_checks["sequence"].setChecked(False)
    opts.split.setChecked(True)
    o = opts.options()
    assert o is not None and o.atol == 1e-5 and o.dynamic == ["batch"] and o.split_modalities
    assert "--dynamic batch" in opts.command.text() and "--split-modalities" in opts.command.text()


def _failed_report(tmp_path: Path) -> ExportReport:
    snippet = {"nodes": [{"id": "input:pixel_values", "op_type": "Input", "label": "pixel_values"},
                         {"id": "/vision_model/embeddings/patch_embedding/Conv", "op_type": "Conv"},
                         {"id": "/vision_model/embeddings/Reshape", "op_type": "Reshape"},
                         {"id": "/vision_model/embeddings/Add", "op_type": "Add"},
                         {"id": "/text_model/embeddings/Gather", "op_type": "Gather"},
                         {"id": "/vision_model/pre_layrnorm/LayerNormalization", "op_type": "LayerNormalization"}],
               "edges": [{"from": "input:pixel_values", "to": "/vision_model/embeddings/patch_embedding/Conv",
                          "tensor": "pixel_values"},
                         {"from": "/vision_model/embeddings/patch_embedding/Conv",
                          "to": "/vision_model/embeddings/Reshape", "tensor": "t1"},
                         {"from": "/vision_model/embeddings/Reshape", "to": "/vision_model/embeddings/Add",
                          "tensor": "t2"},
                         {"from": "/text_model/embeddings/Gather", "to": "/vision_model/embeddings/Add",
                          "tensor": "pos"},
                         {"from": "/vision_model/embeddings/Add",
                          "to": "/vision_model/pre_layrnorm/LayerNormalization", "tensor": "t3"}],
               "focus": "/vision_model/pre_layrnorm/LayerNormalization", "kind": "onnx"}
    return ExportReport(
        status="failed", model_dir=str(tmp_path / "tiny-clip"), model_type="clip", model_class="CLIPModel",
        options={"output": str(tmp_path / "out" / "model.onnx"), "opset": 16, "exporter": "torchscript"},
        diagnosis=Diagnosis(stage="ort_load", error_class="unsupported_op_at_opset",
                            message="LayerNormalization is not a registered operator for opset 16 in domain ai.onnx",
                            fix="re-export with --opset 17 (LayerNormalization was added in opset 17)",
                            node="/vision_model/pre_layrnorm/LayerNormalization", op_type="LayerNormalization",
                            module="vision_model.pre_layrnorm",
                            raw_log="Traceback (most recent call last):\n  ...\nonnxruntime...Fail: "
                                    "LayerNormalization(17) is not a registered function/op", snippet=snippet))


def test_diagnosis_page_renders_snippet_and_raw_log(window: MainWindow, tmp_path: Path,
                                                    artifacts_dir: Path) -> None:
    page = _page(window)
    page.show_report(_failed_report(tmp_path))
    res = page.result
    assert page.current_step() == RESULT
    assert res.diag_box.isVisible() and "Export failed at ONNX Runtime load" in res.banner_title.text()
    assert "operator not supported at this opset" in res.banner_title.text()
    assert "vision_model.pre_layrnorm" in res.diag_fields["module"].text()
    assert "--opset 17" in res.diag_fix.text()
    assert res.snippet.isVisible() and res.snippet.focus_name == "/vision_model/pre_layrnorm/LayerNormalization"
    assert len(res.snippet.node_names) == 6
    assert not res.btn_inspect.isEnabled()
    assert not res.raw_log.isVisible()
    _shot(window, artifacts_dir, "export_wizard_diagnosis_light")
    res.btn_raw.click()  # the raw log is one click away
    assert res.raw_log.isVisible() and "not a registered function/op" in res.raw_log.toPlainText()
    res.btn_raw.click()
    window.set_theme("dark")
    _shot(window, artifacts_dir, "export_wizard_diagnosis_dark")


def test_succeeded_report_table(window: MainWindow, tmp_path: Path, artifacts_dir: Path) -> None:
    """A succeeded report as the core writes it: validation rows per case and output, and the files."""
    out = tmp_path / "out" / "model.onnx"
    out.parent.mkdir()
    out.write_bytes(b"x" * 2048)
    cases = [ValidationCase("traced shapes", "model", {"input_ids": [2, 8], "pixel_values": [2, 3, 32, 32]},
                            [OutputCheck("logits_per_image", 2.1e-6, 3.0e-6, True),
                             OutputCheck("text_embeds", 1.0e-6, 2.0e-6, True)], passed=True),
             ValidationCase("batch=3 sequence=11", "model", {"input_ids": [3, 11], "pixel_values": [3, 3, 32, 32]},
                            [OutputCheck("logits_per_image", 0.2, 0.5, False)], passed=False)]
    report = ExportReport(status="failed", model_dir="m", options={"output": str(out), "opset": 17},
                          outputs=[OutputFile(str(out), "model", None, 2048)],
                          validation=Validation("passed", "passed", "passed", cases, 1e-4, 1e-3),
                          diagnosis=Diagnosis("parity", "shape_not_dynamic", "logits_per_image diverges at "
                                              "batch=3 sequence=11", "declare sequence as dynamic"))
    page = _page(window)
    page.show_report(report)
    t = page.result.val_table
    assert t.rowCount() == 3
    assert [t.item(r, 6).text() for r in range(3)] == ["pass", "pass", "FAIL"]
    assert t.item(2, 4).text() == "2.00e-01"
    assert page.result.out_table.item(0, 3).text() == "2.0 KiB"


# -- real exports ----------------------------------------------------------------------------------------
@pytest.mark.export
def test_wizard_exports_tiny_clip_end_to_end(window: MainWindow, workspace: Workspace, qtbot,  # noqa: ANN001
                                             artifacts_dir: Path) -> None:
    pytest.importorskip("torch")
    page = _page(window)
    page.source.rb_sample.setChecked(True)
    page.source.sample_combo.setCurrentText("tiny-clip")
    assert "tiny-clip" in [page.source.sample_combo.itemText(i) for i in range(page.source.sample_combo.count())]
    _shot(window, artifacts_dir, "export_wizard_1_source")

    qtbot.mouseClick(page.next_btn, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.current_step() == SIGNATURE or page.source.error.isVisible(), timeout=240_000)
    assert page.current_step() == SIGNATURE, _why(page)
    names = [s.name for s in page.signature.signature()]
    assert names == ["input_ids", "attention_mask", "pixel_values"]
    assert [s.modality for s in page.signature.signature()] == ["text", "text", "vision"]
    assert workspace.model("tiny-clip") is not None and workspace.model("tiny-clip").kind == "hf"
    _shot(window, artifacts_dir, "export_wizard_2_signature")

    qtbot.mouseClick(page.next_btn, Qt.MouseButton.LeftButton)
    assert page.current_step() == OPTIONS
    expected_out = workspace.models_dir / "tiny-clip-onnx" / "model.onnx"
    assert Path(page.options.output.text()) == expected_out
    # the inferred signature is the export's own default: not passed (it would turn a decoder's KV cache off)
    assert "--input-signature" not in page.options.command.text()
    assert page.options.generation.with_past() is None and "vision" in page.options.generation.precisions
    _shot(window, artifacts_dir, "export_wizard_3_options")

    qtbot.mouseClick(page.next_btn, Qt.MouseButton.LeftButton)
    assert page.current_step() == RUN and page.handle is not None
    qtbot.waitUntil(lambda: page.run.log.blockCount() > 1 or page.current_step() == RESULT, timeout=120_000)
    _shot(window, artifacts_dir, "export_wizard_4_run")
    qtbot.waitUntil(lambda: page.current_step() == RESULT, timeout=600_000)

    report = page.report
    assert report is not None and report.status == "succeeded", report.diagnosis
    assert page.run.bar.value() == 100
    assert expected_out.is_file()
    assert page.result.val_table.rowCount() >= 3
    assert all(page.result.val_table.item(r, 6).text() == "pass" for r in range(page.result.val_table.rowCount()))
    assert not page.result.diag_box.isVisible()
    entry = workspace.model("tiny-clip-onnx")
    assert entry is not None and entry.kind == "onnx" and workspace.current_model == "tiny-clip-onnx"
    assert window.model_combo.currentData() == "tiny-clip-onnx"  # the window picked up the new model
    # what the export wrote is the workspace's, and the next steps start from it (shared state)
    arts = window.state.artifacts("tiny-clip-onnx")
    assert Path(arts["onnx"]) == expected_out
    assert (Path(arts["tokenizer"]) / "tokenizer.json").is_file() or Path(arts["tokenizer"]).is_dir()
    assert entry.report and Path(entry.report).is_file()
    row = window.jobs_panel.rows[page.handle.id]
    assert row.report == Path(entry.report)  # "Open report" in the Jobs panel
    assert page.result.btn_report.isEnabled()
    _shot(window, artifacts_dir, "export_wizard_5_result")
    with qtbot.waitSignal(page.sig_open_page) as blocker:
        page.result.btn_inspect.click()
    assert blocker.args == ["inspect", str(expected_out)]
    window.set_theme("dark")
    _shot(window, artifacts_dir, "export_wizard_5_result_dark")


@pytest.mark.export
def test_wizard_failing_export_shows_diagnosis(window: MainWindow, workspace: Workspace, qtbot,  # noqa: ANN001
                                               artifacts_dir: Path) -> None:
    pytest.importorskip("torch")
    from studio.export.api import write_sample

    model_dir = write_sample("tiny-clip", workspace.models_dir / "tiny-clip")
    workspace.add_model(model_dir, name="tiny-clip", kind="hf", source="sample:tiny-clip")
    window.set_workspace(workspace)
    page = _page(window)
    assert page.source.rb_workspace.isChecked() and page.source.ws_combo.currentData() == "tiny-clip"
    page.next_btn.click()
    qtbot.waitUntil(lambda: page.current_step() == SIGNATURE or page.source.error.isVisible(), timeout=240_000)
    assert page.current_step() == SIGNATURE, _why(page)
    page.next_btn.click()
    page.options.opset.setValue(9)  # scaled_dot_product_attention needs opset 14
    page.next_btn.click()
    qtbot.waitUntil(lambda: page.current_step() == RESULT, timeout=600_000)
    report = page.report
    assert report.status == "failed" and report.diagnosis is not None
    res = page.result
    assert res.diag_box.isVisible() and res.banner_title.text().startswith("Export failed at")
    assert res.diag_fields["stage"].text() and res.diag_fix.text()
    assert "opset" in res.diag_fix.text()
    assert not (workspace.models_dir / "tiny-clip-onnx" / "model.onnx").exists()  # nothing half-written
    assert workspace.model("tiny-clip-onnx") is None
    problems = window.log_panel.problems
    assert problems and problems[-1].page == "export" and "failed" in problems[-1].message
    res.btn_raw.click()
    assert res.raw_log.toPlainText().strip()
    res.btn_raw.click()
    _shot(window, artifacts_dir, "export_wizard_failed_diagnosis")
    # the Problems entry leads back to this diagnosis
    page.set_step(SOURCE)
    window.open_problem(problems[-1])
    assert page.current_step() == RESULT


def test_wizard_makes_a_generation_export_and_tries_it(window: MainWindow, workspace: Workspace, qtbot,  # noqa: ANN001
                                                       artifacts_dir: Path) -> None:
    """A decoder from the wizard: the KV cache is on by default (the core says so before the run), the export
    writes generation.json, and Try it streams an answer from it; an edited signature turns the cache off."""
    pytest.importorskip("torch")
    page = _page(window)
    page.source.rb_sample.setChecked(True)
    page.source.sample_combo.setCurrentText("tiny-qwen2")
    qtbot.mouseClick(page.next_btn, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.current_step() == SIGNATURE or page.source.error.isVisible(), timeout=240_000)
    assert page.current_step() == SIGNATURE, _why(page)
    qtbot.mouseClick(page.next_btn, Qt.MouseButton.LeftButton)
    assert page.current_step() == OPTIONS
    gen = page.options.generation
    assert gen.kv_note.text().startswith("on:"), gen.kv_note.text()
    assert gen.kv_dtype.isEnabled()
    gen.kv_dtype.setCurrentIndex(gen.kv_dtype.findData("float16"))
    assert "--kv-cache-dtype float16" in page.options.command.text()
    gen.kv_dtype.setCurrentIndex(gen.kv_dtype.findData("float32"))
    # "off" is said before the run, and "on" with an edited signature is refused in place
    gen.kv.setCurrentIndex(gen.kv.findData("off"))
    assert "--no-with-past" in page.options.command.text() and not gen.kv_dtype.isEnabled()
    page.go_back()
    page.signature.table.item(1, 0).setCheckState(Qt.CheckState.Unchecked)  # drop one input: an edited signature
    qtbot.mouseClick(page.next_btn, Qt.MouseButton.LeftButton)
    gen.kv.setCurrentIndex(gen.kv.findData("on"))
    assert page.options.options() is None and "--input-signature" in gen.kv_note.text()
    _shot(window, artifacts_dir, "export_wizard_generation_refused")
    page.go_back()
    page.signature.table.item(1, 0).setCheckState(Qt.CheckState.Checked)
    qtbot.mouseClick(page.next_btn, Qt.MouseButton.LeftButton)
    gen.kv.setCurrentIndex(gen.kv.findData("auto"))
    _shot(window, artifacts_dir, "export_wizard_generation_options")

    qtbot.mouseClick(page.next_btn, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.current_step() == RESULT, timeout=600_000)
    report = page.report
    assert report is not None and report.status == "succeeded", report.diagnosis
    assert report.generation is not None
    assert "greedy generation token-exact with HF generate()" in page.result.banner_detail.text()
    out = Path(page.options_used.output)
    assert (out.parent / "generation.json").is_file()
    try_it = page.result.try_it
    assert not try_it.isHidden()
    try_it.run_btn.click()
    qtbot.waitUntil(lambda: try_it.result is not None, timeout=120_000)
    assert try_it.answer.toPlainText().strip(), "Try it streamed nothing"
    _shot(window, artifacts_dir, "export_wizard_generation_try_it")
