"""What test inference shows as pictures, computed on the job's thread (numpy, no widgets): the input image and
the model's view of it, the waveform and log-mel of an audio input, zero-shot label scores. The notes are said in
the studio's language (QCoreApplication.translate is thread-safe; no widget is touched here).

Nothing here preprocesses on its own: the model's view is the tensor the request carried (studio.triton.inputs
made it; ``image_view`` undoes its normalisation for drawing) or, for a raw image / audio input the server
preprocesses, what the agent's own preprocessors (studio.edge.preprocess) compute from the processor file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QCoreApplication

translate = QCoreApplication.translate

ZERO_SHOT_OUTPUT = "logits_per_image"  # CLIP-class models (CLIP, SigLIP, ALIGN ...): images x texts
MAX_SAMPLES_DRAWN = 4000  # a waveform is drawn from at most this many min/max pairs


@dataclass
class Previews:
    image: np.ndarray | None = None  # HxWx3 uint8: the file as read
    image_note: str = ""
    model_view: np.ndarray | None = None  # HxWx3 uint8: the pixels the model got
    model_view_note: str = ""
    waveform: np.ndarray | None = None  # mono float32 at ``sample_rate``
    sample_rate: int = 0
    waveform_note: str = ""
    log_mel: np.ndarray | None = None  # [n_mels, frames]
    log_mel_note: str = ""
    labels: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)  # one per label, summing to 1
    scores_note: str = ""
    notes: list[str] = field(default_factory=list)  # what could not be drawn, and why


def split_labels(text: str) -> list[str]:
    """The labels a user typed for a zero-shot model: separated by commas, semicolons or new lines."""
    return [t.strip() for t in re.split(r"[,;\n]", text) if t.strip()]


def takes_labels(config: dict[str, Any]) -> bool:
    """A zero-shot model scores one image against several texts: it outputs logits_per_image."""
    return any(o.get("name") == ZERO_SHOT_OUTPUT for o in config.get("output", []))


def softmax(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max())
    return e / e.sum()


def _read_image(path: Path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"), dtype=np.uint8).copy()


def _processor_files(processor: str | None) -> dict[str, Path]:
    from studio.core.processor_files import find_processor_file

    f = find_processor_file(processor) if processor else None
    return {f.name: f} if f is not None else {}


def build(feed: Any, outputs: dict[str, np.ndarray], *, image: str | None, audio: str | None,
          processor: str | None, labels: list[str]) -> Previews:
    """The pictures of one request: ``feed`` is studio.triton.inputs' Feed (tensors and their roles)."""
    from studio.triton.inputs import image_view

    pv = Previews()
    roles: dict[str, str] = getattr(feed, "roles", {})
    if image:
        try:
            pv.image = _read_image(Path(image))
            pv.image_note = f"{Path(image).name}: {pv.image.shape[1]}×{pv.image.shape[0]}"
        except OSError as exc:
            pv.notes.append(translate("Previews", "the image could not be read for drawing: {error}").format(error=exc))
    for name, role in roles.items():
        t = feed[name]
        if role == "image" and pv.model_view is None:
            pv.model_view = image_view(t, processor)
            got = (translate("Previews", "what the model got (resized, normalised with the processor's mean / std)")
                   if processor else translate("Previews", "what the model got (resized)"))
            pv.model_view_note = f"{name} {'×'.join(map(str, t.shape))}: {got}"
        elif role == "image-bytes" and pv.model_view is None:
            _server_image_view(pv, t, processor)
        elif role == "audio" and pv.waveform is None:
            pv.waveform = np.asarray(t, dtype=np.float32).reshape(-1)
            pv.waveform_note = (f"{name} {'×'.join(map(str, t.shape))}: "
                                + translate("Previews", "the waveform the model got"))
    if audio:
        _audio_views(pv, Path(audio), processor)
    if labels and ZERO_SHOT_OUTPUT in outputs:
        logits = np.asarray(outputs[ZERO_SHOT_OUTPUT])
        row = logits.reshape(-1, logits.shape[-1])[0] if logits.ndim else logits.reshape(1)
        if len(row) == len(labels):
            pv.labels, pv.scores = list(labels), [float(v) for v in softmax(row)]
            pv.scores_note = translate("Previews", "softmax over {output} (image 1 against {n} labels)").format(
                output=ZERO_SHOT_OUTPUT, n=len(labels))
        else:
            pv.notes.append(translate("Previews", "{output} has {scores} scores for {labels} labels: not drawn").format(
                output=ZERO_SHOT_OUTPUT, scores=len(row), labels=len(labels)))
    return pv


