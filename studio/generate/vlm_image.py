"""Qwen2-VL's image side without torch: image file -> flattened patches + grid (the exported preprocessor config),
the prompt's image-placeholder run, and the 3-D M-RoPE prefill positions (HF ``get_rope_index`` in numpy).

The patching is the shared image pre-processing's (studio.edge.preprocess_image: transformers' Qwen2-VL image
processor, PIL backend, step for step): RGB, ``smart_resize`` to a multiple of ``patch_size * merge_size`` within
[min_pixels, max_pixels], rescale, normalise, then patches in (merge block, row, column) order with the frame
repeated ``temporal_patch_size`` times; the pixel bounds and patch sizes are generation.json's. The settings are
read with ``studio.core.processor_files.read_processor``, the one reader every client uses.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import InputError
from studio.core.processor_files import read_processor
from studio.edge.preprocess_image import ImageSettings, PatchSettings, image_patches


@dataclass
class VisionSettings:
    """What generation.json records for a VLM export: the image side of the prompt and of the processor."""

    image_token_id: int
    vision_start_token_id: int | None
    vision_end_token_id: int | None
    patch_size: int
    merge_size: int
    temporal_patch_size: int
    min_pixels: int
    max_pixels: int


@dataclass
class ImageInput:
    pixel_values: np.ndarray  # [patches, C * T * P * P] float32
    grid_thw: np.ndarray  # [1, 3] int64
    size: tuple[int, int]  # (width, height) as read
    resized: tuple[int, int]  # (width, height) fed to the vision tower

    @property
    def patches(self) -> int:
        return int(np.prod(self.grid_thw[0]))


class ImageProcessor:
    """The export folder's Qwen2-VL image processor settings, applied with PIL and numpy."""

    def __init__(self, folder: Path, vision: VisionSettings) -> None:
        try:
            c = read_processor(folder, "image_processor")
        except (OSError, ValueError) as exc:
            raise InputError(f"the export's image processor settings cannot be read: {exc}", offending=str(folder),
                             hint="re-export the model (preprocessor_config.json is copied beside it)") from exc
        self.v = vision
        base = ImageSettings.from_config({**c, "patch_size": None})  # resample, rescale, normalise: the file's
        mean = c.get("image_mean", [0.48145466, 0.4578275, 0.40821073])
        std = c.get("image_std", [0.26862954, 0.26130258, 0.27577711])
        self.settings = ImageSettings(
            size={}, resample=base.resample, do_rescale=base.do_rescale, scale=base.scale,
            do_normalize=base.do_normalize, mean=tuple(mean), std=tuple(std),
            patches=PatchSettings(vision.patch_size, vision.merge_size, vision.temporal_patch_size,
                                  vision.min_pixels, vision.max_pixels))

    def load(self, path: Path | str | bytes, flag: str = "--image") -> ImageInput:
        """An image file (or its bytes) -> patches; InputError naming ``flag`` for a missing or unreadable file."""
        from PIL import Image, UnidentifiedImageError

        if isinstance(path, bytes):
            data, name = path, "(bytes)"
        else:
            p = Path(path)
            if not p.is_file():
                raise InputError(f"{flag} {p} does not exist", offending=flag, hint="give the path of a PNG/JPEG file")
            data, name = p.read_bytes(), str(p)
        try:
            img = Image.open(io.BytesIO(data))
            img.load()
        except UnidentifiedImageError:
            raise InputError(f"{flag} {name} is not an image file PIL can read", offending=flag,
                             hint="give a PNG, JPEG, GIF, BMP or TIFF file") from None
        except (OSError, ValueError) as exc:
            raise InputError(f"{flag} {name} is a damaged or truncated image ({exc})", offending=flag,
                             hint="re-save the image as PNG or JPEG") from None
        return self.from_pil(img, flag)

    def from_pil(self, img: Any, flag: str = "--image") -> ImageInput:
        """A PIL image -> patches, through the one image pre-processing (studio.edge.preprocess_image)."""
        pixels, grid, resized = image_patches(img, self.settings, flag)
        return ImageInput(pixels, grid, img.size, resized)


def image_prompt(vision: VisionSettings, images: list[ImageInput], text_ids: list[int]) -> list[int]:
    """``<vision_start> <image_pad> * tokens <vision_end>`` per image, then the text (the processor's expansion
    of one ``<|image_pad|>`` into ``t * h * w / merge^2`` placeholders)."""
    ids: list[int] = []
    for im in images:
        n = int(np.prod(im.grid_thw[0])) // vision.merge_size ** 2
        ids += ([vision.vision_start_token_id] if vision.vision_start_token_id is not None else [])
        ids += [vision.image_token_id] * n
        ids += ([vision.vision_end_token_id] if vision.vision_end_token_id is not None else [])
    return ids + list(text_ids)


def rope_index(ids: np.ndarray, grids: np.ndarray, image_token_id: int, merge: int) -> tuple[np.ndarray, int]:
    """HF ``get_rope_index`` for one unpadded row: ``[3, sequence]`` positions and the rope delta
    (``max + 1 - sequence``; a decode step at past length L stands at ``L + delta`` on all three axes).
    Text advances every axis by one; an image run of ``t * h * w`` placeholders (grid divided by ``merge``) gets
    (t, row, column) offsets from the current position, which then advances by ``max(h, w)``."""
    ids = np.asarray(ids).reshape(-1)
    s = ids.shape[0]
    pos = np.zeros((3, s), dtype=np.int64)
    cur, i, image = 0, 0, 0
    while i < s:
        if ids[i] != image_token_id:
            j = i
            while j < s and ids[j] != image_token_id:
                j += 1
            pos[:, i:j] = np.arange(cur, cur + j - i)[None]
            cur += j - i
            i = j
            continue
        if image >= len(grids):
            raise InputError("the prompt holds more image placeholder runs than images", offending="--prompt",
                             hint="do not type <|image_pad|> into the prompt; pass the image with --image")
        t, h, w = (int(g) for g in grids[image])
        gh, gw = h // merge, w // merge
        n = t * gh * gw
        tt, hh, ww = np.meshgrid(np.arange(t), np.arange(gh), np.arange(gw), indexing="ij")
        run = min(n, s - i)
        pos[:, i:i + run] = (cur + np.stack([tt.ravel(), hh.ravel(), ww.ravel()]))[:, :run]
        cur += max(gh, gw)
        i += n
        image += 1
    delta = int(pos.max()) + 1 - s if s else 0
    return pos, delta
