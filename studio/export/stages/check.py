"""Stages "check" and "parity": the exported graph is valid ONNX that ONNX Runtime loads, and it computes what
PyTorch computes on every validation case (the traced shapes, a new batch and sequence, a padded batch)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from studio.export.stages.inputs import ExampleInputs
from studio.export.stages.run import ExportRun, fail, to_torch


@dataclass
class Checked:
    """The exported model as parity needs it: its proto (for diagnoses), an ORT session, inputs it dropped."""

    onnx_model: Any
    session: Any
    dropped: list[str] = field(default_factory=list)


@dataclass
class ParityRuns:
    """Per validation case: the feeds, PyTorch's outputs and ONNX Runtime's (the split stage reuses them)."""

    case_feeds: list[dict[str, np.ndarray]] = field(default_factory=list)
    references: list[dict[str, np.ndarray]] = field(default_factory=list)
    ort_outputs: list[dict[str, np.ndarray]] = field(default_factory=list)


def check_exported(run: ExportRun, input_names: list[str]) -> Checked:
    """onnx.checker, shape inference and an ONNX Runtime session on ``run.model_path``; each failure diagnosed."""
    import onnx

    from studio.export import diagnose as dg
    from studio.export.validate import check_graph, ort_session

    report = run.report
    onnx_model = onnx.load(str(run.model_path), load_external_data=False)  # for diagnoses: the graph, no weights
    too_big_for_one_file(run, run.model_path)
    checker, shapes, errors = check_graph(run.model_path)
    report.validation.checker, report.validation.shape_inference = checker, shapes
    opset = report.opset or run.options.opset
    if checker != "passed":
        fail(run, dg.diagnose_exception("checker", RuntimeError(errors[0]), onnx_model=onnx_model, opset=opset))
    if shapes != "passed":
        fail(run, dg.diagnose_exception("shape_inference", RuntimeError(errors[-1]), onnx_model=onnx_model,
                                        opset=opset))
    dropped: list[str] = []
    try:
        session = ort_session(run.model_path)
        report.validation.ort_load = "passed"
        graph_inputs = {i.name for i in session.get_inputs()}
        dropped = [n for n in input_names if n not in graph_inputs]
        if dropped:
            report.warnings.append(f"input(s) {', '.join(dropped)} are not in the graph: the traced forward "
                                   "never used them (a value-dependent branch may have skipped them)")
    except Exception as exc:  # noqa: BLE001
        report.validation.ort_load = f"failed: {str(exc).splitlines()[0][:300]}"
        fail(run, dg.diagnose_exception("ort_load", exc, onnx_model=onnx_model, opset=opset))
    return Checked(onnx_model, session, dropped)


def too_big_for_one_file(run: ExportRun, path: Any) -> None:
    """--no-external-data past protobuf's limit: said now, before parity, not at the write stage."""
    from studio.core.external_data import PROTOBUF_LIMIT, data_name
    from studio.export.api import Diagnosis

    data = path.with_name(data_name(path))
    if run.options.external_data is False and data.exists() and data.stat().st_size > PROTOBUF_LIMIT - (64 << 20):
        fail(run, Diagnosis(stage="check", error_class="protobuf_limit",
                            message=f"{path.name} has {data.stat().st_size / 1e9:.2f} GB of weights: with "
                                    "--no-external-data it would be one protobuf, which cannot pass 2 GB",
                            fix="drop --no-external-data: the weights go to model.onnx.data beside the graph"))


def run_parity(run: ExportRun, ex: ExampleInputs, checked: Checked, result: Any,
               progress: Callable[[float], None] | None = None, *, release: bool = False) -> ParityRuns:
    """PyTorch (the unmodified model) vs ONNX Runtime on every case; a mismatch is diagnosed with the tracer's
    warnings (a frozen Python value is the usual cause). ``progress`` gets the fraction of the work done.

    PyTorch answers every case first; with ``release`` (no later stage runs PyTorch) its weights are freed before
    ONNX Runtime runs, so the two copies of the weights are never held at once."""
    import torch

    from studio.export import diagnose as dg
    from studio.export.validate import make_inputs, run_case

    options, report, job = run.options, run.report, run.job
    runs = ParityRuns()
    n = len(ex.cases)
    for i, case in enumerate(ex.cases):
        feeds = ex.feeds0 if i == 0 else (ex.make_feeds(case) if ex.make_feeds is not None
                                          else make_inputs(run.specs, run.config, case))
        with torch.no_grad():
            ref = ex.wrapper(*[to_torch(feeds[n]) for n in ex.input_names])
        runs.references.append({n: t.detach().float().numpy() if t.is_floating_point() else t.detach().numpy()
                                for n, t in zip(ex.output_names, ref, strict=True)})
        runs.case_feeds.append(feeds)
        del ref
        job.log(f"parity [{case.name}]: PyTorch answered")
        if progress is not None:
            progress((i + 1) / (2 * n))
    if release:
        run.release_torch("parity has PyTorch's answers and no later stage runs it")
    for i, (case, feeds, refd) in enumerate(zip(ex.cases, runs.case_feeds, runs.references, strict=True)):
        vc, got = run_case(case, "model", checked.session, feeds, refd, options.atol, options.rtol)
        report.validation.cases.append(vc)
        job.set_partial(f"case:{case.name}", vc)
        job.log(f"parity [{case.name}]: {'passed' if vc.passed else 'FAILED'} "
                + ", ".join(f"{o.output} abs={o.max_abs:.2g}" for o in vc.outputs))
        runs.ort_outputs.append(got)
        if progress is not None:
            progress((n + i + 1) / (2 * n))
    if not all(c.passed for c in report.validation.cases):
        diag = dg.diagnose_parity(report.validation.cases, tracer_warnings=result.tracer_warnings,
                                  model=ex.export_wrapper, onnx_model=checked.onnx_model, atol=options.atol,
                                  rtol=options.rtol, log=result.log)
        if checked.dropped and diag.error_class == "data_dependent_control_flow":
            diag.message += f"; the exported graph does not even take {', '.join(checked.dropped)}"
        fail(run, diag)
    return runs


def name_dims_after_parity(run: ExportRun, runs: ParityRuns) -> None:
    """Output dims still unnamed get the input axis whose size they followed over the parity runs."""
    from studio.export.dims import name_dims_from_runs

    sizes = [{name: int(feeds[s.name].shape[a]) for s in run.specs for a, name in s.dynamic_axes.items()
              if s.name in feeds} for feeds in runs.case_feeds]
    renamed = name_dims_from_runs(run.model_path, sizes, [{k: v.shape for k, v in got.items()}
                                                          for got in runs.ort_outputs])
    if renamed:
        run.job.log("output dims matched to input axes over the parity runs: "
                    + ", ".join(f"{k} -> {v}" for k, v in renamed.items()))
