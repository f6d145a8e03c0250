"""Build a Triton model repository from an ONNX model (or a split-modality export folder).

The config is derived from the model's real inputs and outputs and written through Triton's protobuf
(studio.triton.config). Each model folder gets a new version folder; older versions are kept.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.atomic import atomic_path
from studio.core.catalogue import N_
from studio.core.errors import InputError, ModelError
from studio.core.jobs import JobState
from studio.triton import config as tc
from studio.triton import repo_files as rf
from studio.triton.dtypes import onnx_to_config, onnx_type_name
from studio.triton.generate_repo import add_generation_model, generation_folder
from studio.triton.onnx_io import OnnxSignature, TensorSig, read_signature
from studio.triton.repo_files import ENV_FILE, TRUST_DIR, default_site_packages, repo_models, studio_path
from studio.triton.repo_report import BuildReport, BuiltModel  # re-exported

FLAVORS = ("onnxruntime", "python")
MODALITY_WORDS = {"text": "text", "vision": "vision", "image": "vision", "visual": "vision", "audio": "audio",
                  "speech": "audio"}
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
                   "vocab.json", "merges.txt", "spiece.model", "sentencepiece.bpe.model")
PROCESSOR_FILES = ("preprocessor_config.json", "processor_config.json", "feature_extractor_config.json")


@dataclass
class BuildOptions:
    model: Path  # an .onnx file, or a folder holding model.onnx or modality parts (*_encoder.onnx)
    repo: Path
    name: str
    flavor: str = "onnxruntime"  # "onnxruntime" (platform onnxruntime_onnx) | "python" (backend python + ORT)
    max_batch_size: int | None = None  # None: 8 when every tensor has a dynamic first dim, else 0
    dynamic_batching: bool = False
    preferred_batch_sizes: list[int] = field(default_factory=list)
    max_queue_delay_us: int = 0
    instance_kind: str = "cpu"  # cpu | gpu | auto | model
    instance_count: int = 1
    gpus: list[int] = field(default_factory=list)
    tensorrt: bool = False  # ORT's TensorRT execution accelerator (onnxruntime flavour, instance_kind gpu)
    trt_precision: str = "FP16"  # TensorRT precision_mode: FP16 (FP32 fallback per layer) | FP32
    trt_workspace_bytes: int = 1 << 30  # TensorRT max_workspace_size_bytes
    warmup: bool = False
    version: int | None = None  # None: one past the highest existing version
    version_policy: str = "latest:1"  # "latest:N" | "all"
    tokenizer: Path | None = None  # tokenizer.json or a folder with it; adds NAME_tokenizer + NAME_pipeline
    processor: Path | None = None  # preprocessor_config.json or its folder (copied for clients)
    site_packages: list[str] | None = None  # for python-flavour models; default: this interpreter's
    sign_key: Any = None  # nacl SigningKey: each ONNX model version gets a signed manifest (studio.package)
    trust: list[str] = field(default_factory=list)  # public keys (files / folders / key strings) to verify with


# -- inputs ------------------------------------------------------------------------------------------------


@dataclass
class _Part:
    modality: str
    path: Path


def find_parts(folder: Path) -> list[_Part]:
    """Modality parts of a split export: from an export report's ``parts``, else ``<modality>_*.onnx`` files."""
    for rep in sorted(folder.glob("*report*.json")):
        try:
            data = json.loads(rep.read_text(encoding="utf-8"))
        except ValueError:
            continue
        parts = data.get("parts") if isinstance(data, dict) else None
        if parts:
            out = []
            for pname, info in parts.items():
                p = Path(info.get("path", ""))
                p = p if p.is_absolute() else folder / p
                if not p.is_file():
                    p = folder / Path(info.get("path", "")).name
                if p.is_file():
                    out.append(_Part(info.get("modality") or _modality_of(pname) or pname, p))
            if out:
                return out
    out = []
    for p in sorted(folder.glob("*.onnx")):
        m = _modality_of(p.stem)
        if m and ("encoder" in p.stem or "model" in p.stem or "part" in p.stem):
            out.append(_Part(m, p))
    return out


