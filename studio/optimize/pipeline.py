"""One file through the fixes, in a fixed order: static dims -> simplify -> unfuse attention -> drop NaN guards ->
host split -> precision. ``studio fix`` and the target search (studio.tune) both call ``transform``, so a recipe
replayed as ``studio fix`` commands gives the same bytes as the search's own candidate.

Precisions: fp32, fp16 (onnxconverter-common, ``keep_fp32`` nodes stay float32), int8 (ONNX Runtime's dynamic
quantization), int8-static (QDQ calibrated on a calibration folder, ``keep_fp32`` nodes excluded).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.catalogue import N_
from studio.core.errors import InputError

PRECISIONS = ("fp32", "fp16", "int8", "int8-static")


@dataclass
class FixSteps:
    """What to do to one file (everything but the precision applies to every part alike)."""

    static: dict[str, int] | None = None
    simplify: bool = False
    unfuse: bool = False
    drop_nan_guards: bool = False
    host_split: str | None = None  # a target id: its host-placed input preparation becomes the host graph
    precision: str = "fp32"
    keep_fp32: list[str] = field(default_factory=list)  # fp16 / int8-static: nodes kept in float32
    calibration: Path | None = None  # a folder of samples (studio.optimize.calibration)
    profile_dirs: list[Path] | None = None

    def any(self) -> bool:
        return bool(self.static or self.simplify or self.unfuse or self.drop_nan_guards or self.host_split
                    or self.precision != "fp32")


@dataclass
class Transformed:
    model: Any  # the device (or only) graph
    host: Any = None  # the host graph of a host split, or None
    steps: list[str] = field(default_factory=list)
    split: Any = None  # studio.optimize.host_split.SplitInfo
    calibration: list[dict[str, Any]] | None = None  # feeds of ``model``'s inputs (host graph applied)
    calibration_source: str = ""


def host_nodes(model: Any, target: str, profile_dirs: list[Path] | None = None) -> set[str]:
    """Keys of the nodes ``target``'s profile places on the host (the inspector's static whole-model verdict)."""
    import onnx

    from studio.inspect.api import inspect_model

    with tempfile.TemporaryDirectory(prefix="studio-split-") as d:
        p = Path(d) / "model.onnx"
        onnx.save(model, str(p))
        rep = inspect_model(p, [target], profile_dirs=profile_dirs)
    summary = rep.targets.get(target)
    mv = getattr(summary, "model", None)
    return {h.node for h in (mv.host_nodes if mv is not None else [])}


def _feeds(model: Any, folder: Path, processor_dir: Path) -> tuple[list[dict[str, Any]], str]:
    import onnx

    from studio.optimize.calibration import calibration_feeds

    with tempfile.TemporaryDirectory(prefix="studio-cal-") as d:
        p = Path(d) / "model.onnx"
        onnx.save(model, str(p))
        cal = calibration_feeds(folder, p, processor_dir=processor_dir)
    return cal.feeds, cal.source.replace("model.onnx's", "the model's")


def run_host(host: Any, feeds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The host graph on each feed: the device graph's inputs (the feed's own arrays it passes through kept)."""
    from studio.core.runner import OnnxRuntimeRunner

    with OnnxRuntimeRunner(host) as r:
        return [{**f, **r.infer(f)} for f in feeds]


def transform(m: Any, steps: FixSteps, *, strict: bool = True, processor_dir: Path | None = None,
              job: Any = None) -> Transformed:
    """``m`` (a loaded ModelProto) through ``steps``; ``processor_dir``: where raw calibration samples find the
    model's tokenizer / processor files (the source model's folder)."""
    from studio.optimize import passes
    from studio.optimize.rewrites import drop_nan_guards, unfuse_attention

    if steps.precision not in PRECISIONS:
        raise InputError(f"unknown precision {steps.precision!r}", offending=steps.precision,
                         hint=f"one of {', '.join(PRECISIONS)}")
    if steps.precision == "int8-static" and steps.calibration is None:
        raise InputError("INT8 static quantization needs calibration samples", offending="--int8-static",
                         hint="add --calibration DIR (images, texts, .wav or .npz samples)")
    out = Transformed(m)
    if steps.static:
        out.model, changed = passes.make_static(out.model, steps.static, strict=strict)
        changes = "; ".join(changed)
        out.steps.append(N_(f"static: {changes}") if changed else N_("static: no matching dims"))
    _check(job)
    if steps.simplify:
        before = len(out.model.graph.node)
        out.model = passes.simplify(out.model)
        after = len(out.model.graph.node)
        out.steps.append(N_(f"simplify (onnxslim): {before} -> {after} nodes"))
    _check(job)
    if steps.unfuse:
        out.model, s = unfuse_attention(out.model)
        out.steps += s or [N_("unfuse attention: no studio.fused::FusedAttention node")]
    if steps.drop_nan_guards:
        out.model, s = drop_nan_guards(out.model)
        out.steps += s or [N_("drop NaN guards: no Where(IsNaN(x), C, x)")]
    _check(job)
    if steps.calibration is not None:
        out.calibration, out.calibration_source = _feeds(out.model, steps.calibration,
                                                         processor_dir or steps.calibration)
    if steps.host_split:
        from studio.optimize.host_split import host_split

        keys = host_nodes(out.model, steps.host_split, steps.profile_dirs)
        device, host, info = host_split(out.model, keys)
        out.split = info
        if host is None:
            target = steps.host_split
            out.steps.append(N_(f"host split for {target}: no host-placed node at the inputs, nothing moved"))
        else:
            out.model, out.host = device, host
            out.steps += info.steps()
            if out.calibration is not None:
                out.calibration = run_host(host, out.calibration)
    _check(job)
    if steps.precision == "fp16":
        out.model = passes.to_fp16(out.model, steps.keep_fp32)
        kept = len(steps.keep_fp32)
        out.steps.append(N_(f"fp16 (onnxconverter-common, float32 inputs/outputs kept; {kept} node(s) kept float32)")
                         if kept else N_("fp16 (onnxconverter-common, float32 inputs/outputs kept)"))
    elif steps.precision == "int8":
        out.model = passes.to_int8_dynamic(out.model)
        out.steps.append(N_("int8 dynamic quantization (onnxruntime.quantization, QInt8 weights)"))
    elif steps.precision == "int8-static":
        from studio.optimize.quantize import INT8_OPS, to_int8_static

        feeds = [{i.name: f[i.name] for i in out.model.graph.input if i.name in f} for f in out.calibration or []]
        out.model = to_int8_static(out.model, feeds, steps.keep_fp32)
        ops, samples, source, kept = ", ".join(INT8_OPS), len(feeds), out.calibration_source, len(steps.keep_fp32)
        out.steps.append(N_(f"int8 static QDQ ({ops}) calibrated on {samples} sample(s): {source}; {kept} node(s) "
                            f"kept float") if kept else
                         N_(f"int8 static QDQ ({ops}) calibrated on {samples} sample(s): {source}"))
    return out


def _check(job: Any) -> None:
    if job is not None:
        job.check_cancelled()


def device_feeds(t: Transformed) -> list[dict[str, Any]]:
    """The calibration feeds restricted to the device graph's own inputs."""
    names = [i.name for i in t.model.graph.input]
    return [{n: f[n] for n in names if n in f} for f in t.calibration or []]
