"""One generic shrinker: any transformers config class at tiny dimensions, by key names alone.

Why by key names: the coverage table must build every architecture in transformers' auto mappings without a line
of per-architecture config code. Width keys become one width (so every "this hidden equals that hidden" relation
between sub-configs still holds), depth keys two layers, head keys four heads (two key/value heads where the
original shares them), feed-forward keys one size, expert counts four; the vocabulary shrinks to VOCAB and every
special token id past it is moved inside it (distinct ids, same relations); lists that index layers are clipped,
lists whose sum is a head dimension (M-RoPE sections) are rescaled. Image sizes, patch sizes, mel bins and
positions stay as the defaults set them, so the default processor of the type still fits the config.

Relations the defaults hold are kept, never looked up per architecture: the head size is rounded up to a multiple
of 8 (axial and M-RoPE rotaries split it in 4 or 3 parts), a head size that is the sum of two others stays their
sum, a group count equal to the width follows it, a backbone keeps its stage count (``depths``) and its
``out_features`` / ``out_indices`` name stages that still exist, layer indices in a sub-config with no depth of its
own (an adapter's ``vision_feature_layer``) are clipped to the shrunk depth, an explicit head size equal to width /
heads stays so, an output size that is k widths (concatenated layers) stays k widths with its k layers listed (a
root's tower output size k times one sub-config's width too: a merge that concatenates patches), head groups still
divide the heads, an image size a pixel shuffle / merger cannot fold (Aya's 384 over patch 14, 2x)
moves to the multiple below, and a ``vocab_size``, head size or media token id the default leaves None (a CTC
head, BLIP-2's ``image_token_index``) gets the shrunk value or a free id; a modality sub-config the default
leaves None (Gemma4's vision and audio) is the config class's own default for it, so the table tests that path.
After the build, a default whose rotary size contradicts the M-RoPE sections its own model code falls back to
(GLM-4.1V: sections for half the head, a default with none of ``partial_rotary_factor``) gets the share the
sections fill (``fit_rotary_sections``, read from the built model's modules).
"""

from __future__ import annotations

import math
import re
from typing import Any

HEADS = 4
KV_HEADS = 2
MAX_HEAD_DIM = 128  # the original head size is kept up to this (rotary sections in model code assume it)
FFN = 128
WIDTH = HEADS * 16  # replaced per config by HEADS * its head size (shrink_config)
HEAD_DIM = 16
EXPLICIT: set[int] = set()  # head sizes the config writes out (shrink_config)
LAYERS = 2
MAX_LAYERS = 0  # the deepest original sub-config (shrink_config): bounds layer indices in depth-less sub-configs
EXPERTS = 4
VOCAB = 1024

_WIDTH = re.compile(r"^(hidden_size|d_model|embed_dim|n_embd|dim|model_dim|d_embed|embedding_size|"
                    r"projection_dim|projection_size|project_dim|word_embed_proj_dim|out_hidden_size|"
                    r"(\w+_)?hidden_size|(\w+_)?hidden_dim|(\w+_)?embed_dim|(\w+_)?d_model|hidden_dim|"
                    r"image_text_hidden_size|text_embed_dim|vision_embed_dim|audio_embed_dim|mm_hidden_size|"
                    r"encoder_hidden_size|hidden_channels|output_dim|proj_dim|(\w+_)?projection_dim|codebook_dim|condition_dim)$")
_NOT_WIDTH = re.compile(r"(patch|kernel|stride|window|vocab|position|length|size_per|bucket|intermediate|head_dim"
                        r"|rank|num_|max_|min_|image|input|conv|pad|sample|frame|chunk|mel|bins)")
_LAYERS = re.compile(r"^(num_hidden_layers|num_layers|n_layer|n_layers|depth|encoder_layers|decoder_layers|"
                     r"num_decoder_layers|num_encoder_layers|(\w+_)?num_hidden_layers|(\w+_)?num_layers|"
                     r"(\w+_)?layers)$")
_NOT_LAYERS = re.compile(r"(freq|max_window|dropout|drop|skip|first_k|moe_layer_freq|scale|index|indices|"
                         r"interval|every|sparse|mamba|stride|_ids$|full_attn|layer_types|norm)")
_HEADS = re.compile(r"^(num_attention_heads|num_heads|n_head|n_heads|(\w+_)?attention_heads|(\w+_)?num_heads|"
                    r"(\w+_)?num_attention_heads)$")
