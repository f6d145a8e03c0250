"""torchvision's pure-Python image transforms when its native library does not load.

Why: transformers' image processors for two dozen architectures (Llama 4, Pixtral, SAM 3, LFM2-VL...) exist only as
torchvision-backed classes, and the only torchvision wheel built for our torch may be a CUDA build whose ``_C``
library needs ``libtorch_cuda``. torchvision then imports without its native ops, except that its Python still
registers fake (meta) kernels for ``torchvision::nms`` / ``qnms`` unconditionally, and that fails because the ops
were never declared ("operator torchvision::nms does not exist"): the whole package, transforms included, is lost.

What this does: a ``sys.meta_path`` hook (``install()``, free: it imports nothing; importing studio.export installs it)
runs once, just before the first
``import torchvision``. It loads the native library itself; when that fails, it declares the schemas of the ops
torchvision's Python registers fakes for (``FAKE_REGISTERED_SCHEMAS``, torchvision's own declarations) without
any kernel, so the import completes and the transforms work, while a native op called anyway raises ("could not
run 'torchvision::nms' with arguments from the 'CPU' backend"; ``torchvision.ops`` raises "Couldn't load custom C++
ops" before that). It is never silent: ``warning()`` is the line every export that imported torchvision reports.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The ops torchvision's Python registers fake kernels for whether or not its native library loaded, with the
# schemas its native library declares for them (torchvision 0.28, csrc/ops/nms.cpp and quantized qnms).
FAKE_REGISTERED_SCHEMAS = {
    "nms": "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms": "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
}


@dataclass
class CompatState:
    """What the hook found: None until torchvision was looked for; ``reason`` set when the native ops are missing."""

    checked: bool = False
    reason: str | None = None
    declared: list[str] = field(default_factory=list)
    library: Any = None  # the torch.library.Library holding the declarations (kept alive)


STATE = CompatState()


def _package_dir() -> Path | None:
    spec = importlib.machinery.PathFinder.find_spec("torchvision")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _native_library(pkg: Path) -> Path | None:
    found = sorted(pkg.glob("_C*.so")) + sorted(pkg.glob("_C*.pyd"))
    return found[0] if found else None


def _declared(name: str) -> bool:
    import torch

    try:
        return torch._C._dispatch_find_schema_or_throw(f"torchvision::{name}", "") is not None
    except RuntimeError:
        return False


def prepare() -> CompatState:
    """Load torchvision's native library, or declare the op schemas its Python needs (see the module docstring).
    Idempotent; does nothing when torchvision is not installed or already imported."""
    if STATE.checked or "torchvision" in sys.modules:
        STATE.checked = True
        return STATE
    STATE.checked = True
    pkg = _package_dir()
    if pkg is None:
        return STATE
    import ctypes

    import torch

    lib = _native_library(pkg)
    try:
        if lib is None:
            raise OSError(f"no _C library in {pkg}")
        ctypes.CDLL(str(lib))  # what torch.ops.load_library does; its OSError carries the loader's reason
        return STATE
    except OSError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        reason = reason.replace(str(pkg) + "/", "")
    missing = [n for n in FAKE_REGISTERED_SCHEMAS if not _declared(n)]
    if missing:
        STATE.library = torch.library.Library("torchvision", "DEF")  # schemas only, no kernels
        for name in missing:
            STATE.library.define(FAKE_REGISTERED_SCHEMAS[name])
    STATE.declared = missing
    version = _version(pkg)
    STATE.reason = f"torchvision {version} native library did not load ({reason})"
    return STATE


def _version(pkg: Path) -> str:
    try:
        from importlib.metadata import version

        return version("torchvision")
    except Exception:  # noqa: BLE001 - only for the message
        return str(pkg)


def warning() -> str | None:
    """The report line when this process imported torchvision without its native ops; None otherwise."""
    if STATE.reason is None or "torchvision" not in sys.modules:
        return None
    return (f"torchvision native ops unavailable: {STATE.reason}; its image transforms run in Python (the "
            "processor's outputs are exact), but torchvision.ops (nms, roi_align, ...) raise if the model or its "
            "processor calls them. Install the torchvision build that matches this torch (CPU or CUDA) to have them")


class _Hook(importlib.abc.MetaPathFinder):
    """Runs ``prepare()`` on the first ``import torchvision``, then lets the ordinary finders import it."""

    busy = False

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname == "torchvision" and not STATE.checked and not _Hook.busy:
            _Hook.busy = True
            try:
                prepare()
            except Exception as exc:  # noqa: BLE001 - the import goes on and raises its own error
                STATE.reason = STATE.reason or f"the compatibility hook failed ({type(exc).__name__}: {exc})"
            finally:
                _Hook.busy = False
        return None


def install() -> None:
    """Put the hook in front of the import system (idempotent; imports nothing)."""
    if not any(isinstance(f, _Hook) for f in sys.meta_path):
        sys.meta_path.insert(0, _Hook())
