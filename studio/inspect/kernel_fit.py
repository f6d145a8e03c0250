"""A sliding window longer than its input: Conv and Pool kernels against the input's spatial sizes where known.

Why: a waveform model inspected at ``--shape input_values=1x2`` (or exported with a fixed clip too short for its
first Conv) passed every target's node rules, and then no runtime could run it: ONNX Runtime, TensorRT and the
NPU converters all refuse an output of length zero. The check reads the shapes the inspector already has (the
model's own static dims, or the model at the shapes the user gave) and needs no weights and no runtime.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from studio.inspect.model import LoadedModel
from studio.inspect.report import SEVERITY_OF, Finding

# op -> (input index of the data, input index of the weight whose dims [2:] give a missing kernel_shape)
WINDOW_OPS: dict[str, tuple[int, int | None]] = {
    "Conv": (0, 1), "ConvInteger": (0, 1), "QLinearConv": (0, 3), "MaxPool": (0, None),
    "AveragePool": (0, None), "LpPool": (0, None)}
RULE = "kernel-exceeds-input"


@dataclass(frozen=True)
class TooLong:
    node: str
    op_type: str
    subgraph: str
    message: str


def _attrs(node: Any) -> dict[str, Any]:
    from studio.core.onnx_light import attribute_value

    return {a.name: attribute_value(a) for a in node.attribute}


def _too_long(lm: LoadedModel) -> list[TooLong]:
    """Every window op whose effective kernel (``dilation * (k - 1) + 1``) is longer than its padded input on some
    spatial axis of known size; computed once per model (every target shares it)."""
    cached = lm.cache.get(RULE)
    if cached is not None:
        return cached
    out: list[TooLong] = []
    for ref in lm.nodes:
        spec = WINDOW_OPS.get(ref.op_type) if ref.domain == "ai.onnx" else None
        if spec is None or len(ref.inputs) <= spec[0]:
            continue
        info = lm.tensors.get(ref.inputs[spec[0]])
        if info is None or info.shape is None or len(info.shape) < 3:
            continue
        a = _attrs(ref.node)
        auto_pad = a.get("auto_pad", b"NOTSET")
        auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else str(auto_pad)
        if auto_pad.startswith("SAME"):
            continue  # padded to fit: never an empty output
        spatial = info.shape[2:]
        kernel = list(a.get("kernel_shape") or [])
        if not kernel and spec[1] is not None and len(ref.inputs) > spec[1]:
            w = lm.tensors.get(ref.inputs[spec[1]])
            kernel = list(w.shape[2:]) if w is not None and w.shape is not None else []
        if len(kernel) != len(spatial):
            continue
        n = len(spatial)
        dil = list(a.get("dilations") or [1] * n)
        pads = [0] * 2 * n if auto_pad == "VALID" else list(a.get("pads") or [0] * 2 * n)
        for ax, (length, k) in enumerate(zip(spatial, kernel, strict=True)):
            if not isinstance(length, int) or not isinstance(k, int):
                continue
            span = dil[ax] * (k - 1) + 1
            padded = length + pads[ax] + pads[ax + n]
            if padded < span:
                pad_txt = f" plus {pads[ax] + pads[ax + n]} of padding" if pads[ax] + pads[ax + n] else ""
                dil_txt = f" (dilation {dil[ax]})" if dil[ax] != 1 else ""
                out.append(TooLong(ref.key, ref.op_type, ref.graph,
                                   f"{ref.op_type}: its kernel spans {span}{dil_txt} on spatial axis {ax} but the "
                                   f"input is {length} long there{pad_txt}: the output would be empty"))
                break
    lm.cache[RULE] = out
    return out


def kernel_findings(lm: LoadedModel, target: str, where: str) -> list[Finding]:
    """One ``unsupported`` finding per window op too long for its input, for ``target``; ``where`` says which
    shapes were read ("the shapes given", "the model's static dims")."""
    base = Finding(target=target, severity=SEVERITY_OF["unsupported"], verdict="unsupported", rule=RULE, message="",
                   hint="give the input its real length (a clip or image as the model's processor makes it: "
                        "studio inspect --shape NAME=DIMS, studio fix --static NAME=N); no runtime runs a window "
                        "longer than its input")
    return [replace(base, message=f"{t.message} (at {where})", node=t.node, op_type=t.op_type, domain="ai.onnx",
                    subgraph=t.subgraph, nodes=[t.node]) for t in _too_long(lm)]
