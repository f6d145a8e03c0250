"""Validation of an exported graph: full onnx.checker, shape inference, ORT load and ORT-vs-PyTorch parity.

Parity runs on several seeded random inputs; one case changes batch *and* sequence length away from the
traced sizes (so a size baked in as a constant shows up), one pads part of the batch (so a branch taken on
the traced values shows up). Declared static output dims are checked against what ORT really returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.catalogue import N_
from studio.core.errors import JobCancelled
from studio.core.parity import OutputParity, Tolerance, compare_output
from studio.export.contract import InputSpec, ValidationCase
from studio.export.signatures import TRACE_SIZES, example_shape

NP_DTYPES = {"int64": np.int64, "int32": np.int32, "float32": np.float32, "float16": np.float16, "bool": np.bool_}


@dataclass
class CaseSpec:
    name: str
    sizes: dict[str, int]  # axis name -> size (dynamic axes only)
    seed: int
    padded: bool = False


def case_specs(specs: list[InputSpec], count: int) -> list[CaseSpec]:
    """Traced sizes first, then new batch+sequence, then a padded batch, then more random sizes."""
    axes = {n for s in specs for n in s.dynamic_axes.values()}
    has_mask = any(s.name == "attention_mask" for s in specs)
    cases = [CaseSpec(N_("traced shapes"), dict(TRACE_SIZES), 0)]
    new = {"batch": 3, "sequence": 11, "decoder_sequence": 6, "samples": 12000}
    changed = [f"{k}={v}" for k, v in new.items() if k in axes]
    cases.append(CaseSpec(" ".join(changed) if changed else N_("static shapes, new values"), new, 1))
    if has_mask:
        cases.append(CaseSpec(N_("padded batch (batch=2 sequence=7)"), {**TRACE_SIZES, "sequence": 7}, 2, padded=True))
    else:
        small = {"batch": 1, "sequence": 5, "decoder_sequence": 3, "samples": 8000}
        label = " ".join(f"{k}={v}" for k, v in small.items() if k in axes)
        cases.append(CaseSpec(label or N_("static shapes, new values"), small, 2))
    rng = np.random.default_rng(99)
    while len(cases) < count:
        sizes = {"batch": int(rng.integers(1, 5)), "sequence": int(rng.integers(3, 14)),
                 "decoder_sequence": int(rng.integers(2, 8)), "samples": 16000}
        batch, sequence = sizes["batch"], sizes["sequence"]
        cases.append(CaseSpec(N_(f"random batch={batch} sequence={sequence}"), sizes, len(cases)))
    return cases[:max(count, 1)]


def _id_limit(config: dict[str, Any]) -> int:
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    vocab = int(text.get("vocab_size") or config.get("vocab_size") or 100)
    special = [config.get(k) for k in ("image_token_id", "video_token_id", "vision_start_token_id",
                                        "vision_end_token_id") if isinstance(config.get(k), int)]
    return max(2, min([vocab, *special]))


def make_inputs(specs: list[InputSpec], config: dict[str, Any], case: CaseSpec) -> dict[str, np.ndarray]:
    """Seeded random inputs for one case; only dynamic axes take the case's sizes."""
    names = [s.name for s in specs]
    if config.get("model_type") == "qwen2_vl" and "pixel_values" in names:
        from studio.export.qwen2_vl import make_inputs as vlm_inputs

        return vlm_inputs(names, {s.name: list(s.example_shape) for s in specs},
                          {s.name: dict(s.dynamic_axes) for s in specs}, config, case, _id_limit(config))
    rng = np.random.default_rng(1000 + case.seed)
    out: dict[str, np.ndarray] = {}
    for s in specs:
        base = list(s.example_shape or example_shape(s.name, config))
        shape = [case.sizes.get(s.dynamic_axes[i], d) if i in s.dynamic_axes else d for i, d in enumerate(base)]
        dtype = NP_DTYPES.get(s.dtype, np.float32)
        if s.name in ("attention_mask", "decoder_attention_mask", "pixel_mask"):
            arr = np.ones(shape, dtype=dtype)
            if case.padded and s.name == "attention_mask" and shape[0] > 1 and shape[-1] > 2:
                arr[-1, -(shape[-1] // 3 or 1):] = 0
        elif s.name == "token_type_ids":
            arr = np.zeros(shape, dtype=dtype)
        elif np.issubdtype(dtype, np.integer):
            arr = rng.integers(0, _id_limit(config), size=shape).astype(dtype)
            if s.name == "decoder_input_ids" and config.get("decoder_start_token_id") is not None:
                arr[:, 0] = int(config["decoder_start_token_id"])
        else:
            arr = rng.standard_normal(shape).astype(dtype)
        out[s.name] = arr
    return out


def check_graph(path: Path) -> tuple[str, str, list[str]]:
    """Full onnx.checker and strict shape inference, both by path (a model past 2 GB keeps its weights in data
    files: nothing here loads them or parses more than the graph); returns (checker, shape_inference, errors)."""
    import os

    import onnx

    errors: list[str] = []
    try:
        onnx.checker.check_model(str(path), full_check=True)
        checker = "passed"
    except Exception as exc:  # noqa: BLE001 - recorded, then diagnosed
        checker = f"failed: {str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}"
        errors.append(str(exc))
    inferred = path.with_name(f".{path.name}.inferred-{os.getpid()}")
    try:
        onnx.shape_inference.infer_shapes_path(str(path), str(inferred), check_type=True, strict_mode=True,
                                               data_prop=True)
        shape = "passed"
    except Exception as exc:  # noqa: BLE001
        shape = f"failed: {str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}"
        errors.append(str(exc))
    finally:
        inferred.unlink(missing_ok=True)
    return checker, shape, errors


def ort_session(path: Path) -> Any:
    """The exported file's session (``studio.core.runner.ort_session``); ORT's own exception when it refuses,
    for ``diagnose`` to read."""
    from studio.core.runner import ort_session as session
    from studio.core.runner import session_options

    # validation runs a handful of cases: the weights stay mapped from the data file (no prepacked copy, whose
    # building took 3 of the 3.3 s a 3 GB decoder's session needed, and as much memory again as the weights)
    return session(path, session_options(config={"session.disable_prepacking": "1"}), error=None)


def declared_output_dims(session: Any) -> dict[str, list[Any]]:
    return {o.name: list(o.shape) for o in session.get_outputs()}


def compare(name: str, got: np.ndarray, ref: np.ndarray, atol: float, rtol: float,
            declared: list[Any] | None = None) -> tuple[OutputParity, str | None]:
    """One output's parity (``studio.core.parity``'s rule, no cosine bound); returns it and an error text when
    the shape disagrees with PyTorch's or with the graph's declared dims."""
    if declared is not None:
        bad = [i for i, d in enumerate(declared) if isinstance(d, int) and i < got.ndim and d != got.shape[i]]
        if len(declared) != got.ndim or bad:
            return (OutputParity(name, float("inf"), float("inf"), False),
                    f"output '{name}' declared shape {declared} but ORT returned {list(got.shape)}")
    if got.shape != ref.shape:
        return (OutputParity(name, float("inf"), float("inf"), False),
                f"output '{name}' has shape {list(got.shape)} in ONNX but {list(ref.shape)} in PyTorch")
    return compare_output(name, ref, got, Tolerance(atol, rtol)), None


def run_case(case: CaseSpec, graph: str, session: Any, feeds: dict[str, np.ndarray],
             reference: dict[str, np.ndarray], atol: float, rtol: float) -> tuple[ValidationCase, dict[str, np.ndarray]]:
    """Run ORT on ``feeds`` and compare every output with ``reference`` (name -> array)."""
    vc = ValidationCase(name=case.name, graph=graph, input_shapes={k: list(v.shape) for k, v in feeds.items()})
    from studio.core.runner import OnnxRuntimeRunner

    try:  # the runner leaves out an input the exporter dropped (the trace never used it)
        got = OnnxRuntimeRunner.wrap(session).infer(feeds)
    except JobCancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - a runtime failure on new shapes is a finding, not a crash
        vc.error = f"ONNX Runtime failed: {str(exc).strip()[:2000]}"
        return vc, {}
    declared = declared_output_dims(session)
    errors: list[str] = []
    for name, ref in reference.items():
        if name not in got:
            vc.outputs.append(OutputParity(name, float("inf"), float("inf"), False))
            errors.append(f"output '{name}' missing from the ONNX graph")
            continue
        check, err = compare(name, got[name], ref, atol, rtol, declared.get(name))
        vc.outputs.append(check)
        if err:
            errors.append(err)
    vc.passed = not errors and all(c.passed for c in vc.outputs)
    vc.error = "; ".join(errors) or None
    return vc, got
