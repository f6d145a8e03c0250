"""Request tensors from what a user has at hand (an image file, text, an audio file, .npy arrays), shaped
by the model's config: Triton's (``max_batch_size`` and dims without the batch) or a peer's that declares the
full shape (the edge agent's, ``max_batch_size`` 0). Used by test inference in the GUI and `studio triton infer`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import DependencyMissing, InputError
from studio.triton.dtypes import v2_to_numpy


class Feed(dict):
    """The request tensors (a plain dict to every caller) and what each one carries: ``roles[name]`` is
    "text" (BYTES text), "tokens" (token ids, masks), "image" (pixels), "image-bytes" (an encoded image),
    "audio" (a waveform), "audio-bytes" (a WAV file) or "array" (given as is). Test inference draws the
    model's view of its inputs from it instead of working the preprocessing out again."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.roles: dict[str, str] = {k: "array" for k in self}


def _config_inputs(cfg: dict[str, Any]) -> tuple[int, list[dict[str, Any]]]:
    return int(cfg.get("max_batch_size", 0) or 0), list(cfg.get("input", []))


def _dtype(inp: dict[str, Any]) -> np.dtype:
    t = str(inp.get("data_type", "TYPE_FP32")).replace("TYPE_", "")
    return np.dtype(object) if t == "STRING" else v2_to_numpy(t)


def prepare_inputs(cfg: dict[str, Any], *, image: Path | str | None = None, text: str | None = None,
                   audio: Path | str | None = None, tokenizer: Path | str | None = None,
                   processor: Path | str | None = None, arrays: dict[str, np.ndarray] | None = None,
                   texts: list[str] | None = None) -> Feed:
    """Build request tensors from an image file, text, an audio file and/or arrays, using the model config.

    BYTES inputs receive raw text / file bytes; numeric inputs get pixels through the one image pre-processing
    (studio.edge.preprocess_image: the processor's resize, crop and normalisation, as HF and the agent make them;
    Qwen2-VL's patches), token ids from ``tokenizer`` (tokenizer.json), a waveform (resampled to the processor's
    rate) or Whisper's log-mel ``input_features`` (studio.edge.preprocess_audio). ``texts``:
    several texts in one request (a zero-shot model's labels), padded to the longest with the tokenizer's
    pad token and masked. The result is a dict whose ``roles`` say what each tensor carries (Feed).
    """
    max_batch, inputs = _config_inputs(cfg)
    batched = max_batch > 0
    feed = Feed(arrays or {})
    by_name = {i["name"]: i for i in inputs}
    if texts is not None and text is not None:
        raise InputError("give text or texts, not both", offending="text")
    if texts is not None and not texts:
        raise InputError("no text given", offending="text", hint="type at least one label")

    def dims(inp: dict[str, Any]) -> list[int]:
        return [int(d) for d in inp.get("dims", [])]

    def batch(a: np.ndarray, inp: dict[str, Any] | None = None) -> np.ndarray:
        """Add the batch dim Triton's config leaves out, or (a config with max_batch_size 0, e.g. the agent's)
        as many leading 1s as the input's declared rank needs: token ids [N] for dims [-1, -1] are [1, N]."""
        a = a[None, ...] if batched else a
        rank = len(dims(inp)) + int(batched) if inp is not None and dims(inp) else a.ndim
        while a.ndim < rank:
            a = a[None, ...]
        return a

    def free(pred: Any) -> dict[str, Any] | None:
        return next((i for i in inputs if i["name"] not in feed and pred(i)), None)

    many = list(texts) if texts is not None else ([text] if text is not None else None)
    if many is not None:
        inp = free(lambda i: _dtype(i) == np.dtype(object))
        if inp is not None:
            shape = dims(inp)
            a = np.array([t.encode("utf-8") for t in many], dtype=object)
            if texts is None and shape:  # one text: as many leading 1s as the declared rank wants
                a = a.reshape([1] * (len(shape) + int(batched)))
            elif texts is not None and (batched or len(shape) > 1):
                a = a.reshape([len(many)] + [1] * (len(shape) + int(batched) - 1))
            feed[inp["name"]] = a
            feed.roles[inp["name"]] = "text"
        else:
            if tokenizer is None:
                raise InputError("text needs the model's tokenizer: the model takes token ids, not text",
                                 offending="text", hint="pass the tokenizer.json (or its folder) of the model")
            from studio.edge.preprocess_text import tokenize

            tok, settings = _tokenizer(Path(tokenizer))
            cols = tokenize(tok, settings, many)  # the one text pre-processing (the agent's, HF's padding)
            for n, rows in cols.items():
                if n in by_name and n not in feed:
                    a = (rows if texts is not None else rows[0]).astype(_dtype(by_name[n]))
                    feed[n] = batch(a, by_name[n]) if texts is None else a  # [texts, tokens]: batch first
                    feed.roles[n] = "tokens"
            if "input_ids" not in by_name:
                raise InputError("the model has no input_ids input for the tokenised text", offending="text")
    if image is not None:
        image = Path(image)
        if not image.is_file():
            raise InputError(f"image {image} does not exist", offending=str(image))
        inp = free(lambda i: _dtype(i) == np.dtype(object))
        numeric = free(lambda i: _dtype(i).kind == "f" and len(dims(i)) == (3 if batched else 4))
        patched = free(lambda i: i["name"] == "pixel_values" and _dtype(i).kind == "f" and len(dims(i)) == 2)
        if patched is not None and _patching(processor):  # Qwen2-VL's vision graph: patches + grid
            feed[patched["name"]], grid = _image_patches(image, patched, processor)
            feed.roles[patched["name"]] = "image"
            grid_inp = free(lambda i: i["name"] in ("image_grid_thw", "grid_thw"))
            if grid_inp is not None:
                feed[grid_inp["name"]] = grid.astype(_dtype(grid_inp))
                feed.roles[grid_inp["name"]] = "array"
        elif numeric is not None:
            feed[numeric["name"]] = _image_tensor(image, numeric, dims(numeric), batched, processor)
            feed.roles[numeric["name"]] = "image"
        elif inp is not None:
            feed[inp["name"]] = batch(np.array([image.read_bytes()], dtype=object))
            feed.roles[inp["name"]] = "image-bytes"
        else:
            raise InputError("the model has no image-shaped input (float C,H,W or BYTES)", offending=str(image))
    if audio is not None:
        audio = Path(audio)
        if not audio.is_file():
            raise InputError(f"audio file {audio} does not exist", offending=str(audio))
        numeric = free(lambda i: _dtype(i).kind == "f" and len(dims(i)) == 1)
        feats = free(lambda i: i["name"] == "input_features" and _dtype(i).kind == "f")
        inp = free(lambda i: _dtype(i) == np.dtype(object))
        mel = _log_mel(audio, processor) if numeric is None and feats is not None else None
        if numeric is not None:
            feed[numeric["name"]] = batch(_read_audio(audio, processor).astype(_dtype(numeric)), numeric)
            feed.roles[numeric["name"]] = "audio"
        elif mel is not None and feats is not None:  # Whisper: the log-mel features, as the agent makes them
            feed[feats["name"]] = batch(mel.astype(_dtype(feats)), feats)
            feed.roles[feats["name"]] = "array"
        elif inp is not None:
            feed[inp["name"]] = batch(np.array([audio.read_bytes()], dtype=object))
            feed.roles[inp["name"]] = "audio-bytes"
        else:
            raise InputError("the model has no waveform input (float [samples]) or BYTES input for audio",
                             offending=str(audio), hint="pass precomputed features as a .npy array instead")
    if not feed:
        names = ", ".join(i["name"] for i in inputs)
        raise InputError(f"nothing given fills the model's inputs ({names})", offending=names,
                         hint="give an image, text, audio file or arrays (.npy) for them")
    return feed


