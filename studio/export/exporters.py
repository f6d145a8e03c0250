"""The two torch.onnx paths behind one call, plus the wrapper that gives a HF model named tensor in/out.

HF models take keyword inputs and return ModelOutput objects; both exporters want positional tensors
in and a tuple out. ``NamedWrapper`` generates a ``forward`` with the exact input names (so inputs are
always passed by name: ViLT takes token_type_ids before pixel_values) and returns the chosen outputs.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

EXPORTERS = ("torchscript", "dynamo")
LARGE_WEIGHTS = 1_800_000_000  # studio.core.external_data.LARGE_BYTES: past it the dynamo exporter saves external data
WORKING_EXTERNAL = 16 << 20  # weights past this are kept in a data file while the export works on the graph


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
    data: Path | None = None  # the external data file beside ``path`` (None: weights inline)


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


def weight_bytes(module: nn.Module) -> int:
    """Bytes of the module's parameters and buffers (shared tensors once)."""
    seen: set[int] = set()
    total = 0
    for t in [*module.parameters(), *module.buffers()]:
        key = t.untyped_storage().data_ptr() if t.device.type != "meta" else id(t)
        if key not in seen:
            seen.add(key)
            total += t.numel() * t.element_size()
    return total


@contextlib.contextmanager
def _no_whole_graph_inference(weights: int) -> Iterator[None]:
    """Past protobuf's 2 GB the TorchScript exporter's whole-graph ONNX shape inference
    (``_jit_pass_onnx_graph_shape_type_inference``) first builds the model proto with every weight in it (two copies:
    the proto and its bytes), then raises "larger than the 2GiB limit", which the exporter swallows and goes on
    without it. Skipping the pass there gives the same graph without the two copies (2x the weights of peak memory:
    measured 7.0 GB -> 2.6 GB for a 2.3 GB model). Below 2 GB it runs as always."""
    import torch

    if weights <= (2 ** 31 - 1):
        yield
        return
    name = "_jit_pass_onnx_graph_shape_type_inference"
    original = getattr(torch._C, name)

    def skipped(*_a: Any, **_k: Any) -> None:
        raise RuntimeError("skipped past 2 GB by the studio (the exporter swallows this)")

    setattr(torch._C, name, skipped)
    try:
        yield
    finally:
        setattr(torch._C, name, original)


def export_onnx(module: nn.Module, args: tuple[torch.Tensor, ...], path: Path, *, input_names: list[str],
                output_names: list[str], dynamic_axes: dict[str, dict[int, str]], opset: int,
                exporter: str, limits: dict[str, int] | None = None,
                output_axes: dict[str, dict[int, str]] | None = None,
                external_data: bool | None = None) -> ExportResult:
    """Export ``module`` to ``path``; raises whatever the exporter raises (diagnosed by the caller).

    The weights go to ``<path>.data`` beside it past 16 MB (the working layout: see ``place_export``; the write
    stage settles the final one, ``external_data`` True / False / None = past 1.8 GB). The exporter writes into a
    private folder first (TorchScript writes one file per tensor past 2 GB, named
    after the tensor, which could meet another export's files), moved or rewritten into place after."""
    if exporter not in EXPORTERS:
        raise ValueError(f"unknown exporter {exporter}")
    t0 = time.perf_counter()
    log: list[str] = []
    tracer: list[dict[str, Any]] = []
    private = path.parent / f".{path.name}.export"
    shutil.rmtree(private, ignore_errors=True)
    private.mkdir(parents=True)
    raw = private / path.name
    weights = weight_bytes(module)
    try:
        with warnings.catch_warnings(record=True) as caught, torch.no_grad():
            warnings.simplefilter("always")
            if exporter == "torchscript":
                with _no_whole_graph_inference(weights):
                    torch.onnx.export(module, args, str(raw), input_names=input_names, output_names=output_names,
                                      dynamic_axes={k: v for k, v in {**dynamic_axes, **(output_axes or {})}.items()
                                                    if v} or None,
                                      opset_version=opset, do_constant_folding=True, dynamo=False)
            else:
                shapes = _dims(dynamic_axes, limits or {})
                ds = {n: shapes.get(n) or None for n in input_names}
                prog = torch.onnx.export(module, args, None, input_names=input_names, output_names=output_names,
                                         dynamic_shapes=ds, opset_version=opset, dynamo=True, external_data=False,
                                         optimize=True, verbose=False, report=False)
                big = weights > LARGE_WEIGHTS if external_data is None else external_data
                prog.save(str(raw), external_data=big)
                del prog
        for w in caught:
            msg = str(w.message)
            log.append(f"{w.category.__name__} at {Path(w.filename).name}:{w.lineno}: {msg.split('. ')[0][:200]}")
            if w.category.__name__ == "TracerWarning" or "might cause the trace to be incorrect" in msg:
                tracer.append({"message": msg, "filename": w.filename, "lineno": w.lineno})
        data = place_export(raw, path, external_data)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    return ExportResult(path=path, seconds=time.perf_counter() - t0, log=log, tracer_warnings=tracer, data=data)


def place_export(raw: Path, path: Path, external_data: bool | None) -> Path | None:
    """Move the exporter's output ``raw`` to ``path`` in the working layout; returns the data file, if any.

    The working layout keeps the weights in ``<path>.data`` whenever they pass ``WORKING_EXTERNAL`` (and always
    when asked for), so that the checker, shape inference, ONNX Runtime (which maps the file) and every rewrite of
    the graph during the export handle the graph alone; the write stage folds them back into one file when the
    final layout is inline (``studio.core.external_data.write_inline``, streamed)."""
    from studio.core.external_data import (
        data_name,
        iter_tensors,
        read_graph,
        uses_external_data,
        weight_bytes,
        write_layout,
    )

    graph = read_graph(raw)
    ext = uses_external_data(graph)
    want = ext or bool(external_data) or weight_bytes(graph) >= WORKING_EXTERNAL
    data = path.with_name(data_name(path))
    if not ext and not want:
        raw.replace(path)
        data.unlink(missing_ok=True)
        return None
    if ext and all({e.key: e.value for e in t.external_data}.get("location") == data_name(raw)
                   for t in iter_tensors(graph) if t.data_location == 1):
        raw.with_name(data_name(raw)).replace(data)  # already one data file named after the model: moved as is
        raw.replace(path)
        return data
    return write_layout(raw, path, external=True, model=graph, consume=True).data  # the private files go as copied
