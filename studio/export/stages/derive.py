"""Stage "inputs" from the model's processor: the signature and the validation cases made by running the processor
(the folder's, or the one transformers maps to the model type) on a synthetic image / clip / prompt.

Why a stage of its own: the signature can only be known once the model is loaded (its forward is the judge of
which prompt form the processor needs), and every later stage (export, parity, split) reads ``run.specs``. A user
signature keeps its inputs and gains the companions the processor makes with them (``image_grid_thw`` beside
``pixel_values``), each named in the report; an input the processor cannot make is a diagnosis naming the input and
the processor. Text-only models without a media processor keep the generic path (stages/inputs.py).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from studio.core.catalogue import N_
from studio.export.contract import Diagnosis, InputSpec
from studio.export.stages.derive_diagnosis import diagnosis, fix_for, media_not_taken, not_taken_fix
from studio.export.stages.inputs import ExampleInputs, axis_limits
from studio.export.stages.run import ExportRun, fail, to_torch

MASK_OF = {"attention_mask": "input_ids", "decoder_attention_mask": "decoder_input_ids"}


@dataclass
class DerivedInputs:
    """What the inputs stage learnt, kept on the run: a narrowing makes new cases with the same prompt form."""

    source: Any  # ProcessorSource
    derivation: Any  # processor_inputs.Derivation
    media: set[str]
    declared: set[str]
    params: list[str]
    user: dict[str, InputSpec] = field(default_factory=dict)


def forward_params(model: Any) -> list[str]:
    params = inspect.signature(type(model).forward).parameters
    return [n for n, p in params.items() if n != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]


def derive_example_inputs(run: ExportRun, model: Any) -> ExampleInputs | None:
    """The processor-made ExampleInputs, or None when the model has no media processor (the generic path runs)."""
    from studio.export import processor_inputs as pi
    from studio.export.batch_one import runs_at_batch_one
    from studio.export.modalities import declared_modalities
    from studio.export.processor_source import check_folder_processor, load_processor

    options, config, report = run.options, run.config, run.report
    try:
        source = load_processor(options.model_dir, config)
    except Exception as exc:  # noqa: BLE001 - a processor that cannot be built is a located diagnosis
        import re

        pip = re.search(r"pip install ([\w\-\[\]=.<>]+)", str(exc))
        missing = re.search(r"requires the (\w+) library", str(exc))
        fix = (f"install what the processor needs (pip install {pip.group(1)}) and export again" if pip else
               f"install {missing.group(1)} (the processor class needs it) and export again" if missing else
               "add the checkpoint's processor files (preprocessor_config.json, tokenizer) to the folder; the "
               "studio derives the rest from config.json")
        _note_torchvision(report)
        fail(run, diagnosis(run, "processor_unavailable", exc,
                             f"no processor could be built for model type '{run.recipe.model_type}': "
                             f"{type(exc).__name__}: {str(exc).strip()[:300]}", fix))
    _note_torchvision(report)
    if source is None or not (source.serves() - {"text"}):
        return None
    check_folder_processor(source, config, options.model_dir)
    check_token_ids(run)
    params = forward_params(model)
    declared = set(declared_modalities(config)) | (source.serves() - {"text"})
    user = {s.name: s for s in run.specs} if options.input_signature is not None else {}
    asked = {s.modality for s in user.values()} if user else declared
    media = (asked & source.serves()) - {"text"}
    if not media:
        return None  # text only, by the user's choice: the generic path (reported text-only below)
    try:
        der = pi.derive_inputs(model, source, config, media, params, at_batch_one=runs_at_batch_one)
    except pi.ExampleInputError as exc:
        untaken = media_not_taken(source, media, params)
        fix = not_taken_fix(type(model).__name__, untaken) if untaken else fix_for(exc)
        fail(run, diagnosis(run, "example_inputs_failed", exc.cause or exc, str(exc), fix, attempts=exc.attempts))
    from studio.export.input_axes import specs_from_runs

    specs = specs_from_runs(der.runs, params)
    specs, added = _select(run, specs, user, params, source)
    _record(run, source, der, added, declared, media)
    run.derived = DerivedInputs(source, der, media, declared, params, user)
    run.specs = specs
    report.signature = specs
    return _example_inputs(run, model, specs, der, params)


def _note_torchvision(report: Any) -> None:
    """The processor (or model) imported torchvision without its native ops: say so (studio.export.torchvision_compat)."""
    from studio.export.torchvision_compat import warning

    if (line := warning()) and line not in report.warnings:
        report.warnings.append(line)


def derived_files(run: ExportRun) -> list[tuple[Any, str, str | None]]:
    """The sub-processor settings built from the config (the folder had none), written beside the export so clients
    and the agent pre-process as the validation did; listed in the report."""
    if run.derived is None or run.derived.source.origin == "folder":
        return []
    paths = run.derived.source.write_derived(run.tmp / "derived")
    if paths:
        run.report.example_inputs["files"] = [p.name for p in paths]
        run.report.warnings.append("derived: " + ", ".join(p.name for p in paths) + " written beside the export "
                                   "(built from config.json; the folder has none)")
    return [(p, "processor", None) for p in paths]


def check_token_ids(run: ExportRun) -> None:
    """A media placeholder id the embedding table cannot hold (``image_token_index: 500`` with 120 ids) makes
    every prompt fail inside the model: say which key, before the processor is tried."""
    from studio.export.placeholder_tokenizer import config_special_ids, text_vocab_size

    vocab = text_vocab_size(run.config)
    bad = {k: v for k, v in config_special_ids(run.config).items()
           if v >= vocab and any(m in k for m in ("image", "video", "audio", "boi", "boa"))}
    if bad:
        key, value = next(iter(bad.items()))
        fail(run, Diagnosis(
            stage="inputs", error_class="token_id_out_of_vocab",
            message=(f"config.json's {key} id {value} is outside the text vocabulary ({vocab} ids): the model's "
                     "embedding lookup fails on every prompt that carries it"),
            fix=f"set {key}_id / {key}_index in config.json to the id the tokenizer gives it (below {vocab}), or "
                "grow the text vocab_size to the tokenizer's", module="config.json"))


def narrowed_inputs(run: ExportRun, what: str) -> ExampleInputs | None:
    """The same prompt form on cases whose image size and clip length are the traced ones ("media"), and also at
    batch 1 ("batch"); None when that changes nothing (the axes were already static)."""
    from studio.export import processor_inputs as pi

    d = run.derived
    base = pi.MEDIA_CASES[0]
    if what == "media" and d.derivation.static == "batch":
        return None  # already one row per case: its media narrowing is the batch one
    if what == "media":
        cases = [replace(c, image=base.image, seconds=(base.seconds[0],) * c.batch) for c in pi.MEDIA_CASES]
    else:
        cases = [replace(c, prompts=(c.prompts[-1],), image=base.image, seconds=(base.seconds[0],))
                 for c in pi.MEDIA_CASES]
    runs = []
    for case in cases:
        tensors, _ = pi.case_tensors(d.source, run.config, case, d.media, d.derivation.placeholders, d.params)
        runs.append(pi.ProcessorRun(case, tensors, {k: pi.modality_of_key(d.source, k, d.media, set(tensors)) for k in tensors}))
    before = {s.name: dict(s.dynamic_axes) for s in run.specs}
    from studio.export.input_axes import specs_from_runs

    specs = specs_from_runs(runs, d.params)
    specs, _ = _select(run, specs, d.user, d.params, d.source)
    if {s.name: dict(s.dynamic_axes) for s in specs} == before:
        return None
    d.derivation = replace(d.derivation, runs=runs)
    run.report.example_inputs["static"] = what
    run.report.example_inputs["cases"] = [c.name for c in cases]
    run.report.example_inputs["traced_media"] = {"image": list(base.image), "seconds": base.seconds[0]}
    run.specs = [s for s in specs if s.name in {x.name for x in run.specs}]
    run.report.signature = run.specs
    return _example_inputs(run, run.model, run.specs, d.derivation, d.params)


def _declared(run: ExportRun) -> tuple[set[str], set[str], list[str]]:
    from studio.export.modalities import declared_modalities

    declared = set(declared_modalities(run.config))
    if run.derived is not None:
        declared |= run.derived.declared
    asked = {s.modality for s in run.specs}
    return declared, asked, sorted((declared - asked) - {"text"})


def check_declared(run: ExportRun) -> None:
    """Before exporting: a declared modality no input of the default signature carries is refused (never a quiet
    text-only graph); one the user's own signature leaves out is reported as text only."""
    from studio.export.modalities import declared_modalities

    declared, asked, missing = _declared(run)
    run.report.modalities = {"declared": sorted(declared | asked), "exported": sorted(asked),
                             "text_only": asked == {"text"} and bool(missing)}
    if not missing:
        return
    if run.options.input_signature is None:
        keys = declared_modalities(run.config)
        named = ", ".join(f"{m} ({keys.get(m, 'its processor')})" for m in missing)
        fail(run, Diagnosis(
            stage="inputs", error_class="modality_missing",
            message=(f"the config declares {named} but no "
                     "processor makes its inputs, so the graph would be text only"),
            fix=("add the checkpoint's processor files to the folder, or export text only on purpose with "
                 "--input-signature text:input_ids,text:attention_mask")))
    run.report.warnings.append(f"text only: the signature leaves out {', '.join(missing)}, which the config "
                               "declares (asked with --input-signature); the graph takes no "
                               + " or ".join(f"{m} input" for m in missing))


