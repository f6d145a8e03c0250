"""Stage "split" (``--split-modalities``): per-modality parts exported, checked and chained.

Why chained parity: parts that feed each other must reproduce both PyTorch and the monolithic ONNX model on
every validation case, and their boundary tensors must agree on names, dtypes and dynamic dims; a standalone
part (e.g. a VLM's text-only decoder) is checked against its own PyTorch module instead.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.parity import OutputParity
from studio.export.contract import InputSpec, ValidationCase
from studio.export.stages.check import ParityRuns
from studio.export.stages.inputs import ExampleInputs, axis_limits
from studio.export.stages.run import ExportRun, fail, to_torch


def export_parts(run: ExportRun, model: Any, ex: ExampleInputs, runs: ParityRuns,
                 progress: Callable[[float], None] | None = None) -> list[tuple[Path, str, str]]:
    """Export every part of the recipe's split into ``run.tmp``; returns (path, "part", modality) per part."""
    import onnx
    import torch

    from studio.export import diagnose as dg
    from studio.export.dims import name_output_dims, written_opset
    from studio.export.exporters import NamedWrapper, export_onnx
    from studio.export.patches import export_patches
    from studio.export.split import DERIVED_AXES, boundary_check, plan_parts
    from studio.export.validate import check_graph, compare, make_inputs, ort_session, run_case

    options, report, job, recipe, specs, config = run.options, run.report, run.job, run.recipe, run.specs, run.config
    cases, case_feeds, references, ort_outputs = ex.cases, runs.case_feeds, runs.references, runs.ort_outputs
    parts = plan_parts(recipe.split, model, specs, recipe.model_type)
    dyn_names = {n for s in specs for n in s.dynamic_axes.values()}

    def keep(axis_name: str) -> bool:
        return DERIVED_AXES.get(axis_name, axis_name) in dyn_names

    def part_specs(part: Any) -> list[InputSpec]:
        by_name = {s.name: s for s in specs}
        return [by_name[n] for n in part.inputs]

    env = {k: to_torch(v) for k, v in case_feeds[0].items()}
    written: list[tuple[Path, str, str]] = []
    sessions: dict[str, Any] = {}
    wrappers: dict[str, Any] = {}
    io: dict[str, dict[str, Any]] = {}
    stem = options.output.stem
    for i, part in enumerate(parts):
        path = run.tmp / f"{stem}.{part.name}.onnx"
        wrapper = NamedWrapper(part.module, part.inputs, part.outputs).eval()
        wrappers[part.name] = wrapper
        if part.standalone:  # its own inputs, from the traced case
            own = make_inputs(part_specs(part), config, cases[0])
            args = tuple(to_torch(own[n]) for n in part.inputs)
        else:
            args = tuple(env[n] for n in part.inputs)
        axes = {n: {a: nm for a, nm in part.input_axes.get(n, {}).items() if keep(nm)} for n in part.inputs}
        out_axes = {n: {a: nm for a, nm in ax.items() if keep(nm)} for n, ax in part.output_axes.items()}
        try:
            with export_patches(model, recipe.model_type):
                res = export_onnx(wrapper, args, path, input_names=part.inputs, output_names=part.outputs,
                                  dynamic_axes=axes, opset=options.opset, exporter=options.exporter,
                                  limits=axis_limits(config), output_axes=out_axes,
                                  external_data=options.external_data)
                with torch.no_grad():
                    outs = wrapper(*args)
        except Exception as exc:  # noqa: BLE001
            diag = dg.diagnose_exception("export", exc, model=wrapper, exporter=options.exporter, opset=options.opset)
            diag.message = f"part '{part.name}': {diag.message}"
            fail(run, diag)
        if not part.standalone:
            env.update(dict(zip(part.outputs, outs, strict=True)))
        name_output_dims(path, out_axes)  # declared boundary names win over exporter-generated ones
        checker, shapes, errors = check_graph(path)
        part_model = onnx.load(str(path))
        if checker != "passed" or shapes != "passed":
            diag = dg.diagnose_exception("checker" if checker != "passed" else "shape_inference",
                                         RuntimeError(errors[0]), onnx_model=part_model)
            diag.message = f"part '{part.name}': {diag.message}"
            fail(run, diag)
        try:
            sess = ort_session(path)
        except Exception as exc:  # noqa: BLE001
            diag = dg.diagnose_exception("ort_load", exc, onnx_model=part_model)
            diag.message = f"part '{part.name}': {diag.message}"
            fail(run, diag)
        sessions[part.name] = sess
        dims = {"inputs": {x.name: list(x.shape) for x in sess.get_inputs()},
                "outputs": {x.name: list(x.shape) for x in sess.get_outputs()}}
        if not part.standalone:
            io[part.name] = dims
        report.parts[part.name] = {"path": str(path), "modality": part.modality, "inputs": dims["inputs"],
                                   "outputs": dims["outputs"], "checker": checker, "shape_inference": shapes,
                                   "ort_load": "passed", "opset": written_opset(path),
                                   "standalone": part.standalone, "export_seconds": round(res.seconds, 3)}
        written.append((path, "part", part.modality))
        if progress is not None:
            progress((i + 1) / (len(parts) + 1))
    problems = boundary_check(io)
    for name in report.parts:
        report.parts[name]["boundary"] = ("none (standalone)" if report.parts[name]["standalone"]
                                          else "matched" if not problems else "; ".join(problems))
    if problems:
        from studio.export.contract import Diagnosis

        fail(run, Diagnosis(stage="split", error_class="boundary_mismatch", message="; ".join(problems),
                            fix="re-export the parts together with the same --dynamic axes"))
    chain = [p for p in parts if not p.standalone]
    # chained parts vs PyTorch and vs the monolithic ONNX model, on every validation case
    for ci, case in enumerate(cases):
        tensors: dict[str, np.ndarray] = dict(case_feeds[ci])
        vc = ValidationCase(name=case.name, graph="chained parts",
                            input_shapes={k: list(v.shape) for k, v in case_feeds[ci].items()})
        try:
            for part in chain:
                res_ = sessions[part.name].run(None, {n: tensors[n] for n in part.inputs})
                tensors.update(dict(zip(part.outputs, res_, strict=True)))
        except Exception as exc:  # noqa: BLE001
            vc.error = f"ONNX Runtime failed in the chain: {str(exc)[:500]}"
        case_errors: list[str] = []
        if vc.error is None:
            for name, ref in references[ci].items():
                if name not in tensors:
                    continue
                chk, err = compare(name, tensors[name], ref, options.atol, options.rtol)
                vc.outputs.append(chk)
                if name in ort_outputs[ci]:
                    mono, err2 = compare(name, tensors[name], ort_outputs[ci][name], options.atol, options.rtol)
                    vc.outputs.append(OutputParity(f"{name} vs {options.output.name}", mono.max_abs, mono.max_rel,
                                                   mono.passed, mono.cosine, mono.shape))
                    err = err or err2
                if err:
                    case_errors.append(err)
        vc.error = vc.error or ("; ".join(case_errors) or None)
        vc.passed = vc.error is None and bool(vc.outputs) and all(o.passed for o in vc.outputs)
        report.validation.cases.append(vc)
        job.log(f"chained parts [{case.name}]: {'passed' if vc.passed else 'FAILED'}")
    # standalone parts (e.g. the text-only decoder of a VLM) vs their own PyTorch module
    for part in [p for p in parts if p.standalone]:
        for case in cases:
            feeds = make_inputs(part_specs(part), config, case)
            with torch.no_grad():
                ref = wrappers[part.name](*[to_torch(feeds[n]) for n in part.inputs])
            refd = {n: t.detach().float().numpy() for n, t in zip(part.outputs, ref, strict=True)}
            vc, _got = run_case(case, f"{part.name} part", sessions[part.name], feeds, refd, options.atol,
                                options.rtol)
            report.validation.cases.append(vc)
            job.log(f"{part.name} part [{case.name}]: {'passed' if vc.passed else 'FAILED'}")
    checked = [c for c in report.validation.cases if c.graph != "model"]
    if not all(c.passed for c in checked):
        diag = dg.diagnose_parity(checked, tracer_warnings=[], model=None, onnx_model=None,
                                  atol=options.atol, rtol=options.rtol)
        diag.stage = "split"
        fail(run, diag)
    if progress is not None:
        progress(1.0)
    return written
