"""Raw-input preprocessors built from a bundle's processor files: text, image and audio to model tensors.

A bundle declares its raw inputs in ``runtime.json`` (``models[i].raw_inputs``, written by ``studio package``
from the tokenizer / processor files it carries, see :func:`studio.edge.raw_inputs.declare_raw_inputs`). Each
raw input is a KServe v2 BYTES tensor of shape ``[batch]``: UTF-8 text, encoded image files (PNG, JPEG, ...),
or WAV files; in the JSON form images and audio are base64 strings. Preprocessing reproduces the HF processor (CLIP-style
resize of the shortest edge, centre crop, rescale, normalise; tokenizer padding to the longest; Whisper's
log-mel spectrogram) with PIL, numpy and ``tokenizers`` only: no torch or transformers on the board.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import BundleError
from studio.core.processor_files import PROCESSOR_FILES
from studio.edge.raw_inputs import TOKENIZER_FILE, is_whisper_features
from studio.edge.raw_inputs import processor_config as _processor_config

_IMAGE_MAGIC = (b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"BM", b"RIFF", b"II*\x00", b"MM\x00*")


class RawInputError(ValueError):
    """A raw input that cannot be decoded (HTTP 400)."""


def _maybe_base64(raw: bytes, magics: tuple[bytes, ...]) -> bytes:
    """Binary tensors carry the file itself; the JSON form carries it base64-encoded."""
    if raw.startswith(magics):
        return raw
    try:
        return base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        return raw


class TextPreprocessor:
    """``tokenizers`` with the bundle's tokenizer.json: pad to the longest text, truncate to the model's max."""

    def __init__(self, files: dict[str, Path], produces: list[str]) -> None:
        from tokenizers import Tokenizer

        path = files.get(TOKENIZER_FILE)
        try:
            self.tok = Tokenizer.from_file(str(path))
        except Exception as exc:
            raise BundleError(f"cannot load the bundle's tokenizer: {exc}", offending=str(path),
                              hint="re-export the model; the bundle needs a tokenizers-format tokenizer.json"
                              ) from exc
        cfg: dict[str, Any] = {}
        if files.get("tokenizer_config.json"):
            try:
                cfg = json.loads(files["tokenizer_config.json"].read_text(encoding="utf-8"))
            except (OSError, ValueError):
                cfg = {}
        pad = cfg.get("pad_token")
        pad = pad.get("content") if isinstance(pad, dict) else pad
        pad_id = self.tok.token_to_id(pad) if isinstance(pad, str) else None
        self.pad_id = 0 if pad_id is None else pad_id
        max_len = cfg.get("model_max_length")
        self.max_len = int(max_len) if isinstance(max_len, int) and 0 < max_len < 1_000_000 else None
        self.produces = produces

    def __call__(self, texts: list[bytes]) -> dict[str, np.ndarray]:
        try:
            strs = [t.decode("utf-8") for t in texts]
        except UnicodeDecodeError as exc:
            raise RawInputError(f"text input is not UTF-8: {exc}") from None
        encs = self.tok.encode_batch(strs)
        ids = [e.ids[: self.max_len] if self.max_len else e.ids for e in encs]
        n = max((len(i) for i in ids), default=0)
        input_ids = np.full((len(ids), n), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(ids), n), dtype=np.int64)
        types = np.zeros((len(ids), n), dtype=np.int64)
        for r, (row, e) in enumerate(zip(ids, encs, strict=True)):
            input_ids[r, : len(row)] = row
            mask[r, : len(row)] = 1
            types[r, : len(row)] = e.type_ids[: len(row)]
        full = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": types}
        return {k: full[k] for k in self.produces}


class ImagePreprocessor:
    """Decode, RGB, resize (shortest edge or fixed size), centre crop, rescale, normalise, CHW (HF order)."""

    def __init__(self, files: dict[str, Path]) -> None:
        c = _processor_config(files, "image_processor")
        if not c:
            raise BundleError("the bundle declares an image input but has no image processor settings",
                              offending=", ".join(PROCESSOR_FILES), hint="re-package from the export folder")
        self.size = c.get("size") or {}
        self.crop = c.get("crop_size") if c.get("do_center_crop", False) else None
        self.do_resize = c.get("do_resize", True)
        self.resample = int(c.get("resample", 3))
        self.do_rescale, self.scale = c.get("do_rescale", True), float(c.get("rescale_factor", 1 / 255))
        self.do_normalize = c.get("do_normalize", True)
        self.mean = np.asarray(c.get("image_mean", [0.5, 0.5, 0.5]), dtype=np.float32).reshape(3, 1, 1)
        self.std = np.asarray(c.get("image_std", [0.5, 0.5, 0.5]), dtype=np.float32).reshape(3, 1, 1)
        self.rgb = c.get("do_convert_rgb", True)

    def _target(self, w: int, h: int) -> tuple[int, int]:
        s = self.size
        if "shortest_edge" in s:
            short, long_ = (w, h) if w <= h else (h, w)
            new_short, new_long = int(s["shortest_edge"]), int(int(s["shortest_edge"]) * long_ / short)
            return (new_short, new_long) if w <= h else (new_long, new_short)
        if "height" in s and "width" in s:
            return int(s["width"]), int(s["height"])
        return w, h

    def one(self, raw: bytes) -> np.ndarray:
        from PIL import Image, UnidentifiedImageError

        data = _maybe_base64(raw, _IMAGE_MAGIC)
        try:
            img = Image.open(io.BytesIO(data))
            img.load()
        except (UnidentifiedImageError, OSError, ValueError) as exc:
            raise RawInputError(f"image input is not a readable image file: {exc}") from None
        if self.rgb and img.mode != "RGB":
            img = img.convert("RGB")
        if self.do_resize:
            tw, th = self._target(*img.size)
            if (tw, th) != img.size:
                img = img.resize((tw, th), resample=Image.Resampling(self.resample))
        arr = np.asarray(img, dtype=np.uint8)
        if self.crop:
            ch, cw = int(self.crop["height"]), int(self.crop["width"])
            h, w = arr.shape[:2]
            top, left = max((h - ch) // 2, 0), max((w - cw) // 2, 0)
            arr = arr[top:top + ch, left:left + cw]
        x = arr.astype(np.float32).transpose(2, 0, 1)
        if self.do_rescale:
            x *= np.float32(self.scale)
        if self.do_normalize:
            x = (x - self.mean) / self.std
        return x

    def __call__(self, images: list[bytes]) -> dict[str, np.ndarray]:
        return {"pixel_values": np.stack([self.one(b) for b in images]).astype(np.float32, copy=False)}


def resample_linear(x: np.ndarray, src_rate: int, dst_rate: int) -> np.ndarray:
    """Linear-interpolation resampling (enough for speech front-ends; no scipy on the board)."""
    if src_rate == dst_rate or x.size == 0:
        return x.astype(np.float32, copy=False)
    n = max(1, int(round(x.shape[-1] * dst_rate / src_rate)))
    t = np.arange(n, dtype=np.float64) * (src_rate / dst_rate)
    return np.interp(t, np.arange(x.shape[-1], dtype=np.float64), x.astype(np.float64)).astype(np.float32)


def _hz_to_mel_slaney(f: np.ndarray) -> np.ndarray:
    f = np.asarray(f, dtype=np.float64)
    lin = 3.0 * f / 200.0
    log = 15.0 + np.log(np.maximum(f, 1e-12) / 1000.0) * (27.0 / np.log(6.4))
    return np.where(f >= 1000.0, log, lin)


def _mel_to_hz_slaney(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float64)
    lin = 200.0 * m / 3.0
    log = 1000.0 * np.exp((np.log(6.4) / 27.0) * (m - 15.0))
    return np.where(m >= 15.0, log, lin)


def slaney_mel_filters(n_freqs: int, n_mels: int, sampling_rate: int, f_min: float = 0.0,
                       f_max: float = 8000.0) -> np.ndarray:
    """Slaney-scale, area-normalised triangular filters ``[n_freqs, n_mels]`` (as transformers'
    ``mel_filter_bank(norm="slaney", mel_scale="slaney")`` and librosa build them)."""
    mels = np.linspace(_hz_to_mel_slaney(np.float64(f_min)), _hz_to_mel_slaney(np.float64(f_max)), n_mels + 2)
    hz = _mel_to_hz_slaney(mels)
    fft_freqs = np.linspace(0, sampling_rate // 2, n_freqs)
    slopes = hz[None, :] - fft_freqs[:, None]
    diff = np.diff(hz)
    down = -slopes[:, :-2] / diff[:-1]
    up = slopes[:, 2:] / diff[1:]
    filters = np.maximum(0.0, np.minimum(down, up))
    return filters * (2.0 / (hz[2:n_mels + 2] - hz[:n_mels]))[None, :]


class LogMelFeatures:
    """Whisper's log-mel front-end in numpy: pad / truncate to ``n_samples``, centred STFT (reflect padding,
    periodic Hann window), power spectrum, mel filters, log10 clamped at 1e-10, the last frame dropped,
    dynamic range limited to 8 (per clip), then ``(x + 4) / 4``. Matches ``WhisperFeatureExtractor``."""

    def __init__(self, cfg: dict[str, Any]) -> None:
        try:
            self.rate = int(cfg.get("sampling_rate", 16000))
            self.n_mels = int(cfg.get("feature_size", cfg.get("n_mels", 80)))
            self.n_fft = int(cfg.get("n_fft", 400))
            self.hop = int(cfg.get("hop_length", 160))
            chunk = cfg.get("chunk_length", 30)
            self.n_samples = int(cfg.get("n_samples") or int(chunk) * self.rate)
            self.pad_value = float(cfg.get("padding_value", 0.0))
            self.normalize = bool(cfg.get("do_normalize", False))
            saved = cfg.get("mel_filters")
            filters = (np.asarray(saved, dtype=np.float64) if saved is not None else
                       slaney_mel_filters(1 + self.n_fft // 2, self.n_mels, self.rate))
        except (TypeError, ValueError) as exc:
            raise BundleError(f"the Whisper feature extractor settings are malformed: {exc}",
                              offending="preprocessor_config.json",
                              hint="re-export the model so its processor files are complete") from None
        if filters.shape == (self.n_mels, 1 + self.n_fft // 2):
            filters = filters.T
        if filters.shape != (1 + self.n_fft // 2, self.n_mels) or self.hop <= 0 or self.n_samples <= 0:
            raise BundleError(f"the Whisper feature extractor settings are inconsistent (mel filters "
                              f"{list(filters.shape)}, n_fft {self.n_fft}, feature_size {self.n_mels})",
                              offending="preprocessor_config.json", hint="re-export the model")
        self.filters = filters
        n = np.arange(self.n_fft, dtype=np.float64)
        self.window = 0.5 - 0.5 * np.cos(2.0 * np.pi * n / self.n_fft)  # periodic Hann

    @property
    def frames(self) -> int:
        return self.n_samples // self.hop

    def one(self, wave_: np.ndarray) -> np.ndarray:
        """``[n_mels, frames]`` float32 features of one mono waveform at :attr:`rate`."""
        x = np.full(self.n_samples, self.pad_value, dtype=np.float64)
        n = min(len(wave_), self.n_samples)
        x[:n] = wave_[:n]
        if self.normalize and n:
            v = x[:n]
            x[:n] = (v - v.mean()) / np.sqrt(v.var() + 1e-7)
            x[n:] = self.pad_value
        half = self.n_fft // 2
        if len(x) <= half:
            raise RawInputError(f"audio input is shorter than the model's FFT window ({self.n_fft} samples)")
        x = np.pad(x, half, mode="reflect")
        count = 1 + (len(x) - self.n_fft) // self.hop
        idx = np.arange(self.n_fft)[None, :] + self.hop * np.arange(count)[:, None]
        spec = np.fft.rfft(x[idx] * self.window, n=self.n_fft, axis=-1)
        power = spec.real ** 2 + spec.imag ** 2  # [frames + 1, n_freqs]
        mel = power[:-1] @ self.filters  # the last frame dropped, as Whisper does
        log = np.log10(np.maximum(mel, 1e-10)).T
        log = np.maximum(log, log.max() - 8.0)
        return ((log + 4.0) / 4.0).astype(np.float32)


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
        data = _maybe_base64(raw, (b"RIFF",))
        try:
            with wave.open(io.BytesIO(data)) as w:
                rate, width, ch = w.getframerate(), w.getsampwidth(), w.getnchannels()
                frames = w.readframes(w.getnframes())
        except (wave.Error, EOFError) as exc:
            raise RawInputError(f"audio input is not a PCM WAV file: {exc}") from None
        if width == 1:
            x = (np.frombuffer(frames, np.uint8).astype(np.float32) - 128.0) / 128.0
        elif width in (2, 4):
            dt = np.int16 if width == 2 else np.int32
            x = np.frombuffer(frames, dt).astype(np.float32) / float(np.iinfo(dt).max)
        else:
            raise RawInputError(f"audio input: {8 * width}-bit samples are not supported (use 16-bit PCM)")
        x = x.reshape(-1, ch).mean(axis=1)
        x = resample_linear(x, rate, self.rate)
        if self.normalize:
            x = (x - x.mean()) / np.sqrt(x.var() + 1e-7)
        return x

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
            fn = ImagePreprocessor(files)
        elif kind == "audio":
            fn = AudioPreprocessor(files, produces)
        else:
            raise BundleError(f"raw input '{name}' has unknown kind '{kind}'", offending="runtime.json",
                              hint="kinds are text, image and audio")
        out[name] = RawInput(name, kind, produces, fn)
    return out
