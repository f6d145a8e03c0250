"""Stage "export": torch.onnx on the example inputs, with the fallbacks that keep a known failure from ending it.

Fallback: SDPA with grouped-query attention has no TorchScript conversion, so when the user chose no attention
implementation the model switches to eager attention (same math) and the export is tried once more. Any other
failure is diagnosed: class, module, the torch op's source line where one is found, and a fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from studio.core.catalogue import N_
from studio.core.jobs import JobState, ToolLine
from studio.export.contract import ExportOptions, ExportReport
from studio.export.stages.inputs import ExampleInputs
from studio.export.stages.run import ExportRun, fail


def export_graph(run: ExportRun, model: Any, ex: ExampleInputs) -> Any:
    """Export ``ex.export_wrapper`` to ``run.model_path``; returns the exporter's result (log, tracer warnings)."""
    from studio.export import diagnose as dg
    from studio.export.exporters import export_onnx
    from studio.export.patches import export_patches

    options, report = run.options, run.report

    def _export() -> Any:
        with export_patches(model, run.recipe.model_type) as notes:
            res = export_onnx(ex.export_wrapper, ex.args0, run.model_path, input_names=ex.input_names,
                              output_names=ex.output_names, dynamic_axes=ex.dynamic_axes, opset=options.opset,
                              exporter=options.exporter, limits=ex.limits, output_axes=ex.output_axes,
                              external_data=options.external_data)
        report.warnings.extend(N_(f"export patch: {reason}") for reason in notes)
        return res

    from studio.core.errors import JobCancelled

    try:
        try:
            return _export()
        except JobCancelled:
            raise
        except Exception as first:  # noqa: BLE001
            if gqa_eager_fallback(first, model, options, ex.export_wrapper, report, run.job):
                return _export()
            if not exporter_fallback(first, run):
                raise
            try:
                return _export()
            except Exception as second:  # noqa: BLE001 - both failed: the first exporter's error is the diagnosis
                run.job.log(f"dynamo fallback failed too: {type(second).__name__}: {str(second)[:300]}")
                report.warnings.append(f"exporter fallback: dynamo failed too ({type(second).__name__}: "
                                       f"{str(second).strip().splitlines()[0][:200] if str(second).strip() else ''})")
                options.exporter, options.opset = "torchscript", run.report.options["opset"]
                report.options["exporter"] = "torchscript (dynamo fallback failed too)"
                raise first from None
    except JobCancelled:
        raise
    except Exception as exc:  # noqa: BLE001
        diag = dg.diagnose_exception("export", exc, model=ex.export_wrapper, exporter=options.exporter,
                                     opset=options.opset)
        from studio.export.locate import locate_exception

        where = locate_exception(exc, ex.export_wrapper)
        if where.source and where.source not in diag.message:
            diag.message += f" (at {where.source}: {where.code})"
            diag.module = diag.module or where.module
        if any(w.startswith("exporter fallback: dynamo failed too") for w in report.warnings):
            diag.fix = (f"both exporters fail on the model's code{' at ' + where.source if where.source else ''} "
                        "(TorchScript, then torch.export at opset 18; both errors are in the report): that line "
                        "needs an export-friendly rewrite, or leave out the input it reads with --input-signature")
        if diag.op_type and diag.op_type.startswith("aten::") and (diag.module is None or diag.snippet is None):
            module, snippet = dg.locate_torch_op(ex.export_wrapper, ex.args0, diag.op_type)
            diag.module = diag.module or module
            diag.snippet = diag.snippet or snippet
            if snippet:
                diag.node = snippet["focus"]
            if module and diag.error_class == "unsupported_op" and "avoid" not in diag.fix:
                diag.fix += f", or avoid {diag.op_type} in {module}"
        fail(run, diag)


# failures whose cause and fix are a setting the user chose (an op that needs a higher opset than asked for, SDPA
# forced where TorchScript cannot convert it): switching exporter and opset would hand back a graph they did not ask
# for, so these stay diagnosed
KEEP_CHOICE = frozenset({"unsupported_op_at_opset", "gqa_sdpa"})


