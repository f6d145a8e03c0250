"""The cache layout and generation settings an export records beside its decoder, read back by the runtime.

``generation.json`` is the studio's own record (layout, special ids, max context, the source HF folder and the
export's generation-parity verdict); ``genai_config.json`` is the same layout in onnxruntime-genai's format, so
``onnxruntime_genai.Model(export_dir)`` loads the studio's graph unchanged. Torch-free: the export writes these
from the HF config, the runtime reads them with json alone.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import InputError, ModelError

GENERATION_FILE = "generation.json"
GENAI_FILE = "genai_config.json"
PAST_KEY = "past_key_values.{}.key"
PAST_VALUE = "past_key_values.{}.value"
PRESENT_KEY = "present.{}.key"
PRESENT_VALUE = "present.{}.value"
LAYOUT = "batch, kv_heads, sequence, head_dim"


@dataclass
class CacheLayout:
    """What one decoder graph's KV cache looks like: one key and one value tensor per layer, shaped LAYOUT."""

    layers: int
    kv_heads: int
    head_dim: int
    attention_heads: int
    hidden_size: int
    vocab_size: int
    dtype: str = "float32"
    layout: str = LAYOUT

    def past_names(self) -> list[str]:
        return [n.format(i) for i in range(self.layers) for n in (PAST_KEY, PAST_VALUE)]

    def present_names(self) -> list[str]:
        return [n.format(i) for i in range(self.layers) for n in (PRESENT_KEY, PRESENT_VALUE)]


@dataclass
class GenerationConfig:
    """Everything ``studio generate`` needs beside the ONNX file (one decoder graph with past inputs)."""

    model_file: str
    model_type: str
    cache: CacheLayout
    max_context: int
    bos_token_id: int | None = None
    eos_token_ids: list[int] = field(default_factory=list)
    pad_token_id: int | None = None
    inputs: list[str] = field(default_factory=list)  # graph inputs in order (ids, mask, positions, past...)
    outputs: list[str] = field(default_factory=list)
    graphs: str = "one graph with past inputs (prefill = zero-length past)"
    source_model_dir: str | None = None  # the HF folder it was exported from (HF parity at generate time)
    validation: dict[str, Any] = field(default_factory=dict)  # the export's generation-parity summary
    schema_version: int = 1
    kind: str = "decoder-only"  # "vlm": a vision graph (parts["vision"]) feeds the decoder (studio.generate.vlm)
    parts: dict[str, str] = field(default_factory=dict)  # other graphs by role -> file name
    vision: dict[str, Any] = field(default_factory=dict)  # VLM: image token id, patch / merge size, min/max pixels

    @property
    def has_position_ids(self) -> bool:
        return "position_ids" in self.inputs

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _ids(value: Any) -> list[int]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [int(v) for v in value if v is not None]
    return [int(value)]


def text_config(config: dict[str, Any]) -> dict[str, Any]:
    sub = config.get("text_config")
    return sub if isinstance(sub, dict) else config


