"""One candidate, judged: the recipe applied, the static verdict first (a candidate the profile already fails is
not built), then the target's own tool on every calibration sample, and the figures against the FP32 original.

``judge(task)`` runs in a worker process of the search's pool (plain data in, plain data out) at low priority,
in its own process group, so a cancel can stop it and the toolkit processes it started.
"""

from __future__ import annotations

import hashlib
import os
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


@dataclass
class Task:
    id: str
    part: str
    source: str  # the part's ONNX file
    processor_dir: str  # where its tokenizer / processor files are
    target: str
    recipe: dict[str, Any]
    calibration: str  # the folder of raw samples
    reference: str  # folder of NNNN.npz: the FP32 original's outputs (o0, o1, ...) on each sample
    work: str  # this candidate's scratch folder
    profile_dirs: list[str] | None = None
    layer_errors: bool = False  # per-layer error against the fp32 structure (grows a block list)


@dataclass
class Judged:
    id: str
    part: str
    status: str = "error"  # pruned | built | failed | crashed | error
    steps: list[str] = field(default_factory=list)
    static: dict[str, Any] | None = None  # ModelVerdict of the target's profile
    verdict: dict[str, Any] | None = None  # ModelVerdict of the tool
    tool: str = ""
    runs_on: str = ""
    coverage: float | None = None
    host_flops_share: float | None = None
    accuracy: dict[str, Any] | None = None
    size_bytes: int = 0
    size_by: str = ""
    host_bytes: int = 0
    files: dict[str, str] = field(default_factory=dict)  # device, host, calibration, artifact
    sha256: str = ""  # of the device graph file
    layer_errors: list[dict[str, Any]] = field(default_factory=list)
    kept_float: list[str] = field(default_factory=list)
    error: str = ""
    crash: str = ""
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


def worker_init() -> None:
    """Pool worker start-up: its own process group (a cancel kills it with the tools it started), low priority
    (the GUI and the user's other work keep their share of the two cores), killed when its parent dies."""
    try:
        os.setpgrp()
    except OSError:
        pass
    try:
        os.nice(10)
    except OSError:
        pass
    try:  # Linux: die with the process that started us (a killed studio leaves no worker behind its back)
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _load_npz_dir(folder: Path) -> list[dict[str, np.ndarray]]:
    out = []
    for f in sorted(folder.glob("*.npz")):
        with np.load(f) as z:
            out.append({k: z[k] for k in z.files})
    return out


