"""The one image pre-processing: image file -> the tensor the vision model takes, as HF's image processor makes it.

Every client runs this: the edge agent's raw ``image`` inputs (studio.edge.preprocess), Triton test inference
and `studio triton infer` (studio.triton.inputs), the generation runtime's Qwen2-VL images (studio.generate.vlm_image),
calibration and the GUI's previews. The steps and their numerics are those of transformers' PIL backend:
RGB with transparency composited onto white, resize with the processor's ``resample`` filter (shortest edge kept
in proportion, or a fixed height x width, or Qwen2-VL's ``smart_resize``), centre crop (zero padding when the
image is smaller), rescale in float64 then float32, normalise in float32, channels first; Qwen2-VL then cuts the
image into flattened patches. Settings come from the processor file through studio.core.processor_files.
tests/edge/test_preprocess_parity.py holds all paths equal to HF's processors (max abs <= 1e-6).
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from studio.core.errors import InputError
from studio.edge.raw_inputs import RawInputError

IMAGE_MAGIC = (b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"BM", b"RIFF", b"II*\x00", b"MM\x00*")
MAX_ASPECT = 200  # HF smart_resize refuses a longer/shorter side ratio above this
BICUBIC = 3  # HF's default resample (PIL's BICUBIC); PIL's own resize default too


@dataclass(frozen=True)
class PatchSettings:
    """Qwen2-VL's patching: sides a multiple of ``patch_size * merge_size``, area within the pixel bounds."""

    patch_size: int
    merge_size: int
    temporal_patch_size: int
    min_pixels: int
    max_pixels: int


@dataclass(frozen=True)
class ImageSettings:
    """An image processor's settings (HF's keys and defaults) as the pre-processing uses them."""

    size: dict[str, int]
    crop: dict[str, int] | None = None
    do_resize: bool = True
    resample: int = BICUBIC
    do_rescale: bool = True
    scale: float = 1 / 255
    do_normalize: bool = True
    mean: tuple[float, ...] = (0.5, 0.5, 0.5)
    std: tuple[float, ...] = (0.5, 0.5, 0.5)
    convert_rgb: bool = True
    patches: PatchSettings | None = None

    @classmethod
    def from_config(cls, c: dict[str, Any]) -> ImageSettings:
        """From a processor file's image section (``studio.core.processor_files.read_processor``)."""
        size = {k: int(v) for k, v in (c.get("size") or {}).items() if isinstance(v, int | float)}
        patches = None
        if c.get("patch_size") and c.get("merge_size"):  # Qwen2-VL: size holds the pixel bounds
            patches = PatchSettings(int(c["patch_size"]), int(c["merge_size"]), int(c.get("temporal_patch_size", 2)),
                                    int(c.get("min_pixels") or size.get("shortest_edge", 56 * 56)),
                                    int(c.get("max_pixels") or size.get("longest_edge", 28 * 28 * 1280)))
        crop = c.get("crop_size") if c.get("do_center_crop", False) else None
        return cls(size=size, crop={k: int(v) for k, v in crop.items()} if isinstance(crop, dict) else None,
                   do_resize=bool(c.get("do_resize", True)), resample=int(c.get("resample", BICUBIC)),
                   do_rescale=bool(c.get("do_rescale", True)), scale=float(c.get("rescale_factor", 1 / 255)),
                   do_normalize=bool(c.get("do_normalize", True)),
                   mean=tuple(float(v) for v in _three(c.get("image_mean", 0.5))),
                   std=tuple(float(v) for v in _three(c.get("image_std", 0.5))),
                   convert_rgb=bool(c.get("do_convert_rgb", True)), patches=patches)


def _three(v: Any) -> list[float]:
    return list(v) if isinstance(v, list | tuple) else [float(v)] * 3


def open_image(data: bytes) -> Any:
    """Decode an encoded image file (PNG, JPEG, ...) with PIL; RawInputError when it is not one."""
    from PIL import Image, UnidentifiedImageError

    try:
        img = Image.open(io.BytesIO(data))
        img.load()
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise RawInputError(f"image input is not a readable image file: {exc}") from None
    return img


def to_rgb(img: Any) -> Any:
    """RGB as HF converts: transparency composited onto white (PIL's own convert would keep hidden colours)."""
    from PIL import Image

    if "A" in img.getbands() or img.info.get("transparency") is not None:
        rgba = img.convert("RGBA")
        return Image.alpha_composite(Image.new("RGBA", rgba.size, (255, 255, 255, 255)), rgba).convert("RGB")
    return img if img.mode == "RGB" else img.convert("RGB")


def resize_target(w: int, h: int, size: dict[str, int]) -> tuple[int, int]:
    """(width, height) after HF's resize: the shortest edge to ``shortest_edge`` with the longer in proportion
    (truncated), or ``height`` x ``width``; unchanged without either."""
    if "shortest_edge" in size:
        short, long_ = (w, h) if w <= h else (h, w)
        new_short, new_long = size["shortest_edge"], int(size["shortest_edge"] * long_ / short)
        return (new_short, new_long) if w <= h else (new_long, new_short)
    if "height" in size and "width" in size:
        return size["width"], size["height"]
    return w, h


