"""The settings a model's config pins for its processor: same-named keys, their synonyms (``merge_size`` is the
config's ``spatial_merge_size``), the vision tower's image size and token count, the encoder's window.

Why: a processor built with its class defaults makes tensors for the checkpoint the defaults describe, not for this
config (a 224-pixel tower fed 384-pixel images, 80 mel bins for a 128-bin encoder); every value is read from the
config by name, never written down per family.
"""

from __future__ import annotations

from typing import Any

from studio.export.processor_sizes import config_image_size, size_kwargs
from studio.export.processor_sizes import fill_unset_counts as grid_counts

# a processor parameter -> config keys that hold the same value under another name (checked in order)
SYNONYMS: dict[str, tuple[str, ...]] = {
    "merge_size": ("spatial_merge_size", "merge_size"),
    "feature_size": ("num_mel_bins", "input_feat_per_channel", "feature_size", "n_mels"),
    "num_mel_bins": ("num_mel_bins", "n_mels"),
    "image_seq_length": ("image_seq_length", "mm_tokens_per_image", "num_image_tokens"),
    "img_size": ("image_size",),
}


def sub_configs(config: dict[str, Any], role: str) -> list[dict[str, Any]]:
    """Where a sub-processor's values live in the config: its modality's sub-config first, then the root."""
    keys = {"image_processor": ("vision_config", "encoder"), "video_processor": ("vision_config",),
            "feature_extractor": ("audio_config", "encoder_config", "encoder"),
            "audio_processor": ("audio_config", "encoder_config", "encoder")}.get(role, ())
    found = [config[k] for k in keys if isinstance(config.get(k), dict)]
    nested = [v for f in found for v in f.values() if isinstance(v, dict)]  # an audio config's ASR encoder
    return [*found, *nested, config]


