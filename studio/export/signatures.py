"""Input signatures: which inputs a model takes, their modality, dtype, example shape and dynamic axes.

A *recipe* per model type knows the HF class to load, the inputs and outputs worth exporting and the
tokenizer class the model expects; unknown model types fall back to the class's ``forward`` signature.
``--input-signature text:input_ids,vision:pixel_values`` is parsed here and checked against ``forward``.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import InputError, ModelError
from studio.export.contract import MODALITIES, InputSpec

# name -> (modality, dtype, axis names). Shapes come from the config (see example_shape).
KNOWN_INPUTS: dict[str, tuple[str, str, dict[int, str]]] = {
    "input_ids": ("text", "int64", {0: "batch", 1: "sequence"}),
    "attention_mask": ("text", "int64", {0: "batch", 1: "sequence"}),
    "token_type_ids": ("text", "int64", {0: "batch", 1: "sequence"}),
    "position_ids": ("text", "int64", {0: "batch", 1: "sequence"}),
    "decoder_input_ids": ("text", "int64", {0: "batch", 1: "decoder_sequence"}),
    "decoder_attention_mask": ("text", "int64", {0: "batch", 1: "decoder_sequence"}),
    "pixel_values": ("vision", "float32", {0: "batch"}),
    "pixel_mask": ("vision", "int64", {0: "batch"}),
    "input_features": ("audio", "float32", {0: "batch"}),
    "input_values": ("audio", "float32", {0: "batch", 1: "samples"}),
    "image_grid_thw": ("vision", "int64", {0: "images"}),
}
# per model type: inputs whose layout differs from the common one (Qwen2-VL takes flattened patches)
TYPE_INPUTS: dict[str, dict[str, tuple[str, str, dict[int, str]]]] = {
    "qwen2_vl": {"pixel_values": ("vision", "float32", {0: "patches"})},
}
TRACE_SIZES = {"batch": 2, "sequence": 8, "decoder_sequence": 4, "samples": 16000}


@dataclass
class Recipe:
    """What to export for one model type."""

    model_type: str
    loader: str  # transformers class name
    inputs: list[tuple[str, str]]  # (modality, name) in export order
    outputs: list[str]  # fields of the model output, in order
    expected_tokenizer: str | None = None
    forward_kwargs: dict[str, Any] = field(default_factory=dict)
    split: str | None = None  # "dual_encoder" | "encoder_decoder" | "vlm_decoder" | "vlm_llava" | "single_stream"
    # masks the wrapper fills with ones when not in the signature (mask -> input it mirrors): without one,
    # transformers probes position_ids for packed sequences with aten::diff, which TorchScript cannot export
    fill_masks: dict[str, str] = field(default_factory=dict)


RECIPES: dict[str, Recipe] = {r.model_type: r for r in (
    Recipe("clip", "CLIPModel", [("text", "input_ids"), ("text", "attention_mask"), ("vision", "pixel_values")],
           ["logits_per_image", "logits_per_text", "text_embeds", "image_embeds"], "CLIPTokenizer",
           split="dual_encoder"),
    Recipe("siglip", "SiglipModel", [("text", "input_ids"), ("vision", "pixel_values")],
           ["logits_per_image", "logits_per_text", "text_embeds", "image_embeds"], "SiglipTokenizer",
           split="dual_encoder"),
    Recipe("vilt", "ViltForQuestionAnswering",
           [("text", "input_ids"), ("text", "attention_mask"), ("text", "token_type_ids"),
            ("vision", "pixel_values"), ("vision", "pixel_mask")], ["logits"], "BertTokenizer",
           split="single_stream"),
    Recipe("whisper", "WhisperForConditionalGeneration",
           [("audio", "input_features"), ("text", "decoder_input_ids")], ["logits"], "WhisperTokenizer",
           forward_kwargs={"use_cache": False}, split="encoder_decoder",
           fill_masks={"decoder_attention_mask": "decoder_input_ids"}),
    Recipe("qwen2_vl", "Qwen2VLForConditionalGeneration",
           [("text", "input_ids"), ("text", "attention_mask"), ("vision", "pixel_values"),
            ("vision", "image_grid_thw")], ["logits"], "Qwen2Tokenizer", forward_kwargs={"use_cache": False},
           split="vlm_decoder"),
    Recipe("llava", "LlavaForConditionalGeneration",
           [("text", "input_ids"), ("text", "attention_mask"), ("vision", "pixel_values")], ["logits"],
           forward_kwargs={"use_cache": False}, split="vlm_llava"),  # image tokens: studio/export/llava.py
    Recipe("qwen2", "Qwen2ForCausalLM", [("text", "input_ids"), ("text", "attention_mask")], ["logits"],
           "Qwen2Tokenizer", forward_kwargs={"use_cache": False}),  # --no-with-past; --with-past: stages/past.py
    Recipe("studio-branchy", "AutoModel", [("text", "input_ids"), ("text", "attention_mask")],
           ["last_hidden_state", "pooler_output"], "BertTokenizer"),
)}

WEIGHT_FILES = (".safetensors", ".bin", ".pt", ".pth", ".msgpack", ".h5", ".ckpt")


def read_config(model_dir: Path) -> dict[str, Any]:
    """config.json of an HF folder, with clear errors for a missing or non-HF folder."""
    model_dir = Path(model_dir)
    if not model_dir.exists():
        raise InputError(f"model folder {model_dir} does not exist", offending=str(model_dir),
                         hint="give a local HuggingFace model folder, or write one with "
                              "`studio sample-model tiny-clip --out DIR`")
    if not model_dir.is_dir():
        raise InputError(f"{model_dir} is not a folder", offending=str(model_dir),
                         hint="give the HuggingFace model folder (the one holding config.json), not a file")
    cfg_path = model_dir / "config.json"
    if not cfg_path.is_file():
        raise InputError(f"{model_dir} is not a HuggingFace model folder: it has no config.json",
                         offending=str(model_dir),
                         hint="point at the folder written by save_pretrained (config.json + weights)")
    try:
        cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(f"config.json is not valid JSON: {exc}", offending=str(cfg_path),
                         hint="re-save the model with save_pretrained") from exc
    if not isinstance(cfg, dict) or "model_type" not in cfg:
        raise InputError(f"{cfg_path} has no model_type: not a HuggingFace transformers config",
                         offending=str(cfg_path), hint="re-save the model with save_pretrained")
    if not any(p.suffix in WEIGHT_FILES for p in model_dir.iterdir()):
        raise InputError(f"{model_dir} has a config.json but no weights (*.safetensors / *.bin)",
                         offending=str(model_dir), hint="save the model with save_pretrained, not only its config")
    return cfg


def recipe_for(config: dict[str, Any]) -> Recipe:
    mt = str(config.get("model_type"))
    if mt in RECIPES:
        return RECIPES[mt]
    archs = config.get("architectures") or ["AutoModel"]
    return Recipe(mt, archs[0], [], [], None)


def model_class(recipe: Recipe) -> Any:
    """The transformers class for a recipe (imports transformers; registers the studio's custom types)."""
    import transformers

    import studio.export.custom_models  # noqa: F401 - registers the custom sample types

    cls = getattr(transformers, recipe.loader, None)
    if cls is None:
        raise ModelError(f"transformers has no class {recipe.loader} for model type '{recipe.model_type}'",
                         offending=recipe.loader, hint="upgrade transformers or export with a known model type")
    return cls


def forward_params(cls: Any) -> list[str]:
    if getattr(cls, "__name__", "").startswith("Auto"):
        return []  # resolved after loading
    params = inspect.signature(cls.forward).parameters
    return [n for n, p in params.items() if n != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]


def modality_of(name: str) -> str:
    if name in KNOWN_INPUTS:
        return KNOWN_INPUTS[name][0]
    if "pixel" in name or "image" in name:
        return "vision"
    if "audio" in name or "feature" in name:
        return "audio"
    return "text"


def complete_spec(spec: InputSpec, config: dict[str, Any]) -> InputSpec:
    """Fill dtype, default dynamic axes and the traced example shape of one input."""
    known = {**KNOWN_INPUTS, **TYPE_INPUTS.get(str(config.get("model_type")), {})}
    _mod, dtype, axes = known.get(spec.name, (spec.modality, "float32", {0: "batch"}))
    spec.dtype = spec.dtype or dtype
    if not spec.dynamic_axes:
        spec.dynamic_axes = dict(axes)
    if not spec.example_shape:
        spec.example_shape = example_shape(spec.name, config)
    return spec


def _sub(config: dict[str, Any], key: str) -> dict[str, Any]:
    sub = config.get(key)
    return sub if isinstance(sub, dict) else config


def patch_dim(config: dict[str, Any]) -> int:
    """Length of one flattened Qwen2-VL patch: channels * temporal_patch_size * patch_size^2."""
    v = _sub(config, "vision_config")
    return int(v.get("in_channels", 3)) * int(v.get("temporal_patch_size", 2)) * int(v.get("patch_size", 14)) ** 2


def example_shape(name: str, config: dict[str, Any], sizes: dict[str, int] | None = None) -> list[int]:
    s = {**TRACE_SIZES, **(sizes or {})}
    b = s["batch"]
    # the vision sub-config, or whichever sub-config sizes the image (a VisionEncoderDecoder's encoder)
    vision = next((v for v in (config.get("vision_config"), *config.values()) if isinstance(v, dict)
                   and "image_size" in v), _sub(config, "vision_config"))
    size = vision.get("image_size", 32) or 32  # one side, or [height, width] (InternVL, MGP-STR)
    height, width = (int(size[0]), int(size[-1])) if isinstance(size, (list, tuple)) and size else (int(size),) * 2
    if name in ("input_ids", "attention_mask", "token_type_ids", "position_ids"):
        return [b, s["sequence"]]
    if name in ("decoder_input_ids", "decoder_attention_mask"):
        return [b, s["decoder_sequence"]]
    if name == "pixel_values" and config.get("model_type") == "qwen2_vl":
        return [2 * 16, patch_dim(config)]  # flattened patches of two 16x16 images (the trace's layout)
    if name == "image_grid_thw":
        return [b, 3]
    if name == "pixel_values":
        return [b, int(vision.get("num_channels", 3) or 3), height, width]
    if name == "pixel_mask":
        return [b, height, width]
    if name == "input_features":
        return [b, int(config.get("num_mel_bins", 80)), 2 * int(config.get("max_source_positions", 1500))]
    if name == "input_values":
        return [b, s["samples"]]
    return [b, s["sequence"]]


def default_signature(model_dir: Path) -> list[InputSpec]:
    """The inputs exported when ``--input-signature`` is not given."""
    config = read_config(Path(model_dir))
    recipe = recipe_for(config)
    pairs = list(recipe.inputs)
    if not pairs:  # a provisional form (the wizard's pre-filled page): the export derives the real one from the
        # processor; every known input the forward takes, media included, so no modality starts out missing
        params = forward_params(model_class(recipe))
        main = [n for n in params if n in KNOWN_INPUTS and n not in ("position_ids", "decoder_attention_mask")]
        pairs = [(modality_of(n), n) for n in (main or params[:1])]
    return [complete_spec(InputSpec(modality=m, name=n), config) for m, n in pairs]


def parse_signature(text: str, model_dir: Path) -> list[InputSpec]:
    """Parse ``modality:name,...``; unknown modalities and names the model does not take are InputErrors."""
    config = read_config(Path(model_dir))
    recipe = recipe_for(config)
    params = forward_params(model_class(recipe))
    if not params and recipe.loader == "AutoModel":
        params = [n for _m, n in recipe.inputs]
    specs: list[InputSpec] = []
    for item in [t.strip() for t in text.split(",") if t.strip()]:
        if ":" not in item:
            raise InputError(f"input signature item '{item}' is not modality:input", offending=item,
                             hint="write it like text:input_ids,text:attention_mask,vision:pixel_values")
        modality, name = (p.strip() for p in item.split(":", 1))
        if modality not in MODALITIES:
            raise InputError(f"unknown modality '{modality}' in input signature", offending=item,
                             hint=f"modalities are: {', '.join(MODALITIES)}")
        if params and name not in params:
            known = [p for p in params if p in KNOWN_INPUTS] or params
            raise InputError(f"{recipe.loader} has no input named '{name}'", offending=item,
                             hint=f"inputs of this model: {', '.join(known)}")
        if any(s.name == name for s in specs):
            raise InputError(f"input '{name}' is listed twice", offending=item, hint="list each input once")
        specs.append(complete_spec(InputSpec(modality=modality, name=name), config))
    if not specs:
        raise InputError("empty input signature", offending=text,
                         hint="write it like text:input_ids,vision:pixel_values")
    return specs


def apply_dynamic(specs: list[InputSpec], dynamic: list[str] | None) -> list[InputSpec]:
    """Keep only the dynamic axes the user asked for.

    Items are axis names (``batch``, ``sequence``) or per-input ``input.axis=name`` (``pixel_values.2=height``);
    ``none`` makes every axis static. ``None`` keeps the defaults.
    """
    if dynamic is None:
        return specs
    names = {d.strip() for d in dynamic if d.strip()}
    per_input: dict[str, dict[int, str]] = {}
    plain: set[str] = set()
    for item in names:
        if "=" in item:
            left, axis_name = item.split("=", 1)
            inp, _, axis = left.rpartition(".")
            if not inp or not axis.isdigit():
                raise InputError(f"bad dynamic axis '{item}'", offending=item,
                                 hint="use an axis name (batch) or input.axis=name (pixel_values.2=height)")
            if not any(s.name == inp for s in specs):
                raise InputError(f"dynamic axis names unknown input '{inp}'", offending=item,
                                 hint=f"inputs: {', '.join(s.name for s in specs)}")
            per_input.setdefault(inp, {})[int(axis)] = axis_name
        elif item != "none":
            plain.add(item)
    declared = {n for s in specs for n in s.dynamic_axes.values()}
    unknown = plain - declared - {n for d in per_input.values() for n in d.values()}
    if unknown:
        raise InputError(f"unknown dynamic axis name(s): {', '.join(sorted(unknown))}", offending=",".join(sorted(unknown)),
                         hint=f"axes of this model: {', '.join(sorted(declared))} (or input.axis=name)")
    for s in specs:
        axes = {i: n for i, n in s.dynamic_axes.items() if n in plain}
        for i, n in per_input.get(s.name, {}).items():
            if i >= len(s.example_shape):
                raise InputError(f"input '{s.name}' has no axis {i}", offending=f"{s.name}.{i}",
                                 hint=f"it has {len(s.example_shape)} axes")
            axes[i] = n
        s.dynamic_axes = dict(sorted(axes.items()))
    return specs


def expected_tokenizer(config: dict[str, Any]) -> str | None:
    return recipe_for(config).expected_tokenizer


def is_decoder_only(config: dict[str, Any]) -> bool:
    archs = config.get("architectures") or []
    return bool(archs) and str(archs[0]).endswith("ForCausalLM") and not config.get("is_encoder_decoder")
