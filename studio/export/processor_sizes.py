"""A derived image processor's fixed sizes from the config the model was built from.

Why: a processor built with its class defaults resizes to the checkpoint size its authors shipped (384), while the
config in the folder may say another (``vision_config.image_size: 448``, or ``[448, 448]``); the tower then sees a
patch grid its position table, pixel shuffle or patch merger cannot take. Every size-valued setting of the
processor that names the image size follows the config's: ``size`` (height / width, or the shortest edge and the
crop), and any ``*image_size`` edge limit (the tile an image is split into); an image-token count the processor
leaves None is the tower's patch grid.
"""

from __future__ import annotations

from typing import Any


def config_image_size(sources: list[dict[str, Any]]) -> int | None:
    """The vision image size of the first config that gives one: an int, or a square ``[h, w]``."""
    for s in sources:
        v = s.get("image_size")
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        if isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(x, int) for x in v) and v[0] == v[1]:
            return int(v[0])
    return None


def size_kwargs(defaults: dict[str, Any], image_size: int | None) -> tuple[dict[str, Any], list[str]]:
    """Processor kwargs that make every fixed image size of ``defaults`` the config's ``image_size``, and notes."""
    if not image_size:
        return {}, []
    kwargs: dict[str, Any] = {}
    size = defaults.get("size")
    if isinstance(size, dict):
        if {"height", "width"} <= set(size) and (size["height"], size["width"]) != (image_size, image_size):
            kwargs["size"] = {"height": image_size, "width": image_size}
        elif set(size) == {"shortest_edge"} and size["shortest_edge"] != image_size:
            kwargs["size"] = {"shortest_edge": image_size}
            if isinstance(defaults.get("crop_size"), dict):
                kwargs["crop_size"] = {"height": image_size, "width": image_size}
    for key, value in defaults.items():  # a tile / longest-edge limit named after the image size
        if key.endswith("image_size") and isinstance(value, dict) and set(value) == {"longest_edge"} \
                and value["longest_edge"] != image_size:
            kwargs[key] = {"longest_edge": image_size}
            edge = size.get("longest_edge") if isinstance(size, dict) and set(size) == {"longest_edge"} else None
            if isinstance(edge, int) and edge % value["longest_edge"] == 0:  # the resize is k tiles: k tiles still
                kwargs["size"] = {"longest_edge": edge // value["longest_edge"] * image_size}
    notes = [f"{k} {image_size}x{image_size} from the config's image_size" for k in kwargs]
    return kwargs, notes


def fill_unset_counts(proc: Any, sources: list[dict[str, Any]]) -> list[str]:
    """An image-token count the processor read as None from a default image processor (PaliGemma's
    ``image_seq_length``, LLaVA-OneVision's ``num_image_tokens``): one token per patch of the vision tower's grid,
    from image_size / patch_size."""
    size = config_image_size(sources)
    patch = config_image_size([{"image_size": s.get("patch_size")} for s in sources])
    notes = []
    for obj in (proc, getattr(proc, "image_processor", None)):
        for attr in ("image_seq_length", "num_image_tokens"):
            if obj is not None and size and patch and hasattr(obj, attr) and getattr(obj, attr) is None:
                setattr(obj, attr, (size // patch) ** 2)
                notes.append(f"{type(obj).__name__}.{attr}={getattr(obj, attr)} from the config's "
                             "image_size / patch_size")
    return notes
