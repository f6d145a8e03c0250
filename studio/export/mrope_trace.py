"""M-RoPE positions as a graph, and the export wrapper that traces a vision-utils VLM with them.

Families with a ``get_rope_index`` (Qwen2/2.5/3-VL, GLM-4V, PaddleOCR-VL, ...) build the decoder's 3-D positions
with ``itertools.groupby`` over token types and a Python loop per image: a trace freezes it. :func:`mrope_positions`
computes the common rule with tensor ops (a text token advances the position by 1, an image by
``max(h, w) / merge`` after its ``t x h x w`` block). Families differ (timestamps, time intervals, ...), so no family
is assumed: :func:`check_rope_index` runs the family's own ``get_rope_index`` on every example case and the graph
passes these positions as ``position_ids`` only when they are equal on all of them; otherwise HF's path stays
and the report says why.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn


def rope_owner(model: nn.Module) -> nn.Module | None:
    """The module that defines ``get_rope_index`` (the inner multimodal model), or None."""
    for mod in model.modules():
        if callable(getattr(type(mod), "get_rope_index", None)):
            return mod
    return None


def _image_token_id(config: Any) -> int | None:
    for key in ("image_token_id", "image_token_index"):
        value = getattr(config, key, None)
        if isinstance(value, int):
            return value
    return None


def mrope_positions(is_image: torch.Tensor, attention_mask: torch.Tensor, image_grid_thw: torch.Tensor,
                    merge: int) -> torch.Tensor:
    """``get_rope_index``'s image rule, vectorised: ``[3, batch, sequence]`` long, 0 at padded positions. Each run
    of image tokens takes the next grid in ``image_grid_thw`` order (batch rows first)."""
    valid = attention_mask.bool()
    is_image = is_image.bool() & valid
    grid = image_grid_thw.long()
    gt = grid[:, 0]
    gh = torch.div(grid[:, 1], merge, rounding_mode="floor")
    gw = torch.div(grid[:, 2], merge, rounding_mode="floor")
    tokens = gt * gh * gw
    ends = tokens.cumsum(0)
    ordinal = (is_image.flatten().long().cumsum(0) - 1).clamp(min=0).view_as(is_image)
    image = (ordinal[..., None] >= ends).long().sum(-1).clamp(max=grid.shape[0] - 1)
    local = ordinal - (ends - tokens)[image]
    h, w = gh[image], gw[image]
    ti = torch.div(local, h * w, rounding_mode="floor")
    rem = local - ti * h * w
    hi, wi = torch.div(rem, w, rounding_mode="floor"), rem % w
    last = is_image & (local == tokens[image] - 1)
    zero = torch.zeros_like(local)
    advance = torch.where(is_image, torch.where(last, torch.maximum(h, w), zero), valid.long())
    start = advance.cumsum(-1) - advance
    pos = torch.stack([start + torch.where(is_image, ti, zero), start + torch.where(is_image, hi, zero),
                       start + torch.where(is_image, wi, zero)])
    return torch.where(valid[None], pos, torch.zeros_like(pos))


def _image_mask(inputs: dict[str, torch.Tensor], image_token_id: int | None) -> torch.Tensor:
    if "mm_token_type_ids" in inputs:
        return inputs["mm_token_type_ids"] == 1
    return inputs["input_ids"] == image_token_id


def _rope_args(model: nn.Module) -> tuple[int, int | None] | None:
    vision = getattr(model.config, "vision_config", None)
    merge = getattr(vision, "spatial_merge_size", None)
    return (int(merge), _image_token_id(model.config)) if isinstance(merge, int) else None


def check_rope_index(model: nn.Module, feeds: list[dict[str, np.ndarray]]) -> str | None:
    """None when the vectorised positions equal the family's own ``get_rope_index`` on every feed; else why not."""
    owner, args = rope_owner(model), _rope_args(model)
    if owner is None or args is None:
        return "no get_rope_index / vision_config.spatial_merge_size"
    merge, image_token_id = args
    for i, feed in enumerate(feeds):
        t = {k: torch.from_numpy(np.asarray(v)) for k, v in feed.items()}
        if "input_ids" not in t or "image_grid_thw" not in t:
            return "the signature has no input_ids / image_grid_thw"
        if "mm_token_type_ids" not in t and image_token_id is None:
            return "no mm_token_type_ids input and no image_token_id in the config"
        mask = t.get("attention_mask", torch.ones_like(t["input_ids"]))
        mm = t["mm_token_type_ids"] if "mm_token_type_ids" in t else (t["input_ids"] == image_token_id).int()
        try:
            with torch.no_grad():
                theirs = owner.get_rope_index(t["input_ids"], mm_token_type_ids=mm, image_grid_thw=t["image_grid_thw"],
                                              attention_mask=mask)[0]
        except Exception as exc:  # noqa: BLE001 - a family whose get_rope_index needs more: keep HF's path
            return f"{type(owner).__name__}.get_rope_index failed on case {i}: {type(exc).__name__}: {exc}"[:300]
        ours = mrope_positions(_image_mask(t, image_token_id), mask, t["image_grid_thw"], merge)
        if theirs.shape != ours.shape or not torch.equal(theirs.long(), ours):
            return (f"{type(owner).__name__}.get_rope_index differs from the vectorised M-RoPE rule on case {i} "
                    f"(shape {tuple(theirs.shape)} vs {tuple(ours.shape)})")
    return None


class TraceableVLM(nn.Module):
    """The model as the exporter should see it: vision_utils swapped for tensor-only versions during the forward
    (``vision_trace.traceable_vision``) and, when checked equal, M-RoPE positions computed in the graph."""

    def __init__(self, model: nn.Module, positions: bool) -> None:
        super().__init__()
        self.model = model
        self.positions = positions
        args = _rope_args(model)
        self.merge, self.image_token_id = args if args else (1, None)

    def forward(self, **inputs: Any) -> Any:
        from studio.export.vision_trace import traceable_vision

        if self.positions:
            mask = inputs.get("attention_mask")
            mask = torch.ones_like(inputs["input_ids"]) if mask is None else mask
            inputs["position_ids"] = mrope_positions(_image_mask(inputs, self.image_token_id), mask,
                                                     inputs["image_grid_thw"], self.merge)
        with traceable_vision(self.model):
            return self.model(**inputs)
