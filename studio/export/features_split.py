"""Per-image splits of the vision features kept whole in the export graph, when that provably changes nothing.

Most VLMs' ``get_image_features`` / ``get_video_features`` end with ``torch.split(features, sizes.tolist())`` (one
piece per image, sizes from the grid / tile mask) and the multimodal forward concatenates the pieces again. A trace
records a Split with the traced sizes, which ONNX Runtime refuses for any other image size or count. Returning the
features as one piece gives the same forward when the pieces are only concatenated; whether they are is not assumed
from the family: :func:`split_whole_is_equal` runs the model eagerly on the traced example with and without it, and
the export wrapper keeps the split whole only when the outputs are identical.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

FEATURE_METHODS = ("get_image_features", "get_video_features")


def _owners(model: nn.Module) -> list[nn.Module]:
    return [m for m in model.modules() if any(callable(getattr(type(m), f, None)) for f in FEATURE_METHODS)]


def has_feature_methods(model: nn.Module) -> bool:
    return bool(_owners(model))


@contextlib.contextmanager
def features_split_whole(model: nn.Module, *, whole: bool = True) -> Iterator[list[int]]:
    """While a ``get_*_features`` method of the model runs, ``torch.split`` along dim 0 into listed sizes (the
    per-image pieces) returns the tensor as one piece; yields the piece counts it kept whole. ``whole=False``: the
    splits only counted, the forward unchanged (the example-input forward says whether there is one to check)."""
    original = torch.split
    kept: list[int] = []

    def split(tensor: torch.Tensor, sections: Any, dim: int = 0) -> Any:
        if isinstance(sections, (list, tuple)) and dim in (0, -tensor.dim()):
            kept.append(len(sections))
            if whole:
                return (tensor,)
        return original(tensor, sections, dim)

    def wrap(method: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            torch.split = split  # type: ignore[assignment]
            try:
                return method(*args, **kwargs)
            finally:
                torch.split = original  # type: ignore[assignment]
        return run

    undo: list[tuple[nn.Module, str]] = []
    for mod in _owners(model):
        for name in FEATURE_METHODS:
            if callable(getattr(type(mod), name, None)) and name not in mod.__dict__:
                setattr(mod, name, wrap(getattr(mod, name)))
                undo.append((mod, name))
    try:
        yield kept
    finally:
        for mod, name in undo:
            mod.__dict__.pop(name, None)


class SplitWhole(nn.Module):
    """``inner(**inputs)`` with the feature splits kept whole (only ever traced: see the module docstring)."""

    def __init__(self, inner: nn.Module, model: nn.Module) -> None:
        super().__init__()
        self.inner = inner
        self.owner = [model]  # a list: not registered twice as a submodule

    def forward(self, **inputs: Any) -> Any:
        with features_split_whole(self.owner[0]):
            return self.inner(**inputs)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and bool(torch.equal(a, b))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a is None and b is None


def split_whole_is_equal(wrapper: nn.Module, model: nn.Module, args: tuple[Any, ...]) -> bool:
    """A feature split was kept whole on ``args`` and the export wrapper's outputs are identical to the ones the
    code as written gives (an error with the split whole counts as different)."""
    try:
        with torch.no_grad():
            with features_split_whole(model) as kept:
                whole = wrapper(*args)
            if not kept:  # no per-image split on this path (CLIP, SigLIP): nothing to compare, one forward saved
                return False
            plain = wrapper(*args)
    except Exception:  # noqa: BLE001 - the pieces are used one by one (or the forward fails: the export says why)
        return False
    return _same(plain, whole)
