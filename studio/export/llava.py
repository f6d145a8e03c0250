"""LLaVA-style models (an image tower whose features replace ``<image>`` placeholder tokens) as exportable graphs,
and the example inputs they need.

Why example inputs of their own: the HF forward refuses a batch whose count of image-token ids differs from the
number of image features (``Image features and image tokens do not match``), so random ids fail. Each row here is
``text <image> * k text`` with ``k`` the number of features the tower really returns for one image (probed on the
model, so any ``vision_feature_select_strategy`` / tower size is right), and one image per row.

Parts (``--split-modalities``): vision tower (``pixel_values -> vision_features``, the selected hidden layer, CLS
dropped as the config says) -> projector (``-> image_embeds``) -> decoder (image embeddings gathered into the
image-token positions, the ``inputs_embeds`` path) -> logits; plus a standalone text-only decoder. Parity is always
checked against the unmodified HF forward (``LlavaReference``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from studio.export.contract import InputSpec


def image_token_id(config: dict[str, Any]) -> int | None:
    for key in ("image_token_index", "image_token_id"):
        if isinstance(config.get(key), int):
            return int(config[key])
    return None


def image_companions(model: Any) -> list[str]:
    """Inputs besides ``pixel_values`` that the model's ``get_image_features`` reads with the image (a grid, sizes,
    a pixel mask): only a processor makes them, so a blank ``[C, H, W]`` image alone cannot run the tower."""
    import inspect
    import re

    fn = getattr(model, "get_image_features", None)
    if fn is None:
        return []
    names = [n for n, p in inspect.signature(fn).parameters.items() if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    return [n for n in names if n != "pixel_values" and re.search(r"(^image_|grid|sizes|_mask$|spatial_shapes)", n)]


def is_llava_style(config: dict[str, Any], model: Any) -> bool:
    """An image-token family whose tower runs on ``pixel_values`` alone (grid-based towers need their processor)."""
    return (str(config.get("model_type")) != "qwen2_vl" and image_token_id(config) is not None
            and isinstance(config.get("vision_config"), dict) and hasattr(model, "get_image_features")
            and not image_companions(model))


def _features(out: Any) -> torch.Tensor:
    """get_image_features' result as one [images, tokens, hidden] tensor (it returns a list, a tensor or an
    output with ``pooler_output`` depending on the transformers version)."""
    feats = getattr(out, "pooler_output", out)
    if isinstance(feats, (list, tuple)):
        feats = torch.stack(list(feats))
    return feats


def image_tokens_per_image(model: Any, pixel_shape: list[int]) -> int:
    """How many ``<image>`` tokens one image expands to: the features the model's own tower returns for it."""
    pv = torch.zeros([1, *pixel_shape[1:]], dtype=torch.float32)
    with torch.no_grad():
        feats = _features(model.get_image_features(pixel_values=pv))
    return int(feats.reshape(-1, feats.shape[-1]).shape[0])


class LlavaVisionTower(nn.Module):
    """``pixel_values [images, C, H, W] -> vision_features [images, tokens, vision_hidden]``."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.tower = model.model.vision_tower
        cfg = model.config
        self.layer = cfg.vision_feature_layer
        self.drop_cls = cfg.vision_feature_select_strategy == "default"

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        hidden = self.tower(pixel_values, output_hidden_states=True, return_dict=True).hidden_states
        layers = [self.layer] if isinstance(self.layer, int) else list(self.layer)
        picked = [hidden[i][:, 1:] if self.drop_cls else hidden[i] for i in layers]
        return picked[0] if len(picked) == 1 else torch.cat(picked, dim=-1)


class LlavaProjector(nn.Module):
    """``vision_features -> image_embeds [images, tokens, text_hidden]`` (the multimodal projector)."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.projector = model.model.multi_modal_projector

    def forward(self, vision_features: torch.Tensor) -> torch.Tensor:
        return self.projector(vision_features)


