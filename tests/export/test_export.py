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
SPLIT_IN_EXPORT = {"tiny-vilt", "tiny-qwen2-vl"}
# the single-pass graph is what these checks are about; Whisper's default (with past) is tests/generate/
SINGLE_PASS = {"tiny-whisper"}


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
    for name in SAMPLE_NAMES:  # the single-stream and VLM samples are split too: one export covers both checks
        reports[name] = export_model(ExportOptions(model_dir=samples / name, output=out / name / "model.onnx",
                                                   report=out / name / "report.json",
                                                   split_modalities=name in SPLIT_IN_EXPORT,
                                                   with_past=False if name in SINGLE_PASS else None))
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


def test_sample_list_json_carries_notes(capsys: pytest.CaptureFixture[str]) -> None:
    assert studio_main(["sample-model", "--list", "--json"]) == 0
    infos = {i["name"]: i for i in json.loads(capsys.readouterr().out)}
    assert any("torchvision" in n for n in infos["tiny-qwen2-vl"]["notes"])
    assert infos["tiny-clip"]["notes"] == []


def test_write_sample_is_deterministic(tmp_path: Path) -> None:
    a = write_sample("tiny-clip", tmp_path / "a")
    b = write_sample("tiny-clip", tmp_path / "b")
    assert (a / "model.safetensors").read_bytes() == (b / "model.safetensors").read_bytes()
    with pytest.raises(InputError, match="unknown sample"):
        write_sample("tiny-nothing", tmp_path / "c")
    assert not (tmp_path / "c").exists()


def test_demo_workspace_uses_samples(tmp_path: Path) -> None:
    from studio.export.demo import DEMO_SAMPLES, create_demo_workspace

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
    seq_inputs = [s.name for s in r.signature if s.dynamic_axes.get(1) in ("sequence", "decoder_sequence")]
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


def test_dynamo_exporter_clip_below_opset_18_is_reported(samples: Path, tmp_path: Path) -> None:
    """torch's dynamo exporter implements opset >= 18 only: --opset 17 is built at 18 and version-converted."""
    import onnx

    from studio.cli.export_cmd import render_summary

    r = export_model(ExportOptions(model_dir=samples / "tiny-clip", output=tmp_path / "m.onnx", exporter="dynamo",
                                   opset=17))
    assert r.status == "succeeded", r.diagnosis
    assert all(c.passed for c in r.validation.cases)
    written = next(o.version for o in onnx.load(str(tmp_path / "m.onnx")).opset_import if o.domain in ("", "ai.onnx"))
    assert r.opset == written
    opset_warnings = [w for w in r.warnings if w.startswith("opset:")]
    assert len(opset_warnings) == 1 and "17" in opset_warnings[0] and "18" in opset_warnings[0]
    assert "warning: opset:" in render_summary(r)
    saved = json.loads(r.to_json())
    assert saved["opset"] == written


def test_opset_mismatch_warning_text() -> None:
    """The case the version converter gives up: the file says 18 although 17 was asked for."""
    from studio.export.stages.trace import opset_warning as _opset_warning

    r = ExportReport()
    _opset_warning(r, "dynamo", 17, 18, "m.onnx")
    assert len(r.warnings) == 1 and "written at opset 18, not the requested 17" in r.warnings[0]
    assert "--opset 18" in r.warnings[0]
    ok = ExportReport()
    _opset_warning(ok, "torchscript", 17, 17, "m.onnx")
    assert ok.warnings == []


# ----------------------------------------------------------------------------------------- output dims

def test_output_dims_take_input_axis_names(exported: dict[str, ExportReport]) -> None:
    import onnx

    def out_dims(path: str) -> dict[str, list]:
        m = onnx.load(path)
        return {o.name: [d.dim_param or d.dim_value for d in o.type.tensor_type.shape.dim] for o in m.graph.output}

    clip = out_dims(exported["tiny-clip"].outputs[0].path)
    assert clip == {"logits_per_image": ["batch", "batch"], "logits_per_text": ["batch", "batch"],
                    "text_embeds": ["batch", 16], "image_embeds": ["batch", 16]}
    assert out_dims(exported["tiny-qwen2-vl"].outputs[0].path)["logits"][:2] == ["batch", "sequence"]
    for name in SAMPLE_NAMES:  # no exporter-generated names left on any model output
        for dims in out_dims(exported[name].outputs[0].path).values():
            assert not any(isinstance(d, str) and "_dim_" in d for d in dims), (name, dims)
        assert exported[name].opset == 17


