"""Between "load" and "export": the module the exporter traces, the reference it is checked against, and the
validation cases with the first one's tensors (the traced example)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from studio.export.contract import InputSpec
from studio.export.stages.run import ExportRun, to_torch


@dataclass
class ExampleInputs:
    """What the export, check and parity stages share about the model's inputs and outputs.

    ``wrapper`` is the unmodified model (the parity reference); ``export_wrapper`` is what the exporter sees
    (the same module, or a patched one such as Qwen2-VL's tensor-only vision path).
    """

    input_names: list[str]
    output_names: list[str]
    wrapper: Any
    export_wrapper: Any
    cases: list[Any]
    feeds0: dict[str, np.ndarray]
    args0: tuple[Any, ...]
    dynamic_axes: dict[str, dict[int, str]]
    limits: dict[str, int]
    output_axes: dict[str, dict[int, str]] | None = None  # declared output dims (a decoder's present.*)
    make_feeds: Callable[[Any], dict[str, np.ndarray]] | None = None  # case -> feeds; None: validate.make_inputs


def build_example_inputs(run: ExportRun, model: Any) -> ExampleInputs:
    """Name the model's inputs and outputs, pick the module to trace, and make the traced example (case 0)."""
    from studio.export.exporters import NamedWrapper
    from studio.export.validate import case_specs, make_inputs

    options, recipe, specs, config = run.options, run.recipe, run.specs, run.config
    input_names = run.input_names
    make_feeds = family_feeds(run, model)  # per family: image tokens for LLaVA-style models
    output_names = list(recipe.outputs) or discover_outputs(model, specs, config, make_feeds)
    wrapper = NamedWrapper(model, input_names, output_names, recipe.forward_kwargs, recipe.fill_masks).eval()
    export_wrapper = wrapper
    if recipe.model_type == "qwen2_vl" and "pixel_values" in input_names:
        from studio.export.qwen2_vl import Qwen2VLFull, Qwen2VLReference

        wrapper = NamedWrapper(Qwen2VLReference(model), input_names, output_names).eval()
        export_wrapper = NamedWrapper(Qwen2VLFull(model), input_names, output_names).eval()
        run.report.warnings.append("export patch: Qwen2-VL vision grid, per-frame attention and M-RoPE positions "
                                   "computed with tensor ops (the HF code uses .tolist()/loops a trace would "
                                   "freeze); parity is checked against the unmodified HF forward")
    cases = case_specs(specs, max(2, int(options.validation_cases)))
    if make_feeds is not None and recipe.model_type == "llava" and output_names == ["logits"] \
            and input_names == ["input_ids", "attention_mask", "pixel_values"]:
        from studio.export.llava import LlavaFull, LlavaReference

        wrapper = NamedWrapper(LlavaReference(model), input_names, output_names).eval()
        export_wrapper = NamedWrapper(LlavaFull(model), input_names, output_names).eval()
    feeds0 = (make_feeds or (lambda case: make_inputs(specs, config, case)))(cases[0])
    args0 = tuple(to_torch(feeds0[n]) for n in input_names)
    dynamic_axes = {s.name: dict(s.dynamic_axes) for s in specs}
    return ExampleInputs(input_names, output_names, wrapper, export_wrapper, cases, feeds0, args0, dynamic_axes,
                         axis_limits(config), make_feeds=make_feeds)


def family_feeds(run: ExportRun, model: Any) -> Callable[[Any], dict[str, np.ndarray]] | None:
    """Case -> feeds for a family whose forward rejects plain random inputs (None: the generic ones do).
    LLaVA-style: as many image-token ids per row as the tower returns features for one image."""
    from studio.export import llava
    from studio.export.validate import _id_limit

    names = set(run.input_names)
    companions = llava.image_companions(model)
    if "pixel_values" in names and companions and llava.image_token_id(run.config) is not None:
        from studio.export.contract import Diagnosis
        from studio.export.stages.run import fail

        fail(run, Diagnosis(
            stage="inputs", error_class="processor_unavailable", module=f"{type(model).__name__}.get_image_features",
            message=(f"{type(model).__name__}'s vision tower reads {', '.join(companions)} with pixel_values, which "
                     f"only the model's processor makes, and transformers maps no processor to model type "
                     f"'{run.recipe.model_type}'"),
            fix=("add the checkpoint's processor files (preprocessor_config.json, processor_config.json, tokenizer) "
                 "to the folder and export again")))
    if not ({"input_ids", "pixel_values"} <= names and llava.is_llava_style(run.config, model)):
        return None
    spec = next(s for s in run.specs if s.name == "pixel_values")
    try:
        tokens = llava.image_tokens_per_image(model, list(spec.example_shape))
    except Exception as exc:  # noqa: BLE001 - the tower fails on a plain image: a diagnosis naming the config
        import traceback

        from studio.export.contract import Diagnosis
        from studio.export.stages.run import fail

        fail(run, Diagnosis(
            stage="inputs", error_class="example_inputs_failed", module="get_image_features",
            message=(f"building the image-token example inputs: the vision tower failed on a blank "
                     f"{list(spec.example_shape)[1:]} image: {type(exc).__name__}: {str(exc)[:300]}"),
            fix=("check vision_config, vision_feature_layer and vision_feature_select_strategy in config.json "
                 "against the weights (the tower must return features for one image)"),
            raw_log="".join(traceback.format_exception(exc))[-20000:]))
    limit = _id_limit(run.config)
    run.job.log(f"example inputs: {tokens} image tokens per image (the vision tower's features for one image)")
    return lambda case: llava.make_inputs(run.specs, run.config, case, tokens, limit)


def discover_outputs(model: Any, specs: list[InputSpec], config: dict[str, Any],
                     make_feeds: Callable[[Any], dict[str, np.ndarray]] | None = None,
                     forward_kwargs: dict[str, Any] | None = None) -> list[str]:
    """Generic models: the tensor fields the model returns on the traced inputs (the family's, if it has any)."""
    import torch

    from studio.export.validate import CaseSpec, make_inputs

    probe = CaseSpec("probe", {}, 0)
    feeds = make_feeds(probe) if make_feeds is not None else make_inputs(specs, config, probe)
    with torch.no_grad():
        out = model(**{k: to_torch(v) for k, v in feeds.items()}, **(forward_kwargs or {}))
    if isinstance(out, torch.Tensor):
        return ["output"]
    skip = {"past_key_values", "hidden_states", "attentions", "encoder_hidden_states", "encoder_attentions"}
    names = [k for k, v in out.items() if isinstance(v, torch.Tensor) and k not in skip]
    return names[:4] or ["output"]


def axis_limits(config: dict[str, Any]) -> dict[str, int]:
    """Upper bounds of dynamic axes the model's config fixes (position embeddings), for the exporter's dims."""
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    limits: dict[str, int] = {}
    if text.get("max_position_embeddings"):
        limits["sequence"] = int(text["max_position_embeddings"])
    if config.get("max_target_positions"):
        limits["decoder_sequence"] = int(config["max_target_positions"])
    return limits
