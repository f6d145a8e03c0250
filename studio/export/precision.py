"""Mixed precision per exported part (``--precision vision=int8,text=fp16``) and an FP16 KV cache
(``--kv-cache-dtype float16``): the option parsing (torch-free, checked before any work) and the ONNX conversions.

Why per part: the seed's deployment runs the vision encoder in INT8 and the text decoder in FP16; each part has its
own error budget, so each is converted and judged on its own figures (max abs diff and cosine against the FP32 part;
the same figures against the HF PyTorch module for the record) and falls back to FP32 alone when it misses the
tolerance. Conversions reuse the libraries: onnxconverter-common for FP16 (graph I/O kept FP32, ops that overflow or
lose range in half precision kept FP32 by a block list), ONNX Runtime's quantizer for INT8 (static QDQ calibrated on
images from the model's own processor; dynamic as the no-calibration choice).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import InputError
from studio.optimize.quantize import INT8_OPS  # noqa: F401 - the ops INT8 converts, re-exported

PRECISIONS = ("fp32", "fp16", "int8", "int8-dynamic")
KV_CACHE_DTYPES = ("float32", "float16")
# ops kept in FP32 inside an FP16 part: norms' squares / means / roots overflow or underflow in half precision,
# softmax and exp need the range, and the converter's default list (Range, CumSum, TopK, Resize, ...)
FP16_BLOCK = ("Pow", "ReduceMean", "ReduceSum", "Sqrt", "Reciprocal", "Softmax", "Exp", "Log", "Erf",
              "LayerNormalization", "SimplifiedLayerNormalization", "RMSNormalization")
# the parts each split kind writes (name, modality); without --split-modalities the one target is "model"
PARTS = {
    "dual_encoder": (("vision", "vision"), ("text", "text"), ("fusion", "fusion")),
    "encoder_decoder": (("audio", "audio"), ("decoder", "text")),
    "vlm_decoder": (("vision", "vision"), ("decoder", "text"), ("text", "text")),
    "vlm_llava": (("vision", "vision"), ("projector", "vision"), ("decoder", "text"), ("text", "text")),
    "single_stream": (("text", "text"), ("vision", "vision"), ("fusion", "fusion")),
}


@dataclass
class Figures:
    """Worst figures over every validation case and float output."""

    max_abs: float = 0.0
    cosine: float = 1.0
    outputs: int = 0  # (case, output) pairs compared


@dataclass
class PartPrecision:
    """One part's conversion: what was asked, what it got, its figures and, if it missed, the fallback taken."""

    part: str
    requested: str
    applied: str
    method: str = ""
    atol: float = 0.0
    min_cosine: float = 0.0
    vs_fp32: Figures = field(default_factory=Figures)
    vs_hf: Figures = field(default_factory=Figures)
    passed: bool = True
    fallback: str | None = None  # "fp32: cosine 0.97 < 0.98 vs the FP32 part" when the conversion was dropped
    size_bytes_fp32: int = 0
    size_bytes: int = 0
    kv_cache_dtype: str | None = None  # the decoder of a --with-past export


def parse_precision(spec: str | dict[str, str] | None) -> dict[str, str]:
    """``vision=int8,text=fp16`` -> {"vision": "int8", "text": "fp16"}; bad syntax or values name --precision."""
    if spec is None or spec == "" or spec == {}:
        return {}
    items = spec.items() if isinstance(spec, dict) else [_pair(t) for t in str(spec).split(",") if t.strip()]
    out: dict[str, str] = {}
    for key, value in items:
        key, value = str(key).strip(), str(value).strip().lower()
        if value not in PRECISIONS:
            raise InputError(f"--precision: unknown precision '{value}' for '{key}'", offending=f"{key}={value}",
                             hint=f"precisions are: {', '.join(PRECISIONS)} (e.g. --precision vision=int8,text=fp16)")
        if key in out:
            raise InputError(f"--precision: '{key}' is given twice", offending=key, hint="name each part once")
        out[key] = value
    return out


