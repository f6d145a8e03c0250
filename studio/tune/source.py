"""What is being optimized: the parts of the given model or export folder, their calibration samples, the FP32
original's outputs on them, and what the target's profile says is wrong with each (the search's first order).

An export folder of a split export gives its parts (``model.<part>.onnx``: vision, text, fusion ...); a folder
without parts gives its ``model.onnx``; a file is that file (its part name read from ``<stem>.<part>.onnx``).
Static dims come from the samples: every symbolic input dim takes the size the calibration samples have.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import InputError

SYNTHETIC_TEXTS = ("a photo of a cat", "two dogs playing in the snow", "a red car parked on a street",
                   "a bowl of fruit on a wooden table", "an empty room with a window", "the night sky over a city")


@dataclass
class Part:
    name: str
    path: Path
    processor_dir: Path


@dataclass
class PartInfo:
    """What the target's profile says of the original (before any fix) and the sizes its samples fix."""

    dims: dict[str, int] = field(default_factory=dict)  # symbolic dim -> size from the samples
    dynamic: bool = False
    dynamic_risky: bool = False  # the profile flags the dynamic inputs
    host_nodes: list[str] = field(default_factory=list)
    nan_guards: bool = False  # Where(IsNaN(x), C, x) in the graph
    nan_trouble: bool = False  # and the profile places IsNaN on the host or refuses it
    fused: bool = False  # studio.fused nodes the target's profile refuses
    static_verdict: dict[str, Any] | None = None
    findings: list[str] = field(default_factory=list)


def find_parts(model: Path, wanted: list[str]) -> list[Part]:
    """The parts to optimize; an InputError names an unknown ``--part``."""
    from studio.optimize.api import find_parts as siblings

    model = Path(model).resolve()  # the recipe's commands name absolute paths: they replay from anywhere
    if model.is_dir():
        main = model / "model.onnx"
        onnx_files = sorted(model.glob("*.onnx"))
        if not onnx_files:
            raise InputError(f"{model} holds no .onnx file", offending=str(model),
                             hint="pass an .onnx file or an export folder (studio export)")
        # the export's main file: model.onnx, else the one with the fewest dots (clip.onnx beside clip.vision.onnx)
        main = main if main.is_file() else min(onnx_files, key=lambda f: (f.name.count("."), f.name))
        parts = {p: f for p, f in siblings(main).items()}
        found = [Part(p, f, model) for p, f in parts.items()] or [Part("model", main, model)]
    elif model.suffix == ".onnx":
        stem_parts = model.name[:-len(".onnx")].split(".")
        found = [Part(stem_parts[-1] if len(stem_parts) > 1 else "model", model, model.parent)]
    else:
        raise InputError(f"{model} is neither an .onnx file nor a folder", offending=str(model),
                         hint="pass an .onnx file or an export folder")
    if wanted:
        names = {p.name for p in found}
        unknown = [w for w in wanted if w not in names]
        if unknown:
            raise InputError(f"--part names no part of {model.name}: {', '.join(unknown)}", offending=", ".join(unknown),
                             hint=f"parts: {', '.join(sorted(names))}")
        found = [p for p in found if p.name in wanted]
    return found


def synthetic_calibration(folder: Path, count: int = 6) -> Path:
    """Seeded images and texts for when no --calibration is given (a warning says so): enough to build and
    compare, never a stand-in for real inputs."""
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(11)
    for i in range(count):
        h, w = 40 + 6 * i, 56 - 3 * i
        base = rng.integers(0, 255, size=(1, 1, 3)).astype(np.float32)
        grad = np.linspace(0, 1, h * w, dtype=np.float32).reshape(h, w, 1)
        arr = np.clip(base * (0.4 + grad) + rng.normal(0, 25, (h, w, 3)), 0, 255).astype(np.uint8)
        Image.fromarray(arr).save(folder / f"synthetic{i}.png")
    (folder / "synthetic.txt").write_text("\n".join(SYNTHETIC_TEXTS[:count]) + "\n", encoding="utf-8")
    return folder


def sample_dims(model: Path, feeds: list[dict[str, np.ndarray]]) -> dict[str, int]:
    """Each symbolic dim of the graph inputs -> the size the samples give it (they agree: one padded length)."""
    from studio.optimize.calibration import model_inputs

    dims: dict[str, int] = {}
    for spec in model_inputs(model):
        for ax, d in enumerate(spec["dims"]):
            if isinstance(d, str) and feeds and spec["name"] in feeds[0]:
                dims.setdefault(d, int(feeds[0][spec["name"]].shape[ax]))
    return dims


def reference(part: Part, feeds: list[dict[str, np.ndarray]], folder: Path) -> str:
    """The FP32 original's outputs on every sample (ONNX Runtime), saved as ``folder/NNNN.npz`` (o0, o1, ...)."""
    import onnxruntime as ort

    from studio.core.runner import ort_session

    folder.mkdir(parents=True, exist_ok=True)
    s = ort_session(part.path)
    names = [i.name for i in s.get_inputs()]
    for k, f in enumerate(feeds):
        outs = s.run(None, {n: f[n] for n in names})
        np.savez(folder / f"{k:04d}.npz", **{f"o{i}": o for i, o in enumerate(outs)})
    return f"onnxruntime {ort.__version__} (CPU), FP32 original"


def part_info(part: Part, target: str, dims: dict[str, int], profile_dirs: list[Path] | None) -> PartInfo:
    """The profile's view of the original: what needs fixing, in its own words."""
    import onnx

    from studio.inspect.api import inspect_model
    from studio.optimize.custom_ops import DOMAIN

    rep = inspect_model(part.path, [target], profile_dirs=profile_dirs)
    mv = getattr(rep.targets.get(target), "model", None)
    info = PartInfo(dims=dims, static_verdict=mv.to_dict() if mv is not None else None)
    info.dynamic = bool(rep.dynamic.dynamic_inputs)
    mine = [f for f in rep.findings if f.target == target]
    info.findings = [f"{f.verdict}: {f.rule}: {f.message[:160]}" for f in mine][:20]
    info.dynamic_risky = any(f.rule == "dynamic-shape" and f.verdict in ("risky", "unsupported") for f in mine)
    info.host_nodes = [h.node for h in (mv.host_nodes if mv is not None else [])]
    m = onnx.load(str(part.path), load_external_data=False)
    producers = {o: n for n in m.graph.node for o in n.output}
    info.nan_guards = any(n.op_type == "Where" and producers.get(n.input[0]) is not None
                          and producers[n.input[0]].op_type == "IsNaN" for n in m.graph.node if len(n.input) == 3)
    isnan = {n.name for n in m.graph.node if n.op_type == "IsNaN"}
    refused = {f.node for f in mine if f.verdict == "unsupported" and f.node}
    info.nan_trouble = info.nan_guards and bool(isnan & (set(info.host_nodes) | refused))
    info.fused = any(n.domain == DOMAIN for n in m.graph.node) and any(
        f.verdict == "unsupported" and (DOMAIN in f.message or f.rule == "domain-policy") for f in rep.findings)
    return info