_KV_HEADS = re.compile(r"^((\w+_)?num_key_value_heads|n_kv_heads|num_kv_heads|multi_query_group_num|"
                       r"(\w+_)?key_value_heads)$")
_HEAD_DIM = re.compile(r"^(head_dim|d_kv|attention_head_dim|kv_channels|(\w+_)?head_dim|head_size|"
                       r"qk_nope_head_dim|qk_rope_head_dim|v_head_dim|qk_head_dim)$")
_FFN = re.compile(r"^(intermediate_size|ffn_dim|d_ff|mlp_dim|n_inner|(\w+_)?intermediate_size|(\w+_)?ffn_dim|"
                  r"moe_intermediate_size|shared_expert_intermediate_size|encoder_ffn_dim|decoder_ffn_dim|"
                  r"mlp_hidden_dim|intermediate_dim|ffn_hidden_size|dim_feedforward|feed_forward_dim)$")
_EXPERTS = re.compile(r"^(num_experts|n_routed_experts|num_local_experts|moe_num_experts|n_experts|"
                      r"(\w+_)?num_experts)$")
_TOPK = re.compile(r"^(num_experts_per_tok|top_k|moe_topk|num_experts_per_token|topk_group|n_group)$")
_MULTIPLE = re.compile(r"(output|out|hidden|feature)_(dim|size)$")
_MEDIA_ID = re.compile(r"^(\w+_)?(image|video|audio)_token_(id|index)$")
_TOKEN_ID = re.compile(r"(_token_id|_token_index|_token_ids|_id|_index)$")
_VOCAB = re.compile(r"^(\w+_)?vocab_size$")


def _ints(values: Any) -> bool:
    return isinstance(values, list) and bool(values) and all(isinstance(v, int) and not isinstance(v, bool)
                                                          for v in values)


def shrink_dict(d: dict[str, Any], remap: dict[Any, int], vocab: int, depth: int = 0,
                head_dims: set[int] | None = None) -> dict[str, Any]:
    """A shrunk copy of one config dict (sub-configs recursively); ``remap`` collects special ids moved."""
    out: dict[str, Any] = {}
    old_layers = next((d[k] for k in ("num_hidden_layers", "num_layers", "depth", "n_layer", "decoder_layers")
                       if isinstance(d.get(k), int)), None)
    if isinstance(d.get("depths"), list):
        old_layers = None  # a backbone's count is its stages (one depth each): kept, each depth shrinks
    head_dims = (head_dims or set()) | _old_head_dims(d)
    # counts that size a sibling list (conv layers and their conv_dim / conv_stride lists) keep their value
    list_lengths = {len(v) for k, v in d.items() if isinstance(v, list) and v and old_layers != len(v)}
    for key, value in d.items():
        if not isinstance(key, str):  # a table keyed by numbers (patches -> queries) is data, not sizes
            out[key] = value
            continue
        if isinstance(value, dict):
            if value and all(isinstance(k, str) and k.isdigit() for k in value) and old_layers \
                    and "label" not in key:
                value = _layer_keyed(value)
            out[key] = shrink_dict(value, remap, vocab, depth + 1, head_dims) if depth < 6 else value
            continue
        if value is None and _unset_needed(key, d):
            out[key] = VOCAB if key == "vocab_size" else HEAD_DIM
            continue
        media = _MEDIA_ID.match(key)
        if value is None and media:  # compared against input_ids by the forward: a free id (shared per medium)
            out[key] = _remap(f"unset {media.group(2)}", remap, vocab)
            continue
        if isinstance(value, bool) or value is None:
            out[key] = value
            continue
        if isinstance(value, int):
            stages = isinstance(d.get("depths"), list) and value == len(d["depths"])
            keep = _LAYERS.match(key) and value in list_lengths and ("hidden" not in key or stages)
            out[key] = value if keep else _shrink_int(key, value, d, remap, vocab)
            continue
        if isinstance(value, list) and old_layers and len(value) == old_layers and old_layers > LAYERS:
            value = _per_layer(value)  # one entry per layer: as many as the shrunk model has, each kind kept
        if _ints(value):
            out[key] = _shrink_list(key, value, old_layers or MAX_LAYERS, head_dims, remap, vocab)
            continue
        out[key] = value
    _keep_relations(d, out)
    return out


def _unset_needed(key: str, d: dict[str, Any]) -> bool:
    """A None the model code cannot take: a vocabulary (CTC heads), a head size beside hidden size and heads."""
    heads = any(isinstance(v, int) and _HEADS.match(k) for k, v in d.items() if isinstance(k, str))
    return key == "vocab_size" or (key == "head_dim" and heads and isinstance(d.get("hidden_size"), int))


