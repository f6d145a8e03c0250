"""Qwen2-VL as exportable graphs: vision encoder, image-aware decoder, and both chained.

The HF vision tower computes its rotary grid and its per-frame attention blocks from ``image_grid_thw``
with ``.tolist()`` / ``.item()`` / Python loops (``transformers.vision_utils``), and ``get_rope_index``
builds the decoder's 3-D M-RoPE positions with ``itertools.groupby`` over token types. A trace freezes
all of that to the traced image sizes, and torch.export refuses it (data-dependent shapes). The modules
here compute the same values with tensor arithmetic only (no data-dependent shapes):

- vision positions: each patch's image, frame and block come from cumulative patch counts, so the
  (h, w) rotary ids match ``get_vision_position_ids`` for any grid;
- attention: one additive block-diagonal mask (same image and frame) instead of one SDPA call per frame;
- merge: image embeddings are gathered by the running count of image tokens (``masked_scatter``);
- M-RoPE: a token's start position is the exclusive cumulative sum of "advances" (1 per text token,
  ``max(h, w) / merge`` after an image), exactly as ``get_rope_index`` steps ``current_pos``.

Parity is always checked against the unmodified HF forward (``Qwen2VLReference``), never against these.
Assumption (as in HF): each image's placeholder tokens are one contiguous run, in the order of
``image_grid_thw``, batch rows first.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from studio.export.signatures import patch_dim

VISION_INPUTS = ("pixel_values", "image_grid_thw")


def _vision_cfg(config: dict[str, Any]) -> dict[str, Any]:
    v = config.get("vision_config")
    return v if isinstance(v, dict) else {}


class Qwen2VLVisionEncoder(nn.Module):
    """``(pixel_values [patches, C*T*P*P], image_grid_thw [images, 3]) -> image_embeds [image_tokens, hidden]``."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.visual = model.model.visual
        self.merge = int(self.visual.spatial_merge_size)

    def forward(self, pixel_values: torch.Tensor, image_grid_thw: torch.Tensor) -> torch.Tensor:
        v, m = self.visual, self.merge
        grid = image_grid_thw.long()
        t, h, w = grid[:, 0], grid[:, 1], grid[:, 2]
        per_image = t * h * w
        ends = per_image.cumsum(0)
        starts = ends - per_image
        idx = torch.arange(pixel_values.shape[0], device=pixel_values.device)
        image = (idx[:, None] >= ends[None, :]).long().sum(-1)  # which image each patch belongs to
        local = idx - starts[image]
        hi, wi = h[image], w[image]
        frame_size = hi * wi
        frame = torch.div(local, frame_size, rounding_mode="floor")
        r = local - frame * frame_size
        block, inner = torch.div(r, m * m, rounding_mode="floor"), r % (m * m)
        blocks_w = torch.div(wi, m, rounding_mode="floor")
        hpos = torch.div(block, blocks_w, rounding_mode="floor") * m + torch.div(inner, m, rounding_mode="floor")
        wpos = (block % blocks_w) * m + inner % m
        positions = torch.stack([hpos, wpos], dim=-1)

        x = v.patch_embed(pixel_values)
        cos, sin = v.rotary_pos_emb(x, positions)
        same = (image[:, None] == image[None, :]) & (frame[:, None] == frame[None, :])
        bias = torch.zeros(same.shape, dtype=x.dtype, device=x.device).masked_fill(~same, float("-inf"))
        for blk in v.blocks:
            x = x + _vision_attention(blk.attn, blk.norm1(x), cos, sin, bias)
            x = x + blk.mlp(blk.norm2(x))
        return v.merger(x)


def _vision_attention(attn: nn.Module, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                      bias: torch.Tensor) -> torch.Tensor:
    from transformers.models.qwen2_vl.modeling_qwen2_vl import apply_rotary_pos_emb_vision

    n = x.shape[0]
    q, k, val = attn.qkv(x).reshape(n, 3, attn.num_heads, -1).permute(1, 0, 2, 3).unbind(0)
    q, k = apply_rotary_pos_emb_vision(q, k, cos, sin)
    q, k, val = q.transpose(0, 1), k.transpose(0, 1), val.transpose(0, 1)  # [heads, n, d]
    scores = torch.matmul(q, k.transpose(1, 2)) * attn.scaling + bias
    probs = torch.softmax(scores.float(), dim=-1).to(q.dtype)
    out = torch.matmul(probs, val).transpose(0, 1).reshape(n, -1)
    return attn.proj(out)


def mrope_positions(input_ids: torch.Tensor, attention_mask: torch.Tensor, image_grid_thw: torch.Tensor,
                    image_token_id: int, merge: int) -> torch.Tensor:
    """``get_rope_index`` for images, vectorised: ``[3, batch, sequence]`` (0 at padded positions); the image
    tokens are the ``image_token_id`` ones (studio.export.mrope_trace holds the rule, for every family)."""
    from studio.export.mrope_trace import mrope_positions as by_mask

    return by_mask(input_ids == image_token_id, attention_mask, image_grid_thw, merge)