def _modality_of(stem: str) -> str | None:
    for word in stem.lower().replace("-", "_").split("_"):
        if word in MODALITY_WORDS:
            return MODALITY_WORDS[word]
    return None


def _find_tokenizer(opts: BuildOptions) -> Path | None:
    if opts.tokenizer is not None:
        t = Path(opts.tokenizer)
        f = t if t.is_file() else t / "tokenizer.json"
        if not f.is_file():
            raise InputError(f"no tokenizer.json at {t}", offending=str(t),
                             hint="point --tokenizer at tokenizer.json or the folder holding it (a fast tokenizer)")
        return f
    return None


# -- config ------------------------------------------------------------------------------------------------


def _dims(sig: TensorSig, batched: bool) -> list[int]:
    dims = sig.dims[1:] if batched else sig.dims
    return [d if isinstance(d, int) and d > 0 else -1 for d in dims]


def decide_batching(sigs: list[OnnxSignature], requested: int | None) -> tuple[int, list[str]]:
    """Pick max_batch_size; a batched model needs a dynamic first dim on every input and output."""
    fixed = [f"{t.name} (dims {t.dims})" for s in sigs for t in s.inputs + s.outputs
             if t.rank == 0 or not t.is_dynamic(0)]
    if requested is None:
        tensors = ", ".join(fixed)
        return (0, [N_(f"max_batch_size 0: no dynamic batch dim on {tensors}")]) if fixed else (8, [])
    if requested > 0 and fixed:
        raise InputError(f"--max-batch-size {requested} needs a dynamic first (batch) dim, but these tensors have "
                         f"a fixed one: {', '.join(fixed)}", offending=fixed[0].split(" ")[0],
                         hint="pass --max-batch-size 0, or re-export with the batch axis dynamic")
    if requested < 0:
        raise InputError("--max-batch-size must be >= 0", offending="--max-batch-size")
    return requested, []


def model_config(name: str, sig: OnnxSignature, opts: BuildOptions, max_batch: int, flavor: str,
                 onnx_file: str = "model.onnx") -> Any:
    """The ModelConfig message for one ONNX model in the chosen flavour."""
    m = tc.pb2()
    cfg = m.ModelConfig(name=name, max_batch_size=max_batch)
    if flavor == "onnxruntime":
        cfg.platform = "onnxruntime_onnx"
        if onnx_file != "model.onnx":
            cfg.default_model_filename = onnx_file
    else:
        cfg.backend = "python"
        tc.set_parameter(cfg, "onnx_file", onnx_file)
        tc.set_parameter(cfg, "studio_flavor", "python-onnxruntime")
    for t in sig.inputs:
        _check_type(t, sig.path)
        cfg.input.add(name=t.name, data_type=tc.type_value(onnx_to_config(t.elem_type)), dims=_dims(t, max_batch > 0))
    for t in sig.outputs:
        _check_type(t, sig.path)
        cfg.output.add(name=t.name, data_type=tc.type_value(onnx_to_config(t.elem_type)),
                       dims=_dims(t, max_batch > 0))
    _apply_scheduling(cfg, opts, max_batch)
    _apply_accelerator(cfg, opts, flavor)
    if opts.warmup:
        w = cfg.model_warmup.add(name="studio_warmup_batch1", batch_size=1 if max_batch > 0 else 0)
        for t in sig.inputs:
            wi = w.inputs[t.name]
            wi.data_type = tc.type_value(onnx_to_config(t.elem_type))
            wi.dims.extend([d if d > 0 else 1 for d in _dims(t, max_batch > 0)])
            if onnx_to_config(t.elem_type) in ("TYPE_FP32", "TYPE_FP16", "TYPE_FP64", "TYPE_BF16"):
                wi.random_data = True
            else:
                wi.zero_data = True
    return cfg


