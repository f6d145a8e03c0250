"""The export pipeline's stages called one at a time (studio.export.stages), on a tiny CLIP built from its
config by ``studio sample-model`` (no hub downloads) or on plain folders and reports.

tests/export/test_export.py drives the whole pipeline; here each stage's own contract: what it reads, what it
adds to the report, and how it fails (a Diagnosis in the report and StageFailed, nothing outside the temp folder).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from studio.core.errors import InputError  # noqa: E402
from studio.export.api import ExportOptions, ExportReport, write_sample  # noqa: E402
from studio.export.stages.check import check_exported, name_dims_after_parity, run_parity  # noqa: E402
from studio.export.stages.inputs import axis_limits, build_example_inputs  # noqa: E402
from studio.export.stages.load import load_source, probe_processor, probe_tokenizer  # noqa: E402
from studio.export.stages.options import check_options, prepare_run  # noqa: E402
from studio.export.stages.run import ExportRun, StageFailed  # noqa: E402
from studio.export.stages.trace import export_graph, gqa_eager_fallback, note_export  # noqa: E402
from studio.export.stages.write import close_report, copy_companions, write_outputs  # noqa: E402

pytestmark = pytest.mark.export


@pytest.fixture(scope="module")
def clip_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample("tiny-clip", tmp_path_factory.mktemp("stages") / "tiny-clip")


def _run(src: Path, tmp_path: Path, **kw: object) -> ExportRun:
    tmp = tmp_path / "work"
    tmp.mkdir()
    return prepare_run(ExportOptions(model_dir=src, output=tmp_path / "out" / "model.onnx", **kw), tmp)


# ----------------------------------------------------------------------------------------- no torch needed

def test_check_options_names_the_bad_value(clip_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "m.onnx"
    with pytest.raises(InputError, match="out of range") as bad_opset:
        check_options(ExportOptions(model_dir=clip_dir, output=out, opset=3))
    assert bad_opset.value.offending == "3"
    with pytest.raises(InputError, match="unknown exporter"):
        check_options(ExportOptions(model_dir=clip_dir, output=out, exporter="tflite"))
    with pytest.raises(InputError, match="is a folder"):
        check_options(ExportOptions(model_dir=clip_dir, output=tmp_path))
    config, specs = check_options(ExportOptions(model_dir=clip_dir, output=out))
    assert config["model_type"] == "clip"
    assert [s.name for s in specs] == ["input_ids", "attention_mask", "pixel_values"]


def test_prepare_run_heads_the_report(clip_dir: Path, tmp_path: Path) -> None:
    run = _run(clip_dir, tmp_path, opset=18, atol=1e-3)
    r = run.report
    assert r.model_type == "clip" and r.options["opset"] == 18 and r.validation.atol == 1e-3
    assert "inputs" in r.timings and run.model_path == tmp_path / "work" / "model.onnx"


def test_probe_tokenizer_warns_instead_of_failing(tmp_path: Path) -> None:
    empty = ExportReport(model_type="clip")
    probe_tokenizer(tmp_path, {}, empty)
    assert empty.tokenizer_class is None and any("clients must bring their own" in w for w in empty.warnings)
    (tmp_path / "tokenizer_config.json").write_text("{not json", encoding="utf-8")
    broken = ExportReport(model_type="clip")
    probe_tokenizer(tmp_path, {}, broken)
    assert "tokenizer_config.json is not valid JSON" in broken.warnings


def test_probe_tokenizer_and_processor_on_the_sample(clip_dir: Path) -> None:
    r = ExportReport(model_type="clip", expected_tokenizer_class="CLIPTokenizer")
    config = json.loads((clip_dir / "config.json").read_text(encoding="utf-8"))
    probe_tokenizer(clip_dir, config, r)
    probe_processor(clip_dir, r)
    assert r.tokenizer_class and r.processor_class == "CLIPProcessor"
    assert not any(w.startswith("tokenizer_mismatch") for w in r.warnings)
    none = ExportReport()
    probe_processor(clip_dir / "no-such-folder", none)
    assert none.processor_class is None and none.warnings == []


def test_copy_companions_leaves_weights_behind(tmp_path: Path) -> None:
    src, tmp = tmp_path / "src", tmp_path / "tmp"
    src.mkdir()
    tmp.mkdir()
    for name in ("config.json", "model.safetensors", "tokenizer.json", "preprocessor_config.json",
                 "studio_sample.json", "model.safetensors.index.json", "model.onnx"):
        (src / name).write_text("{}", encoding="utf-8")
    kinds = {p.name: kind for p, kind in copy_companions(src, tmp, Path("out/model.onnx"))}
    assert kinds == {"config.json": "config", "tokenizer.json": "tokenizer", "preprocessor_config.json": "processor"}
    assert sorted(p.name for p in (tmp / "companions").iterdir()) == sorted(kinds)


def test_gqa_fallback_only_when_torchscript_and_no_attention_choice(tmp_path: Path) -> None:
    report = ExportReport()
    from studio.core.jobs import JobState

    for opts in (ExportOptions(model_dir=tmp_path, output=tmp_path / "m.onnx", exporter="dynamo"),
                 ExportOptions(model_dir=tmp_path, output=tmp_path / "m.onnx", attn_implementation="sdpa")):
        assert gqa_eager_fallback(RuntimeError("enable_gqa"), object(), opts, None, report, JobState()) is False
    assert report.warnings == [] and report.options == {}


def test_axis_limits_from_the_config() -> None:
    assert axis_limits({"text_config": {"max_position_embeddings": 77}}) == {"sequence": 77}
    assert axis_limits({"max_position_embeddings": 64, "max_target_positions": 32}) == {
        "sequence": 64, "decoder_sequence": 32}


# ----------------------------------------------------------------------------------------- stage by stage

def test_stages_one_by_one(clip_dir: Path, tmp_path: Path) -> None:
    run = _run(clip_dir, tmp_path)
    model = load_source(run)
    assert run.report.model_class == "CLIPModel"
    ex = build_example_inputs(run, model)
    assert ex.input_names == run.input_names and "logits_per_image" in ex.output_names
    assert len(ex.cases) == 3 and ex.limits == {"sequence": run.config["text_config"]["max_position_embeddings"]}
    assert {n: tuple(a.shape) for n, a in ex.feeds0.items()}["pixel_values"][1:] == (3, 32, 32)

    result = export_graph(run, model, ex)
    note_export(run, result)
    assert run.model_path.is_file() and run.report.opset == 17
    checked = check_exported(run, ex.input_names)
    assert run.report.validation.ort_load == "passed" and checked.dropped == []

    fractions: list[float] = []
    runs = run_parity(run, ex, checked, result, progress=fractions.append)
    assert fractions == pytest.approx([i / 6 for i in range(1, 7)])  # PyTorch's three answers, then ORT's three
    assert [c.passed for c in run.report.validation.cases] == [True, True, True]
    assert len(runs.case_feeds) == len(runs.references) == len(runs.ort_outputs) == 3
    name_dims_after_parity(run, runs)

    out_dir = run.options.output.parent
    out_dir.mkdir(parents=True)
    assert list(out_dir.iterdir()) == []  # nothing outside the temp folder before the write stage
    write_outputs(run, [(run.model_path, "model", None)])
    kinds = {Path(o.path).name: o.kind for o in run.report.outputs}
    assert kinds["model.onnx"] == "model" and kinds["tokenizer.json"] == "tokenizer"
    assert run.report.outputs[0].path == str(out_dir / "model.onnx") and not run.model_path.exists()


def test_load_source_diagnoses_a_broken_checkpoint(clip_dir: Path, tmp_path: Path) -> None:
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(clip_dir, broken)
    weights = broken / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    run = _run(broken, tmp_path)
    with pytest.raises(StageFailed):
        load_source(run)
    d = run.report.diagnosis
    assert d.stage == "load" and d.error_class == "load_error" and "save_pretrained" in d.fix
    assert any("load failed [load_error]" in line for line in run.job.log_lines)


def test_check_exported_diagnoses_an_invalid_graph(clip_dir: Path, tmp_path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    run = _run(clip_dir, tmp_path)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    graph = helper.make_graph([helper.make_node("NoSuchOp", ["x"], ["y"])], "g", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), run.model_path)
    with pytest.raises(StageFailed):
        check_exported(run, ["x"])
    assert run.report.diagnosis.stage == "checker" and run.report.validation.checker != "passed"


def test_close_report_drops_outputs_of_a_failed_export(tmp_path: Path) -> None:
    from studio.export.api import OutputFile

    r = ExportReport(status="failed", outputs=[OutputFile("x.onnx", "model")],
                     parts={"text": {"path": "/tmp/x.text.onnx", "modality": "text"}})
    close_report(r, ExportOptions(model_dir=tmp_path, output=tmp_path / "m.onnx", report=tmp_path / "r.json"), 1.5)
    assert r.outputs == [] and r.parts["text"]["path"] is None and r.timings["total"] == 1.5
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["status"] == "failed"


def test_a_cause_loop_is_diagnosed_not_walked_forever() -> None:
    """`raise a from b` after b was raised while handling a closes a loop Python's own context check leaves open
    (the exporter fallback's two failures hung the export in diagnose_exception)."""
    from studio.export.diagnose import diagnose_exception
    from studio.export.locate import locate_exception

    a, b = RuntimeError("first exporter"), ValueError("second exporter")
    a.__cause__, b.__cause__ = b, a
    diag = diagnose_exception("export", a)
    assert "first exporter" in diag.message
    locate_exception(a)
