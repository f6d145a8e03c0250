"""Traceable stand-ins for ``transformers.vision_utils``, swapped in only while an export traces the model.

transformers gathers the vision towers' data-dependent precomputation (rotary position ids, attention segments,
window order, position-embedding interpolation) in one module, ``transformers/vision_utils.py``, that ~34 families
import. Its functions loop over ``grid_thw.tolist()`` / ``repeat_interleave``: a TorchScript trace freezes them to
the traced image sizes. The functions here give identical values with tensor ops only: every patch (or window)
is enumerated with ``torch.arange`` over a 0-d tensor total (ONNX Range) and finds its image by comparing with the
cumulative counts, so nothing depends on a Python int taken from the data.

The vision attention splits q/k/v per segment (``torch.split(x, lengths.tolist())``) unless flash attention is
requested for the vision config; :func:`traceable_vision` registers a segment attention in transformers'
``AttentionInterface`` under a flash-like name and sets it on the vision sub-configs only (the language model keeps
its sdpa/eager), so the tower hands ``cu_seqlens`` to one block-diagonal masked attention. ``get_max_seqlen``'s
``.item()`` is skipped for that implementation (the value is unused). The modules are found by scanning the loaded
``transformers.models.*`` modules for the original function objects, never by a list of families.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Any

import torch
import torch.nn.functional as F

SEGMENT_ATTENTION = "studio_flash_segments"  # "flash" in the name: HF's vision towers then pass cu_seqlens


def _tracing() -> bool:
    return torch.jit.is_tracing()


def _owner(ends: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """For each position in ``idx``, the entry whose cumulative range ``[ends[i-1], ends[i])`` holds it."""
    return (idx[:, None] >= ends[None, :]).long().sum(-1)


def _enumerate(counts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Entry and local index of every element of a packed sequence made of ``counts[i]`` elements per entry."""
    ends = counts.cumsum(0)
    idx = torch.arange(ends[-1], device=counts.device) if counts.shape[0] else counts[:0]
    entry = _owner(ends, idx)
    return entry, idx - (ends - counts)[entry]


def get_vision_cu_seqlens(grid_thw: torch.Tensor, merge_temporal: bool = False,
                          kwargs: dict | None = None) -> torch.Tensor:
    if kwargs is not None and (cu := kwargs.pop("cu_seqlens", None)) is not None:
        return cu
    dtype = grid_thw.dtype if _tracing() else torch.int32
    t, hw = grid_thw[:, 0], grid_thw[:, 1] * grid_thw[:, 2]
    if merge_temporal:
        seqlens = t * hw
    else:
        frame_owner, _ = _enumerate(t)
        seqlens = hw[frame_owner]
    return F.pad(seqlens.cumsum(dim=0, dtype=dtype), (1, 0), value=0)


def get_vision_attention_seqlens(grid_thw: torch.Tensor, config: Any, merge_temporal: bool = False,
                                 kwargs: dict | None = None) -> tuple[torch.Tensor, int | None]:
    cu = get_vision_cu_seqlens(grid_thw, merge_temporal=merge_temporal, kwargs=kwargs)
    return cu, get_max_seqlen(cu, config, kwargs=kwargs)


def get_vision_position_ids(grid_thw: torch.Tensor, spatial_merge_size: int | torch.Tensor,
                            include_temporal: bool = False, kwargs: dict | None = None) -> torch.Tensor:
    if kwargs is not None and (pos := kwargs.pop("position_ids", None)) is not None:
        return pos
    g = grid_thw.long()
    t, h, w = g[:, 0], g[:, 1], g[:, 2]
    image, local = _enumerate(t * h * w)
    m = spatial_merge_size[image].long() if isinstance(spatial_merge_size, torch.Tensor) else spatial_merge_size
    hi, wi = h[image], w[image]
    frame = torch.div(local, hi * wi, rounding_mode="floor")
    r = local - frame * hi * wi
    block, inner = torch.div(r, m * m, rounding_mode="floor"), r % (m * m)
    blocks_w = torch.div(wi, m, rounding_mode="floor")
    hpos = torch.div(block, blocks_w, rounding_mode="floor") * m + torch.div(inner, m, rounding_mode="floor")
    wpos = (block % blocks_w) * m + inner % m
    return torch.stack([frame, hpos, wpos] if include_temporal else [hpos, wpos], dim=-1)


