"""Qwen2-VL exported with its KV cache (``--with-past``): the vision encoder graph plus one decoder graph with past
inputs, ``(input_ids, attention_mask, position_ids [3, batch, sequence], image_embeds, past...) -> (logits,
present...)``.

The decoder merges the image embeddings inside (an image-placeholder token takes the next image-embedding row,
``masked_scatter`` as HF does it); a decode step passes ``image_embeds`` with zero rows, which the graph pads with
one zero row so the gather stays in range. The 3-D M-RoPE positions come from the caller: the runtime computes the
prefill positions with numpy (``studio.generate.vlm.rope_index``, a tensor-free port of HF ``get_rope_index``) and
each decode step's position as ``past_length + rope_delta`` on all three axes, as HF ``generate`` does. Keeping
positions out of the graph is what lets one graph serve prefill and decode (no data-dependent position logic to
trace). The vision graph is ``studio.export.qwen2_vl.Qwen2VLVisionEncoder`` (tensor-only grid arithmetic).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from studio.export.contract import InputSpec
from studio.generate.config import CacheLayout, layout_from_config

VISION_FILE = "vision.onnx"
TRACE = {"batch": 1, "sequence": 8, "past_sequence": 5, "image_tokens": 4}


class Qwen2VLDecoderWithPast(nn.Module):
    def __init__(self, model: nn.Module, layers: int) -> None:
        super().__init__()
        self.model = model
        self.layers = layers
        self.image_token_id = int(model.config.image_token_id)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, position_ids: torch.Tensor,
                image_embeds: torch.Tensor, *past: torch.Tensor) -> tuple[Any, ...]:
        from transformers.cache_utils import DynamicCache

        from studio.export.decoder import cache_argument, returned_cache

        lm = self.model.model.language_model
        embeds = lm.embed_tokens(input_ids)
        is_image = input_ids == self.image_token_id
        ordinal = (is_image.flatten().long().cumsum(0) - 1).clamp(min=0).view_as(input_ids)
        table = torch.cat([image_embeds.to(embeds.dtype), embeds.new_zeros(1, embeds.shape[-1])])
        embeds = torch.where(is_image[..., None], table[ordinal], embeds)
        cache = DynamicCache(ddp_cache_data=[(past[2 * i], past[2 * i + 1]) for i in range(self.layers)],
                             config=self.model.config.get_text_config())
        out = lm(inputs_embeds=embeds, attention_mask=attention_mask, position_ids=position_ids, use_cache=True,
                 **{cache_argument(lm): cache})
        present: list[torch.Tensor] = []
        for layer in returned_cache(out).layers:
            present += [layer.keys, layer.values]
        return (self.model.lm_head(out.last_hidden_state), *present)


def vlm_decoder_specs(config: dict[str, Any], layout: CacheLayout | None = None) -> list[InputSpec]:
    """ids, mask over past + new, 3-D positions, the image embeddings (zero rows in decode steps), the cache."""
    c = layout or layout_from_config(config)
    b, s, p, n = TRACE["batch"], TRACE["sequence"], TRACE["past_sequence"], TRACE["image_tokens"]
    specs = [InputSpec("text", "input_ids", {0: "batch", 1: "sequence"}, "int64", [b, s]),
             InputSpec("text", "attention_mask", {0: "batch", 1: "total_sequence"}, "int64", [b, p + s]),
             InputSpec("text", "position_ids", {1: "batch", 2: "sequence"}, "int64", [3, b, s]),
             InputSpec("vision", "image_embeds", {0: "image_tokens"}, "float32", [n, c.hidden_size])]
    specs += [InputSpec("text", name, {0: "batch", 2: "past_sequence"}, c.dtype, [b, c.kv_heads, p, c.head_dim])
              for name in c.past_names()]
    return specs


def vlm_feeds(layout: CacheLayout, config: dict[str, Any], case: Any) -> dict[str, np.ndarray]:
    """Seeded inputs of one case: a run of image tokens in the new positions when the case has image tokens, the
    M-RoPE positions the runtime would compute, a random cache."""
    from studio.generate.vlm import rope_index

    rng = np.random.default_rng(3000 + case.seed)
    b, s, p = case.sizes["batch"], case.sizes["sequence"], case.sizes["past_sequence"]
    n = case.sizes.get("image_tokens", 0) if s >= case.sizes.get("image_tokens", 0) + 2 else 0
    merge = int((config.get("vision_config") or {}).get("spatial_merge_size", 2))
    vocab = layout.vocab_size
    ids = rng.integers(0, min(vocab, 200), size=(b, s)).astype(np.int64)
    positions = np.zeros((3, b, s), dtype=np.int64)
    for row in range(b):
        grid = np.array([[1, merge, merge * n]], dtype=np.int64) if n else np.zeros((0, 3), np.int64)
        if n:
            ids[row, 1:1 + n] = int(config["image_token_id"])
        pos, _ = rope_index(ids[row], grid, int(config["image_token_id"]), merge)
        positions[:, row] = pos + p
    feeds = {"input_ids": ids, "attention_mask": np.ones((b, p + s), dtype=np.int64), "position_ids": positions,
             "image_embeds": rng.standard_normal((n * b, layout.hidden_size)).astype(np.float32)}
    for name in layout.past_names():
        feeds[name] = rng.standard_normal((b, layout.kv_heads, p, layout.head_dim)).astype(np.float32)
    return feeds


def vlm_cases(count: int) -> list[Any]:
    from studio.export.validate import CaseSpec

    cases = [CaseSpec("traced shapes (sequence=8 past=5, 4 image tokens)", dict(TRACE), 0),
             CaseSpec("prefill with an image (sequence=12 past=0, 8 image tokens)",
                      {"batch": 1, "sequence": 12, "past_sequence": 0, "image_tokens": 8}, 1),
             CaseSpec("decode step (sequence=1 past=14, no image)",
                      {"batch": 1, "sequence": 1, "past_sequence": 14, "image_tokens": 0}, 2),
             CaseSpec("text-only prefill (batch=2 sequence=6 past=0)",
                      {"batch": 2, "sequence": 6, "past_sequence": 0, "image_tokens": 0}, 3)]
    return cases[:max(count, 3)]


def export_vision(model: Any, path: Any, opset: int) -> None:
    """The vision encoder graph: ``(pixel_values [patches, C*T*P*P], image_grid_thw [images, 3]) -> image_embeds``."""
    from studio.export.exporters import export_onnx
    from studio.export.qwen2_vl import Qwen2VLVisionEncoder
    from studio.export.signatures import patch_dim

    enc = Qwen2VLVisionEncoder(model).eval()
    cfg = model.config.to_dict()
    grid = torch.tensor([[1, 4, 4], [1, 2, 4]], dtype=torch.long)
    pixels = torch.randn(int((grid[:, 0] * grid[:, 1] * grid[:, 2]).sum()), patch_dim(cfg))
    export_onnx(enc, (pixels, grid), path, input_names=["pixel_values", "image_grid_thw"],
                output_names=["image_embeds"], dynamic_axes={"pixel_values": {0: "patches"},
                                                             "image_grid_thw": {0: "images"}},
                opset=opset, exporter="torchscript", output_axes={"image_embeds": {0: "image_tokens"}})