def _pair(item: str) -> tuple[str, str]:
    if "=" not in item:
        raise InputError(f"--precision: '{item.strip()}' is not PART=PRECISION", offending=item.strip(),
                         hint="write it like --precision vision=int8,text=fp16")
    key, value = item.split("=", 1)
    if not key.strip():
        raise InputError(f"--precision: '{item.strip()}' names no part", offending=item.strip(),
                         hint="write it like --precision vision=int8,text=fp16")
    return key, value


def targets_of(split: str | None, split_modalities: bool, modalities: list[str]) -> list[tuple[str, str]]:
    """(name, modality) of what a precision can apply to: the parts, or the one model (its modality when the
    signature has one, so ``text=fp16`` reaches a text-only decoder)."""
    if split_modalities and split in PARTS:
        return [*PARTS[split], ("model", "model")]
    mods = sorted(set(modalities))
    return [("model", mods[0] if len(mods) == 1 else "model")]


def resolve(wanted: dict[str, str], targets: list[tuple[str, str]]) -> dict[str, str]:
    """Each target's precision: by its name first, else by its modality; a key that reaches nothing is an
    InputError naming it and listing what it could be."""
    names = {n for n, _ in targets}
    mods = {m for _, m in targets}
    unknown = [k for k in wanted if k not in names and k not in mods and k != "model"]
    if unknown:
        raise InputError(f"--precision names no part of this export: {', '.join(unknown)}",
                         offending=",".join(unknown),
                         hint=f"parts: {', '.join(sorted(names))}; modalities: {', '.join(sorted(mods))}"
                              + ("" if len(targets) > 1 else "; add --split-modalities for per-part precision"))
    out: dict[str, str] = {}
    for name, modality in targets:
        prec = wanted.get(name) or wanted.get(modality)
        if prec is None and len(targets) == 1:
            prec = wanted.get("model")
        if prec is not None:
            out[name] = prec
    return out


def check_kv_dtype(value: str | None, with_past: bool) -> str:
    value = (value or "float32").lower()
    value = {"fp16": "float16", "fp32": "float32"}.get(value, value)
    if value not in KV_CACHE_DTYPES:
        raise InputError(f"--kv-cache-dtype: unknown dtype '{value}'", offending=value,
                         hint=f"use one of: {', '.join(KV_CACHE_DTYPES)}")
    if value != "float32" and not with_past:
        raise InputError("--kv-cache-dtype needs an export with a KV cache", offending="--kv-cache-dtype",
                         hint="add --with-past (decoder-only models), or drop --kv-cache-dtype")
    return value


def check_precision(options: Any, split: str | None, modalities: list[str]) -> None:
    """The precision options checked (and normalised on ``options``) before any work; InputError names the flag."""
    wanted = parse_precision(options.precision)
    options.kv_cache_dtype = check_kv_dtype(options.kv_cache_dtype, bool(options.with_past))
    if options.with_past and (wanted or options.kv_cache_dtype != "float32"):
        from studio.export.signatures import is_decoder_only, read_config

        config = read_config(options.model_dir)
        if not is_decoder_only(config):  # Whisper / Qwen2-VL with a cache: several graphs, their own loop
            flag = "--kv-cache-dtype" if options.kv_cache_dtype != "float32" else "--precision"
            hint = ("drop --kv-cache-dtype: this model's cache stays FP32 for now (without a cache there is none "
                    "to convert)" if flag == "--kv-cache-dtype" else
                    "drop it, or export with --no-with-past (--precision then applies per part with "
                    "--split-modalities)")
            raise InputError(f"{flag} with --with-past covers decoder-only models for now, not model type "
                             f"'{config.get('model_type')}'", offending=flag, hint=hint)
    if wanted:
        resolve(wanted, targets_of(split, options.split_modalities, modalities))
    if "fp16" in wanted.values():
        import importlib.util

        if importlib.util.find_spec("onnxconverter_common") is None:
            from studio.core.errors import DependencyMissing

            raise DependencyMissing.for_module("onnxconverter-common", "optimize", "--precision ...=fp16")
    options.precision = wanted or None
    atol, cos = options.precision_atol, options.precision_min_cosine
    if atol is not None and atol < 0:
        raise InputError("--precision-atol must be >= 0", offending=str(atol), hint="for example --precision-atol 0.05")
    if cos is not None and not -1.0 <= cos <= 1.0:
        raise InputError("--precision-min-cosine must be between -1 and 1", offending=str(cos),
                         hint="for example --precision-min-cosine 0.99")


