"""The signature read off the processor's runs: one input per tensor, its axes named by what they followed.

The runs (``processor_inputs.MEDIA_CASES``) differ in batch size, prompt length and image size / clip length, so an
axis that follows the batch is named ``batch``, one that follows the prompt ``sequence``, and any other axis that
moved (patches, images, frames) is named after the first input it appears in; an axis that never moved is static (a
fixed-resolution processor resizes every image to the size the model needs).
"""

from __future__ import annotations

import numpy as np

from studio.export.contract import InputSpec
from studio.export.processor_inputs import MEDIA_CASES, ProcessorRun


def name_axes(runs: list[dict[str, np.ndarray]], text_key: str | None) -> dict[str, dict[int, str]]:
    """Per input, the axes whose size changed across the runs, named by what they followed."""
    batches = [len(c.prompts) for c in MEDIA_CASES[: len(runs)]]
    seqs = [r[text_key].shape[-1] for r in runs] if text_key else []
    patterns: dict[tuple[int, ...], str] = {tuple(batches): "batch"}
    if seqs:
        patterns.setdefault(tuple(seqs), "sequence")
    axes: dict[str, dict[int, str]] = {}
    for name in runs[0]:
        shapes = [r[name].shape for r in runs if name in r]
        if len({len(s) for s in shapes}) != 1:
            continue
        out: dict[int, str] = {}
        for axis in range(len(shapes[0])):
            sizes = tuple(s[axis] for s in shapes)
            if len(set(sizes)) == 1:
                continue
            if sizes not in patterns:
                flat = len(shapes[0]) == 2 and axis == 0 and runs[0][name].dtype.kind == "f"
                patterns[sizes] = "patches" if flat else f"{name}_{axis}"  # rows of flattened patches / frames
            out[axis] = patterns[sizes]
        axes[name] = out
    return axes


def specs_from_runs(runs: list[ProcessorRun], order: list[str]) -> list[InputSpec]:
    """The signature: one InputSpec per tensor, in the forward's parameter order, from the traced run's tensors."""
    first = runs[0]
    text_key = "input_ids" if "input_ids" in first.tensors else \
        "decoder_input_ids" if "decoder_input_ids" in first.tensors else None
    axes = name_axes([r.tensors for r in runs], text_key)
    if text_key == "decoder_input_ids":
        axes = {k: {i: ("decoder_sequence" if n == "sequence" else n) for i, n in v.items()} for k, v in axes.items()}
    names = sorted(first.tensors, key=lambda n: order.index(n) if n in order else len(order))
    return [InputSpec(first.modality.get(n, "text"), n, axes.get(n, {}), str(first.tensors[n].dtype),
                      list(first.tensors[n].shape)) for n in names]
