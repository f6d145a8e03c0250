"""The compile job: pre-check, TVM import, lower, build, export, verify; failures localised to nodes."""

from __future__ import annotations

import dataclasses
import json
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from studio.compile.contract import (
    REPORT_FILE,
    Artifact,
    CompileDiagnosis,
    CompileOptions,
    CompileReport,
    Latency,
    Parity,
    sha256_file,
    time_it,
)
from studio.compile.graph import graph_inputs, graph_output_names, load_model, resolve_shapes
from studio.compile.outputs import check_out, default_out
from studio.compile.targets import CompileTarget, cross_compiler_available, resolve_target
from studio.compile.tvm_backend import StageFailure, TVMStageError
from studio.core.atomic import atomic_path, write_json_atomic
from studio.core.catalogue import N_
from studio.core.errors import InputError, StudioError, ValidationError
from studio.core.jobs import JobState, Stages
from studio.core.parity import OutputParity

TVM_ATOL, TVM_RTOL = 1e-4, 1e-3  # parity tolerances when none are given
WEIGHTS = {"simplify": 5, "precheck": 5, "import": 10, "lower": 10, "build": 35, "export": 10, "verify": 30}

# Known TVM importer failures -> what to do (matched on the short error text).
KNOWN_FAILURES: list[tuple[str, str, str]] = [
    ("broadcast_to expects the input shape", "shape_arithmetic",
     N_("TVM 0.27's converter calls broadcast_to with an empty (0-d) target shape: a ConstantOfShape or Expand "
     "that fills a scalar, as in tiny-CLIP text encoders exported at opset 17 and 18. Fold the shape arithmetic "
     "at static shapes first: pass --simplify (onnxslim; clears it on a tiny CLIP) or run `onnxslim IN.onnx "
     "OUT.onnx --input-shapes NAME:DIMS ...`; else compile the parts separately (e.g. the vision encoder) and "
     "run the failing part with ONNX Runtime")),
    ("cannot handle ShapeExpr inputs", "shape_arithmetic",
     N_("a shape computed in the graph feeds an op TVM cannot take shapes into; fold shapes with onnxslim / "
     "`studio fix --simplify` using static --shape values")),
    ("not supported for frontend ONNX", "unsupported_op",
     N_("rewrite the op at export (other opset or decomposition), or split the model so this part runs in ONNX Runtime")),
    ("Cannot find global function target.build", "missing_codegen",
     N_("this TVM build lacks the code generator for the target; choose another target or use a TVM built with it")),
]


def _known(msg: str) -> tuple[str, str] | None:
    for needle, cls, hint in KNOWN_FAILURES:
        if needle in msg:
            return cls, hint
    return None