def test_name_output_dims_static_and_declared(tmp_path: Path) -> None:
    """Symbolic inference names dims after inputs, makes resolvable ones static; declared names win."""
    import onnx
    from onnx import TensorProto, helper

    from studio.export.dims import name_output_dims

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["Transposey_dim_0", "Transposey_dim_1"])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, ["Reluz_dim_0", "Reluz_dim_1"])
    g = helper.make_graph([helper.make_node("Transpose", ["x"], ["y"]), helper.make_node("Relu", ["x"], ["z"])],
                          "g", [x], [y, z])
    path = tmp_path / "t.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    changes = name_output_dims(path, {"z": {0: "rows"}})
    m = onnx.load(str(path))
    dims = {o.name: [d.dim_param or d.dim_value for d in o.type.tensor_type.shape.dim] for o in m.graph.output}
    assert dims == {"y": [4, "batch"], "z": ["rows", 4]}
    assert changes["y[1]"] == "batch"
    onnx.checker.check_model(str(path), full_check=True)


# ----------------------------------------------------------------------------------------- VLM / ViLT split

def test_qwen2_vl_default_signature_has_vision_tower(samples: Path) -> None:
    sig = infer_signature(samples / "tiny-qwen2-vl")
    assert [(s.modality, s.name, s.dtype) for s in sig] == [
        ("text", "input_ids", "int64"), ("text", "attention_mask", "int64"),
        ("vision", "pixel_values", "float32"), ("vision", "image_grid_thw", "int64")]
    assert sig[2].dynamic_axes == {0: "patches"} and sig[2].example_shape[1] == 3 * 2 * 4 * 4
    assert sig[3].dynamic_axes == {0: "images"}