def layout_from_config(config: dict[str, Any]) -> CacheLayout:
    """The cache layout an HF decoder config implies (checked against the real model's cache at export)."""
    t = text_config(config)
    heads = int(t.get("num_attention_heads") or t.get("n_head") or 0)
    hidden = int(t.get("hidden_size") or t.get("n_embd") or 0)
    layers = int(t.get("num_hidden_layers") or t.get("n_layer") or 0)
    if not (heads and hidden and layers):
        raise InputError("the config names no attention heads / hidden size / layer count",
                         offending="config.json", hint="export a decoder-only model (Qwen2, Llama, ...)")
    kv = int(t.get("num_key_value_heads") or heads)
    head_dim = int(t.get("head_dim") or hidden // heads)
    return CacheLayout(layers=layers, kv_heads=kv, head_dim=head_dim, attention_heads=heads, hidden_size=hidden,
                       vocab_size=int(t.get("vocab_size") or 0))


def special_ids(config: dict[str, Any], generation_config: dict[str, Any] | None) -> dict[str, Any]:
    """bos / eos / pad ids: generation_config.json wins over config.json (HF generate reads it first)."""
    t = text_config(config)
    g = generation_config or {}

    def pick(key: str) -> Any:
        return g.get(key) if g.get(key) is not None else t.get(key, config.get(key))

    bos, pad = pick("bos_token_id"), pick("pad_token_id")
    return {"bos_token_id": None if bos is None else int(bos), "eos_token_ids": _ids(pick("eos_token_id")),
            "pad_token_id": None if pad is None else int(pad)}


def genai_config(gen: GenerationConfig) -> dict[str, Any]:
    """onnxruntime-genai's genai_config.json for the same graph (no shared past/present buffer: the studio's
    graph concatenates the new keys onto the past, so ``past_present_share_buffer`` must be false)."""
    c = gen.cache
    inputs = {"input_ids": "input_ids", "attention_mask": "attention_mask",
              "past_key_names": PAST_KEY.replace("{}", "%d"), "past_value_names": PAST_VALUE.replace("{}", "%d")}
    if gen.has_position_ids:
        inputs["position_ids"] = "position_ids"
    eos = gen.eos_token_ids[0] if len(gen.eos_token_ids) == 1 else gen.eos_token_ids
    return {
        "model": {
            "bos_token_id": gen.bos_token_id, "context_length": gen.max_context, "eos_token_id": eos,
            "pad_token_id": gen.pad_token_id if gen.pad_token_id is not None else (gen.eos_token_ids or [0])[0],
            "type": gen.model_type, "vocab_size": c.vocab_size,
            "decoder": {
                "session_options": {"log_id": "onnxruntime-genai", "provider_options": []},
                "filename": gen.model_file, "head_size": c.head_dim, "hidden_size": c.hidden_size,
                "num_attention_heads": c.attention_heads, "num_hidden_layers": c.layers,
                "num_key_value_heads": c.kv_heads, "inputs": inputs,
                "outputs": {"logits": "logits", "present_key_names": PRESENT_KEY.replace("{}", "%d"),
                            "present_value_names": PRESENT_VALUE.replace("{}", "%d")},
            },
        },
        "search": {"do_sample": False, "max_length": gen.max_context, "min_length": 0, "num_beams": 1,
                   "num_return_sequences": 1, "past_present_share_buffer": False, "repetition_penalty": 1.0,
                   "temperature": 1.0, "top_k": 1, "top_p": 1.0},
    }


def write_files(gen: GenerationConfig, folder: Path) -> list[Path]:
    """generation.json and (decoder-only) genai_config.json into ``folder``; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / GENERATION_FILE, folder / GENAI_FILE]
    paths[0].write_text(json.dumps(gen.to_dict(), indent=2) + "\n", encoding="utf-8")
    if gen.kind != "decoder-only":  # onnxruntime-genai has no form for the studio's VLM layout (see vlm.py)
        return paths[:1]
    paths[1].write_text(json.dumps(genai_config(gen), indent=2) + "\n", encoding="utf-8")
    return paths


def read_generation(export_dir: Path | str) -> GenerationConfig:
    """``generation.json`` of an export folder (or of the folder holding a given .onnx file)."""
    path = Path(export_dir)
    folder = path.parent if path.suffix == ".onnx" else path
    if not folder.is_dir():
        raise InputError(f"export folder {folder} does not exist", offending=str(folder),
                         hint="give the folder `studio export` wrote (model.onnx + generation.json)")
    file = folder / GENERATION_FILE
    if not file.is_file():
        raise InputError(f"{folder} has no {GENERATION_FILE}: it is not a decoder exported with a KV cache",
                         offending=str(folder),
                         hint="export a decoder model with `studio export MODEL_DIR --with-past -o DIR/model.onnx`")
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
        if isinstance(raw, dict) and raw.get("kind") == "encoder-decoder":  # studio.generate.speech_config
            raise InputError(f"{folder} is a speech (Whisper) export: it transcribes audio, not a prompt",
                             offending="--prompt", hint="pass --audio FILE.wav (studio.generate.speech in Python)")
        raw["cache"] = CacheLayout(**raw["cache"])
        gen = GenerationConfig(**raw)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise ModelError(f"{file} is not a valid generation record: {exc}", offending=str(file),
                         hint="re-export the model with `studio export --with-past`") from exc
    if not (folder / gen.model_file).is_file():
        raise ModelError(f"{folder / gen.model_file} named by {GENERATION_FILE} is missing",
                         offending=str(folder / gen.model_file), hint="re-export the model")
    return gen


def export_kind(export_dir: Path | str) -> str:
    """The ``kind`` generation.json records ("decoder-only", "vlm", ...); "" when there is no readable record."""
    path = Path(export_dir)
    file = (path.parent if path.suffix == ".onnx" else path) / GENERATION_FILE
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    return str(raw.get("kind") or "decoder-only") if isinstance(raw, dict) else ""