def run_compile(options: CompileOptions, job: JobState | None = None) -> CompileReport:
    job = job or JobState(name="compile")
    if options.atol is None or options.rtol is None:
        options = dataclasses.replace(options, atol=TVM_ATOL if options.atol is None else options.atol,
                                      rtol=TVM_RTOL if options.rtol is None else options.rtol)
    stages = Stages(job, WEIGHTS)
    t_all = time.perf_counter()
    model_path = Path(options.model).resolve()
    target = resolve_target(options.target)
    out = Path(options.out).resolve() if options.out else default_out(model_path, target.id)
    check_out(out, model_path, target.id)  # never into an export folder: a bundle made from it would carry it
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not options.force:
        raise InputError(f"output folder {out} exists and is not empty", offending=str(out),
                         hint="choose another --out, or pass --force to replace it")
    from studio.compile.tvm_backend import require_tvm, tvm_status

    require_tvm()
    model = load_model(model_path)
    plan = resolve_shapes(graph_inputs(model), options.shapes)
    rep = CompileReport(model=str(model_path), target=target.id, board=target.board, target_json=target.tvm,
                        target_description=target.description, device=target.device, out_dir=str(out),
                        tvm_version=tvm_status()[1], input_shapes=plan.shapes, input_dtypes=plan.dtypes,
                        dynamic_dims=plan.dynamic, warnings=list(plan.warnings), notes=list(target.notes))
    from studio.compile.mlc import mlc_status

    st = mlc_status()
    rep.mlc = {"available": st.available, "version": st.version, "message": st.message}
    timings = rep.timings

    t0 = time.perf_counter()
    if options.simplify:
        stages.begin("simplify", "folding shape arithmetic (onnxslim) at the static shapes")
        model = _simplify(model, plan.shapes)
        rep.notes.append(N_("graph simplified with onnxslim at the static input shapes before import; parity is "
                         "still measured against the original model in ONNX Runtime"))
        t0 = time_it(timings, "simplify", t0)

    # -- pre-check --------------------------------------------------------------------------------------
    stages.begin("precheck", "pre-check: ops TVM Relax cannot import")
    if options.precheck:
        from studio.compile.precheck import precheck

        if options.simplify:  # the inspector judges what TVM will import: the simplified graph, not the file
            import tempfile

            with tempfile.TemporaryDirectory(prefix="studio-precheck-") as tmp:
                simplified = Path(tmp) / model_path.name
                onnx.save(model, str(simplified))
                pc = precheck(model, simplified)
        else:
            pc = precheck(model, model_path)
        rep.dynamic_trace = pc.dynamic
        rep.precheck = {"inspector": pc.inspector, "verdict": pc.verdict,
                        "findings": [f.__dict__ for f in pc.findings], "warnings": [f.__dict__ for f in pc.warnings]}
        if not pc.ok:
            ops = sorted({f.op_type for f in pc.findings})
            rep.diagnosis = CompileDiagnosis(
                stage="precheck", error_class="unsupported_op",
                message=N_(f"{len(pc.findings)} node(s) use ops TVM Relax cannot import: {', '.join(ops)}"),
                hint=pc.findings[0].hint, nodes=[f.node for f in pc.findings],
                op_types=[f.op_type for f in pc.findings], culprit=pc.findings[0].node,
                culprit_op=pc.findings[0].op_type, findings=[f.__dict__ for f in pc.findings])
            time_it(timings, "precheck", t0)
            return _finish(rep, t_all, job)
    else:
        rep.precheck = {"inspector": "skipped", "findings": []}
    t0 = time_it(timings, "precheck", t0)

    from studio.compile import tvm_backend as tb

    tb.check_codegen(target.kind)

    # -- import / lower / build -------------------------------------------------------------------------
    stages.begin("import", "importing ONNX into TVM Relax")
    try:
        mod, param_names, param_values = tb.import_onnx(model, plan.shapes, plan.dtypes)
        t0 = time_it(timings, "import", t0)
        stages.begin("lower", "decomposing and legalizing Relax ops")
        mod = tb.lower(mod)
        t0 = time_it(timings, "lower", t0)
        stages.begin("build", f"building for {target.id} ({target.kind})")
        ex = tb.build(mod, target.tvm)
        t0 = time_it(timings, "build", t0)
    except TVMStageError as exc:
        time_it(timings, exc.failure.stage, t0)
        rep.diagnosis = _diagnose(exc.failure, model, plan.shapes, plan.dtypes, target, options, job)
        return _finish(rep, t_all, job)

    # -- export + verify, all inside a temp folder renamed into place ----------------------------------
    stages.begin("export", "exporting the library and parameters")
    meta_inputs = [{"name": n, "shape": plan.shapes[n], "dtype": plan.dtypes[n]} for n in plan.shapes]
    from studio.compile.runner import CompiledMeta, TVMRunner

    try:
        with atomic_path(out, is_dir=True) as work:
            cc = cross_compiler_available(target)
            libs, warns = tb.export_library(ex, work, host=target.is_host, cross_cc=cc)
            rep.warnings.extend(warns)
            tb.save_params(work / "params.bin", param_names, param_values)
            meta = CompiledMeta(inputs=meta_inputs, outputs=graph_output_names(model), param_names=param_names,
                                libraries=sorted(libs, key=lambda n: not n.endswith(".so")),
                                target=target.tvm, target_id=target.id, device=target.device,
                                triple=target.triple, tvm_version=rep.tvm_version,
                                output_specs=_output_specs(model))
            write_json_atomic(work / "compiled.json", meta.to_dict())
            t0 = time_it(timings, "export", t0)

            stages.begin("verify", "verifying against ONNX Runtime")
            if options.verify:
                if target.is_host:
                    runner = TVMRunner(work, verify_signature=False)
                    rep.parity.mode = "artifact"
                else:
                    ex_host = tb.build(mod, {"kind": "llvm"})
                    runner = TVMRunner(executable=ex_host, meta=meta, params=param_values)
                    rep.parity.mode = "host-proxy"
                    rep.notes.append(N_("parity and latency ran on this host with the same Relax module built for "
                                     "llvm: the import and lowering are verified, the target's code generation "
                                     "and the board's latency are not"))
                _verify(rep, model_path, runner, plan.shapes, plan.dtypes, options, job)
                t0 = time_it(timings, "verify", t0)
                shapes = {o.output: o.shape for o in rep.parity.outputs}
                for spec in meta.output_specs:  # the static output shapes a loader (the agent) advertises
                    spec["shape"] = shapes.get(spec["name"], spec["shape"])
                write_json_atomic(work / "compiled.json", meta.to_dict())
                if rep.parity.status == "failed":
                    worst = max(rep.parity.outputs, key=lambda o: o.max_abs)
                    raise ValidationError(f"compiled module differs from ONNX Runtime on output '{worst.output}' "
                                          f"(max abs {worst.max_abs:.3g})", offending=worst.output,
                                          hint="compare per-node with `studio inspect`; try --target llvm to "
                                               "separate codegen from import issues")
            else:
                rep.parity.status = "skipped: --no-verify"
            for f in sorted(work.iterdir()):
                rep.artifacts.append(_artifact(f))
            rep.artifacts.append(Artifact(REPORT_FILE, "report"))  # no size or hash: it describes itself
            rep.status = "succeeded"
            _finish(rep, t_all, job)
            rep.save(work / REPORT_FILE)
    except ValidationError as exc:
        rep.status = "failed"
        rep.artifacts = []
        rep.diagnosis = CompileDiagnosis(stage="verify", error_class="parity", message=exc.message,
                                         hint=exc.hint or "", nodes=[], tvm_error="")
        return _finish(rep, t_all, job)
    except TVMStageError as exc:  # the host-proxy build
        rep.status = "failed"
        rep.artifacts = []
        rep.diagnosis = CompileDiagnosis(stage="verify", error_class="host_proxy_build", message=exc.failure.message,
                                         hint=N_("build for --target llvm to see the failure on its own"),
                                         tvm_error=exc.failure.message)
        return _finish(rep, t_all, job)
    return rep


