"""A decoder-only HF model as a graph with a KV cache: ``(input_ids, attention_mask, position_ids, past...)``
-> ``(logits, present...)``, the cache flattened to ``past_key_values.{i}.key/value`` / ``present.{i}.key/value``.

HF models take and return a ``Cache`` object; the exporter wants tensors. ``DecoderWithPast`` rebuilds a
``DynamicCache`` from the past tensors on every call (plain Python glue the trace does not see) and returns each
layer's keys and values after the update: the past concatenated with the new positions. A zero-length past is a
prefill, so one graph serves prefill and decode steps.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


class DecoderWithPast(nn.Module):
    def __init__(self, model: nn.Module, layers: int, use_positions: bool = True) -> None:
        super().__init__()
        self.model = model
        self.layers = layers
        self.use_positions = use_positions

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, *rest: torch.Tensor) -> tuple[Any, ...]:
        from transformers.cache_utils import DynamicCache

        position_ids = rest[0] if self.use_positions else None
        past = rest[1:] if self.use_positions else rest
        if len(past) != 2 * self.layers:
            raise ValueError(f"expected {2 * self.layers} past tensors, got {len(past)}")
        cache = DynamicCache(ddp_cache_data=[(past[2 * i], past[2 * i + 1]) for i in range(self.layers)],
                             config=self.model.config)
        kw: dict[str, Any] = {"position_ids": position_ids} if self.use_positions else {}
        kw[cache_argument(self.model)] = cache
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=True, **kw)
        present: list[torch.Tensor] = []
        for layer in returned_cache(out).layers:
            present += [layer.keys, layer.values]
        return (out.logits, *present)


def cache_argument(model: nn.Module) -> str:
    """transformers 5.24 renamed forward's ``past_key_values`` to ``cache`` (the old name warns until 5.40)."""
    import inspect

    return "cache" if "cache" in inspect.signature(type(model).forward).parameters else "past_key_values"


def returned_cache(out: Any) -> Any:
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


def probe_cache(model: nn.Module) -> list[tuple[int, ...]]:
    """Shapes of the cache the model itself returns for a 3-token prompt (batch 1): per layer key then value."""
    ids = torch.tensor([[1, 2, 3]], dtype=torch.long)
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=True)
    cache = returned_cache(out)
    shapes: list[tuple[int, ...]] = []
    for layer in getattr(cache, "layers", []):
        keys, values = getattr(layer, "keys", None), getattr(layer, "values", None)
        if not isinstance(keys, torch.Tensor) or not isinstance(values, torch.Tensor):
            raise TypeError(f"cache layer {type(layer).__name__} holds no key/value tensors")
        shapes += [tuple(keys.shape), tuple(values.shape)]
    if not shapes:
        raise TypeError(f"the model returned a {type(cache).__name__} cache without layers")
    return shapes
