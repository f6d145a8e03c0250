"""The two torch.onnx paths behind one call, plus the wrapper that gives a HF model named tensor in/out.

HF models take keyword inputs and return ModelOutput objects; both exporters want positional tensors
in and a tuple out. ``NamedWrapper`` generates a ``forward`` with the exact input names (so inputs are
always passed by name: ViLT takes token_type_ids before pixel_values) and returns the chosen outputs.
"""

from __future__ import annotations

import re
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

EXPORTERS = ("torchscript", "dynamo")


def _pick(out: Any, name: str) -> torch.Tensor:
    if isinstance(out, torch.Tensor):
        return out
    value = out[name] if not isinstance(out, (tuple, list)) else out[0]
    if not isinstance(value, torch.Tensor) and hasattr(value, "pooler_output"):
        value = value.pooler_output
    return value


class NamedWrapper(nn.Module):
    """``forward(<input names>) -> tuple(<output names>)`` around any HF model or part module."""

    def __init__(self, model: nn.Module, input_names: list[str], output_names: list[str],
                 forward_kwargs: dict[str, Any] | None = None, fill_masks: dict[str, str] | None = None) -> None:
        super().__init__()
        self.fill_masks = dict(fill_masks or {})  # mask input -> input it is all-ones like
        self.model = model
        self.input_names = list(input_names)
        self.output_names = list(output_names)
        self.forward_kwargs = dict(forward_kwargs or {})
        for n in self.input_names:
            if not n.isidentifier():
                raise ValueError(f"input name {n!r} is not an identifier")
        src = (f"def forward(self, {', '.join(self.input_names)}):\n"
               f"    return self._call({', '.join(f'{n}={n}' for n in self.input_names)})\n")
        ns: dict[str, Any] = {}
        exec(src, ns)  # noqa: S102 - generated from validated identifiers only
        self.forward = ns["forward"].__get__(self)  # type: ignore[method-assign]

    def _call(self, **inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        for mask, like in self.fill_masks.items():
            if mask not in inputs and like in inputs:
                inputs[mask] = torch.ones_like(inputs[like])
        out = self.model(**inputs, **self.forward_kwargs)
        if len(self.output_names) == 1 and isinstance(out, torch.Tensor):
            return (out,)
        if isinstance(out, tuple) and not hasattr(out, "keys"):
            return tuple(out[: len(self.output_names)])
        return tuple(_pick(out, n) for n in self.output_names)


@dataclass
class ExportResult:
    path: Path
    seconds: float
    log: list[str] = field(default_factory=list)
    tracer_warnings: list[dict[str, Any]] = field(default_factory=list)  # {message, filename, lineno}


def _dims(dynamic_axes: dict[str, dict[int, str]], limits: dict[str, int]) -> dict[str, dict[int, Any]]:
    from torch.export import Dim

    made: dict[str, Any] = {}
    out: dict[str, dict[int, Any]] = {}
    for inp, axes in dynamic_axes.items():
        out[inp] = {}
        for axis, name in axes.items():
            if name not in made:
                made[name] = Dim(re.sub(r"\W", "_", name), min=1, max=limits[name]) if name in limits \
                    else Dim(re.sub(r"\W", "_", name), min=1)
            out[inp][axis] = made[name]
    return out


def export_onnx(module: nn.Module, args: tuple[torch.Tensor, ...], path: Path, *, input_names: list[str],
                output_names: list[str], dynamic_axes: dict[str, dict[int, str]], opset: int,
                exporter: str, limits: dict[str, int] | None = None,
                output_axes: dict[str, dict[int, str]] | None = None) -> ExportResult:
    """Export ``module`` to ``path``; raises whatever the exporter raises (diagnosed by the caller)."""
    if exporter not in EXPORTERS:
        raise ValueError(f"unknown exporter {exporter}")
    t0 = time.perf_counter()
    log: list[str] = []
    tracer: list[dict[str, Any]] = []
    with warnings.catch_warnings(record=True) as caught, torch.no_grad():
        warnings.simplefilter("always")
        if exporter == "torchscript":
            torch.onnx.export(module, args, str(path), input_names=input_names, output_names=output_names,
                              dynamic_axes={k: v for k, v in {**dynamic_axes, **(output_axes or {})}.items()
                                            if v} or None,
                              opset_version=opset, do_constant_folding=True, dynamo=False)
        else:
            shapes = _dims(dynamic_axes, limits or {})
            ds = {n: shapes.get(n) or None for n in input_names}
            prog = torch.onnx.export(module, args, None, input_names=input_names, output_names=output_names,
                                     dynamic_shapes=ds, opset_version=opset, dynamo=True, external_data=False,
                                     optimize=True, verbose=False, report=False)
            prog.save(str(path))
    for w in caught:
        msg = str(w.message)
        log.append(f"{w.category.__name__} at {Path(w.filename).name}:{w.lineno}: {msg.split('. ')[0][:200]}")
        if w.category.__name__ == "TracerWarning" or "might cause the trace to be incorrect" in msg:
            tracer.append({"message": msg, "filename": w.filename, "lineno": w.lineno})
    return ExportResult(path=path, seconds=time.perf_counter() - t0, log=log, tracer_warnings=tracer)
