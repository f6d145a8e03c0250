"""Mixed precision per part (``--precision``) and the FP16 KV cache (``--kv-cache-dtype``) with real torch, real
onnxconverter-common / ONNX Runtime quantization and real ONNX Runtime, on tiny sample models built offline.

One CLIP split export (vision INT8 + text FP16), one tiny-qwen2 export with an FP16 cache (then generated from),
one forced fallback; bad input checked before any work.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("onnxconverter_common")

import onnx  # noqa: E402

from studio.cli.main import main as studio_main  # noqa: E402
from studio.core.errors import InputError  # noqa: E402
from studio.export.api import ExportOptions, ExportReport, export_model, write_sample  # noqa: E402
from studio.export.precision import parse_precision, resolve, targets_of  # noqa: E402
from studio.export.stages.options import open_report  # noqa: E402

pytestmark = pytest.mark.export


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("prec-samples")
    write_sample("tiny-clip", root / "tiny-clip")
    write_sample("tiny-qwen2", root / "tiny-qwen2")
    return root


@pytest.fixture(scope="module")
def clip_mixed(samples: Path, tmp_path_factory: pytest.TempPathFactory) -> ExportReport:
    out = tmp_path_factory.mktemp("clip-mixed")
    return export_model(ExportOptions(model_dir=samples / "tiny-clip", output=out / "clip.onnx",
                                      split_modalities=True, precision="vision=int8,text=fp16",
                                      report=out / "report.json"))


@pytest.fixture(scope="module")
def qwen_kv16(samples: Path, tmp_path_factory: pytest.TempPathFactory) -> ExportReport:
    out = tmp_path_factory.mktemp("qwen-kv16")
    return export_model(ExportOptions(model_dir=samples / "tiny-qwen2", output=out / "model.onnx",
                                      kv_cache_dtype="float16", precision="text=fp16"))


def _elem_types(path: Path) -> set[int]:
    return {t.data_type for t in onnx.load(str(path)).graph.initializer}


def test_vision_int8_text_fp16_with_figures(clip_mixed: ExportReport) -> None:
    r = clip_mixed
    assert r.status == "succeeded", r.diagnosis
    parts = r.precision["parts"]
    assert set(parts) == {"vision", "text"}  # fusion and the monolithic model untouched
    v, t = parts["vision"], parts["text"]
    assert (v["requested"], v["applied"], t["requested"], t["applied"]) == ("int8", "int8", "fp16", "fp16")
    assert v["passed"] and t["passed"] and v["fallback"] is None and t["fallback"] is None
    assert "calibrated on 4 seeded images through CLIPImageProcessor" in v["method"]
    assert "kept fp32: Pow" in t["method"]
    # plausible figures: FP16 close, INT8 by cosine, both compared on every validation case, vs FP32 and vs HF
    assert 0 < t["vs_fp32"]["max_abs"] < 5e-2 and t["vs_fp32"]["cosine"] > 0.999
    assert 0 < v["vs_fp32"]["max_abs"] and 0.98 <= v["vs_fp32"]["cosine"] < 1.0
    for p in (v, t):
        assert p["vs_fp32"]["outputs"] == p["vs_hf"]["outputs"] == len([c for c in r.validation.cases
                                                                     if c.graph == "model"])
        assert abs(p["vs_hf"]["max_abs"] - p["vs_fp32"]["max_abs"]) < 1e-3  # FP32 part == HF to ~1e-6
    assert r.precision["chain_vs_hf"]["cosine"] > 0.95
    # the written files are what the report says
    files = {Path(info["path"]).name: info for info in r.parts.values()}
    vision, text = Path(r.parts["vision"]["path"]), Path(r.parts["text"]["path"])
    assert files[vision.name]["precision"] == "int8" and files[text.name]["precision"] == "fp16"
    assert {n.op_type for n in onnx.load(str(vision)).graph.node} >= {"QuantizeLinear", "DequantizeLinear"}
    assert onnx.TensorProto.FLOAT16 in _elem_types(text)
    assert onnx.TensorProto.FLOAT16 not in _elem_types(Path(r.parts["fusion"]["path"]))
    saved = json.loads(Path(r.options["output"]).with_name("report.json").read_text())
    assert saved["precision"]["parts"]["vision"]["applied"] == "int8"


def test_converted_parts_chain_in_ort(clip_mixed: ExportReport) -> None:
    """The mixed parts still chain (FP32 I/O kept): image and text embeddings into the fusion head."""
    import onnxruntime as ort

    sess = {n: ort.InferenceSession(info["path"], providers=["CPUExecutionProvider"])
            for n, info in clip_mixed.parts.items()}
    rng = np.random.default_rng(0)
    img = sess["vision"].run(None, {"pixel_values": rng.standard_normal((2, 3, 32, 32)).astype(np.float32)})[0]
    ids = rng.integers(0, 40, size=(3, 6)).astype(np.int64)
    txt = sess["text"].run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0]
    assert img.dtype == txt.dtype == np.float32
    logits = sess["fusion"].run(None, {"image_embeds": img, "text_embeds": txt})[0]
    assert logits.shape == (2, 3) and np.isfinite(logits).all()


def test_fp16_kv_cache_export_and_generate(qwen_kv16: ExportReport) -> None:
    from studio.generate.api import generate

    r = qwen_kv16
    assert r.status == "succeeded", r.diagnosis
    out = Path(r.options["output"])
    graph = onnx.load(str(out))
    types = {v.name: v.type.tensor_type.elem_type for v in [*graph.graph.input, *graph.graph.output]}
    assert types["past_key_values.0.key"] == types["present.1.value"] == onnx.TensorProto.FLOAT16
    assert types["logits"] == onnx.TensorProto.FLOAT  # the runtime's logits stay FP32
    gen = json.loads((out.parent / "generation.json").read_text())
    assert gen["cache"]["dtype"] == "float16"
    assert json.loads((out.parent / "genai_config.json").read_text())["model"]["decoder"]["inputs"][
        "past_key_names"] == "past_key_values.%d.key"
    m = r.precision["parts"]["model"]
    assert (m["applied"], m["kv_cache_dtype"], r.precision["kv_cache_dtype"]) == ("fp16", "float16", "float16")
    assert r.generation is not None and r.generation.cache["dtype"] == "float16"
    # greedy parity vs HF generate, recorded per prompt at export (a divergence would fail the export)
    assert r.generation.status == "passed"
    assert all(p["match"] or p["near_tie"] for p in r.generation.prompts)
    for io_binding in (False, True):  # both runtime paths allocate the cache in float16
        res = generate(out.parent, "a photo of a cat", max_new_tokens=8, hf_parity=True, io_binding=io_binding)
        assert len(res.token_ids) == 8
        assert res.hf_parity["this_prompt"]["match"], res.hf_parity


def test_impossible_tolerance_falls_back_to_fp32(samples: Path, tmp_path: Path) -> None:
    r = export_model(ExportOptions(model_dir=samples / "tiny-qwen2", output=tmp_path / "model.onnx",
                                   precision="model=fp16", kv_cache_dtype="float16", precision_atol=0.0))
    assert r.status == "succeeded", r.diagnosis
    m = r.precision["parts"]["model"]
    assert (m["requested"], m["applied"], m["passed"], m["kv_cache_dtype"]) == ("fp16", "fp32", False, "float32")
    assert m["fallback"].startswith("fp32: max abs") and "> 0 vs the FP32 part" in m["fallback"]
    assert any("kept in FP32 (fp16 requested)" in w for w in r.warnings)
    assert r.precision["kv_cache_dtype"] == "float32"  # the FP16 cache missed too: the graph and the record agree
    assert json.loads((tmp_path / "generation.json").read_text())["cache"]["dtype"] == "float32"
    graph = onnx.load(str(tmp_path / "model.onnx"))
    assert onnx.TensorProto.FLOAT16 not in {t.data_type for t in graph.graph.initializer}
    assert r.generation is not None and r.generation.status == "passed"


# ----------------------------------------------------------------------------------------- bad input

def test_precision_spec_parsing_names_the_flag() -> None:
    assert parse_precision("vision=int8, text=FP16") == {"vision": "int8", "text": "fp16"}
    with pytest.raises(InputError, match="--precision: unknown precision 'int4'") as e:
        parse_precision("vision=int4")
    assert e.value.offending == "vision=int4" and "fp16" in (e.value.hint or "")
    with pytest.raises(InputError, match="is not PART=PRECISION"):
        parse_precision("vision")
    targets = targets_of("vlm_decoder", True, ["text", "vision"])
    assert resolve({"vision": "int8", "text": "fp16"}, targets) == {"vision": "int8", "decoder": "fp16",
                                                                    "text": "fp16"}
    with pytest.raises(InputError, match="names no part of this export: audio") as e:
        resolve({"audio": "fp16"}, targets)
    assert "projector" not in (e.value.hint or "") and "decoder" in (e.value.hint or "")


def test_bad_precision_options_before_any_work(samples: Path, tmp_path: Path) -> None:
    clip, out = samples / "tiny-clip", tmp_path / "out" / "m.onnx"
    with pytest.raises(InputError, match="names no part of this export: audio") as e:
        open_report(ExportOptions(model_dir=clip, output=out, split_modalities=True, precision="audio=fp16"))
    assert "fusion" in (e.value.hint or "")
    with pytest.raises(InputError, match="names no part.*vision") as e:  # per part needs the parts
        open_report(ExportOptions(model_dir=clip, output=out, precision="vision=int8"))
    assert "--split-modalities" in (e.value.hint or "")
    with pytest.raises(InputError, match="--kv-cache-dtype needs an export with a KV cache"):
        open_report(ExportOptions(model_dir=clip, output=out, kv_cache_dtype="float16"))
    with pytest.raises(InputError, match="--precision-min-cosine"):
        open_report(ExportOptions(model_dir=clip, output=out, precision="model=fp16", precision_min_cosine=2.0))
    assert not out.parent.exists()


def test_kv_cache_dtype_on_an_encoder_decoder_is_an_input_error(tmp_path: Path) -> None:
    """Whisper with a cache has its own graphs and loop: the FP16 cache there is refused, not silently ignored."""
    whisper = write_sample("tiny-whisper", tmp_path / "tiny-whisper")
    with pytest.raises(InputError, match="--kv-cache-dtype with --with-past covers decoder-only models") as e:
        open_report(ExportOptions(model_dir=whisper, output=tmp_path / "o" / "m.onnx", with_past=True,
                                  kv_cache_dtype="float16"))
    assert e.value.offending == "--kv-cache-dtype" and "'whisper'" in str(e.value)
    assert "--no-with-past" not in e.value.hint  # without a cache the flag fails again: the way out is to drop it
    with pytest.raises(InputError, match="covers decoder-only models") as e:  # the default export has the cache
        open_report(ExportOptions(model_dir=whisper, output=tmp_path / "o" / "m.onnx", kv_cache_dtype="float16"))
    assert e.value.hint.startswith("drop --kv-cache-dtype")


def test_cli_bad_precision_exits_2_naming_the_flag(samples: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o" / "m.onnx"
    rc = studio_main(["export", str(samples / "tiny-clip"), "-o", str(out), "--split-modalities",
                      "--precision", "vision=int3"])
    err = capsys.readouterr().err
    assert rc == 2 and "--precision: unknown precision 'int3'" in err and "Traceback" not in err
    rc = studio_main(["export", str(samples / "tiny-clip"), "-o", str(out), "--split-modalities",
                      "--precision", "decoder=fp16"])
    err = capsys.readouterr().err
    assert rc == 2 and "names no part of this export: decoder" in err
    with pytest.raises(SystemExit) as e:  # argparse: the flag and its choices
        studio_main(["export", str(samples / "tiny-qwen2"), "-o", str(out), "--kv-cache-dtype", "int8"])
    assert e.value.code == 2 and "--kv-cache-dtype" in capsys.readouterr().err
    assert not out.parent.exists()