def get_vision_window_index(grid_thw: torch.Tensor, spatial_merge_size: int, window_size: int, patch_size: int,
                            kwargs: dict | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Each merged token's place in window order is computed (windows row-major per frame, edge windows cut),
    then scattered into the permutation; the window sizes come from enumerating every (padded) window."""
    if kwargs is not None:
        wi_, cu_ = kwargs.pop("window_index", None), kwargs.pop("cu_window_seqlens", None)
        if wi_ is not None and cu_ is not None:
            return wi_, cu_
    m, win = spatial_merge_size, window_size // spatial_merge_size // patch_size
    g = grid_thw.long()
    t, lh, lw = g[:, 0], torch.div(g[:, 1], m, rounding_mode="floor"), torch.div(g[:, 2], m, rounding_mode="floor")
    per_image = t * lh * lw
    image, local = _enumerate(per_image)
    h, w = lh[image], lw[image]
    frame = torch.div(local, h * w, rounding_mode="floor")
    r = local - frame * h * w
    bh, bw = torch.div(r, w, rounding_mode="floor"), r % w
    wh, ww = torch.div(bh, win, rounding_mode="floor"), torch.div(bw, win, rounding_mode="floor")
    rows = torch.clamp(h - wh * win, max=win)
    cols = torch.clamp(w - ww * win, max=win)
    dest = ((per_image.cumsum(0) - per_image)[image] + frame * h * w + wh * win * w + ww * win * rows
            + (bh % win) * cols + bw % win)
    order = torch.arange(dest.shape[0], device=dest.device)
    window_index = torch.zeros_like(order).scatter(0, dest, order)
    nwh, nww = torch.div(lh, win, rounding_mode="floor") + 1, torch.div(lw, win, rounding_mode="floor") + 1
    wimage, wlocal = _enumerate(t * nwh * nww)
    per_frame = nww[wimage] * nwh[wimage]
    k = wlocal % per_frame
    kh, kw = torch.div(k, nww[wimage], rounding_mode="floor"), k % nww[wimage]
    sizes = ((lh[wimage] - kh * win).clamp(0, win) * (lw[wimage] - kw * win).clamp(0, win) * (m * m))
    cu = F.pad(sizes[sizes > 0].cumsum(0), (1, 0), value=0)
    return window_index, cu.to(torch.int32)


def get_vision_interpolation_indices_and_weights(
        grid_thw: torch.Tensor, num_grid_per_side: int, mode: str = "bilinear", align_corners: bool = False,
        spatial_merge_size: int = 1, padding: str = "border", kwargs: dict | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    from transformers.vision_utils import _interpolation_axis_taps_weights as taps_weights

    if kwargs is not None:
        ii, iw = kwargs.pop("interp_indices", None), kwargs.pop("interp_weights", None)
        if ii is not None and iw is not None:
            return ii, iw
    side, merge = num_grid_per_side, spatial_merge_size
    image, local = _enumerate(grid_thw[:, 0] * grid_thw[:, 1] * grid_thw[:, 2])
    heights, widths = grid_thw[:, 1][image], grid_thw[:, 2][image]
    within = local % (heights * widths)
    blocks_w = torch.div(widths, merge, rounding_mode="floor")
    in_col, in_row = within % merge, torch.div(within, merge, rounding_mode="floor") % merge
    block_col = torch.div(within, merge * merge, rounding_mode="floor") % blocks_w
    block_row = torch.div(within, merge * merge * blocks_w, rounding_mode="floor")
    row, col = block_row * merge + in_row, block_col * merge + in_col
    h_taps, h_weights = taps_weights(row, heights, side, mode, align_corners, padding)
    w_taps, w_weights = taps_weights(col, widths, side, mode, align_corners, padding)
    n = h_taps.shape[1]
    indices = (h_taps[:, :, None] * side + w_taps[:, None, :]).reshape(-1, n * n)
    weights = (h_weights[:, :, None] * w_weights[:, None, :]).reshape(-1, n * n)
    return indices, weights


def get_vision_bilinear_indices_and_weights(grid_thw: torch.Tensor, num_grid_per_side: int, spatial_merge_size: int,
                                            align_corners: bool = True,
                                            kwargs: dict | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    if kwargs is not None:
        bi, bw = kwargs.pop("bilinear_indices", None), kwargs.pop("bilinear_weights", None)
        if bi is not None and bw is not None:
            return bi, bw
    indices, weights = get_vision_interpolation_indices_and_weights(
        grid_thw, num_grid_per_side, mode="bilinear", align_corners=True, spatial_merge_size=spatial_merge_size)
    return indices.transpose(0, 1), weights.transpose(0, 1)


def get_vision_nearest_position_ids(target_sizes: torch.Tensor, num_patches_per_side: int,
                                    kwargs: dict | None = None) -> torch.Tensor:
    if kwargs is not None and (pos := kwargs.pop("position_ids", None)) is not None:
        return pos
    n = num_patches_per_side
    boundaries = torch.arange(1 / n, 1.0, 1 / n, device=target_sizes.device)
    h, w = target_sizes[:, 0].long(), target_sizes[:, 1].long()
    image, local = _enumerate(h * w)
    hi, wi = h[image], w[image]
    row, col = torch.div(local, wi, rounding_mode="floor"), local % wi
    bucket_h = (((row / hi)[:, None] >= boundaries[None, :]).long().sum(-1))  # bucketize(right=True)
    bucket_w = (((col / wi)[:, None] >= boundaries[None, :]).long().sum(-1))
    return bucket_h * n + bucket_w


def get_max_seqlen(cu_seqlens: torch.Tensor, config: Any, kwargs: dict | None = None,
                   kwarg_name: str = "max_seqlen") -> int | None:
    """HF's, except for the segment attention: it needs no maximum, so no ``.item()`` is traced."""
    if kwargs is not None and (value := kwargs.pop(kwarg_name, None)) is not None:
        return value
    if getattr(config, "_attn_implementation", None) == SEGMENT_ATTENTION:
        return None
    from transformers.utils.generic import get_max_seqlen as original

    return original(cu_seqlens, config)


REPLACEMENTS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (get_vision_cu_seqlens, get_vision_attention_seqlens, get_vision_position_ids,
                            get_vision_window_index, get_vision_interpolation_indices_and_weights,
                            get_vision_bilinear_indices_and_weights, get_vision_nearest_position_ids)}