def _output_specs(model: onnx.ModelProto) -> list[dict[str, Any]]:
    out = []
    for o in model.graph.output:
        t = o.type.tensor_type
        try:
            dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)).name
        except Exception:
            dtype = ""
        shape = [d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim]
        out.append({"name": o.name, "shape": shape, "dtype": dtype})
    return out


def _simplify(model: onnx.ModelProto, shapes: dict[str, list[int]]) -> onnx.ModelProto:
    try:
        import onnxslim
    except ImportError as exc:
        from studio.core.errors import DependencyMissing

        raise DependencyMissing.for_module("onnxslim", "optimize", "--simplify") from exc
    try:
        return onnxslim.slim(model, input_shapes=[f"{k}:{','.join(map(str, v))}" for k, v in shapes.items()])
    except Exception as exc:
        from studio.core.errors import ModelError

        raise ModelError(f"onnxslim could not simplify the model: {exc}", offending="--simplify",
                         hint="compile without --simplify, or simplify the model yourself first") from exc


def _finish(rep: CompileReport, t_all: float, job: JobState) -> CompileReport:
    rep.timings["total"] = round(time.perf_counter() - t_all, 4)
    job.set_progress(100.0, force=True)
    job.set_status(f"compile {rep.status}")
    return rep


_KINDS = {".so": "library", ".tar": "objects", ".bin": "params", ".json": "metadata"}


def _artifact(f: Path) -> Artifact:
    from studio.edge.elf import file_machines

    return Artifact(f.name, _KINDS.get(f.suffix, "file"), f.stat().st_size, sha256_file(f),
                    file_machines(f) if f.suffix in (".so", ".tar") else {})


def _verify(rep: CompileReport, model_path: Path, runner: Any, shapes: dict[str, list[int]],
            dtypes: dict[str, str], options: CompileOptions, job: JobState) -> None:
    from studio.core.parity import Tolerance, compare, random_inputs
    from studio.core.runner import OnnxRuntimeRunner

    feed = random_inputs({n: (dtypes[n], shape) for n, shape in shapes.items()}, rng=options.seed)
    p: Parity = rep.parity
    p.atol, p.rtol, p.input_shapes = options.atol, options.rtol, shapes
    with OnnxRuntimeRunner(model_path) as ort_r, runner as tvm_r:
        ref = ort_r.infer(feed)
        got = tvm_r.infer(feed)
        p.outputs = compare(ref, got, Tolerance(options.atol, options.rtol))
        p.status = "passed" if all(o.passed for o in p.outputs) else "failed"
        if options.latency_runs > 0:
            _latency(rep.latency, ort_r, tvm_r, feed, options.latency_runs, job)
            if p.mode == "host-proxy":
                rep.latency.note = N_("host-proxy build on this host, not the board's latency")


