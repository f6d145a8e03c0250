"""Export-time model patches: traceable stand-ins for forward code that no exporter can follow.

Like optimum's model patchers, but only where the original is untraceable and the replacement is provably
equivalent on the exported input domain; parity is always checked against the *unpatched* model.

ViLT: ``ViltEmbeddings.visual_embed`` loops over the batch in Python, interpolates position embeddings per
image and picks patches with ``torch.multinomial`` (a random permutation). For images that fill the
processor's fixed canvas (pixel_mask all ones, as the studio's ViLT processor produces), keeping every
patch in grid order gives the same pooled output: attention is permutation-equivariant, each patch keeps
its own position embedding and the pooler reads the CLS token.

Mixture-of-experts layers (any type): transformers' default ``grouped_mm`` experts path counts tokens per expert
with ``torch.histc``, which no ONNX exporter converts; its ``batched_mm`` path (each token's experts' weights
gathered, one batched matmul) computes the same sums with gather and matmul only, so the export runs with it.

TorchScript conversions the exporter lacks or gets wrong (``studio.export.symbolics``: triangular solves; torch's
repeat_interleave / unfold / full / slice / cumsum / permute where they break) are registered for the same span;
the ones an export used that compute differently are listed with the patches.

Masked assignments with a trailing full slice (``hidden_states[mask, :] = x``, 42 transformers modeling files) are
traced without the slice (the same assignment): TorchScript's ONNX pass mis-converts the slice + index_put pair; an
slice assignment into a region empty at the traced sizes is not traced (converting it crashes the exporter, SIGFPE).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
from torch import nn

from studio.core.catalogue import N_


def _vilt_visual_embed(self: Any, pixel_values: torch.Tensor, pixel_mask: torch.Tensor,
                       max_image_length: int = 200) -> tuple[Any, ...]:
    x = self.patch_embeddings(pixel_values)
    x_mask = nn.functional.interpolate(pixel_mask[:, None, :, :].float(), size=(x.shape[2], x.shape[3])).long()
    batch_size, num_channels, height, width = x.shape
    patch_dim = self.config.image_size // self.config.patch_size
    spatial_pos = self.position_embeddings[:, 1:, :].transpose(1, 2).view(1, num_channels, patch_dim, patch_dim)
    if (height, width) != (patch_dim, patch_dim):
        spatial_pos = nn.functional.interpolate(spatial_pos, size=(height, width), mode="bilinear",
                                                align_corners=True)
    pos_embed = spatial_pos.flatten(2).transpose(1, 2).expand(batch_size, -1, -1)
    x = x.flatten(2).transpose(1, 2)
    patch_index = torch.stack(torch.meshgrid(torch.arange(height), torch.arange(width), indexing="ij"), dim=-1)
    patch_index = patch_index.to(x.device).flatten(0, 1)[None].expand(batch_size, -1, -1)
    x_mask = x_mask.flatten(1)
    cls_tokens = self.cls_token.expand(batch_size, -1, -1)
    x = torch.cat((cls_tokens, x), dim=1)
    pos_embed = torch.cat((self.position_embeddings[:, 0, :][:, None, :].expand(batch_size, -1, -1), pos_embed), dim=1)
    x = self.dropout(x + pos_embed)
    x_mask = torch.cat([torch.ones(x_mask.shape[0], 1).to(x_mask), x_mask], dim=1)
    return x, x_mask, (patch_index, (height, width))


_SETITEM = torch.Tensor.__setitem__


def _setitem_without_full_slices(self: torch.Tensor, key: Any, value: Any) -> None:
    """``x[mask, :] = v`` as ``x[mask] = v`` while tracing: the same assignment, but TorchScript's ONNX pass turns
    the no-op trailing slice plus a 2-D boolean index_put into a wrong scatter (ORT: "Attempting to broadcast").
    A slice assignment into a region empty at the traced sizes (``offsets[1:] = ...`` with one image) is skipped: the
    TorchScript exporter kills the process (SIGFPE) converting it; parity checks other sizes. Tensor-indexed
    assignments are always traced (an empty mask on the traced example may select something at run time)."""
    if torch.jit.is_tracing():
        if isinstance(key, tuple):
            parts = list(key)
            while len(parts) > 1 and isinstance(parts[-1], slice) and parts[-1] == slice(None):
                parts.pop()
            key = parts[0] if len(parts) == 1 else tuple(parts)
        index = key if isinstance(key, tuple) else (key,)
        basic = not any(isinstance(k, torch.Tensor) for k in index)  # a mask empty here may fill at run time
        if basic and self[key].numel() == 0:  # the read is dead code in the graph
            return  # nothing to assign at the traced sizes (and the exporter's Reshape of 0 elements divides by zero)
    _SETITEM(self, key, value)


@contextlib.contextmanager
def export_patches(model: nn.Module, model_type: str) -> Iterator[list[str]]:
    """Apply the patches for ``model_type`` while the exporter runs; yields their descriptions."""
    undo: list[tuple[Any, str, Any]] = []
    notes: list[str] = []
    if model_type == "vilt":
        for mod in model.modules():
            if type(mod).__name__ == "ViltEmbeddings":
                undo.append((mod, "visual_embed", mod.__dict__.get("visual_embed")))
                mod.visual_embed = _vilt_visual_embed.__get__(mod)  # type: ignore[method-assign]
        if undo:
            notes.append(N_("ViLT visual_embed replaced by a traceable full-grid version (no per-image loop, no "
                            "multinomial patch sampling); valid for images filling the processor canvas"))
    configs = {id(c): c for m in model.modules() if (c := getattr(m, "config", None)) is not None
               and getattr(c, "_experts_implementation", None) == "grouped_mm"}
    for config in configs.values():
        undo.append((config, "_experts_implementation", "grouped_mm"))
        config._experts_implementation = "batched_mm"
    if configs:
        notes.append(N_("mixture-of-experts layers exported with transformers' batched_mm experts path (the "
                        "grouped_mm default counts tokens with torch.histc, which no ONNX exporter converts); same sums"))
    from studio.export.symbolics import torchscript_symbolics

    torch.Tensor.__setitem__ = _setitem_without_full_slices  # type: ignore[method-assign]
    try:
        with torchscript_symbolics(notes):
            yield notes
    finally:
        torch.Tensor.__setitem__ = _SETITEM  # type: ignore[method-assign]
        for obj, name, old in undo:
            if old is None:
                obj.__dict__.pop(name, None)
            else:
                setattr(obj, name, old)