def _server_image_view(pv: Previews, t: np.ndarray, processor: str | None) -> None:
    """A raw image input: the server (an agent's pipeline) preprocesses it; the shared ImagePreprocessor shows how."""
    from studio.edge.preprocess import ImagePreprocessor

    files = _processor_files(processor)
    if not files:
        pv.notes.append(translate("Previews", "the model takes the image file itself: choose the processor file to "
                                              "see what the server makes of it"))
        return
    from studio.edge.preprocess_image import pixels_view

    try:
        pre = ImagePreprocessor(files)
        if pre.settings.patches is not None:
            pv.notes.append(translate("Previews", "the server cuts the image into patches (Qwen2-VL): no picture of "
                                                  "them is drawn"))
            return
        x = pre.one(bytes(np.asarray(t).reshape(-1)[0]))
    except Exception as exc:  # BundleError, RawInputError: said, not drawn
        pv.notes.append(translate("Previews", "the server-side view could not be made: {error}").format(error=exc))
        return
    pv.model_view = pixels_view(x, pre.settings)
    pv.model_view_note = (f"{x.shape[2]}×{x.shape[1]}: "
                          + translate("Previews", "what the server's preprocessor makes of it ({file})").format(
                              file=next(iter(files))))


def _audio_views(pv: Previews, path: Path, processor: str | None) -> None:
    """Waveform and log-mel of an audio file through the agent's own front end (resampled to the processor's
    rate; log-mel where the processor describes one, as Whisper's does)."""
    from studio.edge.preprocess import AudioPreprocessor, LogMelFeatures
    from studio.edge.raw_inputs import is_whisper_features, processor_config

    files = _processor_files(processor)
    try:
        cfg = processor_config(files, "feature_extractor") if files else {}
        front = AudioPreprocessor(files, ["input_values"])
        wave = front.one(path.read_bytes())
    except Exception as exc:  # unreadable WAV or processor: said, not drawn
        pv.notes.append(translate("Previews", "the audio could not be drawn: {error}").format(error=exc))
        return
    if pv.waveform is None:
        pv.waveform = wave
        pv.waveform_note = f"{path.name}: " + translate("Previews", "{seconds} s at {rate} Hz").format(
            seconds=f"{len(wave) / front.rate:.2f}", rate=f"{front.rate:,}")
    pv.sample_rate = front.rate
    if cfg and is_whisper_features(cfg):
        mel = LogMelFeatures(cfg)
        pv.log_mel = mel.one(wave)[:, : max(1, min(mel.frames, int(np.ceil(len(wave) / mel.hop)) + 1))]
        pv.log_mel_note = translate("Previews", "log-mel {size} (the part with audio drawn): the model's "
                                                "input_features, as the agent computes them").format(
            size=f"{mel.n_mels}×{mel.frames}")
    elif files:
        pv.notes.append(translate("Previews", "no log-mel: the processor describes no log-mel front end (the model "
                                              "takes the waveform)"))


def waveform_envelope(wave: np.ndarray, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """(min, max) per drawn column: a long clip drawn in constant time."""
    n = max(1, min(columns, len(wave), MAX_SAMPLES_DRAWN))
    chunks = np.array_split(np.asarray(wave, dtype=np.float32), n)
    return (np.array([c.min() if len(c) else 0.0 for c in chunks]),
            np.array([c.max() if len(c) else 0.0 for c in chunks]))


__all__ = ["Previews", "ZERO_SHOT_OUTPUT", "build", "softmax", "split_labels", "takes_labels",
           "waveform_envelope"]