def _keep_relations(d: dict[str, Any], out: dict[str, Any]) -> None:
    """Relations between one dict's sizes that model code or validators check: a head size that is the sum of two
    others (``qk_head_dim = qk_nope_head_dim + qk_rope_head_dim``), a group count equal to the width (depthwise
    convolutions), and a backbone's ``out_features`` / ``out_indices`` inside its stages."""
    heads = [k for k, v in d.items() if isinstance(k, str) and _HEAD_DIM.match(k) and isinstance(v, int)
             and isinstance(out.get(k), int)]
    for k in heads:  # the parts carry the whole's prefix (qk_nope_head_dim, qk_rope_head_dim -> qk_head_dim)
        prefix = k[: k.find("head_dim")] if "head_dim" in k else ""
        parts = [a for a in heads if prefix and a != k and a.startswith(prefix)]
        pair = next(((a, b) for a in parts for b in parts if a < b and d[a] + d[b] == d[k]), None)
        if pair:
            out[k] = out[pair[0]] + out[pair[1]]
    width = next((k for k in ("hidden_size", "d_model", "embed_dim") if isinstance(d.get(k), int)), None)
    for k, v in d.items():
        if not (width and isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v > 1):
            continue
        if "group" in k and v == d[width]:
            out[k] = out[width]
        elif _MULTIPLE.search(k) and v > d[width] and v % d[width] == 0 and out[k] == v:
            ratio = v // d[width]  # concatenated hidden states: several layers' widths (the layers listed + last)
            out[k] = ratio * out[width]
            for lk, lv in d.items():
                short = out.get(lk)
                if _ints(lv) and isinstance(short, list) and short and len(short) < len(lv) <= ratio:
                    out[lk] = (short * len(lv))[: len(lv)]  # the clipped indices repeated: the count stays
    for g in (k for k, v in d.items() if isinstance(k, str) and re.search(r"(^|_)(n|num)_groups$", k)
              and isinstance(v, int) and v > 1):  # head groups (Mamba's n_groups) divide the heads they group
        for h in (k for k, v in d.items() if isinstance(k, str) and _HEADS.match(k) and isinstance(v, int)):
            if d[h] % d[g] == 0 and isinstance(out.get(h), int) and out[h] % out[g]:
                out[g] = math.gcd(out[g], out[h])
    first = "embed_dim" if isinstance(d.get("embed_dim"), int) else width  # a backbone's first stage width
    for k, v in d.items():  # per-stage head counts: the first still divides the first stage's width (Swin: 3 of 96)
        short = out.get(k)
        if first and isinstance(k, str) and k.endswith("heads") and _ints(v) and isinstance(short, list) and short \
                and isinstance(out.get(first), int) and d[first] % v[0] == 0 and out[first] % short[0]:
            out[k] = [math.gcd(short[0], out[first]), *short[1:]]
    experts = next((k for k, v in d.items() if isinstance(k, str) and _EXPERTS.match(k) and isinstance(v, int)), None)
    for k, v in d.items():  # experts chosen per token (``moe_k``) stay fewer than the experts there are
        if experts and isinstance(k, str) and re.search(r"(^|_)k$", k) and isinstance(v, int) and v > out[experts]:
            out[k] = min(v, 2, out[experts])
    heads = next((k for k in ("num_attention_heads", "num_heads") if isinstance(d.get(k), int)), None)
    if width and heads and isinstance(d.get("head_dim"), int) and d["head_dim"] == d[width] // d[heads]:
        out["head_dim"] = out[width] // out[heads]  # the head size the width implies stays implied
    _fit_stages(d, out)


def _fit_stages(d: dict[str, Any], out: dict[str, Any]) -> None:
    """A backbone's ``stage_names`` follow its depth (``stem`` + one per stage or layer); requested stages past the
    shrunk depth become its last stage (deduplicated), names and indices kept in step."""
    names = d.get("stage_names")
    if not (isinstance(names, list) and names and ("out_features" in d or "out_indices" in d)):
        return
    depths = out.get("depths")
    count = len(depths) if isinstance(depths, list) else next(
        (out[k] for k in ("num_hidden_layers", "num_layers", "depth") if isinstance(out.get(k), int)), len(names) - 1)
    new_names = names[: count + 1]
    wanted = d.get("out_indices") or [names.index(f) for f in d.get("out_features") or [] if f in names]
    indices = list(dict.fromkeys(min(i if i >= 0 else len(names) + i, count) for i in wanted))
    out["stage_names"] = new_names
    if d.get("out_indices") is not None:
        out["out_indices"] = indices
    if d.get("out_features") is not None:
        out["out_features"] = [new_names[i] for i in indices]


