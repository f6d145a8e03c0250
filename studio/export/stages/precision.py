"""Stage "precision" (``--precision`` / ``--kv-cache-dtype``): each exported part converted after the FP32 parity
passed, judged on its own figures, and kept FP32 when it misses the tolerance.

Each part is fed what the FP32 chain feeds it on every validation case; its converted graph's outputs are compared
with the FP32 part's (the pass figure: max abs and cosine) and with the HF PyTorch module's (for the record), then
the whole chain as converted is compared with HF. A part that misses gets its FP32 file back and the report says
which figure failed and the fallback taken. Runs in the temp folder: nothing is at the output path until "write".
"""

from __future__ import annotations

import os
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.parity import TOLERANCES
from studio.export.precision import Figures, PartPrecision, figures, resolve
from studio.export.stages.check import ParityRuns
from studio.export.stages.inputs import ExampleInputs
from studio.export.stages.run import ExportRun, to_torch

ORT_NP = {"tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(int64)": np.int64,
          "tensor(int32)": np.int32, "tensor(bool)": np.bool_, "tensor(double)": np.float64}


def wanted(run: ExportRun) -> bool:
    """Whether this export converts anything (the pipeline runs the stage only then)."""
    return bool(run.options.precision) or (run.options.kv_cache_dtype or "float32") != "float32"


def targets(run: ExportRun) -> list[tuple[str, str, Path, bool]]:
    """(name, modality, path in tmp, standalone) of the parts, the monolithic model last."""
    out = [(n, str(i["modality"]), Path(i["path"]), bool(i.get("standalone"))) for n, i in run.report.parts.items()]
    mods = sorted({s.modality for s in run.specs})
    model_mod = "model" if out or len(mods) != 1 else mods[0]
    return [*out, ("model", model_mod, run.model_path, True)]


def apply_precision(run: ExportRun, model: Any, ex: ExampleInputs, runs: ParityRuns) -> None:
    """Convert, judge and (on a miss) fall back, per target; fills ``report.precision``."""
    from studio.export.validate import ort_session

    options, report, job = run.options, run.report, run.job
    tg = targets(run)
    plan = resolve(dict(options.precision or {}), [(n, m) for n, m, _, _ in tg])
    kv = options.kv_cache_dtype or "float32"
    if kv != "float32":
        plan.setdefault("model", "fp32")
    fp32_dir = run.tmp / "fp32"
    fp32_dir.mkdir(exist_ok=True)
    sessions = {n: ort_session(p) for n, _, p, _ in tg}
    chain = [(n, p) for n, _, p, alone in tg if not alone]
    envs = [_chain_env(sessions, [n for n, _ in chain], feeds) for feeds in runs.case_feeds]
    modules = _torch_parts(run, model)
    results: dict[str, PartPrecision] = {}
    for name, _mod, path, _alone in tg:
        if name not in plan:
            continue
        prec = plan[name]
        shutil.copy2(path, fp32_dir / path.name)
        feeds = [{i.name: env[i.name] for i in sessions[name].get_inputs()} for env in envs]
        fp32_out = [_run(sessions[name], f) for f in feeds]
        hf_out = runs.references if name == "model" else [_torch_run(modules[name], f) for f in feeds] \
            if name in modules else None
        attempts = [(prec, kv if name == "model" else None)]
        if name == "model" and kv != "float32" and prec != "fp32":
            attempts.append(("fp32", kv))  # the cache in FP16 even when the FP16 compute misses
        res = None
        for a_prec, a_kv in attempts:
            res = _attempt(run, name, path, a_prec, a_kv, feeds, fp32_out, hf_out, envs)
            if res.passed:
                break
            job.log(f"precision [{name}]: {a_prec}{' + kv ' + a_kv if a_kv else ''} missed: {res.fallback}")
        assert res is not None
        if not res.passed:
            res.applied, res.kv_cache_dtype = "fp32", ("float32" if name == "model" and kv != "float32" else None)
            report.warnings.append(f"precision: part '{name}' kept in FP32 ({prec} requested): {res.fallback}")
        elif res.applied != prec:
            report.warnings.append(f"precision: part '{name}' is FP32 compute with an FP16 KV cache ({prec} "
                                   f"missed: {res.fallback})")
        res.requested = prec
        results[name] = res
        job.log(f"precision [{name}]: {res.applied} ({res.method}) vs FP32 part max abs {res.vs_fp32.max_abs:.3g} "
                f"cosine {res.vs_fp32.cosine:.6f}; vs HF max abs {res.vs_hf.max_abs:.3g}"
                + (f"; fallback: {res.fallback}" if not res.passed else ""))
        sessions[name] = ort_session(path)  # the file as kept, for the chain figure
        if name in report.parts:
            report.parts[name]["precision"] = res.applied
    chain_fig = None
    if chain and any(n in results for n, _ in chain):
        chain_fig = _chain_vs_hf(sessions, [n for n, _ in chain], runs)
    report.precision = {"parts": {n: asdict(r) for n, r in results.items()},
                        "chain_vs_hf": asdict(chain_fig) if chain_fig else None,
                        "kv_cache_dtype": cache_dtype_of(run.model_path, run)}
    shutil.rmtree(fp32_dir, ignore_errors=True)