def check_modalities(run: ExportRun, checked: Any) -> None:
    """Every modality in the signature is consumed by the graph (some output depends on one of its inputs), or
    the export is refused."""
    from studio.export.modalities import lost_modalities

    declared, asked, missing = _declared(run)
    lost = lost_modalities(checked.onnx_model, run.specs, asked)
    exported = sorted(asked - set(lost))
    run.report.modalities = {"declared": sorted(declared | asked), "exported": exported,
                             "text_only": exported == ["text"] and bool(missing)}
    if lost:
        m, names = next(iter(lost.items()))
        fail(run, Diagnosis(
            stage="check", error_class="modality_lost",
            message=(f"the exported graph does not consume the {m} input(s) {', '.join(names)}: no output depends "
                     f"on them (the trace never read them, or read them only for values it froze)"),
            fix=(f"export again with --exporter {'dynamo' if run.options.exporter == 'torchscript' else 'torchscript'}"
                 f"; if the model really ignores {m}, drop it from --input-signature (reported as text only)"),
            module=m))


def _select(run: ExportRun, specs: list[InputSpec], user: dict[str, InputSpec], params: list[str],
            source: Any) -> tuple[list[InputSpec], list[str]]:
    """A user signature: its inputs (their modality where given) plus the processor's companions of the media
    modalities it names; an input the processor does not make is a diagnosis."""
    from studio.export.signatures import apply_dynamic

    if not user:
        return apply_dynamic(specs, run.options.dynamic), []
    made = {s.name: s for s in specs}
    missing = [n for n in user if n not in made and n not in MASK_OF]
    if missing:
        fail(run, Diagnosis(
            stage="inputs", error_class="input_not_made",
            message=(f"input '{missing[0]}' is in the signature and {run.report.model_class}.forward takes it, but "
                     f"{source.name} does not make it from an image / clip / prompt (it makes: {', '.join(made)})"),
            fix=f"drop {missing[0]} from --input-signature, or add processor files that make it", module=source.name))
    modalities = {s.modality for s in user.values()}
    chosen: list[InputSpec] = []
    added: list[str] = []
    for s in specs:
        if s.name in user:
            s.modality = user[s.name].modality
            chosen.append(s)
        elif s.modality in modalities and s.modality != "text":
            chosen.append(s)
            added.append(s.name)
    return apply_dynamic(chosen, run.options.dynamic), added


