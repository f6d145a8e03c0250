"""Qwen2-VL exported with its KV cache (tiny-qwen2-vl, built from its config: no hub): the two graphs' names and
dims, the export's own generation parity, token-exact greedy ids and per-step logits vs HF ``generate()`` on image +
text prompts (two image sizes, two lengths, and a text-only prompt) with HF's own image processor and tokenizer as
the reference inputs, the numpy ``get_rope_index`` and image processor against HF's, `studio generate --image
--json`, and bad input ending as an InputError naming the flag. One export for the module."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest

from studio.cli.main import main
from studio.core.errors import InputError
from studio.export.api import ExportOptions, ExportReport, export_model, write_sample
from studio.generate.api import generate

pytestmark = pytest.mark.export

# (prompt, image (width, height) or None, new tokens): two image grids, short and long generations, text only
PAIRS = [("describe the picture", (20, 20), 10), ("what colour is the car next to the house?", (40, 24), 24),
         ("count", (32, 32), 5), ("no image here, only text", None, 12)]


def _png(path: Path, w: int, h: int, seed: int = 0) -> Path:
    from PIL import Image

    rng = np.random.default_rng(seed)
    Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(path)
    return path


@pytest.fixture(scope="module")
def vl_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample("tiny-qwen2-vl", tmp_path_factory.mktemp("vl-src") / "tiny-qwen2-vl")


@pytest.fixture(scope="module")
def vl_export(vl_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ExportReport]:
    out = tmp_path_factory.mktemp("vl-out") / "model.onnx"
    report = export_model(ExportOptions(model_dir=vl_dir, output=out, report=out.parent / "report.json"))
    assert report.status == "succeeded", report.diagnosis
    return out.parent, report


@pytest.fixture(scope="module")
def hf_vl(vl_dir: Path):  # type: ignore[no-untyped-def]
    from studio.generate.vlm_parity import load_vlm

    return load_vlm(vl_dir)


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[int, int], Path]:
    d = tmp_path_factory.mktemp("vl-img")
    return {size: _png(d / f"{size[0]}x{size[1]}.png", *size, seed=i)
            for i, size in enumerate(sorted({s for _, s, _ in PAIRS if s}))}


def _dims(vi: onnx.ValueInfoProto) -> list[str | int]:
    return [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]


def test_graphs_have_named_dynamic_cache_and_mrope_positions(vl_export: tuple[Path, ExportReport]) -> None:
    folder, report = vl_export
    g = onnx.load(str(folder / "model.onnx"), load_external_data=False).graph
    ins, outs = {i.name: _dims(i) for i in g.input}, {o.name: _dims(o) for o in g.output}
    assert list(ins)[:4] == ["input_ids", "attention_mask", "position_ids", "image_embeds"]
    assert ins["position_ids"] == [3, "batch", "sequence"]
    assert ins["image_embeds"] == ["image_tokens", 32] and ins["attention_mask"] == ["batch", "total_sequence"]
    for i in range(2):
        for kind in ("key", "value"):
            assert ins[f"past_key_values.{i}.{kind}"] == ["batch", 2, "past_sequence", 8]
            assert outs[f"present.{i}.{kind}"] == ["batch", 2, "total_sequence", 8]
    assert outs["logits"][:2] == ["batch", "sequence"]
    v = onnx.load(str(folder / "vision.onnx"), load_external_data=False).graph
    assert {i.name: _dims(i) for i in v.input} == {"pixel_values": ["patches", 3 * 2 * 4 * 4],
                                                   "image_grid_thw": ["images", 3]}
    assert _dims(v.output[0])[0] == "image_tokens" and v.output[0].name == "image_embeds"
    kinds = {Path(o.path).name: o.kind for o in report.outputs}
    assert kinds["vision.onnx"] == "part" and kinds["generation.json"] == "config"
    assert not (folder / "genai_config.json").exists()  # onnxruntime-genai has no form for this layout


def test_export_validates_generation_on_image_prompts(vl_export: tuple[Path, ExportReport]) -> None:
    folder, report = vl_export
    g = report.generation
    assert g is not None and g.status == "passed" and report.options["with_past"] is True
    with_image = [p for p in g.prompts if p["image"]]
    assert len(with_image) >= 3 and len({tuple(p["image"]["grid_thw"]) for p in with_image}) >= 2
    assert len({p["max_new_tokens"] for p in g.prompts}) >= 2
    assert all(p["match"] and p["onnx_ids"] == p["hf_ids"] for p in g.prompts)
    assert g.logits_max_abs is not None and g.logits_max_abs < 1e-4
    gen = json.loads((folder / "generation.json").read_text())
    assert gen["kind"] == "vlm" and gen["parts"] == {"vision": "vision.onnx", "decoder": "model.onnx"}
    assert {k: gen["vision"][k] for k in ("patch_size", "merge_size", "temporal_patch_size", "min_pixels",
                                          "max_pixels")} == {"patch_size": 4, "merge_size": 2,
                                                             "temporal_patch_size": 2, "min_pixels": 256,
                                                             "max_pixels": 1024}
    assert gen["vision"]["image_token_id"] == json.loads((folder / "config.json").read_text())["image_token_id"]
    assert gen["validation"]["status"] == "passed" and {"onnxruntime", "torch", "transformers"} <= \
        set(gen["validation"]["versions"])
    assert (folder / "preprocessor_config.json").is_file() and (folder / "tokenizer.json").is_file()


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[1]}-{p[2]}")
def test_greedy_ids_and_step_logits_equal_hf_generate(pair: tuple[str, tuple[int, int] | None, int], hf_vl,  # type: ignore[no-untyped-def]
                                                      vl_export: tuple[Path, ExportReport], vl_dir: Path,
                                                      images: dict[tuple[int, int], Path]) -> None:
    """The reference inputs come from transformers itself: AutoImageProcessor patches, AutoTokenizer ids."""
    from PIL import Image
    from transformers import AutoImageProcessor, AutoTokenizer

    from studio.generate.parity import compare_steps
    from studio.generate.vlm import open_vlm
    from studio.generate.vlm_image import ImageInput
    from studio.generate.vlm_parity import hf_vlm_greedy

    prompt, size, new = pair
    folder, _ = vl_export
    image = images[size] if size else None
    result = generate(folder, prompt, image=image, max_new_tokens=new)
    hf_images = []
    if image is not None:
        px = AutoImageProcessor.from_pretrained(vl_dir)(images=[Image.open(image)], return_tensors="np")
        hf_images = [ImageInput(px["pixel_values"], px["image_grid_thw"], size, size)]
    text_ids = AutoTokenizer.from_pretrained(vl_dir)(prompt)["input_ids"]
    assert result.prompt_token_ids[len(result.prompt_token_ids) - len(text_ids):] == text_ids
    gen = json.loads((folder / "generation.json").read_text())
    ref = hf_vlm_greedy(hf_vl, result.prompt_token_ids, hf_images, new, gen["eos_token_ids"], gen["pad_token_id"])
    assert result.token_ids == ref.token_ids and len(ref.token_ids) >= 1
    out = open_vlm(folder).runtime.generate(result.prompt_token_ids, hf_images, new, stop_ids=set(gen["eos_token_ids"]),
                                            record_logits=True)
    steps = compare_steps(out.token_ids, out.step_logits, ref, len(result.prompt_token_ids), new)
    assert steps.match and steps.logits_max_abs < 1e-4 and len(out.step_logits) == len(ref.step_logits)


def test_rope_index_and_processor_match_hf(hf_vl, vl_dir: Path) -> None:  # type: ignore[no-untyped-def]
    import torch
    from PIL import Image
    from transformers import AutoImageProcessor

    from studio.generate.vlm_image import ImageProcessor, VisionSettings, image_prompt, rope_index

    cfg = json.loads((vl_dir / "config.json").read_text())
    vs = VisionSettings(cfg["image_token_id"], cfg["vision_start_token_id"], cfg["vision_end_token_id"],
                        4, 2, 2, 256, 1024)
    mine, hf = ImageProcessor(vl_dir, vs), AutoImageProcessor.from_pretrained(vl_dir)
    rng = np.random.default_rng(3)
    ims = []
    for w, h in [(20, 20), (40, 24), (64, 48), (7, 300), (5, 5)]:  # up- and downscaled, tall, tiny
        img = Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8))
        got, ref = mine.from_pil(img), hf(images=[img], return_tensors="np")
        assert (got.grid_thw == ref["image_grid_thw"]).all()
        assert np.abs(got.pixel_values - ref["pixel_values"]).max() < 1e-5
        ims.append(got)
    for chosen, text in ([ims[0]], [5, 6]), ([ims[1], ims[2]], [7]), ([], [1, 2, 3]):  # one, two and no images
        ids = np.array(image_prompt(vs, chosen, text))
        pos, delta = rope_index(ids, np.concatenate([i.grid_thw for i in chosen]) if chosen else np.zeros((0, 3)),
                                vs.image_token_id, 2)
        if not chosen:
            assert (pos == np.arange(len(ids))).all() and delta == 0
            continue
        t = torch.tensor(ids)[None]
        ref_pos, ref_delta = hf_vl.model.get_rope_index(
            t, mm_token_type_ids=(t == vs.image_token_id).int(),
            image_grid_thw=torch.tensor(np.concatenate([i.grid_thw for i in chosen])))
        assert (ref_pos[:, 0].numpy() == pos).all() and int(ref_delta) == delta


def test_cli_json_with_image(vl_export: tuple[Path, ExportReport], images: dict[tuple[int, int], Path],
                             capsys: pytest.CaptureFixture[str]) -> None:
    folder, _ = vl_export
    rc = main(["generate", str(folder), "--prompt", "what is it?", "--image", str(images[(40, 24)]),
               "--max-new-tokens", "6", "--json", "--hf-parity"])
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    assert {"text", "token_ids", "ttft_ms", "tokens_per_s", "finish_reason", "hf_parity"} <= set(data)
    assert data["ttft_ms"] > 0 and data["tokens_per_s"] > 0 and len(data["token_ids"]) >= 1
    assert data["prompt_token_ids"].count(350) == 15  # a 6x10 grid merged 2x2
    assert data["hf_parity"]["this_prompt"]["match"] is True
    assert data["hf_parity"]["export_validation"]["status"] == "passed"
    args = ["generate", str(folder), "--prompt", "hi", "--image", str(images[(20, 20)]), "--max-new-tokens", "12",
            "--temperature", "1.1", "--top-k", "30", "--seed", "4", "--json"]
    runs = []
    for _ in range(2):
        assert main(args) == 0
        runs.append(json.loads(capsys.readouterr().out)["token_ids"])
    assert runs[0] == runs[1]
    assert main(["generate", str(folder), "--prompt", "hi", "--image", str(images[(20, 20)]),
                 "--max-new-tokens", "3", "--stream"]) == 0
    out, err = capsys.readouterr()
    assert out.endswith("\n") and "tokens/s" in err


def test_bad_input_names_the_flag(vl_export: tuple[Path, ExportReport], tmp_path: Path,
                                  images: dict[tuple[int, int], Path], capsys: pytest.CaptureFixture[str],
                                  exported: tuple[Path, ExportReport]) -> None:
    folder, _ = vl_export
    not_image = tmp_path / "notes.png"
    not_image.write_text("not an image")
    truncated = tmp_path / "cut.png"
    truncated.write_bytes(images[(40, 24)].read_bytes()[:60])
    too_thin = _png(tmp_path / "thin.png", 1, 300)
    cases = [(["--image", str(not_image)], "--image", "not an image file"),
             (["--image", str(truncated)], "--image", "image"),
             (["--image", str(tmp_path / "missing.png")], "--image", "does not exist"),
             (["--image", str(too_thin)], "--image", "aspect ratio"),
             (["--image", str(images[(20, 20)]), "--prompt", "word " * 200], "--prompt", "maximum context"),
             (["--image", str(images[(20, 20)]), "--max-new-tokens", "0"], "--max-new-tokens", ">= 1"),
             (["--image", str(images[(20, 20)]), "--runtime", "genai"], "--runtime", "genai")]
    for extra, flag, words in cases:
        args = ["generate", str(folder), "--prompt", "hi", *extra]
        assert main(args) == 2, extra
        err = capsys.readouterr().err
        assert f"at: {flag}" in err and words in err, (extra, err)
    with pytest.raises(InputError) as e:  # the API says the same
        generate(folder, "hi", image=not_image)
    assert e.value.offending == "--image"
    with pytest.raises(InputError) as e:  # an image, but a text-only export
        generate(exported[0], "hi", image=images[(20, 20)])
    assert e.value.offending == "--image" and "text only" in str(e.value)
    assert main(["generate", str(exported[0]), "--prompt", "hi", "--image", str(images[(20, 20)])]) == 2
    assert "at: --image" in capsys.readouterr().err


def test_vlm_generate_runs_without_torch(vl_export: tuple[Path, ExportReport],
                                         images: dict[tuple[int, int], Path]) -> None:
    """The run-time path (processor, vision graph, decoder loop) imports neither torch nor transformers."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(f"""
        import importlib.abc, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split('.')[0] in {{'torch', 'transformers', 'PySide6'}}:
                    raise ImportError('blocked import of ' + name)
        sys.meta_path.insert(0, Block())
        from studio.cli.main import main
        rc = main(["generate", {str(vl_export[0])!r}, "--prompt", "what is it?", "--image",
                   {str(images[(32, 32)])!r}, "--max-new-tokens", "4", "--json"])
        assert rc == 0, rc
        assert 'torch' not in sys.modules and 'transformers' not in sys.modules
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    assert len(data["token_ids"]) >= 1 and data["prompt_token_ids"].count(350) == 16  # an 8x8 grid merged 2x2