def _tokenizer(path: Path) -> Any:
    """The tokenizer (tokenizer.json or its folder) and its pad id / length (studio.edge.preprocess_text)."""
    from studio.edge.preprocess_text import load_tokenizer

    try:
        return load_tokenizer(path)
    except Exception as exc:  # tokenizers raises its own Exception for a bad file
        raise InputError(f"cannot load the tokenizer {path}: {exc}", offending=str(path),
                         hint="choose the model's tokenizer.json (or the export folder holding it)") from exc


def _processor_section(processor: Path | str | None, section: str) -> dict[str, Any]:
    """The processor file's ``section`` (the one reader, studio.core.processor_files); {} without one."""
    if processor is None:
        return {}
    from studio.core.processor_files import read_processor

    try:
        return read_processor(processor, section)
    except (OSError, ValueError) as exc:
        raise InputError(f"processor file in {processor} is unreadable: {exc}", offending=str(processor),
                         hint="choose the export's preprocessor_config.json or processor_config.json") from exc


def _patching(processor: Path | str | None) -> bool:
    """Whether the processor cuts images into patches (Qwen2-VL's)."""
    cfg = _processor_section(processor, "image_processor")
    return bool(cfg.get("patch_size") and cfg.get("merge_size"))


def _image_settings(processor: Path | str | None, h: int, w: int) -> Any:
    """The image processor's settings; where it names no output size (or there is no processor), the model's
    input size (224 where that is dynamic) without normalisation: the image resized straight, scaled to [0, 1]."""
    from studio.edge.preprocess_image import ImageSettings

    cfg = _processor_section(processor, "image_processor")
    fixed = {"height": h if h > 0 else 224, "width": w if w > 0 else 224}
    if not cfg:
        return ImageSettings(size=fixed, do_normalize=False)
    s = ImageSettings.from_config(cfg)
    if not s.size and not s.crop and s.patches is None:
        s = ImageSettings.from_config({**cfg, "size": fixed})
    return s


