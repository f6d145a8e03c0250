"""One pre-processing per modality: the same image through the Triton test inference (studio.triton.inputs), the
edge agent's raw input (studio.edge.preprocess), the generation runtime (Qwen2-VL, studio.generate.vlm_image)
and HF's own image processor gives the same tensor, max abs <= 1e-6; the same for a WAV through Whisper's
feature extractor (the agent, Triton test inference, the Whisper generation runtime).

HF's processors are built offline from transformers' classes (their defaults, and the studio's tiny sample
settings), saved with save_pretrained, and read back by the studio from those files: no hub downloads, no torch.
"""

from __future__ import annotations

import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("transformers")
PIL = pytest.importorskip("PIL")

from PIL import Image  # noqa: E402

from studio.edge.preprocess import AudioPreprocessor, ImagePreprocessor  # noqa: E402
from studio.triton.inputs import prepare_inputs  # noqa: E402

TOL = 1e-6


def _processors() -> dict[str, Any]:
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil
    from transformers.models.siglip.image_processing_pil_siglip import SiglipImageProcessorPil

    return {
        "clip": CLIPImageProcessorPil(),
        "clip-tiny-sample": CLIPImageProcessorPil(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}),
        "clip-bilinear": CLIPImageProcessorPil(resample=2),
        "siglip": SiglipImageProcessorPil(),
        "qwen2-vl": Qwen2VLImageProcessorPil(),
    }


PROCESSORS = ["clip", "clip-tiny-sample", "clip-bilinear", "siglip", "qwen2-vl"]


def _images(tmp: Path) -> dict[str, Path]:
    """A wide RGB photo-like gradient with noise, a tall RGBA one with transparent parts, a small grey one."""
    rng = np.random.default_rng(7)
    out = {}
    h, w = 217, 301
    yy, xx = np.mgrid[0:h, 0:w]
    rgb = np.stack([xx * 255 // w, yy * 255 // h, (xx + yy) % 256], -1) + rng.integers(-20, 20, (h, w, 3))
    out["wide-rgb"] = tmp / "wide.png"
    Image.fromarray(np.clip(rgb, 0, 255).astype(np.uint8)).save(out["wide-rgb"])
    rgba = rng.integers(0, 256, (260, 140, 4), dtype=np.uint8)
    rgba[:60, :, 3] = 0  # fully transparent rows: HF composites onto white
    out["tall-rgba"] = tmp / "tall.png"
    Image.fromarray(rgba, "RGBA").save(out["tall-rgba"])
    out["small-grey"] = tmp / "grey.jpg"
    Image.fromarray(rng.integers(0, 256, (23, 31), dtype=np.uint8), "L").save(out["small-grey"], quality=90)
    return out


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return _images(tmp_path_factory.mktemp("images"))


def _saved(proc: Any, tmp: Path) -> Path:
    folder = tmp / "processor"
    proc.save_pretrained(folder)
    return folder


def _files(folder: Path) -> dict[str, Path]:
    return {p.name: p for p in folder.iterdir() if p.name.endswith("_config.json")}


def _max_abs(a: np.ndarray, b: np.ndarray) -> float:
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))


@pytest.mark.parametrize("name", PROCESSORS)
@pytest.mark.parametrize("image", ["wide-rgb", "tall-rgba", "small-grey"])
def test_one_image_gives_one_tensor_on_every_path(name: str, image: str, images: dict[str, Path],
                                                  tmp_path: Path) -> None:
    proc = _processors()[name]
    folder = _saved(proc, tmp_path)
    path = images[image]
    with Image.open(path) as im:
        hf = proc(images=im, return_tensors="np")
    want = np.asarray(hf["pixel_values"], dtype=np.float32)

    agent = ImagePreprocessor(_files(folder))([path.read_bytes()])["pixel_values"]
    assert _max_abs(agent, want) <= TOL, "the agent's raw image input differs from HF's processor"

    if name == "qwen2-vl":
        cfg = {"max_batch_size": 0, "input": [
            {"name": "pixel_values", "data_type": "TYPE_FP32", "dims": [-1, int(want.shape[1])]},
            {"name": "image_grid_thw", "data_type": "TYPE_INT64", "dims": [1, 3]}]}
        feed = prepare_inputs(cfg, image=path, processor=folder)
        assert np.array_equal(feed["image_grid_thw"], hf["image_grid_thw"])
        from studio.generate.vlm_image import ImageProcessor, VisionSettings

        size = proc.size
        vision = VisionSettings(image_token_id=1, vision_start_token_id=None, vision_end_token_id=None,
                                patch_size=proc.patch_size, merge_size=proc.merge_size,
                                temporal_patch_size=proc.temporal_patch_size,
                                min_pixels=size["shortest_edge"], max_pixels=size["longest_edge"])
        runtime = ImageProcessor(folder, vision).load(path)
        assert _max_abs(runtime.pixel_values, want) <= TOL, "the generation runtime's patches differ from HF's"
        assert np.array_equal(runtime.grid_thw, hf["image_grid_thw"])
    else:
        c, h, w = want.shape[1:]
        cfg = {"max_batch_size": 8, "input": [{"name": "pixel_values", "data_type": "TYPE_FP32",
                                               "dims": [c, h, w]}]}
        feed = prepare_inputs(cfg, image=path, processor=folder)
    assert _max_abs(feed["pixel_values"], want) <= TOL, "Triton test inference differs from HF's processor"