def segment_attention(module: Any, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                      attention_mask: torch.Tensor | None, scaling: float | None = None, dropout: float = 0.0,
                      cu_seq_lens_q: torch.Tensor | None = None, **kwargs: Any) -> tuple[torch.Tensor, None]:
    """Attention within packed segments: ``[1, heads, n, d]`` q/k/v, one additive block-diagonal mask built from
    ``cu_seq_lens_q`` (each position's segment = how many boundaries it has passed); returns ``[1, n, heads, d]``."""
    from transformers.integrations.sdpa_attention import repeat_kv

    groups = query.shape[1] // key.shape[1]
    if groups > 1:
        key, value = repeat_kv(key, groups), repeat_kv(value, groups)
    n = query.shape[2]
    bias = attention_mask
    if cu_seq_lens_q is not None:
        idx = torch.arange(n, device=query.device)
        segment = _owner(cu_seq_lens_q[1:].long(), idx)
        same = segment[:, None] == segment[None, :]
        bias = torch.zeros(same.shape, dtype=query.dtype, device=query.device).masked_fill(~same, float("-inf"))
    scale = scaling if scaling is not None else query.shape[-1] ** -0.5
    scores = torch.matmul(query, key.transpose(2, 3)) * scale
    if bias is not None:
        scores = scores + bias
    probs = torch.softmax(scores.float(), dim=-1).to(query.dtype)
    return torch.matmul(probs, value).transpose(1, 2).contiguous(), None


def vision_utils_users() -> dict[str, list[str]]:
    """Loaded ``transformers.models`` modules that hold one of the vision_utils functions (or get_max_seqlen), by
    name: found by identity with the originals, so a new family is covered as soon as it imports them."""
    import transformers.vision_utils as vu
    from transformers.utils import generic

    originals = {id(getattr(vu, n)): n for n in REPLACEMENTS} | {id(generic.get_max_seqlen): "get_max_seqlen"}
    users: dict[str, list[str]] = {}
    for name, mod in list(sys.modules.items()):
        if not name.startswith("transformers.models.") or mod is None:
            continue
        found = [originals[id(v)] for k, v in vars(mod).items() if id(v) in originals and k == originals[id(v)]]
        if found:
            users[name] = found
    return users


def model_uses_vision_utils(model: Any) -> list[str]:
    """The vision_utils functions the model's own modeling modules import (empty: nothing to swap)."""
    mods = {type(m).__module__ for m in model.modules()}
    return sorted({f for name, fs in vision_utils_users().items() if name in mods for f in fs
                   if f in REPLACEMENTS})


def vision_configs(model: Any) -> list[Any]:
    """The vision towers' configs: sub-configs, at any depth, whose ``sub_configs`` key names vision / visual (the
    language model's config is never one of them, so it keeps its sdpa / eager attention)."""
    root = model.config
    found = {}
    stack = [root]
    while stack:
        c = stack.pop()
        for key in getattr(c, "sub_configs", {}) or {}:
            sub = getattr(c, key, None)
            if sub is None:
                continue
            if "vision" in key or "visual" in key:
                found[id(sub)] = sub
            stack.append(sub)
    return list(found.values())


@contextlib.contextmanager
def traceable_vision(model: Any) -> Iterator[list[str]]:
    """Swap the vision_utils functions in every modeling module the model uses and route the vision sub-configs'
    attention to :func:`segment_attention`; everything is restored on exit. Yields what it changed."""
    from transformers import AttentionInterface

    AttentionInterface.register(SEGMENT_ATTENTION, segment_attention)
    mods = {type(m).__module__ for m in model.modules()}
    changed: list[str] = []
    undo: list[tuple[Any, str, Any]] = []
    for name, found in vision_utils_users().items():
        if name not in mods:
            continue
        mod = sys.modules[name]
        for fname in found:
            undo.append((mod, fname, getattr(mod, fname)))
            setattr(mod, fname, REPLACEMENTS.get(fname, get_max_seqlen))
            if fname != "get_max_seqlen":
                changed.append(fname)
    configs = vision_configs(model) if changed else []
    for cfg in configs:
        undo.append((cfg, "_attn_implementation_internal", cfg._attn_implementation_internal))
        cfg._attn_implementation_internal = SEGMENT_ATTENTION
    try:
        yield sorted(set(changed)) + (["segment attention"] if configs else [])
    finally:
        for obj, attr, old in reversed(undo):
            setattr(obj, attr, old)
