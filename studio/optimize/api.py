"""`fix_model`: static dims, simplification and FP16 / INT8 per modality part, each with a parity report
against the original (ONNX Runtime, random inputs) and the before/after inspection difference per target.

    rep = fix_model("model.onnx", "out/model.onnx", static={"batch": 1, "sequence": 64}, simplify=True,
                    int8=["vision"], fp16=["text"], targets=["rk3588", "qnn-htp"])
    rep.files[0].parity.passed, rep.files[0].diff.targets["qnn-htp"].before / .after

Parts of a split export are the siblings ``<stem>.<part>.onnx`` of the model file (the exporter's layout).
Outputs are written atomically; nothing is written when a fix fails.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from studio.core.catalogue import N_
from studio.core.errors import InputError, ModelError
from studio.core.jobs import JobState
from studio.core.parity import REWRITE, TOLERANCES, ParityReport
from studio.core.reports import Report

SCHEMA_VERSION = 1
EXTERNAL_THRESHOLD = 1_800_000_000  # protobuf's 2 GB limit: larger models keep external weights


@dataclass
class TargetDiff:
    before: str
    after: str
    counts_before: dict[str, int] = field(default_factory=dict)
    counts_after: dict[str, int] = field(default_factory=dict)
    resolved: list[str] = field(default_factory=list)  # finding messages gone after the fix
    introduced: list[str] = field(default_factory=list)


@dataclass
class AnalysisDiff:
    targets: dict[str, TargetDiff] = field(default_factory=dict)
    dynamic_before: list[str] = field(default_factory=list)  # origin ids
    dynamic_after: list[str] = field(default_factory=list)
    nodes_before: int = 0
    nodes_after: int = 0
    initializer_bytes_before: int = 0
    initializer_bytes_after: int = 0


@dataclass
class FixParity(ParityReport):
    """Parity of a fixed file against the original (``studio.core.parity``), named as fix reports name it."""

    original: str = ""
    fixed: str = ""
    precision: str = "fp32"  # "fp32" (judged as a rewrite) | "fp16" | "int8" | "int8-static"
    dims: dict[str, int] = field(default_factory=dict)  # the symbolic dims the random feeds were given
    dims_source: str = ""  # where those sizes came from (--static, the processor files, parity's defaults)


def check_parity(original: Path | str | Any, fixed: Path | str | Any, precision: str = "fp32", *,
                 dims: dict[str, int] | None = None, cases: int = 2, seed: int = 0, host: Any = None,
                 candidate: Any = None, given: dict[str, Any] | None = None,
                 one_at_a_time: bool = False) -> FixParity:
    """``fixed`` against ``original`` (paths or ModelProtos) on seeded random inputs; ``host`` (a ModelProto): the
    host graph of a host split, run first on the original's inputs, its outputs fed to ``fixed``; ``candidate``:
    a runner already made for ``fixed`` (a custom-op runtime registered). fp32 is judged as a rewrite
    (``REWRITE``), other precisions by ``TOLERANCES``. ``one_at_a_time``: the original runs on every case and is
    closed before ``fixed`` is loaded (a model too large for both sessions at once; the inputs are the
    original's, which a precision change keeps)."""
    from studio.core.errors import ValidationError
    from studio.core.parity import recorded_reference, run_parity
    from studio.core.runner import ChainedRunner, OnnxRuntimeRunner

    tol = REWRITE if precision == "fp32" else TOLERANCES[precision]
    rep = FixParity(atol=tol.atol, rtol=tol.rtol, min_cosine=tol.min_cosine, original=_label(original),
                    fixed=_label(fixed), precision=precision)
    if one_at_a_time and host is None and candidate is None:
        ref, feeds = recorded_reference(OnnxRuntimeRunner(original, error=ValidationError), cases=cases, seed=seed,
                                        dims=dims, given=given)
        with OnnxRuntimeRunner(fixed, error=ValidationError) as new:
            rep.cases = run_parity(ref, new, tolerance=tol, feeds=feeds).cases
        return rep
    with OnnxRuntimeRunner(original, error=ValidationError) as ref:
        new = candidate or OnnxRuntimeRunner(fixed, error=ValidationError)
        if host is None:
            with new:
                rep.cases = run_parity(ref, new, tolerance=tol, cases=cases, seed=seed, dims=dims,
                                       inputs_from=None if candidate is None else ref,
                                       cast_for_reference=candidate is None, strict=candidate is not None,
                                       given=given).cases
        else:
            with ChainedRunner(OnnxRuntimeRunner(host, error=ValidationError), new) as chain:
                rep.cases = run_parity(ref, chain, tolerance=tol, cases=cases, seed=seed, dims=dims,
                                       inputs_from=ref, given=given).cases
    return rep


def _label(model: Any) -> str:
    return str(model) if isinstance(model, (str, Path)) else "(in memory)"


@dataclass
class FixedFile:
    part: str  # "model" or a part name
    source: str
    output: str
    steps: list[str] = field(default_factory=list)
    precision: str = "fp32"
    parity: FixParity | None = None
    diff: AnalysisDiff | None = None
    host: str | None = None  # the host graph of a host split (run before this file)
    calibration: str | None = None  # the calibration samples as this file's inputs (.npz per sample)


@dataclass
class FixReport(Report):
    schema_version: int = SCHEMA_VERSION
    model: str = ""
    output: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    files: list[FixedFile] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(f.parity is None or f.parity.passed for f in self.files)


def find_parts(model: Path) -> dict[str, Path]:
    """Parts of a split export: ``<stem>.<part>.onnx`` beside ``<stem>.onnx``."""
    out = {}
    for p in sorted(model.parent.glob(f"{model.stem}.*.onnx")):
        part = p.name[len(model.stem) + 1: -len(".onnx")]
        if part and "." not in part:
            out[part] = p
    return out


def parse_static(text: str | None) -> dict[str, int]:
    """``"batch=1,sequence=64"`` -> {"batch": 1, "sequence": 64}."""
    out: dict[str, int] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        k, sep, v = item.partition("=")
        try:
            out[k.strip()] = int(v)
        except ValueError:
            raise InputError(f"bad --static item '{item}'", offending=item,
                             hint="use --static batch=1,sequence=64 (symbol or INPUT:AXIS = size)") from None
        if not sep or not k.strip():
            raise InputError(f"bad --static item '{item}'", offending=item, hint="use --static batch=1,sequence=64")
    return out


def check_out_path(model: Path, out: Path, word: str) -> None:
    """``out`` must be a new .onnx file: the original stays the parity reference (``word``: fixed, fused)."""
    if out.resolve() == model.resolve():
        raise InputError("--out must differ from the model (the original is the parity reference)",
                         offending=str(out), hint=f"write to a new file, e.g. model.{word}.onnx")
    if out.suffix != ".onnx":
        raise InputError("--out must be an .onnx file path", offending=str(out), hint=f"e.g. --out {word}/model.onnx")


def _load_full(path: Path) -> Any:
    import onnx

    from studio.inspect.model import read_model_proto

    read_model_proto(path)  # clear ModelError for bad files before loading weights
    from studio.core.external_data import check_model_files

    check_model_files(path)  # a missing or truncated data file: a ModelError naming it
    try:
        return onnx.load(str(path), load_external_data=True)
    except Exception as exc:
        raise ModelError(f"cannot load the model's weights: {str(exc)[:200]}", offending=str(path),
                         hint="keep the external data file next to the model") from None


def save_model_atomic(model: Any, out: Path, check: Any = None, *, write: Any = None) -> Any:
    """Write the model (and its external data when large) via a temp folder, run ``check(temp_path)`` (it may
    raise: then nothing is written), then rename into place. Returns what ``check`` returned. ``write(path)``:
    writes the graph and its ``.data`` itself (weights streamed from the source's files, studio.optimize.streamed)."""
    import onnx

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        target = tmp / out.name
        if write is not None:
            write(target)
        elif model.ByteSize() > EXTERNAL_THRESHOLD:
            onnx.save_model(model, str(target), save_as_external_data=True, all_tensors_to_one_file=True,
                            location=f"{out.name}.data", size_threshold=1024)
        else:
            onnx.save_model(model, str(target))
        result = check(target) if check is not None else None
        data, dest_data = tmp / f"{out.name}.data", out.parent / f"{out.name}.data"
        if data.exists():  # tensors of 1 KiB and more went to it (none at all in a model of small ones)
            os.replace(data, dest_data)
        else:
            dest_data.unlink(missing_ok=True)  # a replaced model's weights are never left beside a one-file model
        os.replace(target, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return result


def _parity_on(src: Path, tmp: Path, dst: Path, prec: str, static: dict[str, int] | None,
               cases: int, host: Any = None, one_at_a_time: bool = False) -> FixParity:
    """Parity on the temp file (a model ORT cannot load is never moved into place); with a host graph, the
    original against host graph -> device graph."""
    from studio.optimize.parity_dims import processor_dims

    derived = processor_dims(src)
    dims = {**derived.dims, **(static or {})}
    rep = check_parity(src, tmp, prec, dims=dims or None, cases=cases, host=host, given=derived.values or None,
                       one_at_a_time=one_at_a_time)
    rep.fixed = str(dst)
    rep.dims = dims
    sizes = ", ".join(f"{k}={v}" for k, v in (static or {}).items())
    given = N_(f"{sizes} from --static") if static else ""
    rep.dims_source = "; ".join(s for s in (given, derived.source) if s) or \
        N_("no --static and no processor files beside the model: parity's default size for every symbolic dim")
    return rep


# how many tensors a dynamic input reaches: a measurement a fix changes by adding or removing nodes (an FP16 Cast),
# not what the finding is; left out of its identity, so the same finding is not listed as resolved and new
_REACH = re.compile(r" \(reaches \d+ tensors\)$")


def analysis_diff(before: Any, after: Any) -> AnalysisDiff:
    def key(f: Any) -> str:
        return f"{f.rule}: {_REACH.sub('', f.message)}"

    d = AnalysisDiff(dynamic_before=[o.id for o in before.dynamic.origins],
                     dynamic_after=[o.id for o in after.dynamic.origins],
                     nodes_before=before.stats.nodes, nodes_after=after.stats.nodes,
                     initializer_bytes_before=before.stats.initializer_bytes,
                     initializer_bytes_after=after.stats.initializer_bytes)
    for tid, tb in before.targets.items():
        ta = after.targets.get(tid)
        if ta is None:
            continue
        fb = {key(f) for f in before.findings_for(tid)}
        fa = {key(f) for f in after.findings_for(tid)}
        d.targets[tid] = TargetDiff(before=tb.verdict, after=ta.verdict, counts_before=dict(tb.counts),
                                    counts_after=dict(ta.counts), resolved=sorted(fb - fa), introduced=sorted(fa - fb))
    return d


def fix_model(model: Path | str, out: Path | str, *, static: dict[str, int] | None = None, simplify: bool = False,
              fp16: bool | list[str] = False, int8: bool | list[str] = False,
              int8_static: bool | list[str] = False, calibration: Path | str | None = None,
              keep_fp32: list[str] | None = None, drop_nan_guards: bool = False, unfuse: bool = False,
              host_split: str | None = None, targets: list[str] | None = None,
              parity_cases: int = 2, profile_dirs: list[Path] | None = None,
              job: JobState | None = None) -> FixReport:
    """Apply the chosen fixes to ``model`` (and to the named parts of a split export) and write ``out``.

    ``fp16`` / ``int8`` / ``int8_static``: True = the model file itself; a list = those part names (siblings
    ``<stem>.<part>.onnx``), written as ``<out stem>.<part>.onnx``. Every written file gets a parity report
    and an inspection diff for ``targets`` (default: all). ``host_split`` (a target id) also writes the host
    graph ``<out stem>.host.onnx``; ``calibration`` (a folder of samples) also writes the samples as the output
    model's inputs in ``<out stem>.calibration/`` (what ``studio compile --calibration`` reads).
    """
    from studio.inspect.api import inspect_model
    from studio.optimize.pipeline import FixSteps, device_feeds, transform

    job = job or JobState(name="fix")
    model, out = Path(model), Path(out)
    check_out_path(model, out, "fixed")
    cal = Path(calibration) if calibration is not None else None
    if cal is not None:
        from studio.optimize.calibration import scan

        scan(cal)  # a missing or empty folder is named before any work
    parts = find_parts(model)
    wanted: dict[str, str] = {}  # part -> precision
    for flag, prec in ((fp16, "fp16"), (int8, "int8"), (int8_static, "int8-static")):
        if isinstance(flag, list):
            for p in flag:
                if p not in parts:
                    raise InputError(f"no part '{p}' beside {model.name}", offending=p,
                                     hint=f"parts found: {', '.join(parts) or 'none'} ({model.stem}.<part>.onnx)")
                if p in wanted:
                    raise InputError(f"part '{p}' given two precisions", offending=p)
                wanted[p] = prec
    mains = [prec for flag, prec in ((fp16, "fp16"), (int8, "int8"), (int8_static, "int8-static")) if flag is True]
    if len(mains) > 1:
        raise InputError("choose one precision for the model, not " + " and ".join(mains),
                         offending="/".join(f"--{m}" for m in mains))
    main_prec = mains[0] if mains else "fp32"
    base = FixSteps(static=static, simplify=simplify, unfuse=unfuse, drop_nan_guards=drop_nan_guards,
                    host_split=host_split, keep_fp32=list(keep_fp32 or []), calibration=cal, profile_dirs=profile_dirs)
    if not (base.any() or main_prec != "fp32" or wanted or cal is not None):
        raise InputError("nothing to fix", hint="give --static, --simplify, --fp16, --int8, --int8-static, "
                                                "--drop-nan-guards, --unfuse-attention or --host-split")
    if "int8-static" in {main_prec, *wanted.values()} and cal is None:
        raise InputError("--int8-static needs calibration samples", offending="--int8-static",
                         hint="add --calibration DIR (images, texts, .wav or .npz samples)")

    rep = FixReport(model=str(model), output=str(out),
                    options={"static": static or {}, "simplify": simplify, "fp16": fp16, "int8": int8,
                             "int8_static": int8_static, "calibration": str(cal) if cal else None,
                             "keep_fp32": list(keep_fp32 or []), "drop_nan_guards": drop_nan_guards,
                             "unfuse": unfuse, "host_split": host_split, "targets": targets or ["all"]})
    jobs = [("model", model, out, main_prec)] + [
        (p, parts[p], out.parent / f"{out.stem}.{p}.onnx", prec) for p, prec in wanted.items()]
    from studio.optimize import streamed
    from studio.optimize.memory import check_fix_fits

    plans = [(part, src, dst, prec, streamed.streamable(FixSteps(**{**base.__dict__, "precision": prec}), src))
             for part, src, dst, prec in jobs]
    check_fix_fits([(part, src, prec, on_disk) for part, src, _d, prec, on_disk in plans])  # exit 2 before any work
    total = len(jobs)
    for i, (part, src, dst, prec, on_disk) in enumerate(plans):
        job.set_status(f"fixing {src.name} (weights streamed from its data files)" if on_disk
                       else f"fixing {src.name}")
        steps = FixSteps(**{**base.__dict__, "precision": prec})
        write = None
        if on_disk:  # weights stay on disk: converted tensor by tensor as the new data file is written
            graph, types = streamed.load_graph(src)
            t = transform(graph, steps, strict=(part == "model"), processor_dir=src.parent, job=job)
            t.steps.append(N_("weights converted tensor by tensor from the data files (the model never wholly in memory)"))
            write = partial(streamed.write_weights, t.model, src, types=types, check_cancel=job.check_cancelled,
                            fraction=lambda x, i=i: job.set_progress(100 * (i + 0.3 * x) / total))
        else:
            t = transform(_load_full(src), steps, strict=(part == "model"), processor_dir=src.parent, job=job)
        f = FixedFile(part=part, source=str(src), output=str(dst), precision=prec, steps=list(t.steps))
        f.parity = save_model_atomic(t.model, dst, lambda tmp, src=src, prec=prec, dst=dst, host=t.host, seq=on_disk:
                                     _parity_on(src, tmp, dst, prec, static, parity_cases, host, seq), write=write)
        if t.host is not None:
            host_path = dst.parent / f"{dst.stem}.host.onnx"
            save_model_atomic(t.host, host_path)
            f.host = str(host_path)
        if t.calibration is not None:
            f.calibration = str(write_calibration(device_feeds(t), dst.parent / f"{dst.stem}.calibration"))
        job.set_progress(100 * (i + 0.5) / total)
        before = inspect_model(src, targets, profile_dirs=profile_dirs)
        after = inspect_model(dst, targets, profile_dirs=profile_dirs)
        f.diff = analysis_diff(before, after)
        rep.files.append(f)
        job.set_progress(100 * (i + 1) / total)
    return rep


def write_calibration(feeds: list[dict[str, Any]], folder: Path) -> Path:
    """The feeds as ``folder/NNNN.npz``, written in a temp sibling and renamed (a re-run replaces it whole)."""
    from studio.optimize.calibration import save_feeds

    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        save_feeds(feeds, tmp)
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder

