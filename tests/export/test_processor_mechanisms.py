"""The mechanisms that make a processor where none is written down: torchvision without its native library, every
sub-processor the class declares, construction offline, arguments the class cannot have, required call arguments,
and the chat-template prompt form.

Real transformers processor classes built from their config classes (no hub, no mocks); torchvision checks run in a
fresh interpreter so the import hook is exercised from the start, and skip where torchvision is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from studio.export.processor_source import load_processor  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HAS_TORCHVISION = importlib.util.find_spec("torchvision") is not None


def _config(model_type: str) -> dict[str, Any]:
    from transformers import CONFIG_MAPPING

    return CONFIG_MAPPING[model_type]().to_dict()


@pytest.mark.skipif(not HAS_TORCHVISION, reason="torchvision is not installed")
def test_torchvision_transforms_work_and_missing_native_ops_are_reported_and_fail_loudly() -> None:
    script = """
import json, sys
import studio.export
from studio.export import torchvision_compat as tc
import numpy as np, torch
from PIL import Image
from transformers import Llama4ImageProcessor  # exists only as a torchvision-backed class
out = Llama4ImageProcessor()(Image.fromarray(np.zeros((48, 64, 3), np.uint8)), return_tensors="pt")
try:
    torch.ops.torchvision.nms(torch.rand(3, 4), torch.rand(3), 0.5)
    nms = "ran"
except Exception as exc:
    nms = type(exc).__name__
print(json.dumps({"shape": list(out["pixel_values"].shape), "warning": tc.warning(), "declared": tc.STATE.declared,
                  "nms": nms}))