def _open(path: Path) -> Any:
    from studio.edge.preprocess_image import open_image
    from studio.edge.raw_inputs import RawInputError

    try:
        return open_image(path.read_bytes())
    except ImportError as exc:
        raise DependencyMissing.for_module("pillow", "export", "reading image files") from exc
    except RawInputError as exc:
        raise InputError(f"{path}: {exc}", offending=str(path), hint="give a PNG, JPEG, GIF, BMP or TIFF file") from None


def _image_tensor(path: Path, inp: dict[str, Any], d: list[int], batched: bool,
                  processor: Path | str | None) -> np.ndarray:
    """The image through the one image pre-processing (studio.edge.preprocess_image: the processor's resize
    filter, centre crop, rescale and normalisation, as HF and the edge agent do), checked against the input."""
    from studio.edge.preprocess_image import image_pixels

    c, h, w = d[-3:]
    x = image_pixels(_open(path), _image_settings(processor, h, w), channels=1 if c == 1 else 3)
    if (h > 0 and x.shape[1] != h) or (w > 0 and x.shape[2] != w):
        raise InputError(f"the processor makes {x.shape[2]}x{x.shape[1]} pixel images but input "
                         f"'{inp['name']}' takes {w}x{h}", offending=str(processor),
                         hint="choose the model's own processor file (the export's preprocessor_config.json)")
    a = x.astype(_dtype(inp))
    return a[None] if batched or len(d) == 4 else a  # [N, C, H, W] declared in full (max_batch_size 0)


def _image_patches(path: Path, inp: dict[str, Any], processor: Path | str | None) -> tuple[np.ndarray, np.ndarray]:
    """Qwen2-VL's vision input: the flattened patches and their grid, as HF's processor cuts them."""
    from studio.edge.preprocess_image import ImageSettings, image_patches

    pixels, grid, _ = image_patches(_open(path), ImageSettings.from_config(
        _processor_section(processor, "image_processor")), flag=str(path))
    return pixels.astype(_dtype(inp)), grid


def image_view(tensor: np.ndarray, processor: Path | str | None = None) -> np.ndarray:
    """The picture a pixel tensor made here shows, as HxWxC uint8: the processor's normalisation and rescale
    undone (studio.edge.preprocess_image.pixels_view), for drawing what the model was given."""
    from studio.edge.preprocess_image import pixels_view

    try:
        s = _image_settings(processor, 0, 0)
    except InputError:
        s = _image_settings(None, 0, 0)
    return pixels_view(tensor, s)


def _audio_settings(processor: Path | str | None) -> dict[str, Any]:
    return _processor_section(processor, "feature_extractor")


def _read_audio(path: Path, processor: Path | str | None) -> np.ndarray:
    """A .npy waveform as is, else the WAV through the shared reader (studio.edge.preprocess_audio), at the
    processor's sampling rate when one is given (the file's own rate otherwise)."""
    from studio.edge.preprocess_audio import read_wav, resample_linear
    from studio.edge.raw_inputs import RawInputError

    if path.suffix.lower() == ".npy":
        return np.load(path).astype(np.float32).reshape(-1)
    try:
        x, rate = read_wav(path.read_bytes())
    except RawInputError as exc:
        raise InputError(f"{path}: {exc}", offending=str(path),
                         hint="convert it to 16-bit PCM WAV, or pass a .npy waveform") from None
    cfg = _audio_settings(processor)
    want = int(cfg.get("sampling_rate") or rate)
    x = resample_linear(x, rate, want)
    if cfg.get("do_normalize") and cfg.get("feature_extractor_type") != "WhisperFeatureExtractor":
        x = (x - x.mean()) / np.sqrt(x.var() + 1e-7)
    return x


def _log_mel(path: Path, processor: Path | str | None) -> np.ndarray | None:
    """Whisper's ``input_features`` ``[n_mels, frames]`` of the audio when the processor is Whisper's."""
    from studio.edge.preprocess_audio import LogMelFeatures
    from studio.edge.raw_inputs import is_whisper_features

    cfg = _audio_settings(processor)
    if not is_whisper_features(cfg):
        return None
    return LogMelFeatures(cfg).one(_read_audio(path, processor))