def _record(run: ExportRun, source: Any, der: Any, added: list[str], declared: set[str], media: set[str]) -> None:
    """The report's account of the example inputs: processor, origin, prompt form, derived defaults, additions."""
    from studio.export import processor_inputs as pi

    report = run.report
    report.example_inputs = {
        "processor": source.name, "classes": source.classes, "origin": source.origin,
        "prompt": pi.describe(der.placeholders), "derived": [*source.derived, *der.notes],
        "placeholder_tokenizer": source.placeholder_tokenizer, "added": added,
        "not_taken": der.dropped, "cases": [r.case.name for r in der.runs]}
    if der.static:  # the forward runs only at batch 1 (studio.export.batch_one): the note says why
        report.example_inputs["static"] = der.static
    mods = der.runs[0].modality
    for name in added:
        modality, processor, model_class = mods.get(name, "companion"), source.name, report.model_class
        report.warnings.append(N_(f"input added: {name} ({modality}): {processor} makes it with the signature's "
                                  f"inputs and {model_class}.forward takes it"))
    report.warnings.extend(N_(f"derived: {reason}") for reason in [*source.derived, *der.notes])
    run.job.log(f"example inputs: {source.name} ({source.origin}) on a synthetic "
                f"{'image ' if 'vision' in media else ''}{'clip ' if 'audio' in media else ''}and prompt; "
                f"{pi.describe(der.placeholders)}")


