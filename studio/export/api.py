"""The export entry point: options in, one report out (the data: studio.export.contract). The CLI, the GUI
wizard and tests all call this.

``export_model`` never raises for an export that fails at a stage: it returns a report with
``status == "failed"`` and a ``diagnosis``. It raises StudioError only for bad input (missing dir,
non-HF dir, unknown modality or input name), before anything is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from studio.export.contract import (  # the contract, re-exported: the CLI, the GUI and tests import it from here
    MODALITIES,
    SCHEMA_VERSION,
    Diagnosis,
    ExportOptions,
    ExportReport,
    GenerationValidation,
    InputSpec,
    OutputFile,
    Validation,
    ValidationCase,
)

__all__ = [
    "SCHEMA_VERSION", "MODALITIES", "InputSpec", "ExportOptions", "OutputFile",
    "ValidationCase", "Validation", "Diagnosis", "GenerationValidation", "ExportReport", "export_model",
    "infer_signature", "list_samples", "write_sample",
]


def export_model(options: ExportOptions, job: Any = None) -> ExportReport:
    """Export, validate and diagnose. ``job`` is a studio.core.jobs.JobState (or None)."""
    from studio.export.pipeline import run_export

    return run_export(options, job)


def infer_signature(model_dir: Path | str) -> list[InputSpec]:
    """Default signature from the model class and processor (for the wizard's pre-filled page)."""
    from studio.export.signatures import default_signature

    return default_signature(Path(model_dir))


def list_samples() -> list[str]:
    from studio.export.samples import SAMPLES

    return sorted(SAMPLES)


def write_sample(name: str, out: Path | str) -> Path:
    from studio.export.samples import write_sample as _write

    return _write(name, Path(out))