class Qwen2VLDecoder(nn.Module):
    """``(input_ids, attention_mask, image_embeds, image_grid_thw) -> logits``: image embeddings replace the
    image-placeholder token embeddings (the ``inputs_embeds`` path); the grid gives the M-RoPE positions."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model
        self.image_token_id = int(model.config.image_token_id)
        self.merge = int(model.config.vision_config.spatial_merge_size)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, image_embeds: torch.Tensor,
                image_grid_thw: torch.Tensor) -> torch.Tensor:
        lm = self.model.model.language_model
        embeds = lm.embed_tokens(input_ids)
        is_image = input_ids == self.image_token_id
        ordinal = (is_image.flatten().long().cumsum(0) - 1).clamp(min=0).view_as(input_ids)
        gathered = image_embeds.to(embeds.dtype)[ordinal]
        embeds = torch.where(is_image[..., None], gathered, embeds)
        positions = mrope_positions(input_ids, attention_mask, image_grid_thw, self.image_token_id, self.merge)
        out = lm(inputs_embeds=embeds, attention_mask=attention_mask, position_ids=positions, use_cache=False)
        return self.model.lm_head(out.last_hidden_state)


class Qwen2VLFull(nn.Module):
    """The monolithic graph: vision encoder chained into the decoder."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.vision = Qwen2VLVisionEncoder(model)
        self.decoder = Qwen2VLDecoder(model)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, pixel_values: torch.Tensor,
                image_grid_thw: torch.Tensor) -> torch.Tensor:
        return self.decoder(input_ids, attention_mask, self.vision(pixel_values, image_grid_thw), image_grid_thw)


class Qwen2VLReference(nn.Module):
    """The unmodified HF forward, fed as the processor feeds it (``mm_token_type_ids`` marks image tokens)."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model
        self.image_token_id = int(model.config.image_token_id)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, pixel_values: torch.Tensor,
                image_grid_thw: torch.Tensor) -> torch.Tensor:
        mm = (input_ids == self.image_token_id).int()
        self.model.model.rope_deltas = None
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, pixel_values=pixel_values,
                         image_grid_thw=image_grid_thw, mm_token_type_ids=mm, use_cache=False)
        return out.logits


# ------------------------------------------------------------------------------------------ inputs

_GRIDS = ((1, 4, 4), (1, 6, 4), (1, 2, 2), (1, 4, 6), (1, 2, 4), (1, 6, 6))


def make_inputs(names: list[str], shapes: dict[str, list[int]], dyn: dict[str, dict[int, str]],
                config: dict[str, Any], case: Any, id_limit: int) -> dict[str, np.ndarray]:
    """Coherent multimodal inputs: per row ``text <vision_start> <image_pad> * k <vision_end> text``, with
    ``k = t*h*w / merge^2`` for that row's image, and the matching flattened patches and grid."""
    rng = np.random.default_rng(1000 + case.seed)
    v = _vision_cfg(config)
    merge = int(v.get("spatial_merge_size", 2))
    ids_shape = list(shapes["input_ids"])
    for axis, name in dyn.get("input_ids", {}).items():
        ids_shape[axis] = case.sizes.get(name, ids_shape[axis])
    batch, seq = ids_shape
    ids = rng.integers(0, id_limit, size=(batch, seq)).astype(np.int64)
    mask = np.ones((batch, seq), dtype=np.int64)
    if case.padded and batch > 1 and seq > 2:
        mask[-1, -(seq // 3 or 1):] = 0
    grids: list[tuple[int, int, int]] = []
    for b in range(batch):
        room = int(mask[b].sum()) - 3  # one text token, vision_start, vision_end
        grid = _GRIDS[(case.seed + b) % len(_GRIDS)] if case.seed < 3 else \
            _GRIDS[int(rng.integers(0, len(_GRIDS)))]
        if grid[0] * grid[1] * grid[2] // merge ** 2 > room:
            grid = (1, merge, merge)
        k = grid[0] * grid[1] * grid[2] // merge ** 2
        if k > room:
            continue  # no room for an image in this row: a text-only row
        ids[b, 1] = int(config["vision_start_token_id"])
        ids[b, 2:2 + k] = int(config["image_token_id"])
        ids[b, 2 + k] = int(config["vision_end_token_id"])
        grids.append(grid)
    if not grids:
        raise ValueError(f"sequence length {seq} leaves no room for an image placeholder")
    grid_arr = np.array(grids, dtype=np.int64)
    patches = int((grid_arr[:, 0] * grid_arr[:, 1] * grid_arr[:, 2]).sum())
    out = {"input_ids": ids, "attention_mask": mask, "image_grid_thw": grid_arr,
           "pixel_values": rng.standard_normal((patches, patch_dim(config))).astype(np.float32)}
    return {n: out[n] for n in names}
