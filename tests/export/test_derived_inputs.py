"""Example inputs derived from the model's processor, modalities, bad input, and a sample of the coverage table.

Real torch, transformers, exporters and ONNX Runtime on tiny models built from config classes; the coverage sample
runs the same script the full table comes from (bench/coverage.py) on architectures the studio's code never names.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from studio.cli.main import main as studio_main  # noqa: E402
from studio.export.api import ExportOptions, export_model, write_sample  # noqa: E402

pytestmark = pytest.mark.export


@pytest.fixture(scope="module")
def clip_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample("tiny-clip", tmp_path_factory.mktemp("derived") / "tiny-clip")


def _edit(folder: Path, name: str, **changes: object) -> None:
    data = json.loads((folder / name).read_text())
    data.update(changes)
    (folder / name).write_text(json.dumps(data))


@pytest.mark.parametrize("case", ["unknown_type", "processor_contradicts", "unknown_input"])
def test_bad_input_exits_2_naming_the_thing_and_writes_nothing(case: str, clip_dir: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "model"
    shutil.copytree(clip_dir, src)
    args = []
    if case == "unknown_type":
        _edit(src, "config.json", model_type="clip_vision_nonexistent")
        words = ["clip_vision_nonexistent", "model_type"]
    elif case == "processor_contradicts":
        proc = next(p for p in ("preprocessor_config.json", "processor_config.json") if (src / p).is_file())
        data = json.loads((src / proc).read_text())
        target = data.get("image_processor", data)
        target["crop_size"] = {"height": 64, "width": 64}
        (src / proc).write_text(json.dumps(data))
        words = ["64x64", "image_size is 32"]
    else:
        args = ["--input-signature", "text:input_ids,vision:pixel_valuez"]
        words = ["pixel_valuez"]
    out = tmp_path / "out" / "model.onnx"
    rc = studio_main(["export", str(src), "-o", str(out), *args])
    text = capsys.readouterr()
    assert rc == 2, text.out + text.err
    for w in words:
        assert w in text.err + text.out
    assert "Traceback" not in text.err + text.out
    assert not out.exists() and (not out.parent.exists() or not any(out.parent.iterdir()))


def test_clip_without_processor_files_derives_them(clip_dir: Path, tmp_path: Path) -> None:
    """Config + weights + tokenizer only: CLIP's image processor comes from transformers' mapping, sized from
    vision_config.image_size, and its settings are written beside the export and listed in the report."""
    src = tmp_path / "model"
    shutil.copytree(clip_dir, src)
    for name in ("preprocessor_config.json", "processor_config.json"):
        (src / name).unlink(missing_ok=True)
    out = tmp_path / "out" / "model.onnx"
    report = export_model(ExportOptions(model_dir=src, output=out))
    assert report.status == "succeeded", report.diagnosis
    assert report.example_inputs["origin"] in ("derived", "folder+derived")
    assert any("size 32x32 from the config's image_size" in d for d in report.example_inputs["derived"])
    written = json.loads((out.parent / "preprocessor_config.json").read_text())
    assert written["crop_size"] == {"height": 32, "width": 32}
    assert report.modalities["exported"] == ["text", "vision"]


def test_text_only_on_request_is_reported(clip_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "model.onnx"
    report = export_model(ExportOptions(model_dir=clip_dir, output=out,
                                        input_signature="text:input_ids,text:attention_mask"))
    if report.status == "succeeded":  # CLIPModel needs pixel_values: either a text-only graph, reported as such...
        assert report.modalities["text_only"] is True
        assert any(w.startswith("text only:") and "vision" in w for w in report.warnings)
    else:  # ...or a diagnosis, never a quiet success
        assert report.diagnosis is not None and report.outputs == []


def test_json_stdout_is_the_report_alone(clip_dir: Path, tmp_path: Path) -> None:
    """Exporter chatter (the TorchScript C++ log included) goes to stderr: stdout parses as one JSON document."""
    import subprocess
    import sys

    src = tmp_path / "model"
    shutil.copytree(clip_dir, src)
    _edit(src, "config.json", vision_config={**json.loads((clip_dir / "config.json").read_text())["vision_config"],
                                             "num_attention_heads": 3})  # a model that cannot run
    proc = subprocess.run([sys.executable, "-m", "studio.cli.main", "export", str(src), "-o",
                           str(tmp_path / "o" / "m.onnx"), "--json", "--quiet"], capture_output=True, text=True,
                          timeout=600)
    report = json.loads(proc.stdout)
    assert proc.returncode == 1 and report["status"] == "failed"
    d = report["diagnosis"]
    assert d["stage"] and d["error_class"] and d["fix"]


def test_coverage_sample(tmp_path: Path) -> None:
    """A sample of the coverage table (bench/coverage.py, the full table's own script) on architectures the
    studio's code never names: each exports with all its modalities and parity, no traceback, no modality lost."""
    from bench.coverage import main as coverage

    rows_file = tmp_path / "rows.json"
    assert coverage(["--types", "siglip2,moonshine", "--timeout", "900", "--json", str(rows_file), "--out",
                     str(tmp_path / "coverage.md")]) == 0
    rows = {r["model_type"]: r for r in json.loads(rows_file.read_text())}
    assert set(rows) == {"siglip2", "moonshine"}
    for r in rows.values():
        assert r["status"] == "succeeded", r.get("diagnosis")
        assert r["parity"] and not r.get("silently_lost")
        assert r["origin"] == "derived"  # the folder had no processor files: all from the mappings
    assert rows["moonshine"]["modalities"]["exported"] == ["audio", "text"]
    assert rows["siglip2"]["modalities"]["exported"] == ["text", "vision"]
    assert "| siglip2 |" in (tmp_path / "coverage.md").read_text()
