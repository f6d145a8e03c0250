"""Check a Triton model repository before any server sees it: config against ONNX, versions, files, ensembles.

Every finding names the file and the config field at fault, so the CLI and the Problems list can point
at it. Errors are what a server would refuse (or what would fail at the first request).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.catalogue import N_
from studio.core.errors import InputError, StudioError
from studio.core.reports import Report
from studio.triton import config as tc
from studio.triton.dtypes import onnx_to_config
from studio.triton.onnx_io import OnnxSignature, read_signature

SCHEMA_VERSION = 1


@dataclass
class Finding:
    severity: str  # "error" | "warning" | "info"
    model: str
    file: str
    field: str
    message: str
    hint: str = ""

    def render(self) -> str:
        s = f"{self.severity:7} {self.file} [{self.field}]: {self.message}"
        return s + (f"\n        hint: {self.hint}" if self.hint else "")


@dataclass
class ModelSummary:
    name: str
    kind: str  # platform or backend
    versions: list[int] = field(default_factory=list)
    max_batch_size: int = 0


@dataclass
class CheckReport(Report):
    schema_version: int = SCHEMA_VERSION
    repo: str = ""
    models: list[ModelSummary] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def ok(self) -> bool:
        return not self.errors


class _Ctx:
    def __init__(self, report: CheckReport) -> None:
        self.report = report

    def add(self, severity: str, model: str, file: Path | str, fld: str, msg: str, hint: str = "") -> None:
        self.report.findings.append(Finding(severity, model, str(file), fld, msg, hint))


def _kind(cfg: Any) -> str:
    if cfg.platform:
        return cfg.platform
    return cfg.backend or "unknown"


def _dims_str(dims: Any) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]"


def compare_with_onnx(ctx: _Ctx, model: str, cfg_file: Path, cfg: Any, sig: OnnxSignature) -> None:
    """Names, dtypes, dims and batch dim of config tensors against the ONNX graph."""
    batched = cfg.max_batch_size > 0
    for section, tensors, onnx_list, onnx_get in (("input", cfg.input, sig.inputs, sig.input),
                                                  ("output", cfg.output, sig.outputs, sig.output)):
        for i, t in enumerate(tensors):
            where = f"{section}[{i}]"
            ot = onnx_get(t.name)
            if ot is None:
                ctx.add("error", model, cfg_file, f"{where}.name",
                        N_(f"{section} '{t.name}' is not a graph {section} of {Path(sig.path).name} "
                        f"(it has: {', '.join(x.name for x in onnx_list)})"),
                        N_("rename it to the graph's name, or rebuild the repository with `studio triton build-repo`"))
                continue
            try:
                want = onnx_to_config(ot.elem_type)
            except KeyError:
                want = "unsupported"
            got = tc.type_name(t.data_type)
            if got != want:
                ctx.add("error", model, cfg_file, f"{where}.data_type",
                        N_(f"'{t.name}' is {got} in the config but {want} in the ONNX graph"), N_(f"set data_type: {want}"))
            odims = list(ot.dims)
            if batched:
                if not odims:
                    ctx.add("error", model, cfg_file, "max_batch_size",
                            N_(f"'{t.name}' is a scalar in the graph, so the model cannot batch"),
                            N_("set max_batch_size: 0"))
                    continue
                if isinstance(odims[0], int) and odims[0] > 0:
                    ctx.add("error", model, cfg_file, "max_batch_size",
                            N_(f"max_batch_size is {cfg.max_batch_size} but '{t.name}' has a fixed first dim "
                            f"{odims[0]} in the graph"), N_("set max_batch_size: 0, or re-export with a dynamic batch axis"))
                odims = odims[1:]
            cdims = list(t.reshape.shape) if t.HasField("reshape") else list(t.dims)
            if len(cdims) != len(odims):
                name, dims, count, graph_dims, graph_count = t.name, _dims_str(t.dims), len(cdims), \
                    _dims_str(odims), len(odims)
                ctx.add("error", model, cfg_file, f"{where}.dims",
                        N_(f"'{name}' has dims {dims} ({count} dims) but the graph has {graph_dims} ({graph_count} "
                           "dims after the batch dim)") if batched else
                        N_(f"'{name}' has dims {dims} ({count} dims) but the graph has {graph_dims} ({graph_count} "
                           "dims)"),
                        N_("list dims without the batch dim when max_batch_size > 0") if batched else
                        N_("match the graph's rank"))
                continue
            for k, (c, o) in enumerate(zip(cdims, odims, strict=True)):
                fixed = isinstance(o, int) and o > 0
                if fixed and c != -1 and c != o:
                    ctx.add("error", model, cfg_file, f"{where}.dims[{k}]",
                            N_(f"'{t.name}' dim {k} is {c} in the config but {o} in the graph"), N_(f"set it to {o}"))
                elif fixed and c == -1:
                    ctx.add("warning", model, cfg_file, f"{where}.dims[{k}]",
                            N_(f"'{t.name}' dim {k} is -1 in the config but fixed at {o} in the graph; "
                            f"requests with another size will fail at run time"), N_(f"set it to {o}"))
    named = {t.name for t in cfg.input}
    for ot in sig.inputs:
        if ot.name not in named:
            ctx.add("error", model, cfg_file, "input",
                    N_(f"graph input '{ot.name}' of {Path(sig.path).name} is missing from the config"),
                    N_("add it to input, or rebuild with `studio triton build-repo`"))


def _model_file(cfg: Any) -> tuple[str, str | None]:
    """(file each version folder must hold, ONNX file to compare with)."""
    kind = _kind(cfg)
    if kind in ("onnxruntime_onnx", "onnxruntime"):
        f = cfg.default_model_filename or "model.onnx"
        return f, f
    if kind == "python":
        onnx_file = tc.get_parameter(cfg, "onnx_file")
        return "model.py", onnx_file
    return "", None


def check_model(ctx: _Ctx, repo: Path, model_dir: Path, configs: dict[str, Any]) -> None:
    name = model_dir.name
    cfg_file = model_dir / "config.pbtxt"
    cfg = configs.get(name)
    if cfg is None:
        return
    summary = ModelSummary(name, _kind(cfg), max_batch_size=cfg.max_batch_size)
    ctx.report.models.append(summary)
    if cfg.name and cfg.name != name:
        ctx.add("error", name, cfg_file, "name", N_(f"config name '{cfg.name}' differs from folder name '{name}'"),
                N_(f"set name: \"{name}\" or rename the folder"))
    kind = _kind(cfg)
    if kind not in ("onnxruntime_onnx", "onnxruntime", "python", "ensemble", "tensorrt_plan", "pytorch_libtorch",
                    "tensorflow_savedmodel", "openvino"):
        ctx.add("warning", name, cfg_file, "platform", N_(f"unknown platform/backend '{kind}'"),
                N_("this checker knows onnxruntime_onnx, python and ensemble"))
    if cfg.max_batch_size < 0:
        ctx.add("error", name, cfg_file, "max_batch_size", N_("max_batch_size is negative"), N_("use 0 or more"))
    if cfg.HasField("dynamic_batching"):
        if cfg.max_batch_size <= 0:
            ctx.add("error", name, cfg_file, "dynamic_batching", N_("dynamic_batching needs max_batch_size > 0"),
                    N_("set max_batch_size, or remove dynamic_batching"))
        for i, b in enumerate(cfg.dynamic_batching.preferred_batch_size):
            if b <= 0 or (cfg.max_batch_size > 0 and b > cfg.max_batch_size):
                ctx.add("error", name, cfg_file, f"dynamic_batching.preferred_batch_size[{i}]",
                        N_(f"preferred batch size {b} is outside 1..{cfg.max_batch_size}"), N_("lower it to max_batch_size"))
    for i, g in enumerate(cfg.instance_group):
        if g.count < 0:
            ctx.add("error", name, cfg_file, f"instance_group[{i}].count", N_("negative instance count"))
    if kind == "ensemble":
        check_ensemble(ctx, repo, name, cfg_file, cfg, configs)
        # an ensemble still needs a version folder (it may be empty)
    versions = sorted(int(p.name) for p in model_dir.iterdir() if p.is_dir() and p.name.isdigit())
    summary.versions = versions
    for p in model_dir.iterdir():
        if p.is_dir() and not p.name.isdigit() and not p.name.startswith("."):
            ctx.add("warning", name, p, "version folders", N_(f"folder '{p.name}' is not a version number; "
                    "Triton ignores it"), N_("version folders are named 1, 2, 3, ..."))
    if not versions:
        ctx.add("error", name, model_dir, "version folders", N_(f"model '{name}' has no version folder"),
                N_(f"put the model file in {model_dir}/1/"))
        return
    pol = cfg.version_policy
    if pol.HasField("specific"):
        for v in pol.specific.versions:
            if v not in versions:
                ctx.add("error", name, cfg_file, "version_policy.specific.versions",
                        N_(f"version {v} is requested but {model_dir}/{v}/ does not exist"), N_("add the folder or drop it"))
    if kind == "ensemble":
        return
    required, onnx_file = _model_file(cfg)
    if kind == "python":
        routes = tc.get_parameter(cfg, "routes")
        if routes:
            _check_routes(ctx, name, cfg_file, routes, configs)
    served = versions
    if pol.HasField("latest") or not (pol.HasField("all") or pol.HasField("specific")):
        n = pol.latest.num_versions if pol.HasField("latest") else 1
        served = versions[-max(n, 1):]
    for v in versions:
        vdir = model_dir / str(v)
        if required and not (vdir / required).exists():
            ctx.add("error", name, vdir / required, "default_model_filename" if required.endswith(".onnx")
                    else "backend", N_(f"version {v} lacks {required}"), N_(f"copy the model file to {vdir}/{required}"))
            continue
        if onnx_file:
            path = vdir / onnx_file
            if not path.exists():
                ctx.add("error", name, path, "parameters.onnx_file" if kind == "python" else "default_model_filename",
                        N_(f"version {v} lacks {onnx_file}"), N_(f"copy the ONNX model to {path}"))
                continue
            if v not in served:
                continue
            try:
                sig = read_signature(path)
            except StudioError as exc:
                ctx.add("error", name, path, "model file", exc.message, exc.hint or "")
                continue
            compare_with_onnx(ctx, name, cfg_file, cfg, sig)


def _check_routes(ctx: _Ctx, name: str, cfg_file: Path, routes: str, configs: dict[str, Any]) -> None:
    try:
        data = json.loads(routes)
    except ValueError as exc:
        ctx.add("error", name, cfg_file, "parameters.routes", N_(f"routes is not JSON: {exc}"))
        return
    for modality, r in data.items():
        target = r.get("model")
        if target not in configs:
            ctx.add("error", name, cfg_file, f"parameters.routes.{modality}.model",
                    N_(f"routed model '{target}' is not in the repository"), N_("build the part models too"))
            continue
        tin = {t.name for t in configs[target].input}
        for i in r.get("inputs", []):
            if i not in tin:
                ctx.add("error", name, cfg_file, f"parameters.routes.{modality}.inputs",
                        N_(f"'{i}' is not an input of '{target}'"))


def check_ensemble(ctx: _Ctx, repo: Path, name: str, cfg_file: Path, cfg: Any, configs: dict[str, Any]) -> None:
    """Every step's model exists, maps only real tensors, and every ensemble output is produced."""
    steps = cfg.ensemble_scheduling.step
    if not steps:
        ctx.add("error", name, cfg_file, "ensemble_scheduling.step", N_("ensemble has no steps"))
        return
    available = {t.name: tc.type_name(t.data_type) for t in cfg.input}
    consumed: set[str] = set()
    for i, s in enumerate(steps):
        where = f"ensemble_scheduling.step[{i}]"
        sub = configs.get(s.model_name)
        if sub is None:
            ctx.add("error", name, cfg_file, f"{where}.model_name", N_(f"step model '{s.model_name}' is not in the "
                    "repository (or its config does not parse)"), N_(f"add {repo}/{s.model_name}/config.pbtxt"))
            continue
        sub_in = {t.name: tc.type_name(t.data_type) for t in sub.input}
        sub_out = {t.name: tc.type_name(t.data_type) for t in sub.output}
        for key, val in s.input_map.items():
            if key not in sub_in:
                ctx.add("error", name, cfg_file, f"{where}.input_map[{key}]",
                        N_(f"'{key}' is not an input of '{s.model_name}' (it has: {', '.join(sub_in)})"))
            if val not in available:
                ctx.add("error", name, cfg_file, f"{where}.input_map[{key}]",
                        N_(f"'{val}' is neither an ensemble input nor an output of an earlier step"),
                        N_("wire it from an ensemble input or a previous step's output_map"))
            elif key in sub_in and available[val] != sub_in[key]:
                ctx.add("error", name, cfg_file, f"{where}.input_map[{key}]",
                        N_(f"'{val}' is {available[val]} but '{s.model_name}' input '{key}' is {sub_in[key]}"))
            consumed.add(val)
        for key in sub_in:
            optional = any(t.name == key and t.optional for t in sub.input)
            if key not in s.input_map and not optional:
                ctx.add("error", name, cfg_file, f"{where}.input_map",
                        N_(f"required input '{key}' of '{s.model_name}' is not mapped"))
        for key, val in s.output_map.items():
            if key not in sub_out:
                ctx.add("error", name, cfg_file, f"{where}.output_map[{key}]",
                        N_(f"'{key}' is not an output of '{s.model_name}' (it has: {', '.join(sub_out)})"))
                continue
            available[val] = sub_out[key]
    for i, t in enumerate(cfg.output):
        if t.name not in available:
            ctx.add("error", name, cfg_file, f"output[{i}].name",
                    N_(f"ensemble output '{t.name}' is produced by no step"), N_("map it in a step's output_map"))
        elif available[t.name] != tc.type_name(t.data_type):
            ctx.add("error", name, cfg_file, f"output[{i}].data_type",
                    N_(f"'{t.name}' is {tc.type_name(t.data_type)} here but the step produces {available[t.name]}"))
    for i, t in enumerate(cfg.input):
        if t.name not in consumed:
            ctx.add("warning", name, cfg_file, f"input[{i}].name", N_(f"ensemble input '{t.name}' feeds no step"))


def check_repo(repo: Path | str) -> CheckReport:
    """Check every model folder under ``repo``."""
    repo = Path(repo)
    if not repo.is_dir():
        raise InputError(f"repository {repo} does not exist or is not a folder", offending=str(repo),
                         hint="build one with `studio triton build-repo MODEL.onnx --repo DIR --name NAME`")
    report = CheckReport(repo=str(repo))
    ctx = _Ctx(report)
    dirs = sorted(p for p in repo.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not dirs:
        ctx.add("error", "", repo, "repository", N_("the repository holds no model folder"),
                N_("build a model into it with `studio triton build-repo`"))
    configs: dict[str, Any] = {}
    for d in dirs:
        f = d / "config.pbtxt"
        if not f.is_file():
            ctx.add("error", d.name, f, "config.pbtxt", N_(f"model '{d.name}' has no config.pbtxt"),
                    N_("write one with `studio triton build-repo` (auto-complete is off on strict servers)"))
            continue
        try:
            configs[d.name] = tc.load_config(f)
        except StudioError as exc:
            ctx.add("error", d.name, f, "syntax", exc.message, exc.hint or "")
    for d in dirs:
        check_model(ctx, repo, d, configs)
    return report