def _per_layer(values: list[Any]) -> list[Any]:
    """A per-layer list cut to LAYERS entries, keeping one entry of each kind the original mixes when it can; layer
    kinds named by strings that are more kinds than layers keep the first LAYERS kinds (LFM3's conv, full and
    sliding attention: conv and full attention, where the first two layers were both conv and the model code found
    no attention layer at all)."""
    hashable = [v if not isinstance(v, (list, dict)) else repr(v) for v in values]
    kinds = list(dict.fromkeys(hashable))
    if len(kinds) > LAYERS and all(isinstance(v, str) for v in values):
        kinds = kinds[:LAYERS]
    if len(kinds) <= LAYERS:
        firsts = [hashable.index(k) for k in kinds]
        rest = [i for i in range(len(values)) if i not in firsts]
        picked = sorted((firsts + rest)[:LAYERS])
        return [values[i] for i in picked]
    return values[:LAYERS]


def _layer_keyed(value: dict[str, Any]) -> dict[str, Any]:
    """A dict keyed by layer index: entries past the shrunk depth move to the last layers (order kept)."""
    keys = sorted(value, key=lambda k: int(k))
    inside = [k for k in keys if int(k) < LAYERS]
    outside = [k for k in keys if int(k) >= LAYERS][: max(0, LAYERS - len(inside))]
    out = {k: value[k] for k in inside}
    free = [i for i in range(LAYERS - 1, -1, -1) if str(i) not in out and f"{i:02d}" not in out]
    width = len(keys[0])
    for k, slot in zip(outside, free, strict=False):
        out[str(slot).zfill(width)] = value[k]
    return out


