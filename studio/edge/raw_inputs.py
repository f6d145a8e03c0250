"""The raw inputs a bundle's ``runtime.json`` declares: which tensors text, images and audio become.

Why here: ``studio package`` decides them from the processor files it packs (:func:`declare_raw_inputs`) and the
agent builds its preprocessors from the same names and settings (``studio.edge.preprocess``); the two must
agree, and neither side owns the other.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from studio.core.errors import BundleError
from studio.core.processor_files import PROCESSOR_FILES, processor_section

TOKENIZER_FILE = "tokenizer.json"
TEXT_TENSORS = ("input_ids", "attention_mask", "token_type_ids")
IMAGE_TENSORS = ("pixel_values",)
GRID_TENSORS = ("image_grid_thw", "grid_thw")  # a patching processor's grid, taken beside pixel_values
AUDIO_TENSORS = ("input_values", "input_features", "audio", "waveform")


class RawInputError(ValueError):
    """A raw input (text, image or WAV bytes) that cannot be decoded (the agent answers HTTP 400)."""


def processor_config(files: dict[str, Path], section: str) -> dict[str, Any]:
    """The image / audio processor's settings from the bundle's processor file (either transformers layout)."""
    for name in PROCESSOR_FILES:
        p = files.get(name)
        if p is None:
            continue
        try:
            d = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BundleError(f"{name} is unreadable: {exc}", offending=str(p),
                              hint="re-export the model so its processor files are complete") from exc
        found = processor_section(d, section, name)
        if found or name == "preprocessor_config.json":
            return found
    return {}


def declare_raw_inputs(model_inputs: list[dict[str, Any]], folder: Path, prefix: str = "") -> list[dict[str, Any]]:
    """Raw inputs a model can accept given the processor files in ``folder`` (used by ``studio package``).

    ``model_inputs``: the model's tensor inputs (``name``/``datatype``/``shape``); ``prefix``: the folder's
    path inside the bundle (``model``). Returns entries like ``{"name": "text", "kind": "text",
    "produces": ["input_ids", "attention_mask"], "files": ["model/tokenizer.json", ...]}``.
    """
    pre = prefix.rstrip("/") + "/" if prefix else ""
    names = {i["name"] for i in model_inputs}
    out: list[dict[str, Any]] = []
    text = [n for n in TEXT_TENSORS if n in names]
    if "input_ids" in names and (folder / TOKENIZER_FILE).is_file():
        cfg = [TOKENIZER_FILE] + [f for f in ("tokenizer_config.json",) if (folder / f).is_file()]
        out.append({"name": "text", "kind": "text", "datatype": "BYTES", "produces": text,
                    "files": [pre + f for f in cfg]})
    procs = [f for f in PROCESSOR_FILES if (folder / f).is_file()]
    files = {f: folder / f for f in procs}
    if "pixel_values" in names and procs:
        image_cfg = processor_config(files, "image_processor")
        if image_cfg:
            # a patching processor (Qwen2-VL) also gives the grid a vision graph takes beside the patches
            grid = [n for n in GRID_TENSORS if n in names][:1] if image_cfg.get("patch_size") and image_cfg.get("merge_size") else []
            out.append({"name": "image", "kind": "image", "datatype": "BYTES", "produces": ["pixel_values", *grid],
                        "files": [pre + f for f in procs]})
    audio = [n for n in AUDIO_TENSORS if n in names]
    fe = processor_config(files, "feature_extractor") if audio and procs else {}
    if audio and fe.get("sampling_rate"):
        spec = next(i for i in model_inputs if i["name"] == audio[0])
        rank = len(spec.get("shape", []))
        entry = {"name": "audio", "kind": "audio", "datatype": "BYTES", "produces": [audio[0]],
                 "files": [pre + f for f in procs]}
        if rank == 2:  # raw waveform [batch, samples]
            out.append(entry)
        elif rank == 3 and audio[0] == "input_features" and is_whisper_features(fe):
            out.append({**entry, "features": "whisper-log-mel"})  # [batch, n_mels, frames], see LogMelFeatures
    return out


def is_whisper_features(cfg: dict[str, Any]) -> bool:
    """Whether a feature-extractor config describes Whisper's log-mel front-end."""
    return cfg.get("feature_extractor_type") == "WhisperFeatureExtractor"
