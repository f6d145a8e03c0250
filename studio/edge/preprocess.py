"""Raw-input preprocessors built from a bundle's processor files: text, image and audio to model tensors.

A bundle declares its raw inputs in ``runtime.json`` (``models[i].raw_inputs``, written by ``studio package``
from the tokenizer / processor files it carries, see :func:`studio.edge.raw_inputs.declare_raw_inputs`). Each
raw input is a KServe v2 BYTES tensor of shape ``[batch]``: UTF-8 text, encoded image files (PNG, JPEG, ...),
or WAV files; in the JSON form images and audio are base64 strings. Each goes through the one pre-processing of
its modality (studio.edge.preprocess_text, preprocess_image, preprocess_audio), the same the Triton test inference and the
generation runtime use, equal to HF's processors. PIL, numpy and ``tokenizers`` only: no torch on the board.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import BundleError
from studio.core.processor_files import PROCESSOR_FILES
from studio.edge.preprocess_audio import LogMelFeatures, resample_linear, slaney_mel_filters, waveform
from studio.edge.preprocess_image import IMAGE_MAGIC, ImageSettings, image_patches, image_pixels, open_image
from studio.edge.preprocess_text import load_tokenizer, tokenize
from studio.edge.raw_inputs import TOKENIZER_FILE, RawInputError, is_whisper_features
from studio.edge.raw_inputs import processor_config as _processor_config

__all__ = ["AudioPreprocessor", "ImagePreprocessor", "LogMelFeatures", "RawInput", "RawInputError",
           "TextPreprocessor", "build_preprocessors", "resample_linear", "slaney_mel_filters"]


def _maybe_base64(raw: bytes, magics: tuple[bytes, ...]) -> bytes:
    """Binary tensors carry the file itself; the JSON form carries it base64-encoded."""
    if raw.startswith(magics):
        return raw
    try:
        return base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        return raw


class TextPreprocessor:
    """The bundle's tokenizer.json through the one text pre-processing (studio.edge.preprocess_text): pad to the
    longest text, truncate to the model's maximum, as HF's fast tokenizer does."""

    def __init__(self, files: dict[str, Path], produces: list[str]) -> None:
        path = files.get(TOKENIZER_FILE)
        try:
            self.tok, self.settings = load_tokenizer(path, files.get("tokenizer_config.json"))  # type: ignore[arg-type]
        except Exception as exc:
            raise BundleError(f"cannot load the bundle's tokenizer: {exc}", offending=str(path),
                              hint="re-export the model; the bundle needs a tokenizers-format tokenizer.json"
                              ) from exc
        self.pad_id, self.max_len = self.settings.pad_id, self.settings.max_len
        self.produces = produces

    def __call__(self, texts: list[bytes]) -> dict[str, np.ndarray]:
        try:
            strs = [t.decode("utf-8") for t in texts]
        except UnicodeDecodeError as exc:
            raise RawInputError(f"text input is not UTF-8: {exc}") from None
        full = tokenize(self.tok, self.settings, strs)
        return {k: full[k] for k in self.produces}


class ImagePreprocessor:
    """Encoded image files -> ``pixel_values`` through the one image pre-processing (HF's steps and numerics):
    ``[batch, C, H, W]``, or for a Qwen2-VL processor the patches of every image concatenated (HF's layout) and,
    when ``produces`` names it, the grid the model needs with them (``image_grid_thw``, ``[images, 3]`` int64)."""

    def __init__(self, files: dict[str, Path], produces: list[str] | None = None) -> None:
        c = _processor_config(files, "image_processor")
        if not c:
            raise BundleError("the bundle declares an image input but has no image processor settings",
                              offending=", ".join(PROCESSOR_FILES), hint="re-package from the export folder")
        self.settings = ImageSettings.from_config(c)
        companions = [n for n in (produces or []) if n != "pixel_values"]
        self.grid = companions[0] if companions and self.settings.patches is not None else None

    def one(self, raw: bytes) -> np.ndarray:
        img = open_image(_maybe_base64(raw, IMAGE_MAGIC))
        if self.settings.patches is not None:
            return image_patches(img, self.settings, flag="image")[0]
        return image_pixels(img, self.settings)

    def __call__(self, images: list[bytes]) -> dict[str, np.ndarray]:
        if self.settings.patches is not None:
            cut = [image_patches(open_image(_maybe_base64(b, IMAGE_MAGIC)), self.settings, flag="image") for b in images]
            out = {"pixel_values": np.concatenate([c[0] for c in cut]).astype(np.float32, copy=False)}
            if self.grid is not None:
                out[self.grid] = np.concatenate([c[1] for c in cut]).astype(np.int64, copy=False)
            return out
        return {"pixel_values": np.stack([self.one(b) for b in images]).astype(np.float32, copy=False)}


class AudioPreprocessor:
    """WAV (PCM 8/16/32-bit, any rate, mixed to mono) resampled to the processor's rate; then either the
    waveform padded to the longest (``input_values`` models) or Whisper log-mel ``input_features``."""

    def __init__(self, files: dict[str, Path], produces: list[str]) -> None:
        c = _processor_config(files, "feature_extractor")
        self.rate = int(c.get("sampling_rate", 16000))
        self.name = produces[0]
        self.log_mel = LogMelFeatures(c) if self.name == "input_features" and is_whisper_features(c) else None
        # Whisper normalises the waveform inside the feature extractor (over the clip, before padding)
        self.normalize = bool(c.get("do_normalize", False)) and self.log_mel is None

    def one(self, raw: bytes) -> np.ndarray:
        return waveform(_maybe_base64(raw, (b"RIFF",)), self.rate, self.normalize)

    def __call__(self, clips: list[bytes]) -> dict[str, np.ndarray]:
        waves = [self.one(b) for b in clips]
        if self.log_mel is not None:
            feats = [self.log_mel.one(w) for w in waves]
            if not feats:
                return {self.name: np.zeros((0, self.log_mel.n_mels, self.log_mel.frames), dtype=np.float32)}
            return {self.name: np.stack(feats)}
        n = max((len(w) for w in waves), default=0)
        out = np.zeros((len(waves), n), dtype=np.float32)
        for i, w in enumerate(waves):
            out[i, : len(w)] = w
        return {self.name: out}


@dataclass
class RawInput:
    name: str
    kind: str
    produces: list[str]
    fn: Any

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "datatype": "BYTES", "shape": [-1],
                "produces": list(self.produces)}


def build_preprocessors(specs: list[dict[str, Any]], directory: Path) -> dict[str, RawInput]:
    """The raw inputs a served model declares, with their preprocessors loaded from the bundle folder."""
    out: dict[str, RawInput] = {}
    for s in specs:
        try:
            name, kind, produces = s["name"], s["kind"], list(s["produces"])
            files = {Path(f).name: directory / f for f in s.get("files", [])}
        except (KeyError, TypeError) as exc:
            raise BundleError(f"runtime.json raw_inputs entry is malformed: {exc}", offending="runtime.json",
                              hint="rebuild the bundle with `studio package`") from None
        for p in files.values():
            if not p.is_file():
                raise BundleError(f"raw input '{name}' needs {p.name}, which the bundle lacks", offending=str(p),
                                  hint="rebuild the bundle with `studio package` from the export folder")
        if kind == "text":
            fn: Any = TextPreprocessor(files, produces)
        elif kind == "image":
            fn = ImagePreprocessor(files, produces)
        elif kind == "audio":
            fn = AudioPreprocessor(files, produces)
        else:
            raise BundleError(f"raw input '{name}' has unknown kind '{kind}'", offending="runtime.json",
                              hint="kinds are text, image and audio")
        out[name] = RawInput(name, kind, produces, fn)
    return out
