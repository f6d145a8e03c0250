"""``--split-modalities``: one graph per encoder plus the fusion / decoder part, joined by named tensors.

Each part has its own batch axis (``image_batch``, ``text_batch``, ...) so a server can run only the
encoders a request needs; a boundary tensor has the same name and the same declared dims on both sides.
Dual encoders (CLIP, SigLIP): vision -> image_embeds, text -> text_embeds (both L2-normalised, exactly
as the monolithic model returns them), fusion -> logits. Whisper: audio encoder -> encoder_hidden_states,
decoder (text) -> logits. Qwen2-VL: vision encoder -> image_embeds, decoder (image embeddings merged at the
image-token positions) -> logits, plus a standalone text-only decoder for requests without an image.
ViLT (single-stream): text embeddings -> text_embeds, patch embeddings -> image_embeds + image_mask,
fusion transformer -> logits; ViLT's modalities meet in the first layer, so only the embeddings are
per-modality and every request runs the fusion part.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from studio.core.errors import InputError
from studio.export.api import InputSpec


@dataclass
class Part:
    name: str
    modality: str  # "vision" | "text" | "audio" | "fusion"
    module: nn.Module
    inputs: list[str]
    outputs: list[str]
    input_axes: dict[str, dict[int, str]]
    output_axes: dict[str, dict[int, str]] = field(default_factory=dict)
    standalone: bool = False  # not in the chain: validated alone against its own torch module


SPLIT_KINDS = ("dual_encoder", "encoder_decoder", "vlm_decoder", "vlm_llava", "single_stream")
# axes of the parts that follow from a signature axis: kept dynamic when that axis is
DERIVED_AXES = {"image_batch": "batch", "text_batch": "batch", "image_tokens": "patches", "images": "batch"}


def _features(out: Any) -> torch.Tensor:
    return out if isinstance(out, torch.Tensor) else out.pooler_output


def _normalize(x: torch.Tensor) -> torch.Tensor:
    return x / x.norm(p=2, dim=-1, keepdim=True)


class ImageEncoder(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        return _normalize(_features(self.model.get_image_features(pixel_values=pixel_values)))


class TextEncoder(nn.Module):
    def __init__(self, model: nn.Module, with_mask: bool) -> None:
        super().__init__()
        self.model = model
        self.with_mask = with_mask

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        kw = {"attention_mask": attention_mask} if self.with_mask else {}
        return _normalize(_features(self.model.get_text_features(input_ids=input_ids, **kw)))


class ContrastiveHead(nn.Module):
    """logits from normalised embeddings: the only part that needs both modalities."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, image_embeds: torch.Tensor, text_embeds: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits_per_text = text_embeds @ image_embeds.t().to(text_embeds.device) * self.model.logit_scale.exp()
        if getattr(self.model, "logit_bias", None) is not None:
            logits_per_text = logits_per_text + self.model.logit_bias
        return logits_per_text.t(), logits_per_text


class AudioEncoder(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_features: torch.Tensor) -> torch.Tensor:
        return self.model.get_encoder()(input_features=input_features).last_hidden_state


class SpeechDecoder(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, decoder_input_ids: torch.Tensor, encoder_hidden_states: torch.Tensor) -> torch.Tensor:
        from transformers.modeling_outputs import BaseModelOutput

        out = self.model(encoder_outputs=BaseModelOutput(last_hidden_state=encoder_hidden_states),
                         decoder_input_ids=decoder_input_ids,
                         decoder_attention_mask=torch.ones_like(decoder_input_ids), use_cache=False)
        return out.logits


class CausalLMLogits(nn.Module):
    """Text-only decoder: ``(input_ids, attention_mask) -> logits`` of the unmodified HF forward."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits


class ViltTextEmbeddings(nn.Module):
    """BERT-style text embeddings plus ViLT's text modality-type embedding."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.emb = model.vilt.embeddings

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None = None) -> torch.Tensor:
        text = self.emb.text_embeddings(input_ids=input_ids, token_type_ids=token_type_ids)
        return text + self.emb.token_type_embeddings(torch.zeros_like(input_ids))


class ViltImageEmbeddings(nn.Module):
    """Patch embeddings (CLS + patches + positions) plus ViLT's image modality-type embedding, and their mask."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.emb = model.vilt.embeddings
        self.config = model.config

    def forward(self, pixel_values: torch.Tensor,
                pixel_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        if pixel_mask is None:
            pixel_mask = torch.ones_like(pixel_values[:, 0], dtype=torch.long)
        x, mask, _ = self.emb.visual_embed(pixel_values, pixel_mask, max_image_length=self.config.max_image_length)
        return x + self.emb.token_type_embeddings(torch.full_like(mask, 1)), mask


class ViltFusion(nn.Module):
    """The single-stream transformer over [text; image] tokens, pooler and classifier."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, text_embeds: torch.Tensor, attention_mask: torch.Tensor, image_embeds: torch.Tensor,
                image_mask: torch.Tensor) -> torch.Tensor:
        from transformers.masking_utils import create_bidirectional_mask

        vilt = self.model.vilt
        embeds = torch.cat([text_embeds, image_embeds], dim=1)
        masks = torch.cat([attention_mask.to(image_mask.dtype), image_mask], dim=1)
        mask = create_bidirectional_mask(config=vilt.config, inputs_embeds=embeds, attention_mask=masks)
        hidden = vilt.layernorm(vilt.encoder(embeds, attention_mask=mask)[0])
        return self.model.classifier(vilt.pooler(hidden))