def _attempt(run: ExportRun, name: str, path: Path, prec: str, kv: str | None, feeds: list[dict[str, Any]],
             fp32_out: list[dict[str, np.ndarray]], hf_out: list[dict[str, np.ndarray]] | None,
             envs: list[dict[str, np.ndarray]]) -> PartPrecision:
    """One conversion of one part, written over ``path`` only when its figures pass."""
    import onnx

    from studio.export.validate import ort_session

    options = run.options
    tol = TOLERANCES.get(prec if prec != "fp32" else "fp16", TOLERANCES["fp16"])  # bounds vs the FP32 part
    atol, min_cos = tol.atol, tol.min_cosine if tol.min_cosine is not None else 0.0
    atol = options.precision_atol if options.precision_atol is not None else atol
    min_cos = options.precision_min_cosine if options.precision_min_cosine is not None else min_cos
    res = PartPrecision(part=name, requested=prec, applied=prec, atol=atol, min_cosine=min_cos,
                        size_bytes_fp32=path.stat().st_size, kv_cache_dtype=kv)
    fp32_model = onnx.load(str(path))
    try:
        converted, res.method = _convert(run, name, fp32_model, prec, feeds, envs)
        if kv == "float16":
            from studio.generate.config import layout_from_config

            layout = layout_from_config(run.config)
            converted, n = _kv(converted, layout.past_names(), layout.present_names())
            res.method += f"; KV cache FP16 at the graph I/O ({n} tensors, Cast to the compute type inside)"
        cand = run.tmp / "precision" / path.name
        cand.parent.mkdir(exist_ok=True)
        onnx.save(converted, str(cand))
        sess = ort_session(cand)
        got = [_run(sess, f) for f in feeds]
    except Exception as exc:  # noqa: BLE001 - a conversion that breaks is a fallback with its reason
        res.passed, res.fallback = False, f"fp32: the {prec} conversion failed: {type(exc).__name__}: {str(exc)[:300]}"
        res.size_bytes = res.size_bytes_fp32
        return res
    res.vs_fp32 = figures([(r[k], g[k]) for r, g in zip(fp32_out, got, strict=True) for k in r if k in g
                           and np.issubdtype(r[k].dtype, np.floating)])
    if hf_out is not None:
        res.vs_hf = figures([(h[k], g[k]) for h, g in zip(hf_out, got, strict=True) for k in h if k in g
                             and np.issubdtype(np.asarray(h[k]).dtype, np.floating)])
    res.size_bytes = cand.stat().st_size
    misses = []
    if res.vs_fp32.max_abs > atol:
        misses.append(f"max abs {res.vs_fp32.max_abs:.3g} > {atol:g}")
    if res.vs_fp32.cosine < min_cos:
        misses.append(f"cosine {res.vs_fp32.cosine:.6f} < {min_cos:g}")
    if misses:
        res.passed = False
        res.fallback = f"fp32: {' and '.join(misses)} vs the FP32 part on {res.vs_fp32.outputs} outputs"
        res.size_bytes = res.size_bytes_fp32
        return res
    os.replace(cand, path)
    return res


def _convert(run: ExportRun, name: str, model: Any, prec: str, feeds: list[dict[str, Any]],
             envs: list[dict[str, np.ndarray]]) -> tuple[Any, str]:
    from studio.export.precision import FP16_BLOCK, INT8_OPS, to_fp16, to_int8_static
    from studio.optimize.passes import to_int8_dynamic

    if prec == "fp32":
        return model, "fp32 compute"
    if prec == "fp16":
        return to_fp16(model), (f"fp16 weights and compute, fp32 I/O, kept fp32: {', '.join(FP16_BLOCK)}; "
                                   "constants beyond fp16 range clamped to +-1e4 (mask fill values)")
    if prec == "int8-dynamic":
        return to_int8_dynamic(model), "int8 dynamic (weights int8, activations quantized at run time)"
    calib, where = _calibration(run, name, model, feeds)
    return to_int8_static(model, calib), (f"int8 static QDQ ({', '.join(INT8_OPS)}, uint8 activations, int8 "
                                          f"per-channel weights), calibrated on {where}")


