"""Stages "export", "check" and "parity" as one loop that narrows the graph's dynamic axes to what parity proves.

Why a loop: a model whose code turns tensor values into Python numbers (``.tolist()`` of an image grid, a patch
count) exports fine, and the trace freezes those numbers; the graph then fails on another image size or batch.
When the traced case passes and a later one fails, and the inputs came from the processor, the graph is exported
again with the image / audio axes static at the traced size (then also at batch 1), the validation cases made
again at that size, and the report says which axes were fixed and why (the tracer's own warning locations). A
failure at the traced case itself is a real one and stays diagnosed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from studio.export.stages.check import check_exported, run_parity
from studio.export.stages.inputs import ExampleInputs
from studio.export.stages.load import load_source
from studio.export.stages.run import ExportRun, StageFailed, timed
from studio.export.stages.trace import export_graph, note_export

if TYPE_CHECKING:
    from studio.core.jobs import Stages

LEVELS = ("media", "batch")  # what a narrowing fixes, in order


def export_validated(run: ExportRun, model: Any, ex: ExampleInputs, begin: Callable[[str, str], None],
                     stages: Stages, export_seconds: float) -> tuple[ExampleInputs, Any, Any, Any]:
    """Export, check and parity (narrowing when it can); returns the inputs used, the exporter's result, the
    checked model and the parity runs. ``run.model`` is the PyTorch model afterwards (loaded again when parity
    released its weights and a narrowing needed them)."""
    from studio.export.stages.derive import check_declared, check_modalities

    report, options = run.report, run.options
    check_declared(run)
    level = 0
    while True:
        begin("export", f"exporting with {options.exporter} at opset {options.opset}")
        with timed(report, "export"), stages.timed_guess("export", export_seconds), run.job.interruptible():
            result = export_graph(run, model, ex)  # one long call: a ticker moves its fraction, Cancel interrupts
        note_export(run, result)
        begin("check", "onnx.checker, shape inference, ONNX Runtime load")
        with timed(report, "check"):
            checked = check_exported(run, ex.input_names)
            check_modalities(run, checked)
        begin("parity", f"parity on {len(ex.cases)} inputs")
        # PyTorch's weights go once its answers are in, unless a later stage runs it (a narrowing reloads them)
        keep = options.split_modalities or options.precision or options.kv_cache_dtype != "float32"
        try:
            with timed(report, "parity"), run.job.interruptible():
                runs = run_parity(run, ex, checked, result, progress=lambda f: stages.within("parity", f),
                                  release=not keep)
            return ex, result, checked, runs
        except StageFailed:
            narrowed = None
            while narrowed is None and level < len(LEVELS):
                narrowed = _narrow(run, ex, result, level)
                level += 1
            if narrowed is None:
                raise
            ex, model = narrowed, run.model
            checked.session = None


def _narrow(run: ExportRun, ex: ExampleInputs, result: Any, level: int) -> ExampleInputs | None:
    """The next narrower ExampleInputs, or None when narrowing does not apply (no processor inputs, the traced
    case failed, nothing left to fix)."""
    from studio.export.stages.derive import narrowed_inputs

    cases = run.report.validation.cases
    if run.derived is None or not cases or not cases[0].passed:
        return None
    what = LEVELS[level]
    if run.torch_model is None:  # parity released the weights: the narrowed inputs and the export need them
        run.model = run.torch_model = load_source(run)
    new = narrowed_inputs(run, what)
    if new is None:
        return None
    failed = next(c for c in cases if not c.passed)
    where = sorted({f"{w['filename'].rsplit('/', 1)[-1]}:{w['lineno']}" for w in result.tracer_warnings})[:4]
    diag = run.report.diagnosis
    run.report.warnings.append(
        f"static {'image / audio size' if what == 'media' else 'batch 1 and image / audio size'}: the graph traced "
        f"at '{cases[0].name}' failed on '{failed.name}' ({(failed.error or diag.message if diag else '')[:160]})"
        + (f"; the trace froze Python values at {', '.join(where)}" if where else "")
        + "; exported again with those axes static at the traced size (the processor files beside the export "
          "resize to it), validated on new prompts at that size")
    run.report.diagnosis = None
    run.report.validation.cases = []
    run.job.log(f"narrowing: {what} axes static, exporting again")
    return new