def exporter_fallback(exc: BaseException, run: ExportRun) -> bool:
    """The TorchScript exporter failed (a symbolic function it lacks, or the tracer tripping over model code that
    wants Python numbers): try torch.export (dynamo) at opset >= 18 once, and say so. With both failing, the first
    failure is the diagnosis and the second is named beside it."""
    from studio.export.diagnose import diagnose_exception
    from studio.export.locate import locate_exception

    options = run.options
    if options.exporter != "torchscript" or options.with_past or isinstance(exc, (MemoryError, KeyboardInterrupt)):
        return False
    if diagnose_exception("export", exc).error_class in KEEP_CHOICE:
        return False  # the cause is the user's own setting (opset, attention): its fix is theirs to take
    where = locate_exception(exc)
    at = f" at {where.source} ({where.module})" if where.source else ""
    run.report.warnings.append(f"exporter fallback: TorchScript failed on the model's code{at}: "
                               f"{type(exc).__name__}: {str(exc).strip()[:160]}; exported with --exporter dynamo "
                               f"--opset {max(18, options.opset)} instead (parity checked as usual)")
    run.report.options["exporter"] = "dynamo (automatic: TorchScript conversion failed)"
    options.exporter, options.opset = "dynamo", max(18, options.opset)
    run.job.log(f"TorchScript conversion failed{at}: retrying with torch.export (dynamo)")
    return True


def note_export(run: ExportRun, result: Any) -> None:
    """After a successful export: the exporter's log, frozen-value warnings, the opset written, output dim names."""
    from studio.export.dims import name_output_dims, written_opset

    report, job = run.report, run.job
    for line in result.log[-50:]:
        job.log(ToolLine(line))
    if result.tracer_warnings:
        where = sorted({f"{Path(w['filename']).name}:{w['lineno']}" for w in result.tracer_warnings})
        count, places = len(result.tracer_warnings), ", ".join(where[:6])
        report.warnings.append(N_(f"{count} tracer warning(s) at {places}: the trace froze a Python value there; "
                                  "parity on new shapes and padded inputs checks it"))
    from studio.export.concat_types import align_concat_types

    cast = align_concat_types(run.model_path)
    if cast:
        report.warnings.append(N_(f"export patch: {cast} int32 shape piece(s) of Concat nodes cast to int64 (the "
                                  "trace mixed int32 and int64 inputs, which ONNX refuses)"))
    report.opset = written_opset(run.model_path)
    opset_warning(report, run.options.exporter, run.options.opset, report.opset, run.options.output.name)
    renamed = name_output_dims(run.model_path, {})
    if renamed:
        job.log("output dims named after the inputs: " + ", ".join(f"{k} -> {v}" for k, v in renamed.items()))


def gqa_eager_fallback(exc: BaseException, model: Any, options: ExportOptions, wrapper: Any,
                       report: ExportReport, job: JobState) -> bool:
    """SDPA with grouped-query attention (``enable_gqa``) has no TorchScript ONNX conversion: when the user did
    not choose an attention implementation, switch the model to eager attention (same math) and say so."""
    from studio.export import diagnose as dg

    if options.exporter != "torchscript" or getattr(options, "attn_implementation", None):
        return False
    diag = dg.diagnose_exception("export", exc, model=wrapper, exporter=options.exporter, opset=options.opset)
    if diag.error_class != "gqa_sdpa" or not hasattr(model, "set_attn_implementation"):
        return False
    try:
        model.set_attn_implementation("eager")
    except Exception:  # noqa: BLE001 - the model cannot switch: the diagnosis stands
        return False
    report.warnings.append(f"gqa_sdpa: {diag.message} (in {diag.module or 'the attention layers'}); exported with "
                           "attn_implementation='eager' instead (same math, parity checked). Pass "
                           "--attn-implementation sdpa --exporter dynamo to keep SDPA")
    report.options["attn_implementation"] = "eager (automatic: enable_gqa SDPA has no TorchScript conversion)"
    job.log("TorchScript cannot convert SDPA with enable_gqa: retrying with eager attention")
    return True


def opset_warning(report: ExportReport, exporter: str, requested: int, written: int | None, name: str) -> None:
    """The dynamo exporter builds opset >= 18 and converts down (or silently keeps 18): say which one happened."""
    if written is None:
        return
    if written != requested:
        report.warnings.append(N_(f"opset: {name} was written at opset {written}, not the requested {requested}: "
                                  f"the {exporter} exporter has no implementation below {written} and the version "
                                  f"converter did not convert it; use --opset {written} or --exporter torchscript"))
    elif exporter == "dynamo" and requested < 18:
        report.warnings.append(N_(f"opset: the dynamo exporter built {name} at opset 18 and the ONNX version "
                                  f"converter lowered it to {requested}; parity below checks the converted graph "
                                  "(--opset 18 avoids the conversion)"))