def _check_type(t: TensorSig, path: str) -> None:
    try:
        onnx_to_config(t.elem_type)
    except KeyError:
        raise ModelError(f"tensor {t.name} has element type {onnx_type_name(t.elem_type)}, which Triton cannot "
                         "carry", offending=f"{path}:{t.name}", hint="cast it to a supported type at export") from None


def _apply_scheduling(cfg: Any, opts: BuildOptions, max_batch: int) -> None:
    if opts.dynamic_batching or opts.preferred_batch_sizes or opts.max_queue_delay_us:
        if max_batch <= 0:
            raise InputError("dynamic batching needs max_batch_size > 0", offending="--dynamic-batching",
                             hint="pass --max-batch-size N, or re-export with a dynamic batch axis")
        bad = [b for b in opts.preferred_batch_sizes if b <= 0 or b > max_batch]
        if bad:
            raise InputError(f"preferred batch sizes {bad} are outside 1..{max_batch}",
                             offending="--preferred-batch-size", hint=f"use sizes up to --max-batch-size {max_batch}")
        cfg.dynamic_batching.SetInParent()
        cfg.dynamic_batching.preferred_batch_size.extend(opts.preferred_batch_sizes)
        cfg.dynamic_batching.max_queue_delay_microseconds = int(opts.max_queue_delay_us)
    kind = opts.instance_kind.lower()
    if kind not in ("cpu", "gpu", "auto", "model"):
        raise InputError(f"unknown instance kind {opts.instance_kind!r}", offending="--instance-kind",
                         hint="use cpu, gpu, auto or model")
    if opts.instance_count < 1:
        raise InputError("--instance-count must be >= 1", offending="--instance-count")
    g = cfg.instance_group.add(count=opts.instance_count, kind=tc.kind_value(kind))
    if opts.gpus:
        if kind != "gpu":
            raise InputError("--gpus applies to --instance-kind gpu only", offending="--gpus")
        g.gpus.extend(opts.gpus)
    pol = opts.version_policy.strip().lower()
    if pol == "all":
        cfg.version_policy.all.SetInParent()
    elif pol.startswith("latest"):
        n = int(pol.split(":", 1)[1]) if ":" in pol else 1
        cfg.version_policy.latest.num_versions = n
    elif pol.startswith("specific:"):
        cfg.version_policy.specific.versions.extend(int(v) for v in pol.split(":", 1)[1].split(","))
    else:
        raise InputError(f"unknown version policy {opts.version_policy!r}", offending="--version-policy",
                         hint="use latest:N, all or specific:1,2")


def _apply_accelerator(cfg: Any, opts: BuildOptions, flavor: str) -> None:
    """ONNX Runtime's TensorRT execution accelerator: onnxruntime flavour on a GPU instance group only."""
    if opts.tensorrt and (flavor != "onnxruntime" or opts.instance_kind.lower() != "gpu"):
        raise InputError(f"TensorRT needs the onnxruntime flavour on a GPU, not {flavor} on {opts.instance_kind}",
                         offending="--enable-trt", hint="use --device cuda:N, or drop --enable-trt")
    if opts.tensorrt:
        tc.set_tensorrt(cfg, opts.trt_precision, opts.trt_workspace_bytes)


# -- writing -----------------------------------------------------------------------------------------------


def _add_onnx_model(name: str, onnx_path: Path, sig: OnnxSignature, opts: BuildOptions, max_batch: int,
                    report: BuildReport, version: int | None) -> BuiltModel:
    from studio.triton.pymodels import ONNX_MODEL

    model_dir = opts.repo / name
    v = version or rf.next_version(model_dir)
    cfg = model_config(name, sig, opts, max_batch, opts.flavor)

    def fill(tmp: Path) -> None:
        rf.copy_onnx(onnx_path, tmp)
        if opts.flavor == "python":
            shutil.copy2(ONNX_MODEL, tmp / "model.py")
        if opts.sign_key is not None:
            rf.sign_version(tmp, name, v, opts.sign_key)

    rf.write_version(model_dir, v, fill)
    if opts.flavor == "python":
        rf.write_env(model_dir, opts.site_packages or default_site_packages())
    if opts.trust:
        rf.install_trust(model_dir, cfg, opts.trust)
    tc.write_config(model_dir / "config.pbtxt", cfg)
    built = BuiltModel(name, "onnx", opts.flavor, v, str(model_dir), tc.config_to_dict(cfg))
    report.models.append(built)
    return built