class LlavaDecoder(nn.Module):
    """``(input_ids, attention_mask, image_embeds) -> logits``: the n-th image token takes the n-th image feature
    (gathered by the running count of image tokens, as ``masked_scatter`` fills them)."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model
        self.image_token_id = int(model.config.image_token_id)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                image_embeds: torch.Tensor) -> torch.Tensor:
        embed = self.model.get_input_embeddings()
        is_image = input_ids == self.image_token_id
        embeds = embed(torch.where(is_image, torch.zeros_like(input_ids), input_ids))
        flat = image_embeds.reshape(-1, image_embeds.shape[-1]).to(embeds.dtype)
        ordinal = (is_image.flatten().long().cumsum(0) - 1).clamp(min=0).view_as(input_ids)
        embeds = torch.where(is_image[..., None], flat[ordinal], embeds)
        return self.model(inputs_embeds=embeds, attention_mask=attention_mask, use_cache=False).logits


class LlavaFull(nn.Module):
    """The monolithic graph: tower -> projector -> decoder."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.tower, self.projector, self.decoder = LlavaVisionTower(model), LlavaProjector(model), LlavaDecoder(model)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                pixel_values: torch.Tensor) -> torch.Tensor:
        return self.decoder(input_ids, attention_mask, self.projector(self.tower(pixel_values)))


class LlavaReference(nn.Module):
    """The unmodified HF forward (the parity reference)."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                pixel_values: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask, pixel_values=pixel_values,
                          use_cache=False).logits


def make_inputs(specs: list[InputSpec], config: dict[str, Any], case: Any, tokens: int,
                id_limit: int) -> dict[str, np.ndarray]:
    """Per row ``t0 <image>*tokens t1 .. tN`` (N = the case's sequence size), one image per row; a padded case
    masks the tail of the last row's text, never its image tokens."""
    from studio.export.validate import make_inputs as plain

    out = plain(specs, config, case)
    image_id = image_token_id(config)
    if "input_ids" not in out or image_id is None:
        return out
    rng = np.random.default_rng(3000 + case.seed)
    batch, text = out["input_ids"].shape[0], max(2, out["input_ids"].shape[1])
    ids = rng.integers(0, id_limit, size=(batch, text + tokens)).astype(np.int64)
    ids[ids == image_id] = 0
    ids[:, 1:1 + tokens] = image_id
    out["input_ids"] = ids
    if "attention_mask" in out:
        mask = np.ones_like(ids)
        if case.padded and batch > 1:
            mask[-1, -max(1, (text - 1) // 2):] = 0
        out["attention_mask"] = mask
    if "pixel_values" in out:
        pv = out["pixel_values"]
        out["pixel_values"] = rng.standard_normal((batch, *pv.shape[1:])).astype(pv.dtype)
    return out


def plan_parts(model: nn.Module, names: set[str]) -> list[Any]:
    """tower -> projector -> decoder chained, plus the standalone text-only decoder."""
    from studio.core.errors import InputError
    from studio.export.split_parts import CausalLMLogits, Part

    if not {"input_ids", "attention_mask", "pixel_values"} <= names:
        raise InputError("--split-modalities for LLaVA needs text:input_ids, text:attention_mask and "
                         "vision:pixel_values in the signature", offending=",".join(sorted(names)),
                         hint="drop --input-signature (the default has all three)")
    text = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"}}
    logits = {"logits": {0: "batch", 1: "sequence"}}
    images = {0: "image_batch"}
    return [
        Part("vision", "vision", LlavaVisionTower(model), ["pixel_values"], ["vision_features"],
             {"pixel_values": images}, {"vision_features": images}),
        Part("projector", "vision", LlavaProjector(model), ["vision_features"], ["image_embeds"],
             {"vision_features": images}, {"image_embeds": images}),
        Part("decoder", "text", LlavaDecoder(model), ["input_ids", "attention_mask", "image_embeds"], ["logits"],
             {**text, "image_embeds": images}, logits),
        Part("text", "text", CausalLMLogits(model), ["input_ids", "attention_mask"], ["logits"], text, logits,
             standalone=True),
    ]