def alternate_runs(ort_r: Any, tvm_r: Any, feed: dict[str, np.ndarray], runs: int, *, warmup: int = 3,
                   job: JobState | None = None) -> tuple[list[float], list[float]]:
    """Alternate the two runners on one feed, so both see the same machine load (2 shared cores): ``warmup``
    calls each, then ``runs`` measured ones; (ORT ms, TVM ms) per measured call."""
    for _ in range(warmup):
        ort_r.infer(feed)
        tvm_r.infer(feed)
    ort_r.inference_times.clear()
    tvm_r.inference_times.clear()
    for i in range(runs):
        ort_r.infer(feed)
        tvm_r.infer(feed)
        if job is not None and i % 5 == 0:
            job.check_cancelled()
    return [t * 1e3 for t in ort_r.inference_times], [t * 1e3 for t in tvm_r.inference_times]


def _latency(lat: Latency, ort_r: Any, tvm_r: Any, feed: dict[str, np.ndarray], runs: int, job: JobState) -> None:
    o_ms, t_ms = alternate_runs(ort_r, tvm_r, feed, runs, job=job)
    lat.runs = runs
    lat.tvm_ms_median, lat.ort_ms_median = statistics.median(t_ms), statistics.median(o_ms)
    lat.tvm_ms_p90 = float(np.percentile(t_ms, 90))
    lat.ort_ms_p90 = float(np.percentile(o_ms, 90))
    lat.speedup_vs_ort = lat.ort_ms_median / lat.tvm_ms_median if lat.tvm_ms_median else None


def _diagnose(failure: StageFailure, model: onnx.ModelProto, shapes: dict[str, list[int]], dtypes: dict[str, str],
              target: CompileTarget, options: CompileOptions, job: JobState) -> CompileDiagnosis:
    known = _known(failure.message)
    cls, hint = known or (f"{failure.stage}_error",
                          N_("open the failing nodes in the inspector; try another opset at export, simplify the "
                          "graph (onnxslim), or split the model so the failing part runs in ONNX Runtime"))
    diag = CompileDiagnosis(stage=failure.stage, error_class=cls,
                            message=N_(f"TVM {failure.stage} failed: {failure.message}"), hint=hint,
                            tvm_error=failure.message, culprit_op=failure.converting_op)
    if not options.localise:
        return diag
    from studio.compile import tvm_backend as tb
    from studio.compile.bisect import localise

    upto = "import" if failure.stage == "import" else "build"

    def trial(m: onnx.ModelProto, s: dict[str, list[int]], d: dict[str, str]) -> StageFailure | None:
        return tb.trial(m, s, d, upto=upto, tvm_json=target.tvm)

    try:
        loc = localise(model, shapes, dtypes, trial, failure, job)
    except StudioError:
        raise
    except Exception as exc:  # localisation is best effort: the TVM error itself is still reported
        diag.localisation = {"error": f"{type(exc).__name__}: {exc}"}
        return diag
    if loc is None:
        diag.localisation = {"result": "no prefix of the graph reproduces the failure"}
        return diag
    diag.nodes, diag.op_types = loc.nodes, loc.op_types
    diag.culprit, diag.culprit_op = loc.culprit, loc.culprit_op
    diag.message = (f"TVM {failure.stage} fails at node '{loc.culprit}' ({loc.culprit_op}): {failure.message}")
    diag.localisation = {"trials": loc.trials, "mode": loc.mode, "cut_inputs": loc.cut_inputs,
                         "node_count": len(loc.nodes), "graph_nodes": len(model.graph.node)}
    if options.save_failing_subgraph and loc.subgraph is not None:
        path = Path(options.save_failing_subgraph)
        with atomic_path(path) as tmp:
            onnx.save(loc.subgraph, str(tmp))
        diag.localisation["subgraph"] = str(path)
    return diag


def load_report(out_dir: Path | str) -> CompileReport:
    """Read a compile report back (GUI reopening a past compile)."""
    data = json.loads((Path(out_dir) / REPORT_FILE).read_text(encoding="utf-8"))
    rep = CompileReport(**{k: v for k, v in data.items() if k in CompileReport.__dataclass_fields__
                           and k not in ("parity", "latency", "diagnosis", "artifacts")})
    rep.artifacts = [Artifact(**a) for a in data.get("artifacts", [])]
    par = data.get("parity") or {}
    rep.parity = Parity(**{k: v for k, v in par.items() if k != "outputs"})
    rep.parity.outputs = [OutputParity(**o) for o in par.get("outputs", [])]
    rep.latency = Latency(**(data.get("latency") or {}))
    if data.get("diagnosis"):
        rep.diagnosis = CompileDiagnosis(**data["diagnosis"])
    return rep