def _add_python_model(name: str, source: Path, cfg: Any, files: dict[str, Path], opts: BuildOptions,
                      report: BuildReport, kind: str) -> BuiltModel:
    model_dir = opts.repo / name
    v = rf.next_version(model_dir)

    def fill(tmp: Path) -> None:
        shutil.copy2(source, tmp / "model.py")
        for dest, src in files.items():
            shutil.copy2(src, tmp / dest)

    rf.write_version(model_dir, v, fill)
    rf.write_env(model_dir, opts.site_packages or default_site_packages())
    tc.write_config(model_dir / "config.pbtxt", cfg)
    built = BuiltModel(name, kind, "python", v, str(model_dir), tc.config_to_dict(cfg))
    report.models.append(built)
    return built


def _add_tokenizer_pipeline(text_model: str, sig: OnnxSignature, tokenizer: Path, opts: BuildOptions,
                            max_batch: int, report: BuildReport) -> None:
    """NAME_tokenizer (BYTES text -> token tensors) and ensemble NAME_pipeline wiring it into the text model."""
    from studio.triton.pymodels import TOKENIZER_MODEL

    m = tc.pb2()
    token_inputs = [t for t in sig.inputs if t.name in ("input_ids", "attention_mask", "token_type_ids")]
    if not any(t.name == "input_ids" for t in token_inputs):
        report.warnings.append(N_(f"{text_model} has no input_ids input: tokenizer step not added"))
        return
    batched = max_batch > 0
    tok_name, pipe_name = f"{text_model}_tokenizer", f"{text_model}_pipeline"
    tok = m.ModelConfig(name=tok_name, backend="python", max_batch_size=max_batch)
    tok.input.add(name="TEXT", data_type=m.TYPE_STRING, dims=[1] if batched else [-1])
    for t in token_inputs:
        tok.output.add(name=t.name, data_type=tc.type_value(onnx_to_config(t.elem_type)), dims=[-1] if batched
                       else [-1, -1])
    tok.instance_group.add(count=1, kind=m.ModelInstanceGroup.KIND_CPU)
    tc.set_parameter(tok, "tokenizer_file", "tokenizer.json")
    settings = _text_settings(tokenizer)  # the one text pre-processing's pad id and length (as the agent's)
    tc.set_parameter(tok, "pad_id", str(settings.pad_id))
    if settings.max_len is not None:
        tc.set_parameter(tok, "max_length", str(settings.max_len))
    files = {f: tokenizer.parent / f for f in TOKENIZER_FILES if (tokenizer.parent / f).is_file()}
    files["tokenizer.json"] = tokenizer
    _add_python_model(tok_name, TOKENIZER_MODEL, tok, files, opts, report, "tokenizer")

    pipe = m.ModelConfig(name=pipe_name, platform="ensemble", max_batch_size=max_batch)
    pipe.input.add(name="TEXT", data_type=m.TYPE_STRING, dims=[1] if batched else [-1])
    others = [t for t in sig.inputs if t not in token_inputs]
    for t in others:
        pipe.input.add(name=t.name, data_type=tc.type_value(onnx_to_config(t.elem_type)), dims=_dims(t, batched))
    for t in sig.outputs:
        pipe.output.add(name=t.name, data_type=tc.type_value(onnx_to_config(t.elem_type)), dims=_dims(t, batched))
    s1 = pipe.ensemble_scheduling.step.add(model_name=tok_name, model_version=-1)
    s1.input_map["TEXT"] = "TEXT"
    for t in token_inputs:
        s1.output_map[t.name] = f"_tok_{t.name}"
    s2 = pipe.ensemble_scheduling.step.add(model_name=text_model, model_version=-1)
    for t in token_inputs:
        s2.input_map[t.name] = f"_tok_{t.name}"
    for t in others:
        s2.input_map[t.name] = t.name
    for t in sig.outputs:
        s2.output_map[t.name] = t.name
    model_dir = opts.repo / pipe_name
    v = rf.next_version(model_dir)
    rf.write_version(model_dir, v, lambda tmp: None)
    tc.write_config(model_dir / "config.pbtxt", pipe)
    report.models.append(BuiltModel(pipe_name, "pipeline", "ensemble", v, str(model_dir), tc.config_to_dict(pipe)))
    report.entry_model = pipe_name