# ------------------------------------------------------------------------------------------ conversions
def to_fp16(model: Any) -> Any:
    """FP16 weights and compute, float32 graph I/O, FP16_BLOCK ops kept FP32 (onnxconverter-common)."""
    from onnxconverter_common import float16

    from studio.optimize.passes import _copy, _separate_consumed_outputs

    src = _copy(model)
    _separate_consumed_outputs(src)
    _fold_initializer_identities(src)
    _noop_casts_to_identity(src)
    del src.graph.value_info[:]
    block = list(dict.fromkeys([*float16.DEFAULT_OP_BLOCK_LIST, *FP16_BLOCK]))
    import warnings

    with warnings.catch_warnings():  # "-inf will be truncated to -10000": mask fill values, softmax stays FP32
        warnings.simplefilter("ignore", UserWarning)
        out = float16.convert_float_to_float16(src, keep_io_types=True, disable_shape_infer=False,
                                               op_block_list=block)
    out = _fix_float_casts(out)
    del out.graph.value_info[:]  # the converter's (up to a fifth of the file); ONNX Runtime infers its own
    return out


def _noop_casts_to_identity(model: Any) -> None:
    """float -> float ``Cast`` nodes (a ``.to(float32)`` on a float32 tensor) become Identity: the converter
    otherwise drops them with the Cast it puts in front of them and wires a float32 input straight into FP16."""
    import onnx

    f32 = onnx.TensorProto.FLOAT
    inferred = onnx.shape_inference.infer_shapes(model)
    g = inferred.graph
    types = {vi.name: vi.type.tensor_type.elem_type for vi in [*g.input, *g.value_info, *g.output]}
    types.update({t.name: t.data_type for t in g.initializer})
    for node in model.graph.node:
        if node.op_type == "Cast" and types.get(node.input[0]) == f32 and \
                any(a.name == "to" and a.i == f32 for a in node.attribute):
            node.op_type = "Identity"
            del node.attribute[:]


def _fold_initializer_identities(model: Any) -> None:
    """``Identity(weight)`` nodes (TorchScript's shared parameters) become initializers of their own: the
    converter would retype their output but not their input."""
    import onnx

    g = model.graph
    inits = {t.name: t for t in g.initializer}
    outs = {o.name for o in g.output}
    keep = []
    for node in g.node:
        if node.op_type == "Identity" and node.input[0] in inits and node.output[0] not in outs:
            t = onnx.TensorProto()
            t.CopyFrom(inits[node.input[0]])
            t.name = node.output[0]
            g.initializer.append(t)
        else:
            keep.append(node)
    del g.node[:]
    g.node.extend(keep)


def _fix_float_casts(model: Any) -> Any:
    """The converter retypes a ``Cast(to=float)`` output (e.g. an RMSNorm's ``.to(float32)``) as float16 but
    leaves the node casting to float, which ONNX Runtime refuses: make the node cast to what its output is."""
    import onnx

    f32, f16 = onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16
    g = model.graph
    types = {vi.name: vi.type.tensor_type.elem_type for vi in [*g.value_info, *g.output]}
    for node in g.node:
        if node.op_type == "Cast" and types.get(node.output[0]) == f16:
            for attr in node.attribute:
                if attr.name == "to" and attr.i == f32:
                    attr.i = f16
    return model


