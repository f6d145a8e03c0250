"""``studio compile --backend rknn``: ONNX -> ``.rknn`` for a Rockchip NPU, with simulator parity against ORT.

The studio's compile contract (CompileOptions in, CompileReport out, the output folder written whole or not at
all), the build itself in the toolkit's environment (``worker.py``). The folder holds ``model.rknn`` (what the
board's rknn-toolkit-lite2 loads), ``model.onnx`` (the source, which the toolkit's x86 simulator rebuilds from:
it cannot run a ``.rknn`` off a board), ``compiled.json`` (backend, platform, toolkit version, tensors) and
``compile_report.json``. fp16 by default; int8 (w8a8) calibrated on the given samples, judged by cosine
similarity, with the toolkit's ``accuracy_analysis`` per-layer error in the report (the graph's heat map).
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from studio.compile.api import (
    SCHEMA_VERSION,
    Artifact,
    CompileDiagnosis,
    CompileOptions,
    CompileReport,
    sha256_file,
)
from studio.core.atomic import atomic_path
from studio.core.catalogue import N_
from studio.core.errors import InputError
from studio.core.jobs import JobState, Stages
from studio_rknn import client
from studio_rknn import env as envmod
from studio_rknn.manifest import PLATFORMS
from studio_rknn.verifier import static_inputs

BACKEND = "rknn"
META_FILE = "compiled.json"
REPORT_FILE = "compile_report.json"
RKNN_FILE = "model.rknn"
SOURCE_FILE = "model.onnx"
TOLERANCE = {"fp16": (5e-2, 5e-2), "int8": (5e-1, 5e-1)}  # (atol, rtol) when the user gives none
MIN_COSINE = {"fp16": 0.999, "int8": 0.98}  # what the simulator's output must reach against ORT
WEIGHTS = {"build": 50, "verify": 30, "accuracy": 20}


def toolkit_status() -> tuple[bool, str]:
    """(usable, the toolkit and its environment, or why not): the Compile page's state line for this backend."""
    st = envmod.check_env()
    if not st.ok:
        return False, st.reason
    return True, N_(f"rknn-toolkit2 {st.versions.get('rknn-toolkit2', envmod.TOOLKIT_VERSION)} in {st.path}")


def platform_of(target: str) -> str:
    """The toolkit's target_platform for a ``--target`` (a platform id, or a board whose NPU is one)."""
    if target in PLATFORMS:
        return target
    try:
        from studio.package.boards import load_board

        accel = load_board(target).target  # the inspector target of the board's NPU: rk3588 on rk3588 boards
    except Exception:  # not a board id either
        accel = ""
    if accel in PLATFORMS:
        return accel
    raise InputError(f"--backend rknn builds for a Rockchip NPU; '{target}' is not one", offending=target,
                     hint=f"--target {' | '.join(PLATFORMS)}")