def test_qwen2_vl_split_parts_chain_matches_pytorch(samples: Path, exported: dict[str, ExportReport]) -> None:
    import onnxruntime as ort
    import torch
    from transformers import Qwen2VLForConditionalGeneration

    from studio.export.qwen2_vl import Qwen2VLReference, make_inputs
    from studio.export.validate import CaseSpec, _id_limit

    r = exported["tiny-qwen2-vl"]
    assert r.status == "succeeded", r.diagnosis
    assert set(r.parts) == {"vision", "decoder", "text"}
    for name, info in r.parts.items():
        assert (info["checker"], info["shape_inference"], info["ort_load"]) == ("passed",) * 3, name
        assert Path(info["path"]).is_file()
    vision, decoder, text = r.parts["vision"], r.parts["decoder"], r.parts["text"]
    assert vision["inputs"] == {"pixel_values": ["patches", 96], "image_grid_thw": ["images", 3]}
    assert vision["outputs"] == {"image_embeds": ["image_tokens", 32]}
    assert decoder["inputs"]["image_embeds"] == vision["outputs"]["image_embeds"]
    assert decoder["inputs"]["input_ids"] == ["batch", "sequence"] and decoder["boundary"] == "matched"
    assert text["inputs"] == {"input_ids": ["batch", "sequence"], "attention_mask": ["batch", "sequence"]}
    assert text["standalone"] and decoder["outputs"]["logits"][:2] == ["batch", "sequence"]
    by_graph: dict[str, list] = {}
    for c in r.validation.cases:
        by_graph.setdefault(c.graph, []).append(c)
    assert set(by_graph) == {"model", "chained parts", "text part"}
    assert all(len(cs) >= 3 and all(c.passed for c in cs) for cs in by_graph.values())
    moved = by_graph["chained parts"][1]
    assert moved.input_shapes["input_ids"] != by_graph["chained parts"][0].input_shapes["input_ids"]
    assert moved.input_shapes["image_grid_thw"][0] != by_graph["chained parts"][0].input_shapes["image_grid_thw"][0]

    # independently: new batch, sequence and image grids, parts chained by hand vs the unmodified HF forward
    cfg = json.loads((samples / "tiny-qwen2-vl" / "config.json").read_text())
    names = ["input_ids", "attention_mask", "pixel_values", "image_grid_thw"]
    feeds = make_inputs(names, {"input_ids": [2, 8]}, {"input_ids": {0: "batch", 1: "sequence"}}, cfg,
                        CaseSpec("new", {"batch": 4, "sequence": 13}, 7, padded=True), _id_limit(cfg))
    assert feeds["input_ids"].shape == (4, 13) and feeds["image_grid_thw"].shape[0] >= 3

    def sess(p: str) -> ort.InferenceSession:
        return ort.InferenceSession(p, providers=["CPUExecutionProvider"])

    (embeds,) = sess(vision["path"]).run(None, {n: feeds[n] for n in ("pixel_values", "image_grid_thw")})
    assert embeds.shape == (int(feeds["image_grid_thw"].prod(-1).sum()) // 4, 32)
    (logits,) = sess(decoder["path"]).run(None, {"input_ids": feeds["input_ids"],
                                                 "attention_mask": feeds["attention_mask"],
                                                 "image_embeds": embeds, "image_grid_thw": feeds["image_grid_thw"]})
    model = Qwen2VLForConditionalGeneration.from_pretrained(samples / "tiny-qwen2-vl").eval()
    with torch.no_grad():
        ref = Qwen2VLReference(model)(*[torch.from_numpy(feeds[n]) for n in names]).numpy()
    np.testing.assert_allclose(logits, ref, atol=1e-4, rtol=1e-3)
    (mono,) = sess(r.outputs[0].path).run(None, feeds)
    np.testing.assert_allclose(mono, ref, atol=1e-4, rtol=1e-3)


def test_vilt_split_single_stream(exported: dict[str, ExportReport]) -> None:
    r = exported["tiny-vilt"]
    assert r.status == "succeeded", r.diagnosis
    assert set(r.parts) == {"text", "vision", "fusion"}
    text, vision, fusion = r.parts["text"], r.parts["vision"], r.parts["fusion"]
    assert text["outputs"]["text_embeds"] == fusion["inputs"]["text_embeds"] == ["batch", "sequence", 32]
    assert vision["outputs"]["image_embeds"] == fusion["inputs"]["image_embeds"] == ["batch", 17, 32]
    assert vision["outputs"]["image_mask"] == fusion["inputs"]["image_mask"] == ["batch", 17]
    assert all(info["boundary"] == "matched" and info["ort_load"] == "passed" for info in r.parts.values())
    chained = [c for c in r.validation.cases if c.graph == "chained parts"]
    assert len(chained) >= 3 and all(c.passed for c in chained)
    assert any(o.output == "logits vs model.onnx" for o in chained[0].outputs)


def test_qwen2_vl_text_only_gqa_falls_back_to_eager(samples: Path, tmp_path: Path) -> None:
    """No attention mask: transformers calls SDPA with enable_gqa, which TorchScript cannot convert."""
    r = export_model(ExportOptions(model_dir=samples / "tiny-qwen2-vl", output=tmp_path / "a" / "m.onnx",
                                   input_signature="text:input_ids"))
    assert r.status == "succeeded", r.diagnosis
    assert any(w.startswith("gqa_sdpa:") and "eager" in w for w in r.warnings)
    forced = export_model(ExportOptions(model_dir=samples / "tiny-qwen2-vl", output=tmp_path / "b" / "m.onnx",
                                        input_signature="text:input_ids", attn_implementation="sdpa"))
    assert forced.status == "failed"
    d = forced.diagnosis
    assert d.error_class == "gqa_sdpa" and d.module and d.module.endswith("self_attn")
    assert "--exporter dynamo" in d.fix and "eager" in d.fix
    assert _leftovers(tmp_path / "b") == []


def test_seed_line_qwen2_vl_adds_image_grid_thw(samples: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The seed's own command line on its flagship: the grid is the processor's companion of pixel_values, added
    and named in the report (never an InputError asking the user for it)."""
    from studio.cli.export_cmd import alias_main

    out = tmp_path / "X.onnx"
    rc = alias_main(["--model", str(samples / "tiny-qwen2-vl"), "--input-signature",
                     "text:input_ids,text:attention_mask,vision:pixel_values", "--output", str(out), "--json",
                     "--quiet"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0 and out.is_file(), report["diagnosis"]
    assert [s["name"] for s in report["signature"]] == ["input_ids", "attention_mask", "pixel_values",
                                                        "image_grid_thw"]
    assert report["example_inputs"]["added"] == ["image_grid_thw"]
    assert any(w.startswith("input added: image_grid_thw") for w in report["warnings"])
    assert report["modalities"]["exported"] == ["text", "vision"]


def test_processor_class_recorded_or_torchvision_hint(exported: dict[str, ExportReport]) -> None:
    import importlib.util

    assert exported["tiny-clip"].processor_class == "CLIPProcessor"
    assert exported["tiny-vilt"].processor_class == "ViltProcessor"
    qwen = exported["tiny-qwen2-vl"]
    if importlib.util.find_spec("torchvision") is None:
        assert qwen.processor_class is None
        hint = [w for w in qwen.warnings if w.startswith("processor_needs_torchvision")]
        assert hint and "AutoImageProcessor" in hint[0]
    else:
        assert qwen.processor_class == "Qwen2VLProcessor"


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


def test_example_shape_takes_a_height_width_image_size() -> None:
    """InternVL and MGP-STR give ``image_size`` as [height, width]: a traceback before (int() of a list)."""
    from studio.export.signatures import example_shape

    cfg = {"vision_config": {"image_size": [32, 128], "num_channels": 3}}
    assert example_shape("pixel_values", cfg)[1:] == [3, 32, 128]
    assert example_shape("pixel_mask", cfg)[1:] == [32, 128]
    assert example_shape("pixel_values", {"vision_config": {"image_size": 224}})[2:] == [224, 224]