def _text_settings(tokenizer: Path) -> Any:
    """Pad id and maximum length by studio.edge.preprocess_text's rule (pad 0, no limit for an unreadable file)."""
    from studio.edge.preprocess_text import TextSettings, load_tokenizer

    try:
        return load_tokenizer(tokenizer)[1]
    except Exception:  # noqa: BLE001 (tokenizers raises its own Exception; the model step reports the file)
        return TextSettings(0, None)


def _add_router(name: str, parts: dict[str, tuple[str, OnnxSignature]], opts: BuildOptions, max_batch: int,
                report: BuildReport) -> None:
    """BLS router NAME over the part models: runs only the parts whose inputs a request carries."""
    from studio.triton.pymodels import ROUTER_MODEL

    m = tc.pb2()
    cfg = m.ModelConfig(name=name, backend="python", max_batch_size=max_batch)
    seen_in: dict[str, str] = {}
    out_names = [t.name for _, s in parts.values() for t in s.outputs]
    routes: dict[str, Any] = {}
    for modality, (part_name, sig) in parts.items():
        route: dict[str, Any] = {"model": part_name, "inputs": [], "optional": [], "outputs": {}}
        for t in sig.inputs:
            route["inputs"].append(t.name)
            if t.name == "attention_mask" or t.name == "token_type_ids":
                route["optional"].append(t.name)
            if t.name in seen_in:
                continue
            seen_in[t.name] = modality
            cfg.input.add(name=t.name, data_type=tc.type_value(onnx_to_config(t.elem_type)),
                          dims=_dims(t, max_batch > 0), optional=True)
        for t in sig.outputs:
            ours = t.name if out_names.count(t.name) == 1 else f"{modality}_{t.name}"
            route["outputs"][ours] = t.name
            cfg.output.add(name=ours, data_type=tc.type_value(onnx_to_config(t.elem_type)), dims=_dims(t, max_batch > 0))
        routes[modality] = route
    cfg.instance_group.add(count=opts.instance_count, kind=m.ModelInstanceGroup.KIND_CPU)
    tc.set_parameter(cfg, "routes", json.dumps(routes, sort_keys=True))
    tc.set_parameter(cfg, "studio_flavor", "python-router")
    _add_python_model(name, ROUTER_MODEL, cfg, {}, opts, report, "router")
    report.entry_model = name


# -- entry -------------------------------------------------------------------------------------------------