def _example_inputs(run: ExportRun, model: Any, specs: list[InputSpec], der: Any, params: list[str]) -> ExampleInputs:
    """The wrapper the exporter traces (the model called by input names, masks it needs filled with ones), the
    parity cases and their feeds, one per processor run."""
    from studio.export.exporters import NamedWrapper
    from studio.export.stages.inputs import discover_outputs
    from studio.export.validate import CaseSpec

    names = [s.name for s in specs]
    feeds = [{n: np.ascontiguousarray(r.tensors[n]) for n in names if n in r.tensors} for r in der.runs]
    cases = [CaseSpec(r.case.name, _sizes(specs, f), i, padded=i > 0)
             for i, (r, f) in enumerate(zip(der.runs, feeds, strict=True))]
    fill = {m: like for m, like in MASK_OF.items() if m in params and m not in names and like in names}
    fill.update(run.recipe.fill_masks)
    kwargs = {"use_cache": False} if "use_cache" in params else {}
    kwargs.update({k: v for k, v in run.recipe.forward_kwargs.items() if k in params})
    outputs = list(run.recipe.outputs) or discover_outputs(model, specs, run.config, lambda case: feeds[0], kwargs)
    wrapper = NamedWrapper(model, names, outputs, kwargs, fill).eval()
    export_wrapper = wrapper
    if run.recipe.model_type == "qwen2_vl" and {"pixel_values", "image_grid_thw"} <= set(names):
        wrapper, export_wrapper = _qwen2_vl(run, model, names, outputs, specs)
        names = [s.name for s in run.specs]
        feeds = [{n: f[n] for n in names} for f in feeds]
    elif run.recipe.model_type == "llava" and set(names) == {"input_ids", "attention_mask", "pixel_values"} \
            and outputs == ["logits"]:
        from studio.export.llava import LlavaFull, LlavaReference

        names = ["input_ids", "attention_mask", "pixel_values"]  # the order LlavaFull takes them in
        run.specs = sorted(run.specs, key=lambda s: names.index(s.name))
        run.report.signature = run.specs
        wrapper = NamedWrapper(LlavaReference(model), names, outputs).eval()
        export_wrapper = NamedWrapper(LlavaFull(model), names, outputs).eval()
    else:
        export_wrapper = _traceable_vision(run, model, names, outputs, kwargs, fill, feeds,
                                           der.feature_splits != 0) or export_wrapper
    by_seed = dict(enumerate(feeds))
    return ExampleInputs(names, outputs, wrapper, export_wrapper, cases, feeds[0],
                         tuple(to_torch(feeds[0][n]) for n in names), {s.name: dict(s.dynamic_axes) for s in run.specs},
                         axis_limits(run.config), make_feeds=lambda case: by_seed[case.seed])


