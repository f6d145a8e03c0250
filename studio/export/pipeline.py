"""HF folder -> validated ONNX (+ parts, tokenizer / processor files), as one job with stages.

Stages: inputs (no torch) -> load -> export -> check (checker, shape inference, ORT load) -> parity ->
split (optional) -> write. Everything is produced in a temp folder beside the output and moved into
place only when every stage passed, model file last: on a failure or a cancel nothing is left at the
output path. Bad input raises InputError before any work; a stage failure returns a report with
``status == "failed"`` and a Diagnosis.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import InputError, JobCancelled, StudioError
from studio.core.jobs import JobState, Stages
from studio.export.api import (
    MODALITIES,
    ExportOptions,
    ExportReport,
    InputSpec,
    OutputCheck,
    OutputFile,
    Validation,
    ValidationCase,
)
from studio.export.signatures import (
    WEIGHT_FILES,
    apply_dynamic,
    complete_spec,
    default_signature,
    parse_signature,
    read_config,
    recipe_for,
)

OPSET_RANGE = (7, 23)
COMPANION_SKIP = {"studio_sample.json", "model.safetensors.index.json", "pytorch_model.bin.index.json"}


def _specs(options: ExportOptions, config: dict[str, Any]) -> list[InputSpec]:
    sig = options.input_signature
    if sig is None:
        specs = default_signature(options.model_dir)
    elif isinstance(sig, str):
        specs = parse_signature(sig, options.model_dir)
    else:
        text = ",".join(f"{s.modality}:{s.name}" for s in sig)
        parsed = {s.name: s for s in parse_signature(text, options.model_dir)}
        specs = []
        for s in sig:  # keep what the caller set, fill the rest
            base = parsed[s.name]
            specs.append(complete_spec(InputSpec(s.modality, s.name, dict(s.dynamic_axes) or base.dynamic_axes,
                                                 s.dtype or base.dtype, list(s.example_shape) or base.example_shape),
                                       config))
    return apply_dynamic(specs, options.dynamic)


def check_options(options: ExportOptions) -> tuple[dict[str, Any], list[InputSpec]]:
    """Every check that needs no torch: raises InputError naming the bad value."""
    options.model_dir = Path(options.model_dir)
    options.output = Path(options.output)
    if options.exporter not in ("torchscript", "dynamo"):
        raise InputError(f"unknown exporter '{options.exporter}'", offending=options.exporter,
                         hint="use --exporter torchscript or --exporter dynamo")
    if not OPSET_RANGE[0] <= int(options.opset) <= OPSET_RANGE[1]:
        raise InputError(f"opset {options.opset} is out of range", offending=str(options.opset),
                         hint=f"choose an opset between {OPSET_RANGE[0]} and {OPSET_RANGE[1]} (17 is a safe default)")
    if options.output.exists() and options.output.is_dir():
        raise InputError(f"output {options.output} is a folder", offending=str(options.output),
                         hint="give the path of the .onnx file to write, e.g. out/model.onnx")
    if options.atol < 0 or options.rtol < 0:
        raise InputError("tolerances must be >= 0", offending=f"atol={options.atol} rtol={options.rtol}",
                         hint="for example --atol 1e-4 --rtol 1e-3")
    config = read_config(options.model_dir)
    specs = _specs(options, config)
    for s in specs:
        if s.modality not in MODALITIES:
            raise InputError(f"unknown modality '{s.modality}'", offending=f"{s.modality}:{s.name}",
                             hint=f"modalities are: {', '.join(MODALITIES)}")
    names = [s.name for s in specs]
    recipe = recipe_for(config)
    if recipe.model_type == "qwen2_vl" and {"pixel_values", "image_grid_thw"} & set(names):
        missing = [n for n in ("input_ids", "attention_mask", "pixel_values", "image_grid_thw") if n not in names]
        if missing:
            raise InputError(f"a Qwen2-VL image signature needs {', '.join(missing)} too", offending=",".join(names),
                             hint="use text:input_ids,text:attention_mask,vision:pixel_values,vision:image_grid_thw "
                                  "(or text:input_ids,text:attention_mask for the text-only decoder)")
    if options.split_modalities:
        from studio.export.split import SPLIT_KINDS

        if recipe.split not in SPLIT_KINDS:
            raise InputError(f"--split-modalities is not available for model type '{recipe.model_type}'",
                             offending=recipe.model_type,
                             hint="it is supported for dual encoders (clip, siglip), whisper, qwen2_vl and vilt; "
                                  "export without --split-modalities")
    return config, specs


@contextmanager
def _timed(report: ExportReport, stage: str):  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    try:
        yield
    finally:
        report.timings[stage] = round(report.timings.get(stage, 0.0) + time.perf_counter() - t0, 4)


class _StageFailed(Exception):
    """Internal: a stage produced a diagnosis; stop and report."""


def run_export(options: ExportOptions, job: JobState | None = None) -> ExportReport:
    job = job or JobState(name="export")
    t_start = time.perf_counter()
    report = ExportReport(model_dir=str(options.model_dir))
    with _timed(report, "inputs"):
        config, specs = check_options(options)
    recipe = recipe_for(config)
    report.model_type = recipe.model_type
    report.signature = specs
    report.expected_tokenizer_class = recipe.expected_tokenizer
    report.options = {"output": str(options.output), "opset": options.opset, "exporter": options.exporter,
                      "dynamic": options.dynamic, "split_modalities": options.split_modalities,
                      "atol": options.atol, "rtol": options.rtol, "validation_cases": options.validation_cases,
                      "attn_implementation": getattr(options, "attn_implementation", None)}
    report.validation = Validation(atol=options.atol, rtol=options.rtol)
    weights = {"load": 3.0, "export": 4.0, "check": 1.0, "parity": 2.0}
    if options.split_modalities:
        weights["split"] = 6.0
    weights["write"] = 0.5
    stages = Stages(job, weights)
    out = options.output
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        _run(options, job, stages, report, config, specs, recipe, tmp)
        report.status = "succeeded"
    except _StageFailed:
        report.status = "failed"
    except JobCancelled:
        report.status = "cancelled"
        report.outputs = []
        job.log("export cancelled: nothing written")
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        report.timings["total"] = round(time.perf_counter() - t_start, 4)
        if report.status != "succeeded":
            report.outputs = []
            report.parts = {k: {**v, "path": None} for k, v in report.parts.items()}
        if options.report is not None and report.status != "cancelled":
            report.save(options.report)
    job.set_progress(100, force=True)
    job.set_status(f"export {report.status}")
    return report


def _fail(report: ExportReport, diag: Any, job: JobState) -> None:
    report.diagnosis = diag
    job.log(f"{diag.stage} failed [{diag.error_class}]: {diag.message}")
    if diag.fix:
        job.log(f"fix: {diag.fix}")
    raise _StageFailed()


def _run(options: ExportOptions, job: JobState, stages: Stages, report: ExportReport, config: dict[str, Any],
         specs: list[InputSpec], recipe: Any, tmp: Path) -> None:
    from studio.export import diagnose as dg
    from studio.export.api import Diagnosis

    # ------------------------------------------------------------------ load
    stages.begin("load", f"loading {options.model_dir.name}")
    with _timed(report, "load"):
        import torch  # noqa: F401 - heavy, only now
        from transformers.utils import logging as hf_logging

        from studio.export.signatures import model_class

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        try:
            cls = model_class(recipe)
            kw: dict[str, Any] = {}
            attn = getattr(options, "attn_implementation", None)
            if attn:
                kw["attn_implementation"] = attn
            model = cls.from_pretrained(str(options.model_dir), **kw).eval()
        except StudioError:
            raise
        except Exception as exc:  # noqa: BLE001 - a broken checkpoint is a diagnosed failure
            diag = dg.diagnose_exception("load", exc)
            diag.error_class = "load_error" if diag.error_class in ("unknown", "exporter_error") else diag.error_class
            diag.fix = diag.fix if diag.error_class != "load_error" else \
                "check that the weights match config.json (re-save with save_pretrained)"
            _fail(report, diag, job)
        report.model_class = type(model).__name__
        _check_forward(model, specs)
        _tokenizer_info(options.model_dir, config, report)
        _processor_info(options.model_dir, report)

    from studio.export.exporters import NamedWrapper, export_onnx
    from studio.export.patches import export_patches
    from studio.export.validate import case_specs, check_graph, make_inputs, ort_session, run_case

    input_names = [s.name for s in specs]
    output_names = list(recipe.outputs) or _discover_outputs(model, specs, config)
    # ``wrapper`` is the unmodified model (the parity reference); ``export_wrapper`` is what the exporter sees
    wrapper = NamedWrapper(model, input_names, output_names, recipe.forward_kwargs, recipe.fill_masks).eval()
    export_wrapper = wrapper
    if recipe.model_type == "qwen2_vl" and "pixel_values" in input_names:
        from studio.export.qwen2_vl import Qwen2VLFull, Qwen2VLReference

        wrapper = NamedWrapper(Qwen2VLReference(model), input_names, output_names).eval()
        export_wrapper = NamedWrapper(Qwen2VLFull(model), input_names, output_names).eval()
        report.warnings.append("export patch: Qwen2-VL vision grid, per-frame attention and M-RoPE positions "
                               "computed with tensor ops (the HF code uses .tolist()/loops a trace would freeze); "
                               "parity is checked against the unmodified HF forward")
    cases = case_specs(specs, max(2, int(options.validation_cases)))
    feeds0 = make_inputs(specs, config, cases[0])
    args0 = tuple(_torch(feeds0[n]) for n in input_names)
    dynamic_axes = {s.name: dict(s.dynamic_axes) for s in specs}
    limits = _axis_limits(config)

    # ------------------------------------------------------------------ export
    model_path = tmp / options.output.name
    stages.begin("export", f"exporting with {options.exporter} at opset {options.opset}")
    with _timed(report, "export"):
        def _export() -> Any:
            with export_patches(model, recipe.model_type) as notes:
                res = export_onnx(export_wrapper, args0, model_path, input_names=input_names,
                                  output_names=output_names, dynamic_axes=dynamic_axes, opset=options.opset,
                                  exporter=options.exporter, limits=limits)
            report.warnings.extend(f"export patch: {n}" for n in notes)
            return res

        try:
            try:
                result = _export()
            except Exception as first:  # noqa: BLE001
                retry = _gqa_eager_fallback(first, model, options, export_wrapper, report, job)
                if not retry:
                    raise
                result = _export()
        except Exception as exc:  # noqa: BLE001
            diag = dg.diagnose_exception("export", exc, model=export_wrapper, exporter=options.exporter,
                                         opset=options.opset)
            if diag.op_type and diag.op_type.startswith("aten::") and (diag.module is None or diag.snippet is None):
                module, snippet = dg.locate_torch_op(export_wrapper, args0, diag.op_type)
                diag.module = diag.module or module
                diag.snippet = diag.snippet or snippet
                if snippet:
                    diag.node = snippet["focus"]
                if module and diag.error_class == "unsupported_op" and "avoid" not in diag.fix:
                    diag.fix += f", or avoid {diag.op_type} in {module}"
            _fail(report, diag, job)
    for line in result.log[-50:]:
        job.log(line)
    if result.tracer_warnings:
        where = sorted({f"{Path(w['filename']).name}:{w['lineno']}" for w in result.tracer_warnings})
        report.warnings.append(f"{len(result.tracer_warnings)} tracer warning(s) at {', '.join(where[:6])}: the "
                               "trace froze a Python value there; parity on new shapes and padded inputs checks it")

    from studio.export.dims import name_output_dims, written_opset

    report.opset = written_opset(model_path)
    _opset_warning(report, options.exporter, options.opset, report.opset, options.output.name)
    renamed = name_output_dims(model_path, {})
    if renamed:
        job.log("output dims named after the inputs: " + ", ".join(f"{k} -> {v}" for k, v in renamed.items()))

    # ------------------------------------------------------------------ check
    stages.begin("check", "onnx.checker, shape inference, ONNX Runtime load")
    import onnx

    onnx_model = onnx.load(str(model_path))
    with _timed(report, "check"):
        checker, shapes, errors = check_graph(model_path)
        report.validation.checker, report.validation.shape_inference = checker, shapes
        if checker != "passed":
            _fail(report, dg.diagnose_exception("checker", RuntimeError(errors[0]), onnx_model=onnx_model), job)
        if shapes != "passed":
            _fail(report, dg.diagnose_exception("shape_inference", RuntimeError(errors[-1]),
                                                onnx_model=onnx_model), job)
        try:
            session = ort_session(model_path)
            report.validation.ort_load = "passed"
            graph_inputs = {i.name for i in session.get_inputs()}
            dropped = [n for n in input_names if n not in graph_inputs]
            if dropped:
                report.warnings.append(f"input(s) {', '.join(dropped)} are not in the graph: the traced forward "
                                       "never used them (a value-dependent branch may have skipped them)")
        except Exception as exc:  # noqa: BLE001
            report.validation.ort_load = f"failed: {str(exc).splitlines()[0][:300]}"
            _fail(report, dg.diagnose_exception("ort_load", exc, onnx_model=onnx_model), job)

    # ------------------------------------------------------------------ parity
    stages.begin("parity", f"parity on {len(cases)} inputs")
    references: list[dict[str, np.ndarray]] = []
    case_feeds: list[dict[str, np.ndarray]] = []
    ort_outputs: list[dict[str, np.ndarray]] = []
    with _timed(report, "parity"):
        import torch

        for i, case in enumerate(cases):
            feeds = feeds0 if i == 0 else make_inputs(specs, config, case)
            with torch.no_grad():
                ref = wrapper(*[_torch(feeds[n]) for n in input_names])
            refd = {n: t.detach().float().numpy() if t.is_floating_point() else t.detach().numpy()
                    for n, t in zip(output_names, ref, strict=True)}
            vc, got = run_case(case, "model", session, feeds, refd, options.atol, options.rtol)
            report.validation.cases.append(vc)
            job.set_partial(f"case:{case.name}", vc)
            job.log(f"parity [{case.name}]: {'passed' if vc.passed else 'FAILED'} "
                    + ", ".join(f"{o.output} abs={o.max_abs:.2g}" for o in vc.outputs))
            references.append(refd)
            case_feeds.append(feeds)
            ort_outputs.append(got)
            stages.within("parity", (i + 1) / len(cases))
        if not all(c.passed for c in report.validation.cases):
            diag = dg.diagnose_parity(report.validation.cases, tracer_warnings=result.tracer_warnings,
                                      model=export_wrapper, onnx_model=onnx_model, atol=options.atol,
                                      rtol=options.rtol, log=result.log)
            if dropped and diag.error_class == "data_dependent_control_flow":
                diag.message += f"; the exported graph does not even take {', '.join(dropped)}"
            _fail(report, diag, job)

    from studio.export.dims import name_dims_from_runs

    sizes = [{name: int(feeds[s.name].shape[a]) for s in specs for a, name in s.dynamic_axes.items()
              if s.name in feeds} for feeds in case_feeds]
    renamed = name_dims_from_runs(model_path, sizes, [{k: v.shape for k, v in got.items()} for got in ort_outputs])
    if renamed:
        job.log("output dims matched to input axes over the parity runs: "
                + ", ".join(f"{k} -> {v}" for k, v in renamed.items()))

    # ------------------------------------------------------------------ split
    written: list[tuple[Path, str, str | None]] = [(model_path, "model", None)]
    if options.split_modalities:
        stages.begin("split", "exporting per-modality parts")
        with _timed(report, "split"):
            written += _split(options, job, stages, report, recipe, model, specs, case_feeds, references,
                              ort_outputs, cases, tmp)

    # ------------------------------------------------------------------ write
    stages.begin("write", f"writing {options.output}")
    with _timed(report, "write"):
        try:
            companions = _copy_companions(options.model_dir, tmp, options.output)
        except OSError as exc:
            _fail(report, Diagnosis(stage="write", error_class="io_error", message=str(exc),
                                    fix="check free space and permissions of the output folder"), job)
        job.check_cancelled()
        final_dir = options.output.parent
        outputs: list[OutputFile] = []
        for path, kind in companions:
            dest = final_dir / path.name
            os.replace(path, dest)
            outputs.append(OutputFile(str(dest), kind, None, dest.stat().st_size))
        for path, kind, modality in reversed(written):  # parts first, the model last
            dest = final_dir / path.name
            os.replace(path, dest)
            outputs.insert(0, OutputFile(str(dest), kind, modality, dest.stat().st_size))
            if kind == "part":
                for info in report.parts.values():
                    if Path(info["path"]).name == path.name:
                        info["path"] = str(dest)
        if options.report is not None:
            outputs.append(OutputFile(str(options.report), "report"))
        report.outputs = outputs


def _gqa_eager_fallback(exc: BaseException, model: Any, options: ExportOptions, wrapper: Any,
                        report: ExportReport, job: JobState) -> bool:
    """SDPA with grouped-query attention (``enable_gqa``) has no TorchScript ONNX conversion: when the user did
    not choose an attention implementation, switch the model to eager attention (same math) and say so."""
    from studio.export import diagnose as dg

    if options.exporter != "torchscript" or getattr(options, "attn_implementation", None):
        return False
    diag = dg.diagnose_exception("export", exc, model=wrapper, exporter=options.exporter, opset=options.opset)
    if diag.error_class != "gqa_sdpa" or not hasattr(model, "set_attn_implementation"):
        return False
    try:
        model.set_attn_implementation("eager")
    except Exception:  # noqa: BLE001 - the model cannot switch: the diagnosis stands
        return False
    report.warnings.append(f"gqa_sdpa: {diag.message} (in {diag.module or 'the attention layers'}); exported with "
                           "attn_implementation='eager' instead (same math, parity checked). Pass "
                           "--attn-implementation sdpa --exporter dynamo to keep SDPA")
    report.options["attn_implementation"] = "eager (automatic: enable_gqa SDPA has no TorchScript conversion)"
    job.log("TorchScript cannot convert SDPA with enable_gqa: retrying with eager attention")
    return True


def _opset_warning(report: ExportReport, exporter: str, requested: int, written: int | None, name: str) -> None:
    """The dynamo exporter builds opset >= 18 and converts down (or silently keeps 18): say which one happened."""
    if written is None:
        return
    if written != requested:
        report.warnings.append(f"opset: {name} was written at opset {written}, not the requested {requested}: the "
                               f"{exporter} exporter has no implementation below {written} and the version "
                               f"converter did not convert it; use --opset {written} or --exporter torchscript")
    elif exporter == "dynamo" and requested < 18:
        report.warnings.append(f"opset: the dynamo exporter built {name} at opset 18 and the ONNX version converter "
                               f"lowered it to {requested}; parity below checks the converted graph "
                               "(--opset 18 avoids the conversion)")


def _torch(arr: np.ndarray) -> Any:
    import torch

    return torch.from_numpy(np.ascontiguousarray(arr))


def _check_forward(model: Any, specs: list[InputSpec]) -> None:
    import inspect

    params = inspect.signature(type(model).forward).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()) and len(params) <= 2:
        return
    unknown = [s.name for s in specs if s.name not in params]
    if unknown:
        raise InputError(f"{type(model).__name__} has no input named '{unknown[0]}'", offending=unknown[0],
                         hint=f"inputs of this model: {', '.join(n for n in params if n != 'self')}")


def _discover_outputs(model: Any, specs: list[InputSpec], config: dict[str, Any]) -> list[str]:
    """Generic models: the tensor fields the model returns on the traced inputs."""
    import torch

    from studio.export.validate import CaseSpec, make_inputs

    feeds = make_inputs(specs, config, CaseSpec("probe", {}, 0))
    with torch.no_grad():
        out = model(**{k: _torch(v) for k, v in feeds.items()})
    if isinstance(out, torch.Tensor):
        return ["output"]
    skip = {"past_key_values", "hidden_states", "attentions", "encoder_hidden_states", "encoder_attentions"}
    names = [k for k, v in out.items() if isinstance(v, torch.Tensor) and k not in skip]
    return names[:4] or ["output"]


def _axis_limits(config: dict[str, Any]) -> dict[str, int]:
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    limits: dict[str, int] = {}
    if text.get("max_position_embeddings"):
        limits["sequence"] = int(text["max_position_embeddings"])
    if config.get("max_target_positions"):
        limits["decoder_sequence"] = int(config["max_target_positions"])
    return limits


def _tokenizer_info(model_dir: Path, config: dict[str, Any], report: ExportReport) -> None:
    from studio.export.diagnose import diagnose_tokenizer

    tok_cfg = model_dir / "tokenizer_config.json"
    found = None
    if tok_cfg.is_file():
        try:
            found = json.loads(tok_cfg.read_text(encoding="utf-8")).get("tokenizer_class")
        except ValueError:
            report.warnings.append("tokenizer_config.json is not valid JSON")
    if found is None and ((model_dir / "tokenizer.json").is_file() or (model_dir / "vocab.json").is_file()):
        found = "PreTrainedTokenizerFast"
    report.tokenizer_class = found
    if found is None:
        report.warnings.append("no tokenizer files in the model folder: clients must bring their own")
        return
    warning = diagnose_tokenizer(found, report.expected_tokenizer_class, report.model_type)
    if warning:
        report.warnings.append(warning)
    try:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(model_dir))
        text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
        vocab = text.get("vocab_size") or config.get("vocab_size")
        if vocab and len(tok) > int(vocab):
            report.warnings.append(f"tokenizer_mismatch: the tokenizer has {len(tok)} ids but the embedding table "
                                   f"has {vocab}: ids >= {vocab} will fail at inference")
    except Exception as exc:  # noqa: BLE001 - a tokenizer that does not load is worth a warning, not a failure
        report.warnings.append(f"tokenizer does not load with AutoTokenizer: {str(exc).splitlines()[0][:200]}")


PROCESSOR_FILES = ("processor_config.json", "preprocessor_config.json", "video_preprocessor_config.json")


def _processor_info(model_dir: Path, report: ExportReport) -> None:
    """Which processor class clients get from ``AutoProcessor``; a warning with a way out when it does not load."""
    if not any((model_dir / f).is_file() for f in PROCESSOR_FILES):
        return
    try:
        from transformers import AutoProcessor

        report.processor_class = type(AutoProcessor.from_pretrained(str(model_dir))).__name__
    except Exception as exc:  # noqa: BLE001 - the export does not need it; clients do
        text = str(exc).strip()
        if "torchvision" in text.lower():
            report.warnings.append(
                "processor_needs_torchvision: AutoProcessor for this folder builds a processor whose video processor "
                f"needs torchvision, which is not installed ({text.splitlines()[0][:160]}). Clients can install the "
                "torchvision release paired with their torch, or load AutoImageProcessor and AutoTokenizer from this "
                "folder separately (both work without torchvision; the image processor gives pixel_values and "
                "image_grid_thw)")
        else:
            first = text.splitlines()[0][:200] if text else type(exc).__name__
            report.warnings.append(f"processor does not load with AutoProcessor: {first}")


def _copy_companions(model_dir: Path, tmp: Path, output: Path) -> list[tuple[Path, str]]:
    """Tokenizer, processor and config files (not weights) go next to the model."""
    out: list[tuple[Path, str]] = []
    for f in sorted(model_dir.iterdir()):
        if not f.is_file() or f.suffix in WEIGHT_FILES or f.name in COMPANION_SKIP or f.name == output.name:
            continue
        if f.name.endswith(".index.json"):
            continue
        name = f.name
        kind = ("config" if name in ("config.json", "generation_config.json")
                else "processor" if ("processor" in name or "preprocessor" in name or "feature_extractor" in name)
                else "tokenizer")
        dest = tmp / "companions" / name
        dest.parent.mkdir(exist_ok=True)
        shutil.copy2(f, dest)
        out.append((dest, kind))
    return out


def _split(options: ExportOptions, job: JobState, stages: Stages, report: ExportReport, recipe: Any, model: Any,
           specs: list[InputSpec], case_feeds: list[dict[str, np.ndarray]], references: list[dict[str, np.ndarray]],
           ort_outputs: list[dict[str, np.ndarray]], cases: list[Any], tmp: Path) -> list[tuple[Path, str, str]]:
    import onnx
    import torch

    from studio.export import diagnose as dg
    from studio.export.dims import name_output_dims, written_opset
    from studio.export.exporters import NamedWrapper, export_onnx
    from studio.export.patches import export_patches
    from studio.export.split import DERIVED_AXES, boundary_check, plan_parts
    from studio.export.validate import check_graph, compare, make_inputs, ort_session, run_case

    parts = plan_parts(recipe.split, model, specs, recipe.model_type)
    dyn_names = {n for s in specs for n in s.dynamic_axes.values()}
    config = read_config(options.model_dir)

    def keep(axis_name: str) -> bool:
        return DERIVED_AXES.get(axis_name, axis_name) in dyn_names

    def part_specs(part: Any) -> list[InputSpec]:
        by_name = {s.name: s for s in specs}
        return [by_name[n] for n in part.inputs]

    env = {k: _torch(v) for k, v in case_feeds[0].items()}
    written: list[tuple[Path, str, str]] = []
    sessions: dict[str, Any] = {}
    wrappers: dict[str, Any] = {}
    io: dict[str, dict[str, Any]] = {}
    stem = options.output.stem
    for i, part in enumerate(parts):
        path = tmp / f"{stem}.{part.name}.onnx"
        wrapper = NamedWrapper(part.module, part.inputs, part.outputs).eval()
        wrappers[part.name] = wrapper
        if part.standalone:  # its own inputs, from the traced case
            own = make_inputs(part_specs(part), config, cases[0])
            args = tuple(_torch(own[n]) for n in part.inputs)
        else:
            args = tuple(env[n] for n in part.inputs)
        axes = {n: {a: nm for a, nm in part.input_axes.get(n, {}).items() if keep(nm)} for n in part.inputs}
        out_axes = {n: {a: nm for a, nm in ax.items() if keep(nm)} for n, ax in part.output_axes.items()}
        try:
            with export_patches(model, recipe.model_type):
                res = export_onnx(wrapper, args, path, input_names=part.inputs, output_names=part.outputs,
                                  dynamic_axes=axes, opset=options.opset, exporter=options.exporter,
                                  limits=_axis_limits(config), output_axes=out_axes)
                with torch.no_grad():
                    outs = wrapper(*args)
        except Exception as exc:  # noqa: BLE001
            diag = dg.diagnose_exception("export", exc, model=wrapper, exporter=options.exporter, opset=options.opset)
            diag.message = f"part '{part.name}': {diag.message}"
            _fail(report, diag, job)
        if not part.standalone:
            env.update(dict(zip(part.outputs, outs, strict=True)))
        name_output_dims(path, out_axes)  # declared boundary names win over exporter-generated ones
        checker, shapes, errors = check_graph(path)
        part_model = onnx.load(str(path))
        if checker != "passed" or shapes != "passed":
            diag = dg.diagnose_exception("checker" if checker != "passed" else "shape_inference",
                                         RuntimeError(errors[0]), onnx_model=part_model)
            diag.message = f"part '{part.name}': {diag.message}"
            _fail(report, diag, job)
        try:
            sess = ort_session(path)
        except Exception as exc:  # noqa: BLE001
            diag = dg.diagnose_exception("ort_load", exc, onnx_model=part_model)
            diag.message = f"part '{part.name}': {diag.message}"
            _fail(report, diag, job)
        sessions[part.name] = sess
        dims = {"inputs": {x.name: list(x.shape) for x in sess.get_inputs()},
                "outputs": {x.name: list(x.shape) for x in sess.get_outputs()}}
        if not part.standalone:
            io[part.name] = dims
        report.parts[part.name] = {"path": str(path), "modality": part.modality, "inputs": dims["inputs"],
                                   "outputs": dims["outputs"], "checker": checker, "shape_inference": shapes,
                                   "ort_load": "passed", "opset": written_opset(path),
                                   "standalone": part.standalone, "export_seconds": round(res.seconds, 3)}
        written.append((path, "part", part.modality))
        stages.within("split", (i + 1) / (len(parts) + 1))
    problems = boundary_check(io)
    for name in report.parts:
        report.parts[name]["boundary"] = ("none (standalone)" if report.parts[name]["standalone"]
                                          else "matched" if not problems else "; ".join(problems))
    if problems:
        from studio.export.api import Diagnosis

        _fail(report, Diagnosis(stage="split", error_class="boundary_mismatch", message="; ".join(problems),
                                fix="re-export the parts together with the same --dynamic axes"), job)
    chain = [p for p in parts if not p.standalone]
    # chained parts vs PyTorch and vs the monolithic ONNX model, on every validation case
    for ci, case in enumerate(cases):
        tensors: dict[str, np.ndarray] = dict(case_feeds[ci])
        vc = ValidationCase(name=case.name, graph="chained parts",
                            input_shapes={k: list(v.shape) for k, v in case_feeds[ci].items()})
        try:
            for part in chain:
                res_ = sessions[part.name].run(None, {n: tensors[n] for n in part.inputs})
                tensors.update(dict(zip(part.outputs, res_, strict=True)))
        except Exception as exc:  # noqa: BLE001
            vc.error = f"ONNX Runtime failed in the chain: {str(exc)[:500]}"
        errors: list[str] = []
        if vc.error is None:
            for name, ref in references[ci].items():
                if name not in tensors:
                    continue
                chk, err = compare(name, tensors[name], ref, options.atol, options.rtol)
                vc.outputs.append(chk)
                if name in ort_outputs[ci]:
                    mono, err2 = compare(name, tensors[name], ort_outputs[ci][name], options.atol, options.rtol)
                    vc.outputs.append(OutputCheck(f"{name} vs {options.output.name}", mono.max_abs, mono.max_rel,
                                                  mono.passed))
                    err = err or err2
                if err:
                    errors.append(err)
        vc.error = vc.error or ("; ".join(errors) or None)
        vc.passed = vc.error is None and bool(vc.outputs) and all(o.passed for o in vc.outputs)
        report.validation.cases.append(vc)
        job.log(f"chained parts [{case.name}]: {'passed' if vc.passed else 'FAILED'}")
    # standalone parts (e.g. the text-only decoder of a VLM) vs their own PyTorch module
    for part in [p for p in parts if p.standalone]:
        for case in cases:
            feeds = make_inputs(part_specs(part), config, case)
            with torch.no_grad():
                ref = wrappers[part.name](*[_torch(feeds[n]) for n in part.inputs])
            refd = {n: t.detach().float().numpy() for n, t in zip(part.outputs, ref, strict=True)}
            vc, _got = run_case(case, f"{part.name} part", sessions[part.name], feeds, refd, options.atol,
                                options.rtol)
            report.validation.cases.append(vc)
            job.log(f"{part.name} part [{case.name}]: {'passed' if vc.passed else 'FAILED'}")
    checked = [c for c in report.validation.cases if c.graph != "model"]
    if not all(c.passed for c in checked):
        diag = dg.diagnose_parity(checked, tracer_warnings=[], model=None, onnx_model=None,
                                  atol=options.atol, rtol=options.rtol)
        diag.stage = "split"
        _fail(report, diag, job)
    stages.within("split", 1.0)
    return written
