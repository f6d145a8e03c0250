"""Qwen2-VL's image side without torch: image file -> flattened patches + grid (the exported preprocessor config),
the prompt's image-placeholder run, and the 3-D M-RoPE prefill positions (HF ``get_rope_index`` in numpy).

The patching mirrors transformers' Qwen2-VL image processor (PIL backend): RGB, ``smart_resize`` to a multiple
of ``patch_size * merge_size`` within [min_pixels, max_pixels] (bicubic), rescale, normalise, then patches in
(merge block, row, column) order with the frame repeated ``temporal_patch_size`` times. The settings are read
with ``studio.core.processor_files.read_processor``, the one reader every client uses.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import InputError
from studio.core.processor_files import read_processor

MAX_ASPECT = 200  # HF smart_resize refuses a longer/shorter side ratio above this


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


def smart_resize(height: int, width: int, factor: int, min_pixels: int, max_pixels: int,
                 flag: str = "--image") -> tuple[int, int]:
    """HF ``smart_resize``: sides a multiple of ``factor``, area within [min_pixels, max_pixels], aspect kept."""
    if min(height, width) < 1 or max(height, width) / min(height, width) > MAX_ASPECT:
        raise InputError(f"{flag} is {width}x{height} pixels: its aspect ratio is beyond {MAX_ASPECT}:1, which the "
                         "Qwen2-VL image processor refuses", offending=flag,
                         hint="crop the image to a less extreme shape (the processor resizes any size within "
                              f"{MAX_ASPECT}:1 to {min_pixels}..{max_pixels} pixels)")
    h_bar, w_bar = round(height / factor) * factor, round(width / factor) * factor
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


class ImageProcessor:
    """The export folder's Qwen2-VL image processor settings, applied with PIL and numpy."""

    def __init__(self, folder: Path, vision: VisionSettings) -> None:
        try:
            c = read_processor(folder, "image_processor")
        except (OSError, ValueError) as exc:
            raise InputError(f"the export's image processor settings cannot be read: {exc}", offending=str(folder),
                             hint="re-export the model (preprocessor_config.json is copied beside it)") from exc
        self.v = vision
        self.resample = int(c.get("resample", 3))
        self.scale = float(c.get("rescale_factor", 1 / 255)) if c.get("do_rescale", True) else 1.0
        self.normalize = bool(c.get("do_normalize", True))
        self.mean = np.asarray(c.get("image_mean", [0.48145466, 0.4578275, 0.40821073]), np.float32)[:, None, None]
        self.std = np.asarray(c.get("image_std", [0.26862954, 0.26130258, 0.27577711]), np.float32)[:, None, None]

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
        from PIL import Image

        v = self.v
        rgb = img.convert("RGB") if img.mode != "RGB" else img
        w, h = rgb.size
        rh, rw = smart_resize(h, w, v.patch_size * v.merge_size, v.min_pixels, v.max_pixels, flag)
        if (rw, rh) != (w, h):
            rgb = rgb.resize((rw, rh), resample=Image.Resampling(self.resample))
        x = np.asarray(rgb, dtype=np.uint8).astype(np.float32).transpose(2, 0, 1) * np.float32(self.scale)
        if self.normalize:
            x = (x - self.mean) / self.std
        pixels, gh, gw = patchify(x, v.patch_size, v.merge_size, v.temporal_patch_size)
        return ImageInput(pixels, np.array([[1, gh, gw]], dtype=np.int64), (w, h), (rw, rh))


def patchify(image: np.ndarray, patch: int, merge: int, temporal: int) -> tuple[np.ndarray, int, int]:
    """``[C, H, W]`` -> ``[gh * gw, C * temporal * patch * patch]`` in HF's order (merge blocks together)."""
    c, h, w = image.shape
    gh, gw = h // patch, w // patch
    x = image.reshape(c, gh // merge, merge, patch, gw // merge, merge, patch).transpose(1, 4, 2, 5, 0, 3, 6)
    x = np.broadcast_to(x[:, :, :, :, :, None], (*x.shape[:5], temporal, *x.shape[5:]))
    return np.ascontiguousarray(x.reshape(gh * gw, c * temporal * patch * patch), dtype=np.float32), gh, gw


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
