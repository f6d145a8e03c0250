"""What every export stage shares: the run it works on, how a stage fails, how its time is counted."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from studio.core.jobs import JobState
from studio.export.api import ExportOptions, ExportReport, InputSpec


class StageFailed(Exception):
    """A stage produced a diagnosis (already in the report); the pipeline stops and reports."""


@dataclass
class ExportRun:
    """One export in progress: the checked inputs, the report the stages fill, and the temp folder they write in.

    Why one object: every stage reads the same options, config and signature and adds to the same report, and
    nothing is written outside ``tmp`` until the write stage moves it into place.
    """

    options: ExportOptions
    config: dict[str, Any]
    specs: list[InputSpec]
    recipe: Any
    report: ExportReport
    job: JobState
    tmp: Path
    stage: str = "load"  # the stage in progress (the pipeline's catch-all names it in its diagnosis)
    derived: Any = None  # stages/derive.DerivedInputs: how the example inputs were made (None: generic inputs)
    model: Any = None  # the loaded HF model (set by the pipeline after "load")
    torch_model: Any = None  # the loaded PyTorch model, while a later stage may still need its weights

    def release_torch(self, why: str) -> bool:
        """Free the PyTorch model's weights (every parameter and buffer emptied, wherever the module object is
        still referenced) once no later stage needs them, so ONNX Runtime's copy is the only one left. Returns
        whether anything was released; the stages call it at the point their PyTorch work ends."""
        model, self.torch_model = self.torch_model, None
        if model is None:
            return False
        from studio.export.memory import free_weights

        freed = free_weights(model)
        self.job.log(f"released {freed / 1e9:.2f} GB of PyTorch weights ({why}): ONNX Runtime's is the one "
                     "copy from here on")
        return True

    @property
    def model_path(self) -> Path:
        """Where the monolithic model is exported (in the temp folder, under its final name)."""
        return self.tmp / self.options.output.name

    @property
    def input_names(self) -> list[str]:
        return [s.name for s in self.specs]


def fail(run: ExportRun, diag: Any) -> NoReturn:
    """Record the diagnosis, log it with its fix, and stop the export."""
    run.report.diagnosis = diag
    run.job.log(f"{diag.stage} failed [{diag.error_class}]: {diag.message}")
    if diag.fix:
        run.job.log(f"fix: {diag.fix}")
    raise StageFailed()


@contextmanager
def timed(report: ExportReport, stage: str) -> Iterator[None]:
    """Add the block's wall time to ``report.timings[stage]`` and the peak RSS at its end to
    ``report.peak_rss_gb[stage]`` (also when it raises)."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        report.timings[stage] = round(report.timings.get(stage, 0.0) + time.perf_counter() - t0, 4)
        report.peak_rss_gb[stage] = peak_rss_gb()


def peak_rss_gb() -> float:
    """The process's peak RSS so far (the kernel's high-water mark, GB): after each stage, the report says which
    stage set the peak."""
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6, 3)


def to_torch(arr: np.ndarray) -> Any:
    import torch

    return torch.from_numpy(np.ascontiguousarray(arr))
