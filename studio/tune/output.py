"""The end of a search: host latency side by side, the choice per part, the Pareto front, what stands in the way,
the recipe as commands, and the --out folder (the chosen variants as their `studio fix` would write them, the
target's compiled build, recipe.sh, optimize_report.json).
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path
from typing import Any

from studio.core.catalogue import N_
from studio.core.errors import InputError
from studio.tune.metrics import pareto
from studio.tune.recipe import RKNN_TARGETS, Recipe, compile_command, fix_command
from studio.tune.report import RECIPE_FILE, REPORT_FILE, Blocking, Candidate, PartResult, TuneReport

OUT_DIR = "optimized"


def resolve_out(o: Any) -> Path:
    """--out, or WORKSPACE/optimized/NAME-TARGET (./optimized/NAME-TARGET outside a workspace), never inside an
    export folder; an existing folder that is not an earlier result needs --force."""
    from studio.compile.outputs import default_out, export_folder_of

    model = Path(o.model)
    main = model / "model.onnx" if model.is_dir() else model
    if o.out is not None:
        out = Path(o.out).resolve()
    else:
        d = default_out(main if main.exists() else next(model.glob("*.onnx")), o.target)
        out = d.parent.parent / OUT_DIR / d.name
    folder = export_folder_of(out)
    if folder is not None:
        raise InputError(f"output folder {out} is inside the export folder {folder}", offending=str(out),
                         hint="write optimized variants outside export folders (a bundle of the export would carry "
                              "them): --out DIR elsewhere, or omit it for WORKSPACE/optimized/")
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / REPORT_FILE).is_file()
                                                 and not o.force)):
        raise InputError(f"output folder {out} exists and is not an earlier `studio optimize` result",
                         offending=str(out), hint="choose another --out, or pass --force to replace it")
    return out


def restore(hit: Path, out: Path, key: str) -> TuneReport:
    """A cached result copied to ``out`` (paths in its report moved there)."""
    from studio.core.atomic import atomic_path

    src = hit / "result"
    data = json.loads((src / REPORT_FILE).read_text(encoding="utf-8"))
    old = data.get("out", "")
    with atomic_path(out, is_dir=True) as tmp:
        shutil.copytree(src, tmp, dirs_exist_ok=True)
        for name in (REPORT_FILE, RECIPE_FILE):
            f = tmp / name
            if f.is_file() and old:
                f.write_text(f.read_text(encoding="utf-8").replace(old, str(out)), encoding="utf-8")
    from studio.core.atomic import write_text_atomic

    rep = TuneReport.load(out / REPORT_FILE)
    rep.cached = True
    short = key[:12]
    rep.notes.append(N_(f"cached result {short} (same model, samples, options and tool versions): nothing rebuilt"))
    write_text_atomic(out / REPORT_FILE, rep.to_json())  # the file says where it came from too
    return rep


# -- choosing -----------------------------------------------------------------------------------------------

def _objective(c: Candidate, objective: str) -> float | None:
    v = c.objective_value(objective)
    if v is None:
        return None
    return v if objective == "npu-coverage" else -v  # larger is better


def _acc(c: Candidate, budget: Any) -> float | None:
    v = c.accuracy_value(budget.metric)
    return None if v is None else (v if budget.op == ">=" else -v)


def rank_key(c: Candidate, objective: str, budget: Any, static_needed: bool) -> tuple[bool, float, float, float]:
    """Larger is better: keeping the inputs' dynamic sizes unless the target needs them fixed (a text part fixed at
    the samples' length takes no other: never traded for a smaller file), then the objective, then accuracy to 6
    places (a cosine's last digits are noise), then size."""
    ob = _objective(c, objective)
    acc = _acc(c, budget)
    keeps_dynamic = not c.recipe.get("static") or static_needed
    return (keeps_dynamic, ob if ob is not None else float("-inf"),
            round(acc, 6) if acc is not None else float("-inf"), -float(c.judged.get("size_bytes") or 0))


def choose(res: PartResult, o: Any) -> None:
    built = [c for c in res.candidates if c.status == "built" and c.accuracy is not None]
    pts = [(c.id, _objective(c, o.objective), _acc(c, o.budget)) for c in built]
    # accuracy to 6 places, as the choice reads it: a cosine's last digits are noise, not a trade-off
    front = pareto([(i, ob, round(a, 6)) for i, ob, a in pts if ob is not None and a is not None])
    for c in built:
        c.pareto = c.id in front
    ok = [c for c in built if c.meets_budget]

    def rank(c: Candidate) -> tuple[bool, float, float, float]:
        return rank_key(c, o.objective, o.budget, res.static_needed)

    if ok:
        best = max(ok, key=rank)
        res.met = True
    elif built:
        best = max(built, key=lambda c: (_acc(c, o.budget) or float("-inf"), rank(c)))
    else:
        best = None
    if best is not None:
        best.chosen = True
        res.chosen = best.id
    res.blocking = blocking(res, best, o)


def blocking(res: PartResult, best: Candidate | None, o: Any) -> list[Blocking]:
    """What stands in the way: the best's worst layers when it misses the budget, else every candidate's build
    blockers; host nodes of the chosen one when it does not run wholly on the device."""
    out: list[Blocking] = []
    if best is not None and not best.meets_budget:
        acc = best.accuracy_value(o.budget.metric)
        out.append(Blocking(None, "budget", f"best {o.budget.metric} {acc:.6g} misses {o.budget} "
                                            f"({best.label})", best.judged.get("accuracy", {}).get("by", "")))
        rows = best.judged.get("layer_errors") or next(
            (c.judged.get("layer_errors") for c in res.candidates if c.judged.get("layer_errors")), [])
        for r in rows[:10]:
            out.append(Blocking(r["node"], "per-layer error", f"{r.get('op_type', '')} 1 - cosine {r['error']:.3g}"
                                + (f" (it adds {r['added']:.3g})" if "added" in r else ""), r.get("by", "")))
    if best is None:
        for c in res.candidates:
            v = c.judged.get("verdict") or c.judged.get("static") or {}
            for b in (v.get("blockers") or [])[:3]:
                out.append(Blocking(b.get("node"), b.get("rule", ""), f"{c.id}: {b.get('message', '')}",
                                    v.get("by", "")))
            if not v.get("blockers") and c.judged.get("error"):
                out.append(Blocking(None, c.status, f"{c.id}: {c.judged['error'][:300]}", c.judged.get("tool", "")))
    elif best.judged.get("coverage") is not None and best.judged["coverage"] < 1.0:
        v = best.judged.get("verdict") or {}
        for h in (v.get("host_nodes") or [])[:10]:
            out.append(Blocking(h["node"], "host-placement", h.get("reason", "")[:200], v.get("by", "")))
    return out


# -- latency ------------------------------------------------------------------------------------------------

def latency(parts: dict[str, Any], o: Any, evaluator: Any, calibration: Path, job: Any) -> None:
    """Host latency of the FP32 original and every budget-meeting candidate, interleaved in one run per part."""
    import onnxruntime as ort

    from studio.optimize.calibration import calibration_feeds
    from studio.tune.evaluate_api import EvalRequest, Evaluation
    from studio.tune.latency import chained, measure, ort_runner

    for _name, (p, _info, res) in parts.items():
        chosen = [c for c in res.candidates if c.meets_budget or c.chosen]
        if not chosen:
            continue
        feed = calibration_feeds(calibration, p.path, processor_dir=p.processor_dir).feeds[0]
        runners = {"reference": ort_runner(p.path)}
        labels = {}
        for c in chosen:
            files = c.judged.get("files") or {}
            device, host = files.get("device"), files.get("host")
            try:
                import onnx

                dev_in = [i.name for i in onnx.load(device, load_external_data=False).graph.input]
                ev = Evaluation(tool=c.judged.get("tool", ""), artifact=files.get("artifact", ""))
                run = evaluator.host_runner(ev, EvalRequest(Path(device), o.target, [], Path(device).parent))
            except Exception:  # no runtime of the target here for it: ORT stands in, and says so
                run = None
            if run is None:
                runners[c.id] = ort_runner(device, host)
                labels[c.id] = f"onnxruntime {ort.__version__} CPU on this host (the device graph; the target's " \
                               "device is not here)"
            else:
                runners[c.id] = chained(host, run, dev_in)
                labels[c.id] = f"{c.judged.get('tool', '')} on this host" + (" (+ its host graph in ONNX Runtime)"
                                                                              if host else "")
        job.set_status(f"[{res.part}] host latency, {len(runners)} variants side by side")
        times = measure(runners, feed, runs=o.latency_runs, job=job)
        res.reference_latency_ms = times.get("reference")
        res.reference_latency_by = f"onnxruntime {ort.__version__} CPU, the FP32 original"
        for c in chosen:
            c.latency_ms, c.latency_by = times.get(c.id), labels[c.id]
            if c.latency_ms and res.reference_latency_ms:
                c.latency_ratio = round(c.latency_ms / res.reference_latency_ms, 3)


def finish(rep: TuneReport, parts: dict[str, Any], o: Any, evaluator: Any, calibration: Path, job: Any) -> None:
    """Choose per part (latency first when it is the objective), then the report's status."""
    for _n, (_p, _info, res) in parts.items():
        for c in res.candidates:
            c.meets_budget = c.status == "built" and o.budget.met(c.accuracy_value(o.budget.metric))
        if o.objective != "host-latency":
            choose(res, o)
    latency(parts, o, evaluator, calibration, job)
    for _n, (_p, _info, res) in parts.items():
        if o.objective == "host-latency":
            choose(res, o)
        ch = res.chosen_candidate()
        if ch is not None and ch.recipe.get("static"):
            dims = ", ".join(f"{k}={v}" for k, v in ch.recipe["static"].items())
            res.warnings.append(N_(f"the chosen variant takes only these input sizes (the samples'): {dims}")
                                if res.static_needed else
                                N_(f"the chosen variant takes only these input sizes (the samples'): {dims}; no "
                                   "dynamic variant met the budget"))
        if ch is not None and ch.judged.get("files", {}).get("host"):
            target = o.target
            res.warnings.append(N_("the chosen variant has a host graph (model.host.onnx: the input preparation the "
                                   f"{target} profile places on the host) that runs before it on the host"))
        if ch is not None and (ch.judged.get("coverage") or 0) < 1.0 and o.target in RKNN_TARGETS:
            count = len((ch.judged.get("verdict") or {}).get("host_nodes") or [])
            res.warnings.append(N_(f"the chosen variant leaves {count} node(s) on the host CPU (see blocking)"))
    if o.objective == "host-latency" and o.target in RKNN_TARGETS:
        target = o.target
        rep.warnings.append(N_(f"objective host-latency on {target}: its NPU is not here, so each candidate's device "
                               "graph was timed in ONNX Runtime on this host, a proxy for the board's latency"))
    rep.status = "met" if rep.parts and all(p.met for p in rep.parts) else "not-met"


# -- writing --------------------------------------------------------------------------------------------------

def _copy_variant(c: Candidate, dest: Path, keep_calibration: bool) -> dict[str, str]:
    files = c.judged.get("files") or {}
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(files["device"], dest / "model.onnx")
    out = {"model": "model.onnx"}
    if files.get("host"):
        shutil.copy2(files["host"], dest / "model.host.onnx")
        out["host"] = "model.host.onnx"
    if keep_calibration and files.get("calibration"):
        shutil.copytree(files["calibration"], dest / "model.calibration")
        out["calibration"] = "model.calibration"
    return out


def write(rep: TuneReport, parts: dict[str, Any], out: Path, o: Any, calibration: Path, job: Any) -> None:
    """The chosen variants, recipe.sh and the report, written whole; then each compiled build (compile_model)."""
    from studio.core.atomic import atomic_path

    job.set_status(f"writing {out}")
    with atomic_path(out, is_dir=True) as tmp:
        cal_ref = calibration
        if o.calibration is None:  # the synthetic samples travel with the result so the recipe replays
            shutil.copytree(calibration, tmp / "calibration-samples")
            cal_ref = out / "calibration-samples"
            rep.calibration = str(cal_ref)
        for name, (p, _info, res) in parts.items():
            c = res.chosen_candidate()
            if c is None:
                continue
            r = Recipe.from_dict(c.recipe)
            needs_cal = r.precision == "int8-static" or r.build == "int8"
            rel = _copy_variant(c, tmp / name, needs_cal)
            model = out / name / "model.onnx"
            res.commands = fix_command(r, p.path, model, o.target, cal_ref if needs_cal else None)
            if not res.commands:  # nothing to change: the source itself, with its external data under its own name
                data = p.path.parent / f"{p.path.name}.data"
                shutil.copy2(p.path, tmp / name / "model.onnx")
                res.commands = [f"cp {shlex.quote(str(p.path))} {shlex.quote(str(model))}"]
                if data.is_file():
                    shutil.copy2(data, tmp / name / data.name)
                    rel["data"] = data.name
                    res.commands.append(f"cp {shlex.quote(str(data))} {shlex.quote(str(out / name))}/")
            res.files = {k: str(out / name / v) for k, v in rel.items()}
            res.commands += compile_command(r, model, out / name / _compiled_leaf(o.target), o.target)
        (tmp / RECIPE_FILE).write_text("#!/bin/sh\n# studio optimize: the chosen variant of each part, by hand\n"
                                       "set -e\n" + "\n".join(rep.commands()) + "\n", encoding="utf-8")
        (tmp / REPORT_FILE).write_text(rep.to_json(), encoding="utf-8")
    for name, (_p, _info, res) in parts.items():
        c = res.chosen_candidate()
        if c is not None:
            _compile(c, res, out / name, o, job)
    from studio.core.atomic import write_text_atomic

    write_text_atomic(out / REPORT_FILE, rep.to_json())


def _compiled_leaf(target: str) -> str:
    return f"{target}-rknn" if target in RKNN_TARGETS else "llvm" if target == "tvm-relax" else ""


def _compile(c: Candidate, res: PartResult, folder: Path, o: Any, job: Any) -> None:
    """The target's own build of the chosen variant into --out (rknn, TVM); a failure is a warning, not a loss."""
    from studio.compile.api import CompileOptions, compile_model
    from studio.core.errors import StudioError

    if o.target not in RKNN_TARGETS and o.target != "tvm-relax":
        return
    r = Recipe.from_dict(c.recipe)
    model = folder / "model.onnx"
    leaf = folder / _compiled_leaf(o.target)
    opts = CompileOptions(model=model, out=leaf, force=True, latency_runs=0)
    if o.target in RKNN_TARGETS:
        opts.backend, opts.target = "rknn", o.target
        if r.build == "int8":
            opts.quantize, opts.calibration, opts.auto_hybrid = "int8", folder / "model.calibration", r.auto_hybrid
    else:
        opts.target = "llvm"
    job.set_status(f"[{res.part}] compiling the chosen variant: {' '.join(compile_command(r, model, leaf, o.target))}")
    try:
        crep = compile_model(opts)
    except StudioError as exc:
        reason = exc.message
        res.warnings.append(N_(f"the compile step of the recipe failed: {reason}"))
        return
    if crep.ok:
        res.files["compiled"] = str(leaf)
    else:
        d = crep.diagnosis
        reason = d.message if d else crep.status
        res.warnings.append(N_(f"the compile step of the recipe failed: {reason}"))
