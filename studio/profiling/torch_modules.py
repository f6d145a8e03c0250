"""PyTorch per-module times of an HF model (forward hooks, inclusive), on the same inputs ORT profiled.

The one module of studio.profiling that imports torch and transformers: imported only for HF models.
Weights: ``from_pretrained`` when the folder has them; an export folder holds only the config, so the model is
built from the config (random weights: module timings do not depend on the values).
"""

from __future__ import annotations

import inspect as _inspect
import time
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import DependencyMissing, InputError, ModelError

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json", "pytorch_model.bin.index.json")


def load_hf_model(folder: Path) -> tuple[Any, str]:
    """The model in eval mode and a note on where its weights came from."""
    try:
        import torch  # noqa: F401
        import transformers
    except Exception as exc:
        raise DependencyMissing(f"torch / transformers are needed for per-module times ({exc})",
                                offending="torch", hint="pip install 'deployment-studio[export]'") from None
    folder = Path(folder)
    if not (folder / "config.json").is_file():
        raise InputError(f"{folder} has no config.json: not a HuggingFace model folder", offending=str(folder),
                         hint="give --hf-model the folder the model was exported from")
    try:
        config = transformers.AutoConfig.from_pretrained(str(folder))
    except Exception as exc:
        raise ModelError(f"cannot read the HF config: {str(exc)[:200]}", offending=str(folder / "config.json")) from None
    arch = (getattr(config, "architectures", None) or [None])[0]
    cls = getattr(transformers, arch, None) if arch else None
    cls = cls or transformers.AutoModel
    has_weights = any((folder / f).is_file() for f in WEIGHT_FILES)
    try:
        if has_weights:
            model = cls.from_pretrained(str(folder), attn_implementation="eager")
            note = f"{cls.__name__}.from_pretrained({folder.name})"
        else:
            model = (cls.from_config(config, attn_implementation="eager") if cls is transformers.AutoModel
                     else cls._from_config(config, attn_implementation="eager"))
            note = f"{cls.__name__} built from config.json (random weights; no weights in {folder.name})"
    except Exception as exc:
        raise ModelError(f"cannot build the HF model: {str(exc)[:300]}", offending=str(folder),
                         hint="give --hf-model the original model folder") from None
    return model.eval(), note


def module_times(folder: Path, feed: dict[str, np.ndarray], *, runs: int = 10,
                 warmup: int = 2) -> tuple[dict[str, str], dict[str, tuple[float, float]], dict[str, Any]]:
    """(module path -> class name, module path -> (mean ms, p95 ms) inclusive per forward, details)."""
    import torch

    model, note = load_hf_model(folder)
    params = _inspect.signature(model.forward).parameters
    kwargs = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in feed.items() if k in params}
    skipped = sorted(set(feed) - set(kwargs))
    types = {name: type(m).__name__ for name, m in model.named_modules() if name}
    acc: dict[str, float] = {}
    starts: dict[int, list[float]] = {}
    names = {id(m): name for name, m in model.named_modules() if name}
    handles = []

    def pre(mod: Any, _args: Any) -> None:
        starts.setdefault(id(mod), []).append(time.perf_counter())

    def post(mod: Any, _args: Any, _out: Any) -> None:
        t0 = starts[id(mod)].pop()
        n = names[id(mod)]
        acc[n] = acc.get(n, 0.0) + (time.perf_counter() - t0) * 1000.0

    for _name, m in model.named_modules():
        if id(m) in names:
            handles.append(m.register_forward_pre_hook(pre))
            handles.append(m.register_forward_hook(post))
    per_run: list[dict[str, float]] = []
    wall: list[float] = []
    try:
        with torch.inference_mode():
            for i in range(warmup + runs):
                acc.clear()
                t0 = time.perf_counter()
                model(**kwargs)
                if i >= warmup:
                    wall.append((time.perf_counter() - t0) * 1000.0)
                    per_run.append(dict(acc))
    except Exception as exc:
        raise ModelError(f"the PyTorch model failed on the profiled inputs: {str(exc)[:300]}",
                         offending=str(folder), hint="check --shape against the HF model's expected sizes") from None
    finally:
        for h in handles:
            h.remove()
    times: dict[str, tuple[float, float]] = {}
    for n in types:
        xs = [r.get(n, 0.0) for r in per_run]
        if any(xs):
            times[n] = (float(np.mean(xs)), float(np.percentile(xs, 95)))
    details = {"weights": note, "runs": runs, "warmup": warmup, "torch": torch.__version__,
               "forward_mean_ms": float(np.mean(wall)) if wall else 0.0, "inputs_not_passed": skipped,
               "method": "forward pre/post hooks, inclusive wall time per module, torch.inference_mode"}
    return types, times, details
