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

    BYTES inputs receive raw text / file bytes; numeric inputs get pixels (resized, normalised with the
    processor's mean/std when given), token ids from ``tokenizer`` (tokenizer.json) or a waveform. ``texts``:
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
            tok = _tokenizer(Path(tokenizer))
            encs = tok.encode_batch(many)
            width = max(len(e.ids) for e in encs)
            pad = _pad_id(tok, Path(tokenizer))
            cols = {"input_ids": [e.ids + [pad] * (width - len(e.ids)) for e in encs],
                    "attention_mask": [e.attention_mask + [0] * (width - len(e.ids)) for e in encs],
                    "token_type_ids": [e.type_ids + [0] * (width - len(e.ids)) for e in encs]}
            for n, rows in cols.items():
                if n in by_name and n not in feed:
                    a = np.asarray(rows if texts is not None else rows[0], dtype=_dtype(by_name[n]))
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
        if numeric is not None:
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
        inp = free(lambda i: _dtype(i) == np.dtype(object))
        if numeric is not None:
            feed[numeric["name"]] = batch(_wave(audio).astype(_dtype(numeric)), numeric)
            feed.roles[numeric["name"]] = "audio"
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
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(path if path.is_file() else path / "tokenizer.json"))


def _pad_id(tok: Any, path: Path) -> int:
    """The id texts are padded with: the tokenizer's own padding, else tokenizer_config.json's pad_token."""
    padding = tok.padding
    if padding and padding.get("pad_id") is not None:
        return int(padding["pad_id"])
    cfg_file = (path.parent if path.is_file() else path) / "tokenizer_config.json"
    try:
        import json

        pad = json.loads(cfg_file.read_text(encoding="utf-8")).get("pad_token")
    except (OSError, ValueError):
        pad = None
    pad = pad.get("content") if isinstance(pad, dict) else pad
    found = tok.token_to_id(pad) if isinstance(pad, str) else None
    return int(found) if found is not None else 0


def _image_tensor(path: Path, inp: dict[str, Any], d: list[int], batched: bool,
                  processor: Path | str | None) -> np.ndarray:
    try:
        from PIL import Image
    except ImportError as exc:
        raise DependencyMissing.for_module("pillow", "export", "reading image files") from exc
    c, h, w = d[-3:]
    h = h if h > 0 else 224
    w = w if w > 0 else 224
    mean, std = [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]
    if processor is not None:
        from studio.core.processor_files import read_processor

        try:
            pc = read_processor(processor, "image_processor")
        except (OSError, ValueError) as exc:
            raise InputError(f"processor file in {processor} is unreadable: {exc}", offending=str(processor),
                             hint="choose the export's preprocessor_config.json or processor_config.json") from exc
        mean, std = pc.get("image_mean", mean), pc.get("image_std", std)
    with Image.open(path) as im:
        im = im.convert("RGB" if c == 3 else "L").resize((w, h))
        a = np.asarray(im, dtype=np.float32) / 255.0
    if a.ndim == 2:
        a = a[..., None]
    a = (a - np.asarray(mean[: a.shape[-1]], np.float32)) / np.asarray(std[: a.shape[-1]], np.float32)
    a = a.transpose(2, 0, 1).astype(_dtype(inp))
    return a[None] if batched or len(d) == 4 else a  # [N, C, H, W] declared in full (max_batch_size 0)


def image_view(tensor: np.ndarray, processor: Path | str | None = None) -> np.ndarray:
    """The picture a pixel tensor made here shows, as HxWxC uint8: _image_tensor undone (the processor's
    mean / std, then the 1/255 scale), for drawing what the model was given."""
    x = np.asarray(tensor, dtype=np.float32)
    while x.ndim > 3:
        x = x[0]
    c = x.shape[0]
    mean, std = [0.0] * c, [1.0] * c
    if processor is not None:
        from studio.core.processor_files import read_processor

        try:
            pc = read_processor(processor, "image_processor")
        except (OSError, ValueError):
            pc = {}
        mean, std = pc.get("image_mean", mean)[:c], pc.get("image_std", std)[:c]
    x = x * np.asarray(std, np.float32).reshape(c, 1, 1) + np.asarray(mean, np.float32).reshape(c, 1, 1)
    img = np.clip(np.rint(x.transpose(1, 2, 0) * 255.0), 0, 255).astype(np.uint8)
    return np.repeat(img, 3, axis=2) if c == 1 else img


def _wave(path: Path) -> np.ndarray:
    import wave

    if path.suffix.lower() == ".npy":
        return np.load(path).astype(np.float32).reshape(-1)
    try:
        with wave.open(str(path), "rb") as w:
            n, width, ch = w.getnframes(), w.getsampwidth(), w.getnchannels()
            raw = w.readframes(n)
    except (wave.Error, EOFError) as exc:
        raise InputError(f"{path} is not a PCM WAV file: {exc}", offending=str(path),
                         hint="convert it to 16-bit PCM WAV, or pass a .npy waveform") from exc
    dt = {1: np.uint8, 2: np.int16, 4: np.int32}.get(width)
    if dt is None:
        raise InputError(f"{path}: {8 * width}-bit samples are not supported", offending=str(path))
    a = np.frombuffer(raw, dtype=dt).astype(np.float32)
    if width == 1:
        a = (a - 128.0) / 128.0
    else:
        a /= float(2 ** (8 * width - 1))
    return a.reshape(-1, ch).mean(axis=1)
