"""The record an encoder-decoder speech export (Whisper) keeps in ``generation.json``: its two graphs and their
tensor names, the cache shape, the decoder's start / forced / suppressed tokens as HF's generation_config has
them, and the audio window. Torch-free (json alone): ``studio generate --audio`` reads it without torch.

``kind`` is "encoder-decoder" here (studio.generate.config.export_kind reads it, as for the other kinds).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import InputError, ModelError
from studio.generate.config import GENERATION_FILE

KIND = "encoder-decoder"
SELF_KEY, SELF_VALUE = "past_key_values.{}.decoder.key", "past_key_values.{}.decoder.value"
CROSS_KEY, CROSS_VALUE = "past_key_values.{}.encoder.key", "past_key_values.{}.encoder.value"
LAYOUT = "batch, heads, sequence, head_dim"


def seq2seq_names(layers: int) -> dict[str, list[str]]:
    """Graph tensor names per layer: decoder past (self then cross, per layer), decoder present (self), and the
    encoder's cross K/V outputs (``present.{i}.encoder.*``, fed back as ``past_key_values.{i}.encoder.*``)."""
    past = [n.format(i) for i in range(layers) for n in (SELF_KEY, SELF_VALUE, CROSS_KEY, CROSS_VALUE)]
    present = [n.format(i) for i in range(layers) for n in ("present.{}.decoder.key", "present.{}.decoder.value")]
    cross = [n.format(i) for i in range(layers) for n in ("present.{}.encoder.key", "present.{}.encoder.value")]
    return {"past": past, "present": present, "cross_present": cross,
            "cross_past": [n.format(i) for i in range(layers) for n in (CROSS_KEY, CROSS_VALUE)],
            "self_past": [n.format(i) for i in range(layers) for n in (SELF_KEY, SELF_VALUE)]}


@dataclass
class SpeechGenerationConfig:
    """Everything ``studio generate --audio`` needs beside the two ONNX files."""

    model_type: str
    encoder_file: str
    decoder_file: str
    layers: int
    heads: int
    head_dim: int
    vocab_size: int
    num_mel_bins: int
    encoder_positions: int  # max_source_positions: the encoder's output length (frames / 2)
    max_context: int  # max_target_positions: init tokens + new tokens
    decoder_start_token_id: int
    init_token_ids: list[int]  # decoder_start_token_id then the forced / language / task / no-timestamps ids
    eos_token_ids: list[int] = field(default_factory=list)
    init_tokens_source: str = "generation_config.json (decoder_start_token_id + forced_decoder_ids)"
    pad_token_id: int | None = None
    suppress_tokens: list[int] = field(default_factory=list)  # -inf at every step (SuppressTokensLogitsProcessor)
    begin_suppress_tokens: list[int] = field(default_factory=list)  # -inf at the first new token only
    sampling_rate: int = 16000
    window_samples: int = 480000  # the feature extractor's n_samples (30 s for real Whisper)
    window_s: float = 30.0
    dtype: str = "float32"
    layout: str = LAYOUT
    encoder_inputs: list[str] = field(default_factory=list)
    encoder_outputs: list[str] = field(default_factory=list)
    decoder_inputs: list[str] = field(default_factory=list)
    decoder_outputs: list[str] = field(default_factory=list)
    logits_processors: list[str] = field(default_factory=list)  # what HF generate applies, mirrored here
    graphs: str = ("encoder (+ cross K/V once) and one decoder graph with past inputs (prefill = zero-length "
                   "self past)")
    source_model_dir: str | None = None
    validation: dict[str, Any] = field(default_factory=dict)
    kind: str = KIND
    schema_version: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def names(self) -> dict[str, list[str]]:
        return seq2seq_names(self.layers)


def write_speech_record(gen: SpeechGenerationConfig, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / GENERATION_FILE
    path.write_text(json.dumps(gen.to_dict(), indent=2) + "\n", encoding="utf-8")
    return path


def read_speech_record(export_dir: Path | str) -> SpeechGenerationConfig:
    """``generation.json`` of a speech export; InputError when the folder holds something else."""
    folder = Path(export_dir)
    folder = folder.parent if folder.suffix == ".onnx" else folder
    file = folder / GENERATION_FILE
    if not file.is_file():
        raise InputError(f"{folder} has no {GENERATION_FILE}: it is not a model exported with a KV cache",
                         offending=str(folder), hint="export with `studio export MODEL_DIR --with-past -o DIR/model.onnx`")
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
        gen = SpeechGenerationConfig(**raw)
    except (OSError, ValueError, TypeError) as exc:
        raise ModelError(f"{file} is not a valid speech generation record: {exc}", offending=str(file),
                         hint="re-export the model with `studio export --with-past`") from exc
    if gen.kind != KIND:
        raise InputError(f"{folder} holds a {gen.kind} export, not a speech (encoder-decoder) one",
                         offending="--audio", hint="--audio needs a Whisper export")
    for name in (gen.encoder_file, gen.decoder_file):
        if not (folder / name).is_file():
            raise ModelError(f"{folder / name} named by {GENERATION_FILE} is missing", offending=str(folder / name),
                             hint="re-export the model")
    return gen