"""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["shape"][0] == 1 and got["shape"][1] == 3
    if got["declared"]:  # the native library did not load: the schemas were declared, and it says so
        assert got["warning"].startswith("torchvision native ops unavailable: torchvision ")
        assert "nms" in got["warning"] and got["nms"] in ("NotImplementedError", "RuntimeError")
    else:  # a torchvision whose native library loads: nothing to report, nms runs
        assert got["warning"] is None and got["nms"] == "ran"


@pytest.mark.skipif(not HAS_TORCHVISION, reason="video processors need torchvision")
def test_every_declared_sub_processor_is_built_video_included() -> None:
    source = load_processor(Path("/nonexistent"), _config("minicpmv4_6"))
    assert source is not None and source.classes["processor"] == "MiniCPMV4_6Processor"
    assert source.classes["video_processor"] == "MiniCPMV4_6VideoProcessor"
    assert any(d.startswith("video processor MiniCPMV4_6VideoProcessor") for d in source.derived)


def test_a_processor_that_fetches_from_the_hub_falls_back_offline_with_the_place_named(tmp_path: Path) -> None:
    source = load_processor(tmp_path, _config("mgp-str"))  # MgpstrProcessor.__init__ downloads GPT-2 and BERT
    assert source is not None and type(source.processor).__name__ == "ComposedProcessor"
    note = next(d for d in source.derived if "cannot be built offline" in d)
    assert "MgpstrProcessor" in note and "processing_mgp_str.py:" in note
    assert source.classes["image_processor"].startswith("ViTImageProcessor")  # the torchvision or the PIL backend
    # the config's [height, width] image size reaches the image processor
    assert dict(source.sub["image_processor"].size) == {"height": 32, "width": 128}


def test_an_init_argument_no_mapping_can_build_is_passed_as_none_and_named(tmp_path: Path) -> None:
    source = load_processor(tmp_path, _config("dia"))
    assert source is not None and source.classes["processor"] == "DiaProcessor"
    assert source.unbuilt == ["audio_tokenizer"]
    assert any("audio_tokenizer passed as None" in d and "DacModel" in d for d in source.derived)


def test_required_call_arguments_come_from_the_processor_docstring(tmp_path: Path) -> None:
    from studio.export.prompt_forms import required_call_args

    source = load_processor(tmp_path, _config("cohere_asr"))
    assert source is not None
    assert required_call_args(source.processor, {"audio": [], "sampling_rate": 16000}) == {"language": "en"}
    assert required_call_args(source.processor, {"language": "fr"}) == {}
    # documented *required* behind a None default, a list of one value per image for a batch
    source = load_processor(tmp_path, _config("oneformer"))
    assert source is not None
    assert required_call_args(source.processor, {"images": [1, 2]}) == {"task_inputs": ["semantic", "semantic"]}
    from studio.export import processor_inputs as pi

    out = pi.run_processor(source, pi.MEDIA_CASES[0], {"vision"}, pi.Placeholders(send_text=False), 512)
    assert out["task_inputs"].shape[0] == 2 and out["pixel_values"].shape[0] == 2


def test_waveform_feature_extractor_keeps_one_value_per_sample(tmp_path: Path) -> None:
    from studio.export.processor_inputs import modality_of_key

    source = load_processor(tmp_path, _config("speecht5"))  # num_mel_bins=80 belongs to the speech decoder
    assert source is not None and source.sub["feature_extractor"].feature_size == 1
    # with no input_ids beside it, the attention mask is the clip's
    assert modality_of_key(source, "attention_mask", {"audio"}, {"input_values", "attention_mask"}) == "audio"
    assert modality_of_key(source, "attention_mask", {"audio"}, {"input_ids", "attention_mask"}) == "text"


CHAT_TEMPLATE = ("{% for m in messages %}USER: {% for c in m['content'] %}{% if c['type'] == 'image' %}<image>"
                 "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endfor %}"
                 "{% if add_generation_prompt %} ASSISTANT:{% endif %}")


def test_a_processor_with_a_chat_template_gets_its_prompt_through_it(tmp_path: Path) -> None:
    import inspect

    from transformers import AutoModelForImageTextToText

    from studio.export import processor_inputs as pi
    from studio.export import prompt_forms
    from studio.export.api import write_sample

    folder = write_sample("tiny-llava", tmp_path / "llava")
    (folder / "chat_template.jinja").write_text(CHAT_TEMPLATE)
    config = json.loads((folder / "config.json").read_text())
    source = load_processor(folder, config)
    assert source is not None and prompt_forms.chat_template(source) == CHAT_TEMPLATE
    assert prompt_forms.chat_prompt(source, "a cat", {"vision"}) == "USER: <image>a cat ASSISTANT:"
    model = AutoModelForImageTextToText.from_pretrained(str(folder)).eval()
    params = [n for n in inspect.signature(type(model).forward).parameters if n != "self"]
    der = pi.derive_inputs(model, source, config, {"vision"}, params)
    assert der.placeholders.chat and pi.describe(der.placeholders) == "chat-template prompt"
    assert {"input_ids", "pixel_values"} <= set(der.runs[0].tensors)


def test_a_document_processor_without_ocr_takes_words_with_boxes(tmp_path: Path) -> None:
    from studio.export import processor_inputs as pi

    source = load_processor(tmp_path, _config("layoutlmv3"))
    assert source is not None and source.sub["image_processor"].apply_ocr is False
    assert source.classes["tokenizer"] == "LayoutLMv3Tokenizer"  # the generic placeholder takes no boxes
    forms = pi.attempts(source, {"vision"})
    assert forms[0].words and pi.describe(forms[0]) == "words with boxes"
    out = pi.run_processor(source, pi.MEDIA_CASES[0], {"vision"}, forms[0], 512)
    assert out["bbox"].shape[0] == 2 and out["bbox"].shape[-1] == 4
    assert out["bbox"].shape[1] == out["input_ids"].shape[1]


def test_a_placeholder_the_processor_brackets_is_tried_in_its_brackets(tmp_path: Path) -> None:
    from studio.export import processor_inputs as pi

    # read off each processor's own opening / closing attributes (audio_bos / audio_eos, vision_start / vision_end)
    audio = load_processor(tmp_path, _config("qwen2_audio"))
    assert audio is not None
    assert pi.placeholder_candidates(audio, "audio") == ["<audio>", "<|audio_bos|><audio><|audio_eos|>", ""]
    vision = load_processor(tmp_path, _config("lfm3_vl"))
    assert vision is not None and "<vision_start><image><vision_end>" in pi.placeholder_candidates(vision, "vision")
    # a processor that refuses the bare placeholder takes the bracketed one
    source = load_processor(tmp_path, _config("hunyuan_vl"))
    assert source is not None
    bracketed = pi.placeholder_candidates(source, "vision")[1]
    with pytest.raises(ValueError, match="must be formatted as"):
        pi.run_processor(source, pi.MEDIA_CASES[0], {"vision"}, pi.Placeholders(image="<image>"), 512)
    out = pi.run_processor(source, pi.MEDIA_CASES[0], {"vision"}, pi.Placeholders(image=bracketed), 512)
    assert {"input_ids", "pixel_values", "image_grid_thw"} <= set(out)
    forms = [pi.describe(f) for f in pi.attempts(source, {"vision"})[: pi.MAX_ATTEMPTS]]
    assert f"prompt with image placeholder {bracketed!r}" in forms and "prompt with no placeholder" in forms


def test_a_processor_that_reads_the_prompts_as_one_rows_labels_gets_a_list_per_row(tmp_path: Path) -> None:
    from studio.export import processor_inputs as pi

    # GroundingDinoProcessor joins a list of strings into one "label. label." row for the first image
    source = load_processor(tmp_path, _config("mm-grounding-dino"))
    assert source is not None
    case = pi.MEDIA_CASES[1]
    out = pi.run_processor(source, case, {"vision"}, pi.Placeholders(), 512)
    assert out["input_ids"].shape[0] == out["pixel_values"].shape[0] == case.batch == 3
    single = pi.run_processor(source, pi.MEDIA_CASES[2], {"vision"}, pi.Placeholders(), 512)
    assert single["input_ids"].shape[0] == 1


def test_a_clip_processor_gets_clips_of_the_frames_the_config_fixes(tmp_path: Path) -> None:
    from studio.export import processor_inputs as pi
    from studio.export.prompt_forms import video_keyword

    config = _config("tvp")  # TvpImageProcessor.preprocess takes videos; the call routes images to it
    source = load_processor(tmp_path, config)
    assert source is not None and video_keyword(source) == "images"
    form = pi.attempts(source, {"vision"}, config)[0]
    assert form.video == "images" and form.frames == config["num_frames"] == 48
    assert pi.describe(form) == "prompt with clips of 48 frames as images="
    out = pi.run_processor(source, pi.MEDIA_CASES[0], {"vision"}, form, 512)
    assert tuple(out["pixel_values"].shape[:3]) == (2, 48, 3)
    # a processor of still images is left as it was
    still = load_processor(tmp_path, _config("altclip"))
    assert still is not None and video_keyword(still) is None and not pi.attempts(still, {"vision"})[0].video


@pytest.mark.skipif(not HAS_TORCHVISION, reason="video processors need torchvision")
def test_a_video_only_processor_makes_the_clip_input_the_forward_takes(tmp_path: Path) -> None:
    import inspect

    import transformers

    from bench.coverage_one import build
    from studio.export import processor_inputs as pi

    build("instructblipvideo", "InstructBlipVideoForConditionalGeneration", tmp_path / "m")
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    source = load_processor(tmp_path / "m", config)
    assert source is not None and "vision" in source.serves()  # its only media sub-processor is a video processor
    assert dict(source.sub["video_processor"].size)["height"] == config["vision_config"]["image_size"]
    model = transformers.InstructBlipVideoForConditionalGeneration.from_pretrained(str(tmp_path / "m")).eval()
    params = [n for n in inspect.signature(type(model).forward).parameters if n != "self"]
    der = pi.derive_inputs(model, source, config, {"vision"}, params)
    size = config["vision_config"]["image_size"]
    assert der.placeholders.video == "images"
    assert der.runs[0].tensors["pixel_values"].shape == (2, 4, 3, size, size)
    assert der.runs[0].modality["pixel_values"] == "vision"


@pytest.mark.skipif(not HAS_TORCHVISION, reason="Pixtral's image processor needs torchvision")
def test_bracketed_tokens_a_processor_hard_codes_take_the_config_ids(tmp_path: Path) -> None:
    config = _config("mistral3")
    source = load_processor(tmp_path, config)
    assert source is not None and source.processor.image_token == "[IMG]"
    tok = source.sub["tokenizer"]
    assert tok.convert_tokens_to_ids("[IMG]") == config["image_token_index"]
    assert len({tok.convert_tokens_to_ids(t) for t in ("[IMG]", "[IMG_BREAK]", "[IMG_END]")}) == 3


@pytest.mark.export
@pytest.mark.skipif(not HAS_TORCHVISION, reason="torchvision is not installed")
def test_an_export_that_used_torchvision_without_its_native_ops_says_so(tmp_path: Path) -> None:
    import torchvision  # noqa: F401 - through the hook conftest installed (import studio.export)

    from studio.export import torchvision_compat as tc
    from studio.export.api import ExportOptions, export_model, write_sample

    folder = write_sample("tiny-clip", tmp_path / "clip")
    report = export_model(ExportOptions(model_dir=folder, output=tmp_path / "out" / "model.onnx"))
    assert report.status == "succeeded", report.diagnosis
    lines = [w for w in report.warnings if w.startswith("torchvision native ops unavailable")]
    assert len(lines) == (1 if tc.STATE.reason else 0)
    assert json.loads(report.to_json())["warnings"] == report.warnings  # --json carries the line