def center_crop(x: np.ndarray, ch: int, cw: int) -> np.ndarray:
    """HF's centre crop of a ``[C, H, W]`` array: top-left at ((H - ch) // 2, (W - cw) // 2); where the image is
    smaller than the crop it is first zero-padded, centred (HF's ``center_crop`` step for step)."""
    _, h, w = x.shape
    top, left = (h - ch) // 2, (w - cw) // 2
    if top >= 0 and left >= 0:
        return x[:, top:top + ch, left:left + cw]
    nh, nw = max(ch, h), max(cw, w)
    out = np.zeros((x.shape[0], nh, nw), dtype=x.dtype)
    tp, lp = math.ceil((nh - h) / 2), math.ceil((nw - w) / 2)
    out[:, tp:tp + h, lp:lp + w] = x
    top, left = top + tp, left + lp
    return out[:, max(0, top):min(nh, top + ch), max(0, left):min(nw, left + cw)]


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


def _resize(img: Any, wh: tuple[int, int], resample: int) -> Any:
    from PIL import Image

    return img if wh == img.size else img.resize(wh, resample=Image.Resampling(resample))


def _rescale_normalize(x: np.ndarray, s: ImageSettings) -> np.ndarray:
    """HF's numerics: the rescale in float64 then float32, the normalisation in float32."""
    if s.do_rescale:
        x = (x.astype(np.float64) * s.scale).astype(np.float32)
    else:
        x = x.astype(np.float32)
    if s.do_normalize:
        c = x.shape[0]
        x = (x - np.asarray(s.mean[:c], np.float32)[:, None, None]) / np.asarray(s.std[:c], np.float32)[:, None, None]
    return x


def image_pixels(img: Any, s: ImageSettings, channels: int = 3) -> np.ndarray:
    """``[C, H, W]`` float32 pixels of a PIL image (``channels`` 1: grayscale, for a model that takes one)."""
    if channels == 1:
        img = img.convert("L")
    elif s.convert_rgb:
        img = to_rgb(img)
    if s.do_resize:
        img = _resize(img, resize_target(*img.size, s.size), s.resample)
    x = np.asarray(img, dtype=np.uint8)
    x = x[None] if x.ndim == 2 else x.transpose(2, 0, 1)
    if s.crop:
        x = center_crop(x, int(s.crop["height"]), int(s.crop["width"]))
    return _rescale_normalize(x, s)


def patchify(image: np.ndarray, patch: int, merge: int, temporal: int) -> tuple[np.ndarray, int, int]:
    """``[C, H, W]`` -> ``[gh * gw, C * temporal * patch * patch]`` in HF's order (merge blocks together)."""
    c, h, w = image.shape
    gh, gw = h // patch, w // patch
    x = image.reshape(c, gh // merge, merge, patch, gw // merge, merge, patch).transpose(1, 4, 2, 5, 0, 3, 6)
    x = np.broadcast_to(x[:, :, :, :, :, None], (*x.shape[:5], temporal, *x.shape[5:]))
    return np.ascontiguousarray(x.reshape(gh * gw, c * temporal * patch * patch), dtype=np.float32), gh, gw


def image_patches(img: Any, s: ImageSettings, flag: str = "--image") -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """Qwen2-VL: (flattened patches, grid_thw ``[1, 3]``, the resized (width, height)) of a PIL image."""
    p = s.patches
    if p is None:
        raise ValueError("image_patches needs patch settings (a Qwen2-VL image processor)")
    rgb = to_rgb(img) if s.convert_rgb else img
    w, h = rgb.size
    rh, rw = smart_resize(h, w, p.patch_size * p.merge_size, p.min_pixels, p.max_pixels, flag)
    if s.do_resize:
        rgb = _resize(rgb, (rw, rh), s.resample)
    x = _rescale_normalize(np.asarray(rgb, dtype=np.uint8).transpose(2, 0, 1), s)
    pixels, gh, gw = patchify(x, p.patch_size, p.merge_size, p.temporal_patch_size)
    return pixels, np.array([[1, gh, gw]], dtype=np.int64), (rw, rh)


def pixels_view(x: np.ndarray, s: ImageSettings) -> np.ndarray:
    """The picture a ``[C, H, W]`` pixel tensor shows, HxWx3 uint8: the normalisation and rescale undone, for
    drawing what the model was given."""
    x = np.asarray(x, dtype=np.float32)
    while x.ndim > 3:
        x = x[0]
    c = x.shape[0]
    if s.do_normalize:
        x = x * np.asarray(s.std[:c], np.float32)[:, None, None] + np.asarray(s.mean[:c], np.float32)[:, None, None]
    if s.do_rescale and s.scale:
        x = x / np.float32(s.scale)
    img = np.clip(np.rint(x.transpose(1, 2, 0)), 0, 255).astype(np.uint8)
    return np.repeat(img, 3, axis=2) if c == 1 else img