def _old_head_dims(d: dict[str, Any]) -> set[int]:
    """Head dimensions a config implies (explicit keys, or hidden / heads): what rotary sections sum to."""
    dims = {int(v) for k, v in d.items() if isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
            and _HEAD_DIM.match(k)}
    hidden = d.get("hidden_size")
    heads = next((d[k] for k in ("num_attention_heads", "num_heads") if isinstance(d.get(k), int)), None)
    if isinstance(hidden, int) and isinstance(heads, int) and heads:
        dims.add(hidden // heads)
    return {x for x in dims if x > 1}


def _explicit_head_dims(d: dict[str, Any], depth: int = 0) -> set[int]:
    """Head sizes a config writes out (they shrink to min(size, HEAD_DIM); implied ones become HEAD_DIM)."""
    dims = {int(v) for k, v in d.items() if isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
            and _HEAD_DIM.match(k)}
    for v in d.values():
        if isinstance(v, dict) and depth < 4:
            dims |= _explicit_head_dims(v, depth + 1)
    return dims


def _shrink_int(key: str, value: int, d: dict[str, Any], remap: dict[Any, int], vocab: int) -> int:
    if _VOCAB.match(key) and value > vocab:
        return vocab
    if _TOKEN_ID.search(key) and "token" in key and value >= vocab:
        return _remap(value, remap, vocab)
    if value <= 1:
        return value
    if _KV_HEADS.match(key):
        heads = next((d[k] for k in ("num_attention_heads", "num_heads") if isinstance(d.get(k), int)), value)
        return HEADS if value >= heads else KV_HEADS
    if _HEADS.match(key):
        return min(value, HEADS)
    if _HEAD_DIM.match(key):
        return min(value, HEAD_DIM)
    if _FFN.match(key):
        return min(value, FFN)
    if _EXPERTS.match(key):
        return min(value, EXPERTS)
    if _TOPK.match(key):
        return min(value, 2)
    if _LAYERS.match(key) and not _NOT_LAYERS.search(key):
        return min(value, LAYERS)
    if _WIDTH.match(key) and not _NOT_WIDTH.search(key.replace("hidden_size", "").replace("embed_dim", "")):
        return min(value, WIDTH)
    return value


def _shrink_list(key: str, value: list[int], old_layers: int | None, head_dims: set[int],
                 remap: dict[Any, int], vocab: int) -> list[int]:
    if "token" in key and any(v >= vocab for v in value):
        return [_remap(v, remap, vocab) if v >= vocab else v for v in value]
    total = sum(value)
    match = next((h for h in sorted(head_dims, key=lambda h: h not in EXPLICIT) if total in (h, h // 2)), None)
    if "section" in key and len(value) <= 4 and match:
        new = min(match, HEAD_DIM) if match in EXPLICIT else HEAD_DIM  # what that head size shrinks to
        target = new if total == match else new // 2
        if target == total:
            return value
        scaled = [max(1, v * target // total) for v in value]
        scaled[scaled.index(max(scaled))] += target - sum(scaled)
        return scaled
    if old_layers and re.search(r"(index|indexes|indices|layers|layer_ids|_layer)$", key) and \
            all(-old_layers - 1 <= v <= old_layers for v in value):
        clipped = [max(v, -LAYERS - 1) if v < 0 else min(v, LAYERS - 1) for v in value]
        return list(dict.fromkeys(clipped))
    if _FFN.match(key):
        return [min(v, FFN) for v in value]
    if re.search(r"(depths|layers_per|num_layers|blocks)$", key):
        return [min(v, LAYERS) for v in value]
    if re.search(r"(hidden_sizes|dims|channels|embed_dims|hidden_dims|widths)$", key):
        return [min(v, WIDTH) for v in value]
    if re.search(r"(heads|num_heads)$", key):
        return [min(v, HEADS) for v in value]
    return value


def _remap(value: Any, remap: dict[Any, int], vocab: int) -> int:
    """A special id past the shrunk vocabulary -> a distinct id at its top (the same old id -> the same new id)."""
    if value not in remap:
        remap[value] = vocab - 1 - len(remap)
    return remap[value]


def _all_head_dims(d: dict[str, Any], depth: int = 0) -> set[int]:
    dims = _old_head_dims(d)
    for v in d.values():
        if isinstance(v, dict) and depth < 4:
            dims |= _all_head_dims(v, depth + 1)
    return dims


def shrink_config(config: Any) -> Any:
    """A new config of the same class at tiny dimensions (None-safe: sub-configs rebuilt by the class itself).

    The head size is the largest the original uses (up to MAX_HEAD_DIM), every width HEADS times it: model code
    that assumes a head size (M-RoPE sections default to a 128-wide head) still runs."""
    global WIDTH, HEAD_DIM, MAX_LAYERS, EXPLICIT
    d = config.to_dict()
    for key, cls in (getattr(type(config), "sub_configs", None) or {}).items():
        if d.get(key) is None and isinstance(cls, type) and cls.__name__ != "AutoConfig":
            d[key] = cls().to_dict()  # a modality the default leaves out (Gemma4's vision / audio): built, so tested
    HEAD_DIM = min(MAX_HEAD_DIM, max(_all_head_dims(d) or {16}))
    HEAD_DIM += -HEAD_DIM % 8
    WIDTH = HEADS * HEAD_DIM
    MAX_LAYERS = max(_layer_counts(d) or {0})
    EXPLICIT = _explicit_head_dims(d)
    remap: dict[Any, int] = {}
    small = shrink_dict(d, remap, VOCAB)
    _keep_output_multiples(d, small)
    for key in ("transformers_version", "architectures", "_name_or_path"):
        small.pop(key, None)
    _fit_image_tokens(small)
    for sub in small.values():
        if isinstance(sub, dict):
            _fit_image_tokens(sub)
    return type(config).from_dict(small)


_OUT_WIDTH = re.compile(r"^(\w+_)?out(put)?_(hidden_size|dim|size)$")
_OWN_WIDTH = ("hidden_size", "d_model", "embed_dim")


def _keep_output_multiples(d: dict[str, Any], out: dict[str, Any]) -> None:
    """A root with no width of its own whose tower output size is k times one sub-config's width (MuseSpark's
    ``out_hidden_size`` 6144: the vision tower's 1536 after a 2x2 merge concatenates 4 patches) stays k times that
    width shrunk; the multiple must point at exactly one sub-config."""
    if any(isinstance(d.get(k), int) for k in _OWN_WIDTH):
        return
    widths = {name: next((sub[k] for k in _OWN_WIDTH if isinstance(sub.get(k), int)), None)
              for name, sub in d.items() if isinstance(sub, dict)}
    for key, value in d.items():
        if not (isinstance(key, str) and _OUT_WIDTH.match(key) and isinstance(value, int)
                and not isinstance(value, bool) and isinstance(out.get(key), int)):
            continue
        hits = [(name, value // w) for name, w in widths.items()
                if w and value != w and value % w == 0 and 2 <= value // w <= 16]
        if len(hits) == 1:
            name, ratio = hits[0]
            small = next((out[name][k] for k in _OWN_WIDTH if isinstance(out[name].get(k), int)), None)
            if small:
                out[key] = ratio * small


def _layer_counts(d: dict[str, Any], depth: int = 0) -> set[int]:
    counts = {int(v) for k, v in d.items() if isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
              and _LAYERS.match(k) and not _NOT_LAYERS.search(k)}
    for v in d.values():
        if isinstance(v, dict) and depth < 4:
            counts |= _layer_counts(v, depth + 1)
    return counts


_MERGE = re.compile(r"^(\w+_)?(downsample_factor|downsample_ratio|scale_factor|merge_size|merge_kernel_size)$")


def _merge_factor(*dicts: dict[str, Any]) -> int:
    """The factor a pixel shuffle / patch merger folds the patch grid by (2 from ``scale_factor: 2`` or
    ``downsample_ratio: 0.5``); 1 when the config names none."""
    for d in dicts:
        for k, v in d.items():
            if not (isinstance(k, str) and _MERGE.match(k)) or isinstance(v, bool) or "rescale" in k:
                continue
            if isinstance(v, int) and v >= 2:
                return v
            if isinstance(v, float) and 0 < v < 1 and abs(1 / v - round(1 / v)) < 1e-6:
                return round(1 / v)
    return 1


def _fit_grid(d: dict[str, Any]) -> None:
    """A default whose image size is not a whole number of patches times the merge factor (Aya Vision's 384 over
    patch 14 with a 2x pixel shuffle) cannot fold its grid: the size becomes the nearest such multiple below."""
    vision = d.get("vision_config")
    if not isinstance(vision, dict):
        return
    size, patch = vision.get("image_size"), vision.get("patch_size")
    pair = isinstance(size, list) and isinstance(patch, list) and len(size) == len(patch) == 2
    if pair:
        size, patch = size[0], patch[0]
    if not (isinstance(size, int) and isinstance(patch, int) and patch > 0):
        return
    factor = _merge_factor(d, vision)
    if factor < 2:
        return  # a remainder the patch convolution drops is harmless (SigLIP at 384 over patch 14)
    unit = patch * factor
    fitted = max(unit, unit * (size // unit))
    if fitted != size:
        vision["image_size"] = [fitted, fitted] if pair else fitted


def _fit_image_tokens(d: dict[str, Any]) -> None:
    """A default config whose tokens-per-image count exceeds its tower's patches (Gemma3's 256 over 14x14) cannot
    pool them: the count becomes the patch grid (a square, as pooling to a square needs)."""
    vision = d.get("vision_config")
    if not isinstance(vision, dict):
        return
    _fit_grid(d)
    size, patch = vision.get("image_size"), vision.get("patch_size")
    if not (isinstance(size, int) and isinstance(patch, int) and patch > 0):
        return
    patches = (size // patch) ** 2
    for key in ("mm_tokens_per_image", "image_seq_length", "num_image_tokens"):
        if isinstance(d.get(key), int) and d[key] > patches:
            d[key] = patches


def fit_rotary_sections(model: Any) -> list[str]:
    """Make a default config's rotary size agree with the M-RoPE sections its model code assumes; returns what changed.

    Why: some defaults leave ``mrope_section`` and ``partial_rotary_factor`` to the checkpoint, and the model code's
    fallback sections (GLM-4.1V: [8, 12, 12], 32 frequencies) only fit the checkpoint's rotary share of the head
    (0.5 of 128): with the default's full head every forward fails in its ``split``. Read from the built model (any
    module holding ``mrope_section`` beside its ``inv_freq``), never per architecture: the share becomes the one the
    sections fill (the model is then built again from the same config)."""
    notes: list[str] = []
    for name, mod in model.named_modules():
        sections, freq, config = getattr(mod, "mrope_section", None), getattr(mod, "inv_freq", None), \
            getattr(mod, "config", None)
        params = getattr(config, "rope_parameters", None)
        if not (isinstance(sections, (list, tuple)) and _ints(sections) and freq is not None
                and isinstance(params, dict)) or sum(sections) == freq.numel() or sum(sections) > freq.numel():
            continue
        factor = params.get("partial_rotary_factor", 1.0) * sum(sections) / freq.numel()
        params["partial_rotary_factor"] = factor
        notes.append(f"{type(config).__name__}: partial_rotary_factor {factor:g} (the {sum(sections)} rotary "
                     f"frequencies {name or 'the model'}'s mrope_section {list(sections)} splits; the default's "
                     f"full head gives {freq.numel()})")
    return notes
