"""Export core + CLI with real torch, real exporters and real ONNX Runtime on the tiny sample models.

Exports are shared through session fixtures: each sample is written once and exported once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from studio.cli.main import main as studio_main  # noqa: E402
from studio.core.errors import InputError, JobCancelled  # noqa: E402
from studio.core.jobs import JobState  # noqa: E402
from studio.export.api import (  # noqa: E402
    ExportOptions,
    ExportReport,
    export_model,
    infer_signature,
    list_samples,
    write_sample,
)

pytestmark = pytest.mark.export

SAMPLE_NAMES = ["tiny-clip", "tiny-vilt", "tiny-siglip", "tiny-whisper", "tiny-qwen2-vl"]


@pytest.fixture(scope="session")
def samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("samples")
    for name in [*SAMPLE_NAMES, "tiny-branchy"]:
        write_sample(name, root / name)
    return root


@pytest.fixture(scope="session")
def exported(samples: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, ExportReport]:
    out = tmp_path_factory.mktemp("exported")
    reports = {}
    for name in SAMPLE_NAMES:
        reports[name] = export_model(ExportOptions(model_dir=samples / name, output=out / name / "model.onnx",
                                                   report=out / name / "report.json"))
    return reports


@pytest.fixture(scope="session")
def clip_split(samples: Path, tmp_path_factory: pytest.TempPathFactory) -> ExportReport:
    out = tmp_path_factory.mktemp("split")
    return export_model(ExportOptions(model_dir=samples / "tiny-clip", output=out / "clip.onnx",
                                      split_modalities=True))


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


# ----------------------------------------------------------------------------------------- samples

def test_samples_listed_and_loadable_offline(samples: Path) -> None:
    from transformers import AutoConfig, AutoTokenizer

    assert set(SAMPLE_NAMES) <= set(list_samples())
    for name in SAMPLE_NAMES:
        cfg = AutoConfig.from_pretrained(samples / name)
        tok = AutoTokenizer.from_pretrained(samples / name)
        ids = tok("a photo of a cat")["input_ids"]
        vocab = getattr(cfg, "text_config", cfg).vocab_size
        assert ids and max(ids) < vocab, name


def test_processors_load_offline(samples: Path) -> None:
    from PIL import Image
    from transformers import AutoImageProcessor, AutoProcessor

    img = Image.fromarray((np.random.default_rng(0).random((40, 48, 3)) * 255).astype("uint8"))
    clip = AutoProcessor.from_pretrained(samples / "tiny-clip")(text=["a cat"], images=img, return_tensors="np")
    assert clip["pixel_values"].shape == (1, 3, 32, 32)
    vilt = AutoProcessor.from_pretrained(samples / "tiny-vilt")(text=["what color"], images=img, return_tensors="np")
    assert vilt["pixel_mask"].shape == (1, 32, 32)
    whisper = AutoProcessor.from_pretrained(samples / "tiny-whisper")(
        audio=np.zeros(16000, dtype=np.float32), sampling_rate=16000, return_tensors="np")
    assert whisper["input_features"].shape == (1, 16, 100)
    qwen = AutoImageProcessor.from_pretrained(samples / "tiny-qwen2-vl")(images=img, return_tensors="np")
    assert qwen["pixel_values"].ndim == 2


def test_write_sample_is_deterministic(tmp_path: Path) -> None:
    a = write_sample("tiny-clip", tmp_path / "a")
    b = write_sample("tiny-clip", tmp_path / "b")
    assert (a / "model.safetensors").read_bytes() == (b / "model.safetensors").read_bytes()
    with pytest.raises(InputError, match="unknown sample"):
        write_sample("tiny-nothing", tmp_path / "c")
    assert not (tmp_path / "c").exists()


def test_demo_workspace_uses_samples(tmp_path: Path) -> None:
    from studio.core.demo import DEMO_SAMPLES, create_demo_workspace

    ws = create_demo_workspace(tmp_path / "ws")
    for name in DEMO_SAMPLES:
        assert (ws.models_dir / name / "config.json").is_file()
        assert ws.model(name) is not None


# ----------------------------------------------------------------------------------------- exports

@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_sample_exports_with_dynamic_axes_and_parity(name: str, exported: dict[str, ExportReport]) -> None:
    r = exported[name]
    assert r.status == "succeeded", r.diagnosis
    v = r.validation
    assert (v.checker, v.shape_inference, v.ort_load) == ("passed", "passed", "passed")
    assert len(v.cases) >= 3 and all(c.passed for c in v.cases)
    traced, moved = v.cases[0], v.cases[1]
    assert traced.input_shapes != moved.input_shapes
    # a case with both batch and (when the model has one) sequence length different from the trace
    first = r.signature[0].name
    assert moved.input_shapes[first][0] != traced.input_shapes[first][0]
    seq_inputs = [s.name for s in r.signature if 1 in s.dynamic_axes]
    for n in seq_inputs:
        assert moved.input_shapes[n][1] != traced.input_shapes[n][1]
    for c in v.cases:
        for o in c.outputs:
            assert o.max_abs <= r.options["atol"] + r.options["rtol"] * 1e3
    model = Path(r.outputs[0].path)
    assert r.outputs[0].kind == "model" and model.is_file()
    assert (model.parent / "config.json").is_file()
    assert any(o.kind == "tokenizer" for o in r.outputs)
    assert r.tokenizer_class and r.tokenizer_class.removesuffix("Fast") == r.expected_tokenizer_class
    assert not any("tokenizer_mismatch" in w for w in r.warnings)
    assert set(r.timings) >= {"load", "export", "check", "parity", "total"}
    saved = json.loads((model.parent / "report.json").read_text())
    assert saved["status"] == "succeeded" and saved["schema_version"] == 1
    assert not [p for p in model.parent.iterdir() if p.name.startswith(".")]


def test_dynamic_axes_are_symbolic_in_graph(exported: dict[str, ExportReport]) -> None:
    import onnx

    m = onnx.load(exported["tiny-clip"].outputs[0].path)
    dims = {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in m.graph.input}
    assert dims["input_ids"] == ["batch", "sequence"]
    assert dims["pixel_values"] == ["batch", 3, 32, 32]


def test_clip_split_parts_load_and_chain_matches_monolithic(clip_split: ExportReport) -> None:
    import onnxruntime as ort

    r = clip_split
    assert r.status == "succeeded", r.diagnosis
    assert set(r.parts) == {"vision", "text", "fusion"}
    for name, info in r.parts.items():
        assert info["checker"] == "passed" and info["ort_load"] == "passed", name
        assert info["boundary"] == "matched"
        ort.InferenceSession(info["path"], providers=["CPUExecutionProvider"])
    assert r.parts["vision"]["outputs"]["image_embeds"] == r.parts["fusion"]["inputs"]["image_embeds"]
    assert r.parts["text"]["outputs"]["text_embeds"] == r.parts["fusion"]["inputs"]["text_embeds"]
    chained = [c for c in r.validation.cases if c.graph == "chained parts"]
    assert len(chained) >= 3 and all(c.passed for c in chained)
    assert any(o.output.endswith("vs clip.onnx") for o in chained[0].outputs)

    # independently: run the parts by hand with different image and text batch sizes and compare
    def sess(p: str) -> ort.InferenceSession:
        return ort.InferenceSession(p, providers=["CPUExecutionProvider"])

    rng = np.random.default_rng(5)
    pixels = rng.standard_normal((2, 3, 32, 32)).astype(np.float32)
    ids = rng.integers(0, 200, (4, 9)).astype(np.int64)
    mask = np.ones_like(ids)
    img = sess(r.parts["vision"]["path"]).run(None, {"pixel_values": pixels})[0]
    txt = sess(r.parts["text"]["path"]).run(None, {"input_ids": ids, "attention_mask": mask})[0]
    per_image, per_text = sess(r.parts["fusion"]["path"]).run(None, {"image_embeds": img, "text_embeds": txt})
    assert per_image.shape == (2, 4) and per_text.shape == (4, 2)
    mono = sess(r.outputs[0].path)
    for i in range(2):  # monolithic takes one batch for both modalities: compare pairwise
        out = dict(zip([o.name for o in mono.get_outputs()],
                       mono.run(None, {"input_ids": ids, "attention_mask": mask,
                                       "pixel_values": np.repeat(pixels[i:i + 1], 4, axis=0)}), strict=True))
        np.testing.assert_allclose(out["logits_per_image"][0], per_image[i], atol=1e-4)


def test_dynamo_exporter_clip(samples: Path, tmp_path: Path) -> None:
    r = export_model(ExportOptions(model_dir=samples / "tiny-clip", output=tmp_path / "m.onnx", exporter="dynamo",
                                   opset=18))
    assert r.status == "succeeded", r.diagnosis
    assert all(c.passed for c in r.validation.cases)


# ----------------------------------------------------------------------------------------- failures

def test_too_low_opset_is_diagnosed_and_leaves_nothing(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = export_model(ExportOptions(model_dir=samples / "tiny-clip", output=out / "model.onnx", opset=13,
                                   report=tmp_path / "report.json"))
    assert r.status == "failed"
    d = r.diagnosis
    assert d.stage == "export" and d.error_class == "unsupported_op_at_opset"
    assert d.op_type == "aten::scaled_dot_product_attention"
    assert d.module and d.module.endswith("self_attn")
    assert "--opset 14" in d.fix
    assert d.snippet and d.snippet["focus"] in {n["id"] for n in d.snippet["nodes"]}
    assert "UnsupportedOperatorError" in d.raw_log
    assert _leftovers(out) == []
    assert r.outputs == []
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["diagnosis"]["error_class"] == "unsupported_op_at_opset"


def test_data_dependent_branch_torchscript_fails_parity(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = export_model(ExportOptions(model_dir=samples / "tiny-branchy", output=out / "model.onnx"))
    assert r.status == "failed"
    d = r.diagnosis
    assert d.stage == "parity" and d.error_class == "data_dependent_control_flow"
    assert d.module == "pooler"
    assert d.node and d.snippet and d.snippet["focus"] == d.node
    assert "torch.where" in d.fix
    assert any(c.passed for c in r.validation.cases) and not all(c.passed for c in r.validation.cases)
    assert _leftovers(out) == []


def test_data_dependent_branch_dynamo_fails_export(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = export_model(ExportOptions(model_dir=samples / "tiny-branchy", output=out / "model.onnx",
                                   exporter="dynamo"))
    assert r.status == "failed"
    d = r.diagnosis
    assert d.stage == "export" and d.error_class == "data_dependent_control_flow"
    assert d.module == "pooler" and "custom_models.py" in d.message
    assert _leftovers(out) == []


def test_cancel_leaves_nothing(samples: Path, tmp_path: Path) -> None:
    job = JobState(name="export")
    job.subscribe(lambda ev, val: job.cancel() if ev == "status" and str(val).startswith("onnx.checker") else None)
    with pytest.raises(JobCancelled):
        export_model(ExportOptions(model_dir=samples / "tiny-vilt", output=tmp_path / "o" / "m.onnx"), job)
    assert _leftovers(tmp_path / "o") == []


# ----------------------------------------------------------------------------------------- signatures

def test_infer_signature_defaults(samples: Path) -> None:
    sig = infer_signature(samples / "tiny-vilt")
    assert [(s.modality, s.name) for s in sig] == [
        ("text", "input_ids"), ("text", "attention_mask"), ("text", "token_type_ids"),
        ("vision", "pixel_values"), ("vision", "pixel_mask")]
    assert sig[0].dynamic_axes == {0: "batch", 1: "sequence"} and sig[0].dtype == "int64"
    audio = infer_signature(samples / "tiny-whisper")
    assert audio[0].modality == "audio" and audio[0].example_shape == [2, 16, 100]


def test_signature_parsing_errors(samples: Path) -> None:
    from studio.export.signatures import apply_dynamic, parse_signature

    specs = parse_signature("text:input_ids,vision:pixel_values", samples / "tiny-clip")
    assert [s.name for s in specs] == ["input_ids", "pixel_values"]
    with pytest.raises(InputError, match="unknown modality 'smell'"):
        parse_signature("smell:input_ids", samples / "tiny-clip")
    with pytest.raises(InputError, match="no input named 'pixels'") as e:
        parse_signature("vision:pixels", samples / "tiny-clip")
    assert "pixel_values" in (e.value.hint or "")
    with pytest.raises(InputError, match="not modality:input"):
        parse_signature("input_ids", samples / "tiny-clip")
    assert apply_dynamic(specs, ["none"])[0].dynamic_axes == {}
    with pytest.raises(InputError, match="unknown dynamic axis"):
        apply_dynamic(parse_signature("text:input_ids", samples / "tiny-clip"), ["height"])


# ----------------------------------------------------------------------------------------- CLI

@pytest.mark.parametrize("case", ["missing", "not-hf", "modality", "input-name", "opset"])
def test_cli_bad_inputs_exit_nonzero(case: str, samples: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "notes.txt").write_text("hello")
    args = {
        "missing": [str(tmp_path / "nope")],
        "not-hf": [str(tmp_path / "plain")],
        "modality": [str(samples / "tiny-clip"), "--input-signature", "text:input_ids,sonar:pixel_values"],
        "input-name": [str(samples / "tiny-clip"), "--input-signature", "text:input_ids,vision:image"],
        "opset": [str(samples / "tiny-clip"), "--opset", "3"],
    }[case]
    rc = studio_main(["export", *args, "--output", str(tmp_path / "out" / "m.onnx")])
    err = capsys.readouterr().err
    assert rc == 2
    expected = {"missing": "does not exist", "not-hf": "not a HuggingFace model folder",
                "modality": "unknown modality 'sonar'", "input-name": "no input named 'image'",
                "opset": "out of range"}[case]
    assert expected in err and "hint:" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists() or _leftovers(tmp_path / "out") == []


def test_cli_json_failure_contract(samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = studio_main(["export", str(samples / "tiny-clip"), "--output", str(tmp_path / "m.onnx"), "--opset", "13",
                      "--json", "--quiet"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 1
    assert data["status"] == "failed" and data["outputs"] == []
    assert data["diagnosis"]["stage"] == "export" and data["diagnosis"]["fix"]
    assert "validation" in data
    assert not (tmp_path / "m.onnx").exists()


def test_cli_sample_and_export_subprocess_json(tmp_path: Path) -> None:
    """The console contract end to end, in fresh processes: sample-model, then multimodal-export --json."""
    env_py = [sys.executable, "-c"]
    sample = subprocess.run([*env_py, "from studio.cli.main import main; import sys; "
                             f"sys.exit(main(['sample-model', 'tiny-siglip', '--out', r'{tmp_path / 'sig'}']))"],
                            capture_output=True, text=True, timeout=300)
    assert sample.returncode == 0, sample.stderr
    proc = subprocess.run([*env_py, "from studio.cli.export_cmd import alias_main; import sys; "
                           f"sys.exit(alias_main([r'{tmp_path / 'sig'}', '--output', r'{tmp_path / 'o' / 'm.onnx'}', "
                           "'--dynamic', 'batch,sequence', '--json']))"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(proc.stdout)
    assert data["status"] == "succeeded" and data["diagnosis"] is None
    assert {o["kind"] for o in data["outputs"]} >= {"model", "config", "tokenizer"}
    assert data["validation"]["checker"] == "passed"
    assert all(c["passed"] for c in data["validation"]["cases"])
    assert "export" in proc.stderr  # progress went to stderr, JSON alone on stdout
