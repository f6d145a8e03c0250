"""The sizes fix parity gives a model's image and audio inputs: what the model's own processor makes of a sample.

Why: parity feeds random tensors, and a symbolic dim nobody named took 2. For a waveform ``[batch, samples]`` that
is a 2-sample clip, shorter than the first Conv's kernel (WavLM, wav2vec2): the check failed on the feed, not on
the fix. The processor files beside the model (the export copies them) say what a real request looks like: the
studio's sample image and 1 s clip (``studio.core.sample_inputs``) go through the edge preprocessing
(``studio.edge.preprocess``, what the agent and calibration run), and every symbolic dim past the batch axis of an
image or audio input takes the size that came out. Text and batch dims keep parity's own defaults; a user's
``--static`` wins over all of this. An integer tensor the processor makes beside the pixels (Qwen2-VL's
``image_grid_thw``) is not a random id: parity feeds the processor's own value, and every dim of that image's
tensors (the patch count on axis 0 too) takes the processor's size, so the grid and the patches agree.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.catalogue import N_


@dataclass
class DerivedDims:
    """Symbolic dim -> size, and which inputs and files they came from (empty when nothing could say)."""

    dims: dict[str, int] = field(default_factory=dict)
    source: str = ""
    values: dict[str, Any] = field(default_factory=dict)  # input -> the processor's array (integer companions)


def processor_dims(model: Path | str, processor_dir: Path | str | None = None) -> DerivedDims:
    """The sizes the processor files in ``processor_dir`` (default: the model's folder) give ``model``'s image and
    audio inputs on the studio's sample image and clip; no processor files: nothing derived."""
    from studio.core.errors import StudioError
    from studio.core.sample_inputs import write_sample_inputs
    from studio.edge.preprocess import build_preprocessors
    from studio.edge.raw_inputs import declare_raw_inputs
    from studio.optimize.calibration import model_inputs

    model = Path(model)
    folder = Path(processor_dir) if processor_dir is not None else model.parent
    inputs = {i["name"]: i for i in model_inputs(model)}
    declared = [d for d in declare_raw_inputs([{"name": n, "shape": i["dims"]} for n, i in inputs.items()], folder)
                if d["kind"] in ("image", "audio")]
    if not declared:
        return DerivedDims()
    out = DerivedDims()
    used: list[str] = []
    with tempfile.TemporaryDirectory(prefix="studio-parity-dims-") as tmp:
        samples = write_sample_inputs(tmp)
        try:
            pre = build_preprocessors(declared, folder)
            for d in declared:
                sample = samples["vision" if d["kind"] == "image" else "audio"]
                arrays: dict[str, Any] = pre[d["name"]].fn([sample.read_bytes()])
                produced = [n for n in d["produces"] if n in arrays and n in inputs]
                companions = [n for n in produced if arrays[n].dtype.kind in "iu"]
                first = 0 if companions else 1  # with a companion, axis 0 is not a batch axis but a count
                for name in produced:
                    for axis, dim in enumerate(inputs[name]["dims"]):
                        if axis >= first and isinstance(dim, str) and dim not in ("", "?") and axis < arrays[name].ndim:
                            out.dims.setdefault(dim, int(arrays[name].shape[axis]))
                    used.append(name)
                out.values.update({n: arrays[n] for n in companions})
        except (StudioError, OSError, ValueError, KeyError) as exc:  # parity then keeps its defaults, and says so
            error = f"{type(exc).__name__}: {str(exc)[:160]}"
            return DerivedDims(source=N_(f"not derived: the processor files in {folder} failed on the sample ({error})"))
    if out.dims or out.values:
        sizes = ", ".join([f"{k}={v}" for k, v in out.dims.items()]
                          + [f"{k}={v.tolist()}" for k, v in out.values.items()])
        inputs = ", ".join(used)
        said = {"audio": N_(f"{sizes} from the processor files in {folder} on the studio's sample audio ({inputs})"),
                "image": N_(f"{sizes} from the processor files in {folder} on the studio's sample image ({inputs})"),
                "audio and image": N_(f"{sizes} from the processor files in {folder} on the studio's sample audio "
                                      f"and image ({inputs})")}
        out.source = said[" and ".join(sorted({d["kind"] for d in declared}))]  # the kinds: image, audio
    return out
