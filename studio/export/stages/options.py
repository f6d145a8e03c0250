"""Stage "inputs": the export's options and signature checked before any torch import, and the report opened."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from studio.core.errors import InputError
from studio.core.jobs import JobState
from studio.export.api import MODALITIES, ExportOptions, ExportReport, InputSpec, Validation
from studio.export.signatures import (
    apply_dynamic,
    complete_spec,
    default_signature,
    parse_signature,
    read_config,
    recipe_for,
)
from studio.export.stages.run import ExportRun, timed

OPSET_RANGE = (7, 23)


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
    from studio.export.modalities import check_known_model_type

    check_known_model_type(config, str(options.model_dir / "config.json"))
    from studio.export.stages.past import decoder_specs, resolve_with_past
    from studio.export.stages.past_seq2seq import is_seq2seq, resolve_seq2seq_past, seq2seq_specs

    if is_seq2seq(config):  # Whisper: encoder + decoder-with-past graphs (studio.export.seq2seq)
        options.with_past = resolve_seq2seq_past(options)
        if options.with_past:
            options.attn_implementation = options.attn_implementation or "eager"
            return config, seq2seq_specs(config)
    else:
        options.with_past, _ = resolve_with_past(options, config)
    if options.with_past:  # the decoder's own signature: ids, mask, positions and the cache
        options.attn_implementation = options.attn_implementation or "eager"
        return config, decoder_specs(config)
    specs = _specs(options, config)
    for s in specs:
        if s.modality not in MODALITIES:
            raise InputError(f"unknown modality '{s.modality}'", offending=f"{s.modality}:{s.name}",
                             hint=f"modalities are: {', '.join(MODALITIES)}")
    recipe = recipe_for(config)
    if options.split_modalities:
        from studio.export.split import SPLIT_KINDS

        if recipe.split not in SPLIT_KINDS:
            raise InputError(f"--split-modalities is not available for model type '{recipe.model_type}'",
                             offending=recipe.model_type,
                             hint="it is supported for dual encoders (clip, siglip), whisper, qwen2_vl and vilt; "
                                  "export without --split-modalities")
    return config, specs


def open_report(options: ExportOptions) -> tuple[ExportReport, dict[str, Any], list[InputSpec]]:
    """The report every later stage fills, headed by the checked options; bad input raises before any work."""
    report = ExportReport(model_dir=str(options.model_dir))
    with timed(report, "inputs"):
        config, specs = check_options(options)
        from studio.export.precision import check_precision

        check_precision(options, recipe_for(config).split, [s.modality for s in specs])
    recipe = recipe_for(config)
    report.model_type = recipe.model_type
    report.signature = specs
    report.expected_tokenizer_class = recipe.expected_tokenizer
    report.options = {"output": str(options.output), "opset": options.opset, "exporter": options.exporter,
                      "dynamic": options.dynamic, "split_modalities": options.split_modalities,
                      "atol": options.atol, "rtol": options.rtol, "validation_cases": options.validation_cases,
                      "attn_implementation": getattr(options, "attn_implementation", None),
                      "with_past": options.with_past, "precision": options.precision,
                      "kv_cache_dtype": options.kv_cache_dtype}
    from studio.export.stages.past import past_notes

    report.warnings.extend(past_notes(options, config))
    report.validation = Validation(atol=options.atol, rtol=options.rtol)
    return report, config, specs


def prepare_run(options: ExportOptions, tmp: Path, job: JobState | None = None) -> ExportRun:
    """An ExportRun writing into ``tmp``: what a test needs to call a later stage on its own."""
    report, config, specs = open_report(options)
    return ExportRun(options, config, specs, recipe_for(config), report, job or JobState(name="export"), Path(tmp))
