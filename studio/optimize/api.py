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
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import InputError, ModelError
from studio.core.jobs import JobState
from studio.core.reports import Report
from studio.optimize.parity import ParityReport, check_parity

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
class FixedFile:
    part: str  # "model" or a part name
    source: str
    output: str
    steps: list[str] = field(default_factory=list)
    precision: str = "fp32"
    parity: ParityReport | None = None
    diff: AnalysisDiff | None = None


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


def save_model_atomic(model: Any, out: Path, check: Any = None) -> Any:
    """Write the model (and its external data when large) via a temp folder, run ``check(temp_path)`` (it may
    raise: then nothing is written), then rename into place. Returns what ``check`` returned."""
    import onnx

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        big = model.ByteSize() > EXTERNAL_THRESHOLD
        target = tmp / out.name
        if big:
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
               cases: int) -> ParityReport:
    """Parity on the temp file (a model ORT cannot load is never moved into place)."""
    rep = check_parity(src, tmp, prec, dims=static, cases=cases)
    rep.fixed = str(dst)
    return rep


def analysis_diff(before: Any, after: Any) -> AnalysisDiff:
    def key(f: Any) -> str:
        return f"{f.rule}: {f.message}"

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
              fp16: bool | list[str] = False, int8: bool | list[str] = False, targets: list[str] | None = None,
              parity_cases: int = 2, profile_dirs: list[Path] | None = None,
              job: JobState | None = None) -> FixReport:
    """Apply the chosen fixes to ``model`` (and to the named parts of a split export) and write ``out``.

    ``fp16`` / ``int8``: True = the model file itself; a list = those part names (siblings
    ``<stem>.<part>.onnx``), written as ``<out stem>.<part>.onnx``. Every written file gets a parity report
    and an inspection diff for ``targets`` (default: all).
    """
    from studio.inspect.api import inspect_model
    from studio.optimize import passes

    job = job or JobState(name="fix")
    model, out = Path(model), Path(out)
    check_out_path(model, out, "fixed")
    parts = find_parts(model)
    wanted: dict[str, str] = {}  # part -> precision
    for flag, prec in ((fp16, "fp16"), (int8, "int8")):
        if isinstance(flag, list):
            for p in flag:
                if p not in parts:
                    raise InputError(f"no part '{p}' beside {model.name}", offending=p,
                                     hint=f"parts found: {', '.join(parts) or 'none'} ({model.stem}.<part>.onnx)")
                if p in wanted:
                    raise InputError(f"part '{p}' given both --fp16 and --int8", offending=p)
                wanted[p] = prec
    if fp16 is True and int8 is True:
        raise InputError("choose --fp16 or --int8 for the model, not both", offending="--fp16/--int8")
    main_prec = "fp16" if fp16 is True else "int8" if int8 is True else "fp32"
    if not (static or simplify or main_prec != "fp32" or wanted):
        raise InputError("nothing to fix", hint="give --static, --simplify, --fp16 or --int8")

    rep = FixReport(model=str(model), output=str(out),
                    options={"static": static or {}, "simplify": simplify, "fp16": fp16, "int8": int8,
                             "targets": targets or ["all"]})
    jobs = [("model", model, out, main_prec)] + [
        (p, parts[p], out.parent / f"{out.stem}.{p}.onnx", prec) for p, prec in wanted.items()]
    total = len(jobs)
    for i, (part, src, dst, prec) in enumerate(jobs):
        job.set_status(f"fixing {src.name}")
        m = _load_full(src)
        f = FixedFile(part=part, source=str(src), output=str(dst), precision=prec)
        if static:
            m, changed = passes.make_static(m, static, strict=(part == "model"))
            f.steps.append("static: " + ("; ".join(changed) or "no matching dims"))
        job.check_cancelled()
        if simplify:
            n0 = len(m.graph.node)
            m = passes.simplify(m)
            f.steps.append(f"simplify (onnxslim): {n0} -> {len(m.graph.node)} nodes")
        job.check_cancelled()
        if prec == "fp16":
            m = passes.to_fp16(m)
            f.steps.append("fp16 (onnxconverter-common, float32 inputs/outputs kept)")
        elif prec == "int8":
            m = passes.to_int8_dynamic(m)
            f.steps.append("int8 dynamic quantization (onnxruntime.quantization, QInt8 weights)")
        f.parity = save_model_atomic(m, dst, lambda tmp, src=src, prec=prec, dst=dst: _parity_on(src, tmp, dst, prec,
                                                                                      static, parity_cases))
        job.set_progress(100 * (i + 0.5) / total)
        before = inspect_model(src, targets, profile_dirs=profile_dirs)
        after = inspect_model(dst, targets, profile_dirs=profile_dirs)
        f.diff = analysis_diff(before, after)
        rep.files.append(f)
        job.set_progress(100 * (i + 1) / total)
    return rep


def render_fix_text(rep: FixReport) -> str:
    lines = [f"fixed {rep.model} -> {rep.output}"]
    for f in rep.files:
        lines.append(f"\n[{f.part}] {f.source} -> {f.output} ({f.precision})")
        lines += [f"  - {s}" for s in f.steps]
        if f.parity:
            lines.append(f.parity.summary_line("parity", "ORT"))
        if f.diff:
            d = f.diff
            lines.append(f"  nodes {d.nodes_before} -> {d.nodes_after}   weights "
                         f"{d.initializer_bytes_before} -> {d.initializer_bytes_after} bytes   dynamic origins "
                         f"{len(d.dynamic_before)} -> {len(d.dynamic_after)}")
            for tid, t in d.targets.items():
                mark = "" if t.before == t.after else "   <- changed"
                lines.append(f"  {tid:12} {t.before:7} -> {t.after:7}  resolved {len(t.resolved)}, "
                             f"introduced {len(t.introduced)}{mark}")
                for r in t.resolved[:3]:
                    lines.append(f"      resolved: {r[:140]}")
                for r in t.introduced[:3]:
                    lines.append(f"      new:      {r[:140]}")
    return "\n".join(lines) + "\n"
