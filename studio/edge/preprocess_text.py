"""The one text pre-processing: texts -> ``input_ids`` / ``attention_mask`` / ``token_type_ids`` with the model's
tokenizer.json, as HF's fast tokenizer makes them with ``padding=True, truncation=True``.

Every client tokenises here: the edge agent's raw ``text`` inputs (studio.edge.preprocess), Triton test inference
and `studio triton infer` (studio.triton.inputs); the Triton tokenizer model (studio/triton/pymodels, which runs
without the studio on its path) is configured by the repository builder with this module's pad id and length.
One rule for the pad id: tokenizer.json's own padding, else tokenizer_config.json's ``pad_token``, else a
``[PAD]`` / ``<pad>`` / ``<|endoftext|>`` token of the vocabulary, else 0. Truncation (specials kept, as HF's)
at tokenizer_config.json's ``model_max_length``; padding on the right to the longest text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from studio.edge.raw_inputs import TOKENIZER_FILE

TOKENIZER_CONFIG = "tokenizer_config.json"
PAD_GUESSES = ("[PAD]", "<pad>", "<|endoftext|>")
COLUMNS = ("input_ids", "attention_mask", "token_type_ids")


@dataclass(frozen=True)
class TextSettings:
    pad_id: int
    max_len: int | None


def read_tokenizer_config(path: Path | None) -> dict[str, Any]:
    """tokenizer_config.json's settings ({} when absent or unreadable: the tokenizer alone still works)."""
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def text_settings(tok: Any, cfg: dict[str, Any]) -> TextSettings:
    """The pad id and maximum length of a ``tokenizers.Tokenizer`` with its tokenizer_config.json (see above)."""
    padding = tok.padding
    pad_id = padding.get("pad_id") if padding else None
    if pad_id is None:
        pad = cfg.get("pad_token")
        pad = pad.get("content") if isinstance(pad, dict) else pad
        pad_id = tok.token_to_id(pad) if isinstance(pad, str) else None
    if pad_id is None:
        pad_id = next((i for i in (tok.token_to_id(t) for t in PAD_GUESSES) if i is not None), 0)
    max_len = cfg.get("model_max_length")
    return TextSettings(int(pad_id), int(max_len) if isinstance(max_len, int) and 0 < max_len < 1_000_000 else None)


def load_tokenizer(path: Path, config: Path | None = None) -> tuple[Any, TextSettings]:
    """The tokenizer of ``path`` (tokenizer.json, or the folder holding it and tokenizer_config.json) with its
    settings; truncation enabled at the maximum length. Raises what ``tokenizers`` raises for a bad file."""
    from tokenizers import Tokenizer

    path = Path(path)
    file = path if path.is_file() else path / TOKENIZER_FILE
    if config is None and (file.parent / TOKENIZER_CONFIG).is_file():
        config = file.parent / TOKENIZER_CONFIG
    tok = Tokenizer.from_file(str(file))
    settings = text_settings(tok, read_tokenizer_config(config))
    if settings.max_len is not None:
        tok.enable_truncation(settings.max_len)
    return tok, settings


def tokenize(tok: Any, settings: TextSettings, texts: list[str]) -> dict[str, np.ndarray]:
    """``[len(texts), longest]`` int64 columns, padded on the right with the pad id (mask 0, type 0)."""
    encs = tok.encode_batch(texts)
    n = max((len(e.ids) for e in encs), default=0)
    out = {"input_ids": np.full((len(encs), n), settings.pad_id, dtype=np.int64),
           "attention_mask": np.zeros((len(encs), n), dtype=np.int64),
           "token_type_ids": np.zeros((len(encs), n), dtype=np.int64)}
    for r, e in enumerate(encs):
        k = len(e.ids)
        out["input_ids"][r, :k] = e.ids
        out["attention_mask"][r, :k] = e.attention_mask
        out["token_type_ids"][r, :k] = e.type_ids
    return out