def plan_parts(kind: str | None, model: nn.Module, specs: list[InputSpec], model_type: str) -> list[Part]:
    """The parts of a model, in execution order (encoders first, then fusion / decoder)."""
    names = {s.name for s in specs}
    if kind == "dual_encoder":
        if "input_ids" not in names or "pixel_values" not in names:
            raise InputError("--split-modalities needs both text:input_ids and vision:pixel_values in the signature",
                             offending=",".join(sorted(names)), hint="drop --input-signature or add the missing input")
        with_mask = "attention_mask" in names
        text_inputs = ["input_ids"] + (["attention_mask"] if with_mask else [])
        return [
            Part("vision", "vision", ImageEncoder(model), ["pixel_values"], ["image_embeds"],
                 {"pixel_values": {0: "image_batch"}}, {"image_embeds": {0: "image_batch"}}),
            Part("text", "text", TextEncoder(model, with_mask), text_inputs, ["text_embeds"],
                 {n: {0: "text_batch", 1: "sequence"} for n in text_inputs}, {"text_embeds": {0: "text_batch"}}),
            Part("fusion", "fusion", ContrastiveHead(model), ["image_embeds", "text_embeds"],
                 ["logits_per_image", "logits_per_text"],
                 {"image_embeds": {0: "image_batch"}, "text_embeds": {0: "text_batch"}},
                 {"logits_per_image": {0: "image_batch", 1: "text_batch"},
                  "logits_per_text": {0: "text_batch", 1: "image_batch"}}),
        ]
    if kind == "encoder_decoder":
        return [
            Part("audio", "audio", AudioEncoder(model), ["input_features"], ["encoder_hidden_states"],
                 {"input_features": {0: "batch"}}, {"encoder_hidden_states": {0: "batch"}}),
            Part("decoder", "text", SpeechDecoder(model), ["decoder_input_ids", "encoder_hidden_states"], ["logits"],
                 {"decoder_input_ids": {0: "batch", 1: "decoder_sequence"}, "encoder_hidden_states": {0: "batch"}},
                 {"logits": {0: "batch", 1: "decoder_sequence"}}),
        ]
    if kind == "vlm_decoder":
        from studio.export.qwen2_vl import Qwen2VLDecoder, Qwen2VLVisionEncoder

        if not {"pixel_values", "image_grid_thw"} <= names:
            raise InputError("--split-modalities for a vision-language model needs the vision inputs in the "
                             "signature", offending=",".join(sorted(names)),
                             hint="drop --input-signature (the default has pixel_values and image_grid_thw)")
        text = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"}}
        logits = {"logits": {0: "batch", 1: "sequence"}}
        return [
            Part("vision", "vision", Qwen2VLVisionEncoder(model), ["pixel_values", "image_grid_thw"],
                 ["image_embeds"], {"pixel_values": {0: "patches"}, "image_grid_thw": {0: "images"}},
                 {"image_embeds": {0: "image_tokens"}}),
            Part("decoder", "text", Qwen2VLDecoder(model),
                 ["input_ids", "attention_mask", "image_embeds", "image_grid_thw"], ["logits"],
                 {**text, "image_embeds": {0: "image_tokens"}, "image_grid_thw": {0: "images"}}, logits),
            Part("text", "text", CausalLMLogits(model), ["input_ids", "attention_mask"], ["logits"], text, logits,
                 standalone=True),
        ]
    if kind == "vlm_llava":  # tower -> projector -> decoder, + text-only decoder
        from studio.export.llava import plan_parts as llava_parts

        return llava_parts(model, names)
    if kind == "single_stream":
        if "input_ids" not in names or "pixel_values" not in names:
            raise InputError("--split-modalities needs both text:input_ids and vision:pixel_values in the signature",
                             offending=",".join(sorted(names)), hint="drop --input-signature or add the missing input")
        text_in = ["input_ids"] + (["token_type_ids"] if "token_type_ids" in names else [])
        image_in = ["pixel_values"] + (["pixel_mask"] if "pixel_mask" in names else [])
        seq = {0: "batch", 1: "sequence"}
        fusion_in = ["text_embeds", "attention_mask", "image_embeds", "image_mask"]
        if "attention_mask" not in names:
            raise InputError("--split-modalities for ViLT needs text:attention_mask in the signature",
                             offending=",".join(sorted(names)), hint="drop --input-signature or add it")
        return [
            Part("text", "text", ViltTextEmbeddings(model), text_in, ["text_embeds"], {n: seq for n in text_in},
                 {"text_embeds": seq}),
            Part("vision", "vision", ViltImageEmbeddings(model), image_in, ["image_embeds", "image_mask"],
                 {n: {0: "batch"} for n in image_in}, {"image_embeds": {0: "batch"}, "image_mask": {0: "batch"}}),
            Part("fusion", "fusion", ViltFusion(model), fusion_in, ["logits"],
                 {"text_embeds": seq, "attention_mask": seq, "image_embeds": {0: "batch"},
                  "image_mask": {0: "batch"}}, {"logits": {0: "batch"}}),
        ]
    raise InputError(f"--split-modalities is not available for model type '{model_type}'",
                     offending=model_type,
                     hint="it is supported for dual encoders (clip, siglip), speech encoder-decoders (whisper), "
                          "qwen2_vl and vilt; export without --split-modalities")


def split_kind_supported(kind: str | None) -> bool:
    return kind in SPLIT_KINDS


def boundary_check(parts_io: dict[str, dict[str, Any]]) -> list[str]:
    """Every part input that another part produces must have the same declared dims on both sides."""
    produced: dict[str, tuple[str, list[Any]]] = {}
    for pname, io in parts_io.items():
        for out, dims in io["outputs"].items():
            produced[out] = (pname, dims)
    problems = []
    for pname, io in parts_io.items():
        for inp, dims in io["inputs"].items():
            if inp in produced and produced[inp][1] != dims:
                problems.append(f"{inp}: {produced[inp][0]} declares {produced[inp][1]} but {pname} expects {dims}")
    return problems