def build_repo(opts: BuildOptions, job: JobState | None = None) -> BuildReport:
    """Add (a new version of) NAME to the repository; split exports also get part models and a BLS router."""
    job = job or JobState(name="build triton repo")
    opts.model, opts.repo = Path(opts.model), Path(opts.repo)
    if opts.flavor not in FLAVORS:
        raise InputError(f"unknown flavor {opts.flavor!r}", offending="--flavor", hint="use onnxruntime or python")
    if not opts.name or not all(c.isalnum() or c in "-_." for c in opts.name):
        raise InputError(f"model name {opts.name!r} is not a valid Triton model name", offending="--name",
                         hint="use letters, digits, '-', '_' and '.'")
    if not opts.model.exists():
        raise InputError(f"model {opts.model} does not exist", offending=str(opts.model),
                         hint="pass an exported .onnx file or export folder")
    if opts.repo.exists() and not opts.repo.is_dir():
        raise InputError(f"repository path {opts.repo} is a file", offending=str(opts.repo))
    opts.repo.mkdir(parents=True, exist_ok=True)
    report = BuildReport(repo=str(opts.repo), name=opts.name, entry_model=opts.name)
    if (gen_folder := generation_folder(opts.model)) is not None:  # a KV-cache export: one decoupled model
        return add_generation_model(opts, gen_folder, report, job)
    tokenizer = _find_tokenizer(opts)

    folder = opts.model if opts.model.is_dir() else None
    main_onnx = opts.model if folder is None else (folder / "model.onnx" if (folder / "model.onnx").is_file()
                                                   else None)
    parts = find_parts(folder) if folder is not None else []
    if tokenizer is None and folder is not None and (folder / "tokenizer.json").is_file():
        tokenizer = folder / "tokenizer.json"
    if folder is not None and len(parts) >= 2:
        job.set_status(f"split export: {', '.join(p.modality for p in parts)} parts")
        sigs = {p.modality: read_signature(p.path) for p in parts}
        max_batch, warns = decide_batching(list(sigs.values()), opts.max_batch_size)
        report.warnings += warns
        built_parts: dict[str, tuple[str, OnnxSignature]] = {}
        for p in parts:
            pname = f"{opts.name}_{p.modality}"
            job.set_status(f"writing {pname}")
            _add_onnx_model(pname, p.path, sigs[p.modality], opts, max_batch, report,
                            opts.version if opts.version else None)
            built_parts[p.modality] = (pname, sigs[p.modality])
        _add_router(opts.name, built_parts, opts, max_batch, report)
        if tokenizer is not None and "text" in built_parts:
            _add_tokenizer_pipeline(built_parts["text"][0], built_parts["text"][1], tokenizer, opts, max_batch, report)
            report.entry_model = opts.name
    else:
        if main_onnx is None:
            onnx_files = sorted(folder.glob("*.onnx")) if folder else []
            if len(onnx_files) != 1:
                raise InputError(f"{opts.model} holds {len(onnx_files)} .onnx files and no model.onnx",
                                 offending=str(opts.model),
                                 hint="pass the .onnx file itself, or a split export with <modality>_encoder parts")
            main_onnx = onnx_files[0]
        job.set_status(f"reading {main_onnx.name}")
        sig = read_signature(main_onnx)
        max_batch, warns = decide_batching([sig], opts.max_batch_size)
        report.warnings += warns
        job.set_status(f"writing {opts.name}")
        _add_onnx_model(opts.name, main_onnx, sig, opts, max_batch, report, opts.version)
        if tokenizer is not None:
            _add_tokenizer_pipeline(opts.name, sig, tokenizer, opts, max_batch, report)
    proc = _find_processor(opts, folder)
    if proc is not None:
        with atomic_path(opts.repo / opts.name / proc.name) as tmp:
            shutil.copy2(proc, tmp)
    job.set_progress(100.0)
    return report


def _find_processor(opts: BuildOptions, folder: Path | None) -> Path | None:
    cands = []
    if opts.processor is not None:
        p = Path(opts.processor)
        cands += [p] if p.is_file() else [p / f for f in PROCESSOR_FILES]
        if not any(c.is_file() for c in cands):
            raise InputError(f"no processor config at {p}", offending=str(p),
                             hint=f"point --processor at one of {', '.join(PROCESSOR_FILES)}")
    elif folder is not None:
        cands += [folder / f for f in PROCESSOR_FILES]
    return next((c for c in cands if c.is_file()), None)


__all__ = ["BuildOptions", "BuildReport", "BuiltModel", "build_repo", "model_config", "decide_batching",
           "default_site_packages", "find_parts", "repo_models", "studio_path", "ENV_FILE", "TRUST_DIR"]