def test_a_processor_that_makes_another_size_than_the_model_takes_is_an_error(images: dict[str, Path],
                                                                              tmp_path: Path) -> None:
    from studio.core.errors import InputError

    folder = _saved(_processors()["clip"], tmp_path)  # 224 x 224
    cfg = {"max_batch_size": 8, "input": [{"name": "pixel_values", "data_type": "TYPE_FP32", "dims": [3, 32, 32]}]}
    with pytest.raises(InputError, match=r"224x224 .*'pixel_values' takes 32x32"):
        prepare_inputs(cfg, image=images["wide-rgb"], processor=folder)


# ------------------------------------------------------------------------------------------------------ audio

def _wav(tmp: Path, seconds: float, rate: int = 16000) -> Path:
    rng = np.random.default_rng(11)
    t = np.arange(int(seconds * rate)) / rate
    x = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.05 * rng.standard_normal(t.size)
    x[: t.size // 6] = 0.0  # silence: the log floor and the 8-decade clamp
    pcm = np.clip(np.round(x * 32767), -32768, 32767).astype(np.int16)
    path = tmp / f"clip-{seconds}.wav"
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    return path


def _hf_waveform(path: Path) -> np.ndarray:
    """The WAV as soundfile / librosa / datasets read it: int16 / 32768, float32."""
    with wave.open(str(path)) as w:
        raw = w.readframes(w.getnframes())
    return (np.frombuffer(raw, np.int16).astype(np.float32) / 32768.0).astype(np.float32)


@pytest.mark.parametrize("settings", [{}, {"feature_size": 16, "chunk_length": 1}], ids=["whisper", "tiny-whisper"])
@pytest.mark.parametrize("seconds", [0.6, 1.3])
def test_one_wav_gives_whisper_features_on_every_path(settings: dict, seconds: float, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import transformers.models.whisper.feature_extraction_whisper as fw

    # HF's numpy front end, the one it runs without torch (a board): with torch it takes torch's float32 STFT
    monkeypatch.setattr(fw, "is_torch_available", lambda: False)
    fe = fw.WhisperFeatureExtractor(**settings)
    folder = _saved(fe, tmp_path)
    path = _wav(tmp_path, seconds)
    want = fe(_hf_waveform(path), sampling_rate=16000, return_tensors="np")["input_features"].astype(np.float32)

    agent = AudioPreprocessor(_files(folder), ["input_features"])([path.read_bytes()])["input_features"]
    assert _max_abs(agent, want) <= TOL, "the agent's raw audio input differs from WhisperFeatureExtractor"

    from studio.generate.speech import audio_front_end

    runtime = audio_front_end(folder)([path.read_bytes()])["input_features"]
    assert _max_abs(runtime, want) <= TOL, "the Whisper generation runtime's features differ"

    cfg = {"max_batch_size": 4, "input": [{"name": "input_features", "data_type": "TYPE_FP32",
                                           "dims": [fe.feature_size, fe.nb_max_frames]}]}
    feed = prepare_inputs(cfg, audio=path, processor=folder)
    assert _max_abs(feed["input_features"], want) <= TOL, "Triton test inference's features differ"


# ------------------------------------------------------------------------------------------------------- text

def _tokenizer_folder(tmp: Path) -> Path:
    """A BERT-style WordPiece tokenizer.json ([CLS] ... [SEP]) with a tokenizer_config.json: pad [PAD], at most
    8 tokens."""
    import json

    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    words = ["a", "photo", "of", "cat", "dog", "two", "cats", "on", "the", "mat", "red"]
    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *words])}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                                       special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    folder = tmp / "tok"
    folder.mkdir()
    tok.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast", "pad_token": "[PAD]", "unk_token": "[UNK]",
        "model_max_length": 8}))
    return folder


def test_texts_give_one_set_of_token_tensors_on_every_path(tmp_path: Path) -> None:
    from transformers import PreTrainedTokenizerFast

    from studio.edge.preprocess import TextPreprocessor

    folder = _tokenizer_folder(tmp_path)
    texts = ["a photo of a cat", "two cats on the red mat of the dog", "dog"]  # padded, truncated, short
    hf = PreTrainedTokenizerFast.from_pretrained(str(folder))(texts, padding=True, truncation=True,
                                                             return_token_type_ids=True, return_tensors="np")
    files = {p.name: p for p in folder.iterdir()}
    agent = TextPreprocessor(files, ["input_ids", "attention_mask", "token_type_ids"])([t.encode() for t in texts])
    cfg = {"max_batch_size": 0, "input": [{"name": n, "data_type": "TYPE_INT64", "dims": [-1, -1]}
                                          for n in ("input_ids", "attention_mask", "token_type_ids")]}
    feed = prepare_inputs(cfg, texts=texts, tokenizer=folder)
    for name in ("input_ids", "attention_mask", "token_type_ids"):
        assert np.array_equal(agent[name], hf[name]), name
        assert np.array_equal(feed[name], hf[name]), name
    assert hf["input_ids"].shape[1] == 8 and hf["input_ids"][1, -1] == 3  # truncated with [SEP] kept
