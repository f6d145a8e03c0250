"""Example inputs at batch 1 for a model whose own code runs only at batch 1.

Why: some model code builds a tensor with the batch size where a broadcast needs 1 (TVP's column position
embeddings are viewed as ``(batch_size, 1, width, hidden)`` and added to a ``(1, height, 1, hidden)`` table), so
its forward refuses every batch of 2 whatever the processor makes. When every prompt form fails at the traced batch
(studio.export.processor_inputs.derive_inputs), the forms whose processor ran are tried again at batch 1; the first
the forward takes makes every case at batch 1 (the prompts, images and clips still differ), the export's batch
axis is static, and the report says why. Nothing here names a family: the forward is the judge.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np


def single_row_cases() -> list[Any]:
    """MEDIA_CASES with one row each (each case's last prompt and clip, its own image size)."""
    from studio.export.processor_inputs import MEDIA_CASES

    return [replace(c, prompts=(c.prompts[-1],), seconds=(c.seconds[-1],)) for c in MEDIA_CASES]


def runs_at_batch_one(model: Any, source: Any, config: dict[str, Any], modalities: set[str], forms: list[Any],
                      params: list[str]) -> tuple[Any, list[Any], list[str]] | None:
    """(form, runs, outputs not taken) for the first form whose batch-1 forward runs; None when none does."""
    import torch

    from studio.export.processor_inputs import ProcessorRun, case_tensors, modality_of_key

    cases = single_row_cases()
    for ph in forms:
        try:
            tensors, dropped = case_tensors(source, config, cases[0], modalities, ph, params)
            with torch.no_grad():
                model(**{k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in tensors.items()})
            runs = [ProcessorRun(cases[0], tensors)]
            runs += [ProcessorRun(c, case_tensors(source, config, c, modalities, ph, params)[0]) for c in cases[1:]]
        except Exception:  # noqa: BLE001 - the next form; none running keeps the batch-2 diagnosis
            continue
        for r in runs:
            r.modality = {k: modality_of_key(source, k, modalities, set(r.tensors)) for k in r.tensors}
        return ph, runs, dropped
    return None