def calibration_list(options: CompileOptions, inputs: list[dict[str, Any]], folder: Path, samples: int = 8) -> Path:
    """The toolkit's dataset file (one line per sample, one .npy per input): from ``options.calibration``
    (a dataset .txt as is, or a folder of .npz / per-input .npy files), else seeded samples of each input."""
    cal = options.calibration
    if cal is not None and Path(cal).is_file() and Path(cal).suffix == ".txt":
        return Path(cal).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    feeds: list[dict[str, np.ndarray]] = []
    if cal is not None:
        cal = Path(cal)
        if not cal.is_dir():
            raise InputError(f"calibration set {cal} does not exist", offending=str(cal),
                             hint="a folder of .npz files (one per sample, arrays named like the inputs) or a "
                                  "dataset .txt as rknn-toolkit2 reads it")
        for f in sorted(cal.glob("*.npz")):
            with np.load(f) as z:
                feeds.append({i["name"]: z[i["name"]] for i in inputs if i["name"] in z})
        if not feeds:
            raise InputError(f"calibration folder {cal} holds no .npz samples", offending=str(cal),
                             hint="save each sample with numpy.savez(PATH, **{input_name: array})")
    else:
        feeds = [_feed(inputs, seed) for seed in range(samples)]
    lines = []
    for k, feed in enumerate(feeds):
        paths = []
        for i in inputs:
            if i["name"] not in feed:
                raise InputError(f"calibration sample {k} has no array '{i['name']}'", offending=i["name"],
                                 hint="every sample needs every model input")
            p = folder / f"cal{k}_{i['name'].replace('/', '_')}.npy"
            np.save(p, np.asarray(feed[i["name"]], dtype=np.dtype(i["dtype"])).reshape(i["shape"]))
            paths.append(str(p))
        lines.append(" ".join(paths))
    path = folder / "dataset.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def compile_rknn(options: CompileOptions, job: JobState | None = None) -> CompileReport:
    """Build, check in the simulator, write the folder; a failed stage returns a report with its diagnosis."""
    from studio.compile.outputs import check_out, default_out
    from studio_rknn.plugin import accuracy, build_rknn

    job = job or JobState(name="compile")
    stages = Stages(job, WEIGHTS)
    t_all = time.perf_counter()
    model = Path(options.model).resolve()
    if not model.is_file():
        raise InputError(f"model {model} does not exist", offending=str(model), hint="pass an .onnx file")
    platform = platform_of(options.target)
    dtype = "int8" if options.quantize == "int8" else "fp16"
    if options.quantize not in ("", "fp16", "int8"):
        raise InputError(f"--quantize {options.quantize} is not an rknn build", offending=options.quantize,
                         hint="fp16 (default) or int8")
    hybrid = options.auto_hybrid
    if hybrid is not None and (dtype != "int8" or not 0.0 < hybrid <= 1.0):
        raise InputError(f"--auto-hybrid {hybrid}: a per-layer cosine in (0, 1] for an int8 build",
                         offending="--auto-hybrid", hint="e.g. --quantize int8 --auto-hybrid 0.999")
    leaf = f"{options.target}-rknn"
    out = Path(options.out).resolve() if options.out else default_out(model, leaf)
    check_out(out, model, leaf)
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not options.force:
        raise InputError(f"output folder {out} exists and is not empty", offending=str(out),
                         hint="choose another --out, or pass --force to replace it")
    mi = static_inputs(model, options.shapes)  # the dynamic inputs named, with the fix, before any work
    status = envmod.check_env()
    if not status.ok:
        raise InputError(f"rknn-toolkit2's environment is not usable: {status.reason}", offending="studio-rknn-env",
                         hint="create it once with `studio-rknn-env create` (or `make rknn-env`)")
    version = status.versions.get("rknn-toolkit2") or envmod.TOOLKIT_VERSION
    atol, rtol = TOLERANCE[dtype]
    atol = options.atol if options.atol is not None else atol
    rtol = options.rtol if options.rtol is not None else rtol
    shapes = {i["name"]: list(i["shape"]) for i in mi.inputs}
    rep = CompileReport(schema_version=SCHEMA_VERSION, model=str(model), target=options.target,
                        board=_board_id(options.target),
                        target_description=f"Rockchip {platform.upper()} NPU ({dtype}) via rknn-toolkit2 {version}",
                        device="npu", out_dir=str(out), input_shapes=shapes,
                        input_dtypes={i["name"]: i["dtype"] for i in mi.inputs}, backend=BACKEND,
                        toolchain={"name": "rknn-toolkit2", "version": version, "platform": platform,
                                   "dtype": dtype, "environment": str(status.path), "auto_hybrid": hybrid})
    with tempfile.TemporaryDirectory(prefix="studio-rknn-compile-") as tmp_s, atomic_path(out, is_dir=True) as tmp_out:
        tmp = Path(tmp_s)
        tmp_out.mkdir(parents=True, exist_ok=True)
        dataset = calibration_list(options, mi.inputs, tmp / "calibration") if dtype == "int8" else None
        stages.begin("build", f"rknn-toolkit2 {version}: building {model.name} for {platform} ({dtype})")
        t0 = time.perf_counter()
        try:
            built = build_rknn(model, tmp_out / RKNN_FILE, shapes=shapes, platform=platform, dataset=dataset, mi=mi,
                               auto_hybrid=hybrid)
        except client.WorkerError as exc:
            reason = str(exc)  # the worker's words, translated inside the line ({reason}) where it is shown
            nodes = _named_nodes(reason)
            rep.diagnosis = CompileDiagnosis(
                stage="build", error_class="build_error", message=N_(f"rknn-toolkit2 {version}: {reason}"),
                hint=_control_flow_hint(model, shapes) or N_(f"`studio inspect {model.name} --verify --target "
                                                            f"{platform}` shows per node what the toolkit refuses "
                                                            "or runs on the CPU"),
                nodes=[n for _op, n in nodes], op_types=[op for op, _n in nodes],
                culprit=nodes[-1][1] if nodes else None, culprit_op=nodes[-1][0] if nodes else None)
            raise _Failed(rep) from None
        finally:
            rep.timings["build"] = round(time.perf_counter() - t0, 3)
        _copy_source(model, tmp_out / SOURCE_FILE)
        feed = _first_sample(options, mi.inputs) or _feed(mi.inputs, options.seed)
        if options.verify:
            stages.begin("verify", "parity: the toolkit's x86 simulator against ONNX Runtime")
            t0 = time.perf_counter()
            _parity(rep, model, feed, platform, dataset, dtype, atol, rtol, mi, hybrid)
            rep.timings["verify"] = round(time.perf_counter() - t0, 3)
        else:
            rep.parity.status = "skipped: --no-verify"
        if dtype == "int8" and options.verify and dataset is not None:
            stages.begin("accuracy", "accuracy_analysis: per-layer error of the int8 build")
            t0 = time.perf_counter()
            try:
                rows = accuracy(model, feed, dataset, tmp / "accuracy", platform=platform, mi=mi, auto_hybrid=hybrid)
                rep.layer_errors = rows
            except client.WorkerError as exc:
                reason = str(exc)
                rep.warnings.append(N_(f"accuracy_analysis did not run: {reason}"))
            rep.timings["accuracy"] = round(time.perf_counter() - t0, 3)
        meta = _meta(rep, mi.inputs, model, platform, version, dtype, built, mi.resized)
        (tmp_out / META_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")
        rep.artifacts = [_artifact(tmp_out / RKNN_FILE, "rknn"), _artifact(tmp_out / SOURCE_FILE, "source"),
                         _artifact(tmp_out / META_FILE, "metadata")]
        rep.status = "succeeded" if rep.parity.status in ("passed",) or not options.verify else "failed"
        if rep.status != "succeeded":
            worst = min((o.cosine or 0.0 for o in rep.parity.outputs), default=0.0)
            rep.diagnosis = CompileDiagnosis(
                stage="verify", error_class="parity",
                message=N_(f"the simulator's outputs differ from ONNX Runtime's (worst cosine {worst:.4f}, "
                           f"needed {MIN_COSINE[dtype]}; atol {atol}, rtol {rtol})"),
                hint=_control_flow_hint(model, shapes, diverged=True)
                or (N_("a calibration set of real inputs (--calibration DIR), or fp16 (no --quantize int8); the "
                       "per-layer error is in the report (layer_errors)") if dtype == "int8" else
                    N_(f"`studio inspect MODEL --verify --target {platform}` lists the nodes the toolkit runs on "
                       "the CPU or rewrites; compare the parts with ORT to find the one that diverges")))
            raise _Failed(rep)
        rep.timings["total"] = round(time.perf_counter() - t_all, 3)
        (tmp_out / REPORT_FILE).write_text(rep.to_json(), encoding="utf-8")
        rep.artifacts.append(_artifact(tmp_out / REPORT_FILE, "report"))
    job.set_progress(100.0, force=True)
    job.set_status("compile succeeded")
    return rep


class _Failed(Exception):
    """Leaves the atomic output folder unwritten; ``compile`` turns it back into the failed report."""

    def __init__(self, rep: CompileReport) -> None:
        super().__init__(rep.diagnosis.message if rep.diagnosis else "failed")
        self.rep = rep


def compile(options: CompileOptions, job: JobState | None = None) -> CompileReport:  # noqa: A001 - the hook
    """The ``compilers`` contribution: a failure is a report (status failed, diagnosis), the folder untouched."""
    t0 = time.perf_counter()
    try:
        return compile_rknn(options, job)
    except _Failed as f:
        f.rep.status = "failed"
        f.rep.timings["total"] = round(time.perf_counter() - t0, 3)
        return f.rep


def _named_nodes(message: str) -> list[tuple[str, str]]:
    """(op, node) pairs the toolkit names in its error, e.g. "The If('branch') will cause ..."."""
    return re.findall(r"\b([A-Z][A-Za-z0-9]*)\('([^']+)'\)", message)


def _control_flow_hint(model: Path, shapes: dict[str, list[int]], diverged: bool = False) -> str:
    """For a model with If / Loop / Scan: what the toolkit does with it, and the fold that avoids it when the
    condition depends on shapes only (else: the branch depends on input values, which no fold removes)."""
    import onnx

    m = onnx.load(str(model), load_external_data=False)
    flow = [n for n in m.graph.node if n.op_type in ("If", "Loop", "Scan")]
    if not flow:
        return ""
    names = ", ".join(f"{n.op_type} '{n.name}'" for n in flow[:3])
    if any(_reads_values(m.graph, n) for n in flow):
        return N_(f"the model has control flow on input values ({names}): rknn-toolkit2 builds static graphs "
                  "only, and no fold removes a branch that depends on values; export both paths with torch.where, "
                  "or split the model at the branch and choose outside it")
    dims = _dim_values(m.graph, shapes) or "DIM=N"
    if diverged:
        return N_(f"the model has control flow ({names}): rknn-toolkit2 fixes the branch at conversion, and its "
                  f"choice differs from the one ONNX Runtime takes; fold it at the static shapes first: `studio fix "
                  f"{model.name} --static {dims} --simplify --out static.onnx` (onnxslim evaluates the condition), "
                  "then compile that")
    return N_(f"rknn-toolkit2 builds static graphs only and the model has control flow ({names}): fold it at the "
              f"static shapes first: `studio fix {model.name} --static {dims} --simplify --out static.onnx` "
              "(onnxslim evaluates the condition), then compile that")


def _reads_values(graph: object, node: object) -> bool:
    """Whether the node's first input (the condition / trip count) depends on a graph input's values, not only
    on its shape (paths through Shape / Size stop there)."""
    producers = {o: n for n in graph.node for o in n.output}  # type: ignore[attr-defined]
    inputs = {i.name for i in graph.input}  # type: ignore[attr-defined]
    todo, seen = [t for t in list(node.input)[:2] if t], set()  # type: ignore[attr-defined]
    while todo:
        t = todo.pop()
        if t in seen:
            continue
        seen.add(t)
        if t in inputs:
            return True
        p = producers.get(t)
        if p is not None and p.op_type not in ("Shape", "Size"):
            todo.extend(x for x in p.input if x)
    return False


def _dim_values(graph: object, shapes: dict[str, list[int]]) -> str:
    """``N=1,S=16``: each symbolic dim of the graph inputs with the value it has at the build's shapes."""
    out: dict[str, int] = {}
    for i in graph.input:  # type: ignore[attr-defined]
        for d, v in zip(i.type.tensor_type.shape.dim, shapes.get(i.name, []), strict=False):
            if d.dim_param and d.dim_param not in out:
                out[d.dim_param] = int(v)
    return ",".join(f"{k}={v}" for k, v in out.items())


def _feed(inputs: list[dict[str, Any]], seed: int) -> dict[str, np.ndarray]:
    from studio.core.parity import random_inputs

    return random_inputs({i["name"]: (i["dtype"], i["shape"]) for i in inputs}, rng=seed)


def _first_sample(options: CompileOptions, inputs: list[dict[str, Any]]) -> dict[str, np.ndarray] | None:
    """The first calibration sample (.npz) when a calibration folder of them is given: parity on a real input
    (an int8 build calibrated on real data can miss on random values it never saw)."""
    cal = options.calibration
    files = sorted(Path(cal).glob("*.npz")) if cal is not None and Path(cal).is_dir() else []
    if not files:
        return None
    with np.load(files[0]) as z:
        if not all(i["name"] in z for i in inputs):
            return None
        return {i["name"]: np.asarray(z[i["name"]], dtype=np.dtype(i["dtype"])).reshape(i["shape"]) for i in inputs}


def _parity(rep: CompileReport, model: Path, feed: dict[str, np.ndarray], platform: str, dataset: Path | None,
            dtype: str, atol: float, rtol: float, mi: Any = None, hybrid: float | None = None) -> None:
    from studio.core.parity import INT8, Tolerance, compare
    from studio.core.runner import OnnxRuntimeRunner
    from studio_rknn.plugin import simulate

    with OnnxRuntimeRunner(model) as ort_r:
        ref = ort_r.infer(feed)
    got_list = simulate(model, feed, platform=platform, dataset=dataset, mi=mi, auto_hybrid=hybrid)
    got = {name: np.asarray(a).reshape(np.shape(ref[name])) if np.size(a) == np.size(ref[name]) else a
           for name, a in zip(ref, got_list, strict=False)}
    # studio.core.parity's rule: int8 by the cosine alone (its atol / rtol recorded, not judged), fp16 by both
    tol = INT8 if dtype == "int8" else Tolerance(atol, rtol, MIN_COSINE[dtype])
    rows = compare(ref, got, tol)
    p = rep.parity
    p.mode, p.atol, p.rtol, p.input_shapes, p.outputs = "simulator", atol, rtol, dict(rep.input_shapes), rows
    p.status = "passed" if rows and all(o.passed for o in rows) else "failed"
    cosine = MIN_COSINE[dtype]
    rep.notes.append(N_(f"parity in rknn-toolkit2's x86 simulator ({dtype}), not on the NPU: the board's runtime "
                        f"runs the same model.rknn; passed = cosine >= {cosine}") if dtype == "int8" else
                     N_(f"parity in rknn-toolkit2's x86 simulator ({dtype}), not on the NPU: the board's runtime "
                        f"runs the same model.rknn; passed = cosine >= {cosine} and within atol {atol} / rtol {rtol}"))


def _copy_source(model: Path, dest: Path) -> None:
    """The source ONNX as one file (external data folded in), for the simulator on an x86 agent."""
    import onnx

    m = onnx.load(str(model), load_external_data=True)
    onnx.save(m, str(dest))


def _artifact(f: Path, kind: str) -> Artifact:
    return Artifact(f.name, kind, f.stat().st_size, sha256_file(f))


def _meta(rep: CompileReport, inputs: list[dict[str, Any]], model: Path, platform: str, version: str, dtype: str,
          built: dict[str, Any], crop: bool) -> dict[str, Any]:
    outs = [{"name": o.output, "shape": o.shape} for o in rep.parity.outputs]
    if not outs:
        import onnx

        outs = [{"name": o.name, "shape": []} for o in onnx.load(str(model), load_external_data=False).graph.output]
    return {"schema_version": 1, "backend": BACKEND, "platform": platform, "toolkit": "rknn-toolkit2",
            "toolkit_version": version, "dtype": dtype, "target_id": rep.target,
            "auto_hybrid": rep.toolchain.get("auto_hybrid"), "libraries": [RKNN_FILE],
            "source_onnx": SOURCE_FILE, "crop": crop, "inputs": inputs, "outputs": [o["name"] for o in outs],
            "output_specs": [{"name": o["name"], "shape": o["shape"], "dtype": "float32"} for o in outs],
            "rknn_bytes": built.get("bytes"), "rknn_sha256": sha256_file(Path(built["output"])),
            "parity": {"status": rep.parity.status, "mode": rep.parity.mode}}


def _board_id(target: str) -> str | None:
    from studio.package.boards import BOARD_IDS

    return target if target in BOARD_IDS else None