def config_kwargs(obj_defaults: dict[str, Any], config: dict[str, Any], role: str) -> tuple[dict[str, Any], list[str]]:
    """A sub-processor's settings the config pins: same-named keys of the same type, the SYNONYMS, and the image
    size (``vision_config.image_size``) for processors that resize to a fixed size. Returns kwargs and notes."""
    kwargs: dict[str, Any] = {}
    notes: list[str] = []
    sources = sub_configs(config, role)
    for key, default in obj_defaults.items():
        unset_synonym = default is None and key in SYNONYMS  # e.g. image_seq_length left None by the default
        if not unset_synonym and (isinstance(default, bool) or not isinstance(default, (int, float))):
            continue
        if key == "feature_size" and default == 1:
            continue  # a waveform extractor (one value per sample): the config's mel bins are its decoder's target
        for cfg_key in SYNONYMS.get(key, (key,)):
            kind = int if default is None else type(default)
            src = next((s for s in sources if isinstance(s.get(cfg_key), kind)
                        and not isinstance(s.get(cfg_key), bool)), None)
            if src is not None:
                if src[cfg_key] != default:
                    kwargs[key] = src[cfg_key]
                    notes.append(f"{key}={src[cfg_key]} from the config's {cfg_key}")
                break
    positions = next((s.get("max_source_positions") for s in sources if isinstance(s.get("max_source_positions"), int)),
                     None)
    hop, rate = obj_defaults.get("hop_length"), obj_defaults.get("sampling_rate")
    if role == "feature_extractor" and positions and isinstance(hop, int) and isinstance(rate, int) \
            and "chunk_length" in obj_defaults:
        # a log-mel window for an encoder of max_source_positions: its stride-2 convolution halves 2x that many
        seconds = 2 * positions * hop / rate
        if seconds == int(seconds) and int(seconds) != obj_defaults.get("chunk_length"):
            kwargs["chunk_length"] = int(seconds)
            notes.append(f"chunk_length={int(seconds)} s ({2 * positions} frames) from the config's "
                         "max_source_positions")
    image_size = config_image_size(sources)
    patch = config_image_size([{"image_size": s.get("patch_size")} for s in sources])
    if role == "image_processor" and "image_seq_length" in obj_defaults and obj_defaults["image_seq_length"] is None \
            and "image_seq_length" not in kwargs and image_size and patch:
        kwargs["image_seq_length"] = (image_size // patch) ** 2  # one token per patch of the vision tower's grid
        notes.append(f"image_seq_length={kwargs['image_seq_length']} from the config's image_size / patch_size")
    size = obj_defaults.get("size")
    pair = next((s.get("image_size") for s in sources if _hw_pair(s.get("image_size"))), None)
    if role == "image_processor" and not image_size and pair and isinstance(size, dict) \
            and {"height", "width"} <= set(size) and [size["height"], size["width"]] != list(pair):
        kwargs["size"] = {"height": int(pair[0]), "width": int(pair[1])}  # MGP-STR's [32, 128]: height, width
        notes.append(f"size {pair[0]}x{pair[1]} (height x width) from the config's image_size")
    if role in ("image_processor", "video_processor"):  # a clip's frames go through the same tower
        more, why = size_kwargs(obj_defaults, image_size)
        kwargs.update(more)
        notes += why
    return kwargs, notes


def processor_kwargs(cls: Any, config: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The processor class's own settings the config pins (``patch_size``, ``vision_feature_select_strategy``,
    ``image_seq_length``...): each ``__init__`` parameter that is not a sub-processor, looked up by name (and
    SYNONYMS) in the vision / audio / text sub-configs and the root."""
    import inspect

    attrs = set(cls.get_attributes())
    modal = ("vision_config", "audio_config", "text_config")
    sources = [config, *(config[k] for k in modal if isinstance(config.get(k), dict))]
    encoder = config.get("encoder")  # an encoder-decoder's multimodal encoder (T5Gemma2's mm_tokens_per_image)
    if isinstance(encoder, dict):
        sources += [encoder, *(encoder[k] for k in modal if isinstance(encoder.get(k), dict))]
    kwargs: dict[str, Any] = {}
    notes: list[str] = []
    for name, p in inspect.signature(cls.__init__).parameters.items():
        if name in attrs or name in ("self", "chat_template") or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        default = None if p.default is inspect.Parameter.empty else p.default
        for key in SYNONYMS.get(name, (name,)):
            src = next((s for s in sources if s.get(key) is not None and not isinstance(s.get(key), dict)
                        and (default is None or isinstance(s.get(key), type(default)))), None)
            if src is not None:
                if src[key] != default:
                    kwargs[name] = src[key]
                    notes.append(f"{name}={src[key]!r} from the config's {key}")
                break
    return kwargs, notes


# the processor attributes that hold a per-image placeholder token count (the model's check calibrates them)
COUNT_ATTRS = ("num_image_tokens", "image_seq_length", "image_seq_len", "tokens_per_image", "num_query_tokens")


def fill_unset_counts(proc: Any, config: dict[str, Any]) -> list[str]:
    """An image-token count the processor read as None from a default image processor (PaliGemma's
    ``image_seq_length``, Florence-2's ``num_image_tokens`` from a CLIP image processor that has none): one token per
    patch of the vision tower's grid, from image_size / patch_size; where the config has no such grid, 1, which the
    model's own "tokens: X, features: Y" check then calibrates (studio.export.processor_inputs)."""
    notes = grid_counts(proc, sub_configs(config, "image_processor"))  # the tower's patch grid where it has one
    for attr in COUNT_ATTRS:
        if proc is not None and attr in vars(proc) and vars(proc)[attr] is None:
            setattr(proc, attr, 1)
            notes.append(f"{type(proc).__name__}.{attr} unset (its image processor has no count): starts at 1, "
                         "set by the model's token / feature check")
    return notes


def _hw_pair(value: Any) -> bool:
    """An image size given as [height, width]."""
    return isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, int) and v > 0 for v in value)