def _calibration(run: ExportRun, name: str, model: Any, feeds: list[dict[str, Any]]
                 ) -> tuple[list[dict[str, Any]], str]:
    """The part's calibration feeds: images through the model's processor (and the FP32 parts before it in
    the chain) when its inputs come from images; else the validation inputs."""
    from studio.export.precision import calibration_images
    from studio.export.validate import ort_session

    want = [i.name for i in model.graph.input]
    try:
        images, note = calibration_images(run.options.model_dir)
    except Exception as exc:  # noqa: BLE001 - no image processor: the validation inputs still calibrate
        run.job.log(f"precision [{name}]: no calibration images ({type(exc).__name__}); using the validation inputs")
        return feeds, f"the {len(feeds)} validation inputs (random; the folder has no usable image processor)"
    chain = [(n, Path(i["path"])) for n, i in run.report.parts.items() if not i.get("standalone")]
    out = []
    for img in images:
        env = dict(img)
        for _part, path in chain:
            if all(k in env for k in want):
                break
            sess = ort_session(run.tmp / "fp32" / path.name if (run.tmp / "fp32" / path.name).exists() else path)
            ins = [i.name for i in sess.get_inputs()]
            if not all(k in env for k in ins):
                break
            env.update(dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {k: env[k] for k in ins}),
                                strict=True)))
        if all(k in env for k in want):
            out.append({k: np.asarray(env[k]) for k in want})
    if not out:
        return feeds, f"the {len(feeds)} validation inputs (random; the part's inputs do not come from images)"
    return out, note


def _kv(model: Any, past: list[str], present: list[str]) -> tuple[Any, int]:
    from studio.export.precision import cache_io_fp16

    return cache_io_fp16(model, past, present)


def _run(sess: Any, feeds: dict[str, Any]) -> dict[str, np.ndarray]:
    cast = {i.name: np.asarray(feeds[i.name]).astype(ORT_NP.get(i.type, np.float32)) for i in sess.get_inputs()}
    names = [o.name for o in sess.get_outputs()]
    return {n: np.asarray(v).astype(np.float32) if np.issubdtype(np.asarray(v).dtype, np.floating) else v
            for n, v in zip(names, sess.run(None, cast), strict=True)}


def _chain_env(sessions: dict[str, Any], chain: list[str], feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    env = dict(feeds)
    for name in chain:
        env.update(_run(sessions[name], env))
    return env


def _chain_vs_hf(sessions: dict[str, Any], chain: list[str], runs: ParityRuns) -> Figures:
    """The chain as converted vs HF PyTorch on every case (the final outputs the references hold)."""
    pairs = []
    for feeds, ref in zip(runs.case_feeds, runs.references, strict=True):
        env = _chain_env(sessions, chain, feeds)
        pairs += [(ref[k], env[k]) for k in ref if k in env and k not in feeds]
    return figures(pairs)


def _torch_parts(run: ExportRun, model: Any) -> dict[str, Any]:
    """The PyTorch module of each part (its HF reference), by part name."""
    if not run.report.parts:
        return {}
    from studio.export.exporters import NamedWrapper
    from studio.export.split import plan_parts

    parts = plan_parts(run.recipe.split, model, run.specs, run.recipe.model_type)
    return {p.name: NamedWrapper(p.module, p.inputs, p.outputs).eval() for p in parts}


def _torch_run(wrapper: Any, feeds: dict[str, Any]) -> dict[str, np.ndarray]:
    import torch

    with torch.no_grad():
        out = wrapper(*[to_torch(np.asarray(feeds[n])) for n in wrapper.input_names])
    out = out if isinstance(out, (tuple, list)) else (out,)
    return {n: t.detach().float().numpy() for n, t in zip(wrapper.output_names, out, strict=True)}


def cache_dtype_of(model_path: Path, run: ExportRun | None = None) -> str | None:
    """The element type of the graph's first past input ("float16" / "float32"), None without a cache."""
    import onnx

    m = onnx.load(str(model_path), load_external_data=False)
    for vi in m.graph.input:
        if vi.name.startswith("past_key_values."):
            return "float16" if vi.type.tensor_type.elem_type == onnx.TensorProto.FLOAT16 else "float32"
    return None