def reference_outputs(folder: Path) -> list[list[np.ndarray]]:
    return [[d[f"o{i}"] for i in range(len(d))] for d in _load_npz_dir(folder)]


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def judge(task: Task) -> Judged:
    """Apply, prune, evaluate, measure (see the module docstring); never raises."""
    t0 = time.perf_counter()
    out = Judged(task.id, task.part)
    try:
        _judge(task, out)
    except Exception as exc:  # a candidate that breaks is a result, not the search's end
        from studio.core.errors import StudioError

        out.status = "error"
        out.error = exc.message if isinstance(exc, StudioError) else f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, StudioError):
            out.notes.append("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-4:])[:1200])
    out.seconds = round(time.perf_counter() - t0, 3)
    return out


def _judge(task: Task, out: Judged) -> None:
    import onnx

    from studio.inspect.api import inspect_model
    from studio.inspect.model_verdict import FAILS
    from studio.optimize.api import _load_full
    from studio.optimize.calibration import save_feeds
    from studio.optimize.pipeline import device_feeds, transform
    from studio.tune.recipe import Recipe

    recipe = Recipe.from_dict(task.recipe)
    work = Path(task.work)
    work.mkdir(parents=True, exist_ok=True)
    dirs = [Path(d) for d in task.profile_dirs] if task.profile_dirs else None
    source = _load_full(Path(task.source))
    steps = recipe.fix_steps(task.target, Path(task.calibration), dirs)
    t = transform(source, steps, processor_dir=Path(task.processor_dir))
    out.steps = t.steps
    device = work / "model.onnx"
    onnx.save_model(t.model, str(device))
    out.files["device"], out.sha256 = str(device), _sha(device)
    if t.host is not None:
        host = work / "model.host.onnx"
        onnx.save_model(t.host, str(host))
        out.files["host"], out.host_bytes = str(host), host.stat().st_size
    feeds = device_feeds(t)
    cal = work / "model.calibration"
    save_feeds(feeds, cal)
    out.files["calibration"] = str(cal)
    report = inspect_model(device, [task.target], profile_dirs=dirs)
    static = getattr(report.targets.get(task.target), "model", None)
    out.static = static.to_dict() if static is not None else None
    if static is not None and static.verdict == FAILS:
        out.status = "pruned"
        b = static.blockers[0] if static.blockers else None
        out.error = f"the {task.target} profile says it does not build" + (
            f": {b.node} ({b.op_type}), {b.rule}" if b and b.node else f": {b.rule}" if b else "")
        return
    _evaluate(task, recipe, device, cal, out)
    if task.layer_errors and out.status == "built" and recipe.precision != "fp32":
        _ort_layer_errors(task, recipe, t.model, source, feeds, out)


def _evaluate(task: Task, recipe: Any, device: Path, cal: Path, out: Judged) -> None:
    from studio.inspect.api import load_structure
    from studio.inspect.model_verdict import CRASHED, FAILS, Blocker, ModelVerdict
    from studio.tune.evaluate_api import EvalRequest, get_evaluator
    from studio.tune.metrics import accuracy, coverage
    from studio.verify.model_level import verified_verdict

    ev_obj = get_evaluator(task.target)
    req = EvalRequest(model=device, target=task.target, samples=sorted(cal.glob("*.npz")), work=Path(task.work),
                      build=recipe.build, calibration=cal, auto_hybrid=recipe.auto_hybrid,
                      analyse=recipe.build == "int8")
    ev = ev_obj.evaluate(req)
    out.tool, out.runs_on, out.notes = ev.tool, ev.runs_on, out.notes + ev.notes
    out.kept_float, out.crash = ev.kept_float, ev.crash
    if ev.result is not None:
        try:
            lm = load_structure(device)
        except Exception:  # pricing a fallback is a bonus
            lm = None
        mv = verified_verdict(ev.result, lm)
    elif ev.crash:
        mv = ModelVerdict(task.target, CRASHED, "verified", ev.tool, crash=ev.crash)
    else:
        mv = ModelVerdict(task.target, FAILS, "verified", ev.tool, blockers=[Blocker(None, None, "tool-error",
                                                                                     ev.error[:600])])
    out.verdict = mv.to_dict()
    out.coverage = coverage(mv, ev.result)
    out.host_flops_share = mv.cost.host_flops_share if mv.cost is not None else (0.0 if mv.verdict == "runs" else None)
    if ev.artifact:
        out.files["artifact"] = ev.artifact
    out.size_bytes = (ev.artifact_bytes or device.stat().st_size) + out.host_bytes
    what = "the ONNX file" if not ev.artifact else (f"the {Path(ev.artifact).suffix} file" if Path(ev.artifact).suffix
                                                    else "the compiled folder's files")
    out.size_by = f"{what} {ev.tool} loads" + (" + the host graph" if out.host_bytes else "")
    if ev.layer_rows:
        out.layer_errors = _rknn_rows(ev.layer_rows, device, ev.tool)
    if mv.verdict == CRASHED:
        out.status, out.error = "crashed", ev.crash[-600:]
        return
    if mv.builds is not True or ev.error or not ev.outputs:
        out.status = "failed"
        out.error = ev.error or (mv.summary() if mv.builds is not True else "the tool returned no outputs")
        return
    acc = accuracy(reference_outputs(Path(task.reference)), ev.outputs)
    out.status = "built"
    if acc is None:
        out.error = "the outputs' shapes differ from the original's"
        return
    out.accuracy = {**asdict(acc), "by": f"{ev.runs_on} vs the FP32 original in ONNX Runtime"}


def _rknn_rows(rows: list[dict[str, Any]], device: Path, tool: str, top: int = 12) -> list[dict[str, Any]]:
    """accuracy_analysis rows -> the ONNX nodes with the worst own error (1 - single cosine)."""
    import onnx

    from studio.inspect.layer_errors import match

    graph = onnx.load(str(device), load_external_data=False).graph
    owner: dict[str, str] = {}
    op: dict[str, str] = {}
    for n in graph.node:
        for o in n.output:
            owner.setdefault(o, n.name)
        owner.setdefault(n.name, n.name)
        op[n.name] = n.op_type
    worst: dict[str, float] = {}
    for r in rows:
        node = match(str(r.get("tensor", "")), owner)
        cos = r.get("single_cos")
        if node is None or not isinstance(cos, int | float):
            continue
        worst[node] = max(worst.get(node, 0.0), 1.0 - float(cos))
    ranked = sorted(worst.items(), key=lambda kv: -kv[1])[:top]
    return [{"node": n, "op_type": op.get(n, ""), "error": round(e, 6),
             "by": f"{tool} accuracy_analysis (1 - the layer's own cosine, x86 simulator)"} for n, e in ranked]


def _ort_layer_errors(task: Task, recipe: Any, model: Any, source: Any, feeds: list[dict[str, Any]], out: Judged,
                      top: int = 12) -> None:
    """Per-layer error of the reduced-precision graph against the same structure at fp32 (ONNX Runtime)."""
    from dataclasses import replace

    from studio.optimize.pipeline import transform
    from studio.optimize.quantize import INT8_OPS, layer_errors

    fp32 = replace(recipe, precision="fp32", keep_fp32=())
    ref = transform(source, fp32.fix_steps(task.target, None, None), processor_dir=Path(task.processor_dir)).model
    rows = layer_errors(ref, model, feeds)
    if recipe.precision in ("int8-static", "int8"):
        rows = [r for r in rows if r.op_type in INT8_OPS]
    import onnxruntime as ort

    by = f"onnxruntime {ort.__version__} (each node's output vs the fp32 graph's, 1 - cosine)"
    out.layer_errors = [{"node": r.node, "op_type": r.op_type, "error": round(r.error, 6), "added": round(r.added, 6),
                         "by": by} for r in rows[:top]]
