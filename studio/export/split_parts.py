"""What a split export is made of: one ``Part`` per graph, and the text-only decoder part every VLM family
offers. Apart from ``split`` (which plans the parts of each kind and dispatches to a family's planner, e.g.
``llava.plan_parts``) so that those planners import the parts without importing the dispatcher: no import circle.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn


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


class CausalLMLogits(nn.Module):
    """Text-only decoder: ``(input_ids, attention_mask) -> logits`` of the unmodified HF forward."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits
