"""Which placeholder-tokenizer id the processor expanded an image into, when it is not the config's image id.

Why: a folder without a tokenizer gets a placeholder one whose special tokens sit at the config's ids by name
(``image_token_id`` -> ``<image>``). Some processors take ``<image>`` in the prompt but expand it into another
token they hard-code (Aya Vision's ``<|IMG_PATCH|>``, Ovis2's ``<IMG_ATOM>``), which got a free id, so the model
counts 0 image tokens. The expanded token is the special token the processor repeated most; its id is mapped onto
the config's image id in every run's ids (the placeholder's ids are arbitrary, so this is the same as giving that
string the config's id). A real tokenizer is never remapped: its ids are the checkpoint's.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

_NONE_COUNTED = re.compile(r"tokens:?\s*0\b", re.I)


def image_ids(config: dict[str, Any]) -> list[int]:
    from studio.export.placeholder_tokenizer import config_special_ids

    return [v for k, v in config_special_ids(config).items() if k.startswith("image")]


def rebind(message: str, tensors: dict[str, np.ndarray], config: dict[str, Any], tokenizer: Any,
           id_map: dict[int, int]) -> str | None:
    """On "tokens: 0": add ``repeated special id -> config image id`` to ``id_map``; a note, or None."""
    ids = tensors.get("input_ids")
    targets = image_ids(config)
    if ids is None or not targets or not _NONE_COUNTED.search(message) or targets[0] in id_map.values():
        return None
    special = set(getattr(tokenizer, "all_special_ids", []) or []) | set(
        getattr(tokenizer, "added_tokens_decoder", {}) or {})
    pad = getattr(tokenizer, "pad_token_id", None)
    values, counts = np.unique(np.asarray(ids).ravel(), return_counts=True)
    ranked = [int(v) for v, c in sorted(zip(values, counts, strict=True), key=lambda vc: -vc[1])
              if c >= 2 and int(v) in special and int(v) != pad and int(v) not in targets]
    if not ranked:
        return None
    id_map[ranked[0]] = targets[0]
    name = tokenizer.convert_ids_to_tokens(ranked[0]) if hasattr(tokenizer, "convert_ids_to_tokens") else ranked[0]
    return (f"image token: the processor expands images into {name!r} (placeholder id {ranked[0]}), which takes the "
            f"config's image id {targets[0]}")


def apply(tensors: dict[str, np.ndarray], id_map: dict[int, int]) -> dict[str, np.ndarray]:
    """``input_ids`` with the mapped ids replaced (other tensors untouched)."""
    if not id_map or "input_ids" not in tensors:
        return tensors
    ids = np.array(tensors["input_ids"], copy=True)
    for old, new in id_map.items():
        ids[tensors["input_ids"] == old] = new
    return {**tensors, "input_ids": ids}
