"""HF folder -> validated ONNX (+ parts, tokenizer / processor files), as one job with stages.

Stages: inputs (no torch) -> load -> export -> check (checker, shape inference, ORT load) -> parity ->
split (optional) -> generation (with a KV cache: greedy ids vs HF generate) -> write. Everything is produced in a temp folder beside the output and moved into
place only when every stage passed, model file last: on a failure or a cancel nothing is left at the
output path. Bad input raises InputError before any work; a stage failure returns a report with
``status == "failed"`` and a Diagnosis. Each stage is a function in ``studio.export.stages``.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from studio.core.errors import JobCancelled, StudioError
from studio.core.jobs import JobState, Stages
from studio.export.api import Diagnosis, ExportOptions, ExportReport
from studio.export.signatures import recipe_for
from studio.export.stages.check import name_dims_after_parity
from studio.export.stages.derive import derive_example_inputs, derived_files
from studio.export.stages.generation import validate_generation
from studio.export.stages.inputs import build_example_inputs
from studio.export.stages.load import load_source, probe_processor, probe_tokenizer
from studio.export.stages.options import check_options, open_report
from studio.export.stages.parts import export_parts
from studio.export.stages.past import build_past_inputs
from studio.export.stages.past_seq2seq import export_speech, is_seq2seq
from studio.export.stages.run import ExportRun, StageFailed, timed
from studio.export.stages.validated import export_validated
from studio.export.stages.write import close_report, write_outputs

__all__ = ["run_export", "check_options"]


def run_export(options: ExportOptions, job: JobState | None = None) -> ExportReport:
    job = job or JobState(name="export")
    t_start = time.perf_counter()
    report, config, specs = open_report(options)
    from studio.export.memory import check_fits

    report.memory = check_fits(options, config).to_dict()  # MemoryShortfall (exit 2) before anything is written
    out = options.output
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    run = ExportRun(options, config, specs, recipe_for(config), report, job, tmp)
    try:
        _run(run)
        report.status = "succeeded"
    except StageFailed:
        report.status = "failed"
    except JobCancelled:
        report.status = "cancelled"
        report.outputs = []
        job.log("export cancelled: nothing written")
        raise
    except StudioError:  # bad input found once the model is loaded (an input name its forward lacks)
        raise
    except Exception as exc:  # noqa: BLE001 - the catch-all: an unforeseen failure is a diagnosis, not a traceback
        report.status = "failed"
        report.diagnosis = unforeseen(run, exc)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        close_report(report, options, time.perf_counter() - t_start)
    job.set_progress(100, force=True)
    job.set_status(f"export {report.status}")
    return report


def unforeseen(run: ExportRun, exc: Exception) -> Diagnosis:
    """A failure no stage diagnosed itself: classified by the diagnose module under the stage it happened in."""
    from studio.export import diagnose as dg
    from studio.export.locate import locate_exception

    diag = dg.diagnose_exception(run.stage, exc)
    where = locate_exception(exc, run.model)
    diag.module = diag.module or where.module
    if where.source:
        diag.message += f" (at {where.source}: {where.code})"
    if diag.error_class in ("unknown", "exporter_error"):
        diag.error_class = "unexpected_error"
        diag.fix = dg.fix_for_unexpected(exc, run.stage, where, run.options)
    run.job.log(f"{diag.stage} failed [{diag.error_class}]: {diag.message}")
    return diag


def _run(run: ExportRun) -> None:
    """The stages in order, each under its job stage (the GUI's export page and the tests watch these names)."""
    options, report = run.options, run.report
    from studio.export.memory import stage_seconds

    weights = stage_seconds(int(report.memory.get("weight_bytes") or 0), options)  # the stages' expected seconds
    stages = Stages(run.job, weights)

    def begin(name: str, status: str) -> None:  # run.stage: what the catch-all's diagnosis names
        run.stage = name
        stages.begin(name, status)

    begin("load", f"loading {options.model_dir.name}")
    with timed(report, "load"):
        model = run.torch_model = load_source(run)  # the stages release its weights when none later needs them
        probe_tokenizer(options.model_dir, run.config, report)
        probe_processor(options.model_dir, report)
    if options.with_past and is_seq2seq(run.config):  # Whisper: two graphs, its own stages
        written = export_speech(run, model, begin, stages.within)
        begin("write", f"writing {options.output}")
        with timed(report, "write"):
            write_outputs(run, [(run.model_path, "model", None), *written])
        return
    run.stage, run.model = "inputs", model
    ex = build_past_inputs(run, model) if options.with_past else \
        derive_example_inputs(run, model) or build_example_inputs(run, model)  # the processor's, else generic
    ex, result, checked, runs = export_validated(run, model, ex, begin, stages, weights["export"])
    model = run.model  # narrowing may have loaded it again after parity released it
    checked.session = None  # ONNX Runtime's copy of the weights goes before the stages that build their own
    name_dims_after_parity(run, runs)

    written: list[tuple[Path, str, str | None]] = [(run.model_path, "model", None), *derived_files(run)]
    if options.split_modalities:
        begin("split", "exporting per-modality parts")
        with timed(report, "split"):
            written += export_parts(run, model, ex, runs, progress=lambda f: stages.within("split", f))

    if options.precision or options.kv_cache_dtype != "float32":  # per part: convert, judge, or keep FP32
        from studio.export.stages.precision import apply_precision

        begin("precision", "converting parts (--precision / --kv-cache-dtype)")
        with timed(report, "precision"):
            apply_precision(run, model, ex, runs)

    if options.with_past:
        begin("generation", "greedy generation vs HF generate()")
        with timed(report, "generation"), run.job.interruptible():
            if run.torch_model is None:  # released for parity: loaded again (mapped from the checkpoint, seconds)
                model = run.torch_model = load_source(run)
            written += validate_generation(run, model, progress=lambda f: stages.within("generation", f))

    begin("write", f"writing {options.output}")
    with timed(report, "write"):
        write_outputs(run, written)