def to_int8_static(model: Any, calibration: list[dict[str, Any]]) -> Any:
    """Static QDQ INT8 (uint8 activations, int8 weights) of MatMul / Gemm / Conv, ranges from ``calibration``
    (the one implementation: studio.optimize.quantize)."""
    from studio.optimize.quantize import to_int8_static as _to_int8_static

    return _to_int8_static(model, calibration)


def cache_io_fp16(model: Any, past: list[str], present: list[str]) -> tuple[Any, int]:
    """The cache tensors as FP16 graph I/O: each float32 past input becomes float16 with a Cast to float32 in
    front of its consumers, each float32 present output is Cast to float16. The compute is untouched (FP32, or
    FP16 if the part was converted); returns the model and how many tensors changed."""
    import onnx
    import onnx.helper as h

    g = model.graph
    f32, f16 = onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16
    changed = 0
    casts = []
    for vi in g.input:
        if vi.name in past and vi.type.tensor_type.elem_type == f32:
            inner = f"{vi.name}__fp32"
            for n in g.node:
                for k, name in enumerate(n.input):
                    if name == vi.name:
                        n.input[k] = inner
            vi.type.tensor_type.elem_type = f16
            casts.append(h.make_node("Cast", [vi.name], [inner], name=f"{inner}__cast", to=f32))
            changed += 1
    for vi in g.output:
        if vi.name in present and vi.type.tensor_type.elem_type == f32:
            inner = f"{vi.name}__fp32"
            for n in g.node:
                for k, name in enumerate(n.output):
                    if name == vi.name:
                        n.output[k] = inner
                for k, name in enumerate(n.input):
                    if name == vi.name:
                        n.input[k] = inner
            vi.type.tensor_type.elem_type = f16
            g.node.append(h.make_node("Cast", [inner], [vi.name], name=f"{vi.name}__cast", to=f16))
            changed += 1
    for node in reversed(casts):
        g.node.insert(0, node)
    return model, changed


def calibration_images(model_dir: Path, count: int = 4) -> tuple[list[dict[str, Any]], str]:
    """``count`` seeded synthetic images through the folder's own image processor (its resize, crop and
    normalisation): the feeds a vision part is calibrated on, and a note saying where they came from."""
    import numpy as np
    from PIL import Image
    from transformers import AutoImageProcessor

    proc = AutoImageProcessor.from_pretrained(str(model_dir))
    rng = np.random.default_rng(11)
    feeds: list[dict[str, Any]] = []
    for i in range(count):
        size = (40 + 8 * i, 48 - 4 * i)
        base = rng.integers(0, 255, size=(1, 1, 3)).astype(np.float32)
        grad = np.linspace(0, 1, size[0] * size[1], dtype=np.float32).reshape(size[1], size[0], 1)
        arr = np.clip(base * (0.5 + grad) + rng.normal(0, 20, (size[1], size[0], 3)), 0, 255).astype(np.uint8)
        out = proc(images=Image.fromarray(arr), return_tensors="np")
        feeds.append({k: np.asarray(v) for k, v in out.items()})
    return feeds, f"{count} seeded images through {type(proc).__name__}"


def figures(pairs: list[tuple[Any, Any]]) -> Figures:
    """Worst max abs diff and cosine over (reference, candidate) float arrays."""
    import numpy as np

    from studio.core.parity import INT8, compare_output

    fig = Figures(outputs=len(pairs))
    for ref, got in pairs:  # flattened: the figures, not the shapes (a part may hand back [N] for [1, N])
        row = compare_output("", np.ravel(ref), np.ravel(got), INT8)
        if row.max_abs == float("inf"):
            return Figures(float("inf"), 0.0, len(pairs))
        fig.max_abs = max(fig.max_abs, row.max_abs)
        fig.cosine = min(fig.cosine, row.cosine if row.cosine is not None else 1.0)
    return fig