def _qwen2_vl(run: ExportRun, model: Any, names: list[str], outputs: list[str],
              specs: list[InputSpec]) -> tuple[Any, Any]:
    """The existing tensor-only Qwen2-VL graph (dynamic image grids); it marks image tokens itself, so the
    processor's ``mm_token_type_ids`` is not a graph input."""
    from studio.export.exporters import NamedWrapper
    from studio.export.qwen2_vl import Qwen2VLFull, Qwen2VLReference

    keep = [n for n in ("input_ids", "attention_mask", "pixel_values", "image_grid_thw") if n in names]
    run.specs = [s for s in specs if s.name in keep]
    run.report.signature = run.specs
    if "mm_token_type_ids" in names:
        run.report.warnings.append("mm_token_type_ids is not a graph input: the Qwen2-VL graph marks image tokens "
                                   "from input_ids itself (as HF does for these ids)")
    run.report.warnings.append("export patch: Qwen2-VL vision grid, per-frame attention and M-RoPE positions "
                               "computed with tensor ops (the HF code uses .tolist()/loops a trace would freeze); "
                               "parity is checked against the unmodified HF forward")
    return (NamedWrapper(Qwen2VLReference(model), keep, outputs).eval(),
            NamedWrapper(Qwen2VLFull(model), keep, outputs).eval())


def _traceable_vision(run: ExportRun, model: Any, names: list[str], outputs: list[str], kwargs: dict[str, Any],
                      fill: dict[str, str], feeds: list[dict[str, np.ndarray]], may_split: bool = True) -> Any:
    """The generic traceable wrapper (studio.export.vision_trace / mrope_trace / features_split) when the model's
    modules call transformers' vision_utils, define get_rope_index or split their image features per image; None
    otherwise. Each patch applied is a report warning. ``may_split``: False when the example-input forward made no
    per-image split (nothing to keep whole: its check is skipped)."""
    from studio.export.exporters import NamedWrapper
    from studio.export.features_split import SplitWhole, has_feature_methods, split_whole_is_equal
    from studio.export.mrope_trace import rope_owner
    from studio.export.vision_trace import model_uses_vision_utils

    used = model_uses_vision_utils(model)
    owner = rope_owner(model) if "image_grid_thw" in names else None
    inner: Any = model
    if used or owner is not None:
        inner = _vision_utils_inner(run, model, used, owner, feeds)
    if may_split and has_feature_methods(model) and set(names) - {"input_ids", "attention_mask"}:
        candidate = NamedWrapper(inner, names, outputs, kwargs, fill).eval()
        if split_whole_is_equal(candidate, model, tuple(to_torch(feeds[0][n]) for n in names)):
            _warn(run, "export patch: the per-image torch.split of the vision features (get_image_features) kept "
                       "whole in the graph (a traced Split refuses other image sizes); checked: identical outputs on "
                       "the traced example")
            inner = SplitWhole(inner, model)
    return None if inner is model else NamedWrapper(inner, names, outputs, kwargs, fill).eval()


def _vision_utils_inner(run: ExportRun, model: Any, used: list[str], owner: Any,
                        feeds: list[dict[str, np.ndarray]]) -> Any:
    """TraceableVLM: vision_utils swapped during the trace; M-RoPE in the graph when checked equal to the family's."""
    from studio.export.mrope_trace import TraceableVLM, check_rope_index
    from studio.export.vision_trace import vision_configs

    positions = False
    if owner is not None:
        why = check_rope_index(model, feeds)
        positions = why is None
        _warn(run, (
            f"export patch: M-RoPE positions computed in the graph (equal to {type(owner).__name__}.get_rope_index on "
            f"all {len(feeds)} example cases)" if positions else
            f"M-RoPE positions left to HF's get_rope_index, which a trace freezes to the traced prompts: {why}"))
    if used:
        attention = (", vision attention over cu_seqlens segments with one block-diagonal mask"
                     if vision_configs(model) else "")
        _warn(run, f"export patch: transformers.vision_utils {', '.join(used)} replaced by tensor-only versions during "
                   f"the trace{attention} (the HF code uses .tolist()/loops a trace would freeze); parity is checked "
                   "against the unmodified HF forward")
    return TraceableVLM(model, positions)


def _warn(run: ExportRun, text: str) -> None:
    if text not in run.report.warnings:  # a narrowing builds the wrappers again
        run.report.warnings.append(text)


def _sizes(specs: list[InputSpec], feeds: dict[str, np.ndarray]) -> dict[str, int]:
    return {name: int(feeds[s.name].shape[a]) for s in specs if s.name in feeds for a, name in s.dynamic_axes.items()}
