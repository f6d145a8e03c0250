"""``--split-modalities``: one graph per encoder plus the fusion / decoder part, joined by named tensors.

Each part has its own batch axis (``image_batch``, ``text_batch``, ...) so a server can run only the
encoders a request needs; a boundary tensor has the same name and the same declared dims on both sides.
Dual encoders (CLIP, SigLIP): vision -> image_embeds, text -> text_embeds (both L2-normalised, exactly
as the monolithic model returns them), fusion -> logits. Whisper: audio encoder -> encoder_hidden_states,
decoder (text) -> logits.
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
    raise InputError(f"--split-modalities is not available for model type '{model_type}'",
                     offending=model_type,
                     hint="it is supported for dual encoders (clip, siglip) and speech encoder-decoders (whisper); "
                          "export without --split-modalities")


def split_kind_supported(kind: str | None) -> bool:
    return kind in ("dual_encoder", "encoder_decoder")


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
