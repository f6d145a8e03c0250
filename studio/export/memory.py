"""An export's memory: the estimate before it starts, and freeing the PyTorch weights once nothing needs them.

The estimate reads the checkpoint's own headers (safetensors: every tensor's dtype and shape; other formats: the
file sizes), so it is exact on the weights and costs milliseconds, before torch is imported. The peak is modelled
per stage from what each holds, with factors measured on this project's machines (bench/bench_export_real.py,
BENCHMARKS.md): the PyTorch weights W (in the dtype they load in), the TorchScript exporter's copy of the largest
tensor while it writes it, its whole-graph shape inference below 2 GB (two more copies of W, which it drops past
2 GB and the studio skips there), ONNX Runtime's copy while parity and generation run, and PyTorch released as soon
as no later stage needs it (``free_weights``). When the estimate exceeds the memory the machine has free, the export
stops before anything is written (exit 2) with the estimate and the ways out.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.machine_memory import GB, MemoryShortfall, machine_available

BASE_BYTES = int(1.2 * GB)  # python + torch + transformers + onnxruntime loaded, a few activations (measured 0.9-1.3)
PROTOBUF = 2**31 - 1
_ST_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1,
             "F8_E4M3": 1, "F8_E5M2": 1}
_TORCH_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8}


@dataclass
class Weights:
    """The checkpoint's weights as its files declare them."""

    parameters: int = 0
    bytes: int = 0  # as stored
    largest: int = 0  # the largest tensor, as stored
    dtypes: dict[str, int] = field(default_factory=dict)  # stored dtype -> bytes
    source: str = ""


@dataclass
class MemoryEstimate:
    weights: Weights
    load_dtype: str
    weight_bytes: int  # W: the weights in the dtype the export holds them in
    stages: dict[str, int]  # stage -> estimated peak of the process (bytes)
    available: int  # what the machine has free now (MemAvailable, or the cgroup's room)
    available_source: str

    @property
    def peak(self) -> int:
        return max(self.stages.values())

    @property
    def fits(self) -> bool:
        return self.peak <= self.available

    def to_dict(self) -> dict[str, Any]:
        return {"parameters": self.weights.parameters, "stored_bytes": self.weights.bytes,
                "load_dtype": self.load_dtype, "weight_bytes": self.weight_bytes, "peak_bytes": self.peak,
                "stages": dict(self.stages), "available_bytes": self.available,
                "available_source": self.available_source, "source": self.weights.source}

    def line(self) -> str:
        top = max(self.stages, key=self.stages.__getitem__)
        return (f"{self.weights.parameters / 1e6:,.0f}M parameters, {self.weight_bytes / GB:.1f} GB in "
                f"{self.load_dtype}: estimated peak {self.peak / GB:.1f} GB (in stage '{top}'), "
                f"{self.available / GB:.1f} GB free ({self.available_source})")


def _safetensors_header(path: Path) -> dict[str, Any]:
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        if n > 100 << 20:
            raise ValueError(f"{path.name}: implausible header length {n}")
        return json.loads(f.read(n))


def checkpoint_weights(model_dir: Path | str) -> Weights:
    """Parameters and bytes of the checkpoint in ``model_dir`` from its files' headers (no weight is read)."""
    d = Path(model_dir)
    w = Weights()
    files = sorted(d.glob("*.safetensors"))
    if files:
        for f in files:
            try:
                header = _safetensors_header(f)
            except (OSError, ValueError, struct.error):
                w.bytes += f.stat().st_size  # unreadable header: the file size is the bytes
                continue
            for name, t in header.items():
                if name == "__metadata__" or not isinstance(t, dict):
                    continue
                n = 1
                for dim in t.get("shape", []):
                    n *= int(dim)
                size = n * _ST_BYTES.get(str(t.get("dtype")), 4)
                w.parameters += n
                w.bytes += size
                w.largest = max(w.largest, size)
                w.dtypes[str(t.get("dtype"))] = w.dtypes.get(str(t.get("dtype")), 0) + size
        w.source = f"{len(files)} safetensors header(s)"
        return w
    others = [p for p in d.iterdir() if p.suffix in (".bin", ".pt", ".pth", ".ckpt") and p.is_file()]
    w.bytes = sum(p.stat().st_size for p in others)
    w.largest = max((p.stat().st_size for p in others), default=0)
    w.parameters = w.bytes // 4
    w.source = f"{len(others)} weight file(s), sizes (parameters assumed float32)"
    return w


def load_dtype(config: dict[str, Any], weights: Weights) -> str:
    """The dtype from_pretrained gives the weights: transformers 5 loads the checkpoint's own ("auto")."""
    if weights.dtypes:
        stored = max(weights.dtypes, key=weights.dtypes.__getitem__)
        return {"F32": "float32", "F16": "float16", "BF16": "bfloat16", "F64": "float64"}.get(stored, "float32")
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else {}
    value = config.get("dtype") or config.get("torch_dtype") or text.get("dtype") or "float32"
    return str(value).removeprefix("torch.")


def estimate(config: dict[str, Any], model_dir: Path | str, *, exporter: str = "torchscript",
             with_past: bool = False, split: bool = False, precision: bool = False,
             weights: Weights | None = None) -> MemoryEstimate:
    """The export's peak per stage (see the module docstring for what each holds)."""
    w = weights or checkpoint_weights(model_dir)
    dtype = load_dtype(config, w)
    stored = max(w.dtypes, key=w.dtypes.__getitem__) if w.dtypes else "F32"
    scale = _TORCH_BYTES.get(dtype, 4) / _ST_BYTES.get(stored, 4)
    W, L = int(w.bytes * scale), int(w.largest * scale)  # noqa: N806 - the module docstring's names
    keeps_torch = split or precision  # a later stage runs PyTorch beside ONNX Runtime (generation reloads it)
    stages = {"load": W,
              # TorchScript: its copy of the tensor it writes; below 2 GB its whole-graph shape inference holds
              # the proto and its bytes (2W more); dynamo builds the ONNX IR beside the program (about W more)
              "export": W + L + (2 * W if W < PROTOBUF and exporter == "torchscript" else 0)
              + (W if exporter == "dynamo" else 0),
              "parity": 2 * W if keeps_torch else int(1.1 * W)}
    if split or precision:
        stages["split" if split else "precision"] = int(2.5 * W)  # FP32 part + its converted or split sibling
    if with_past:
        stages["generation"] = int(1.25 * W)  # HF generate, then (PyTorch released) ONNX Runtime's loop
    stages = {k: v + BASE_BYTES for k, v in stages.items()}
    avail, source = machine_available()
    return MemoryEstimate(w, dtype, W, stages, avail, source)


def ways_out(est: MemoryEstimate, options: Any, config: dict[str, Any], model_dir: Path) -> list[str]:
    """What lowers the peak below what is free, each with its own estimate (only ways that apply here)."""
    out: list[str] = []
    base = dict(exporter=options.exporter, with_past=bool(options.with_past), split=bool(options.split_modalities),
                precision=bool(options.precision), weights=est.weights)

    def alt(**kw: Any) -> MemoryEstimate:
        return estimate(config, model_dir, **{**base, **kw})

    if options.with_past:
        e = alt(with_past=False)
        out.append(f"--no-with-past: the single-pass graph, PyTorch released before parity, no generation check "
                   f"(estimated peak {e.peak / GB:.1f} GB)")
    if options.split_modalities or options.precision:
        e = alt(split=False, precision=False)
        out.append(f"export the model first, then split or convert its parts separately (`studio fix --fp16/--int8 "
                   f"PART` on the export): estimated peak {e.peak / GB:.1f} GB")
    if options.exporter == "dynamo":
        e = alt(exporter="torchscript")
        out.append(f"--exporter torchscript (estimated peak {e.peak / GB:.1f} GB)")
    out.append(f"free {max(est.peak - est.available, 0) / GB:.1f} GB (other programs, other exports), or export on "
               f"a machine with {est.peak / GB + 1:.0f} GB or more")
    return out


def check_fits(options: Any, config: dict[str, Any]) -> MemoryEstimate:
    """The estimate for ``options``; MemoryShortfall (exit 2, before any work) when it cannot fit.
    ``STUDIO_EXPORT_MEMORY`` (GB) stands in for the free memory (a smaller machine, in tests)."""
    est = estimate(config, options.model_dir, exporter=options.exporter, with_past=bool(options.with_past),
                   split=bool(options.split_modalities), precision=bool(options.precision))
    forced = os.environ.get("STUDIO_EXPORT_MEMORY")
    if forced:
        est.available, est.available_source = int(float(forced) * GB), "STUDIO_EXPORT_MEMORY"
    if not est.fits:
        ways = ways_out(est, options, config, Path(options.model_dir))
        raise MemoryShortfall(
            f"this export will not fit in memory: {est.line()}", offending=str(options.model_dir),
            hint="ways out: " + "; ".join(ways), details={"estimate": est.to_dict(), "ways_out": ways})
    return est


def free_weights(model: Any) -> int:
    """Empty every parameter and buffer of ``model`` in place (its module objects may stay referenced by
    wrappers and frames; their storage goes), collect (studio.core.gc_pause.collect: in the GUI the collection
    runs on the GUI thread, never on this job's worker), and give the freed heap back to the system. Returns the
    bytes freed."""
    import torch

    from studio.core.gc_pause import collect

    freed, seen = 0, set()
    with torch.no_grad():
        for module in model.modules():
            for store in (module._parameters, module._buffers):
                for name, t in list(store.items()):
                    if t is None or t.numel() == 0:
                        continue
                    storage = t.untyped_storage()
                    if storage.data_ptr() not in seen:
                        seen.add(storage.data_ptr())
                        freed += storage.nbytes()
                    empty = torch.empty(0, dtype=t.dtype)
                    store[name] = torch.nn.Parameter(empty, requires_grad=False) \
                        if isinstance(t, torch.nn.Parameter) else empty
    collect()
    trim_heap()
    return freed


def trim_heap() -> None:
    """glibc's malloc_trim(0): freed small blocks go back to the system (RSS drops with them); elsewhere nothing."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def stage_seconds(weight_bytes: int, options: Any) -> dict[str, float]:
    """Expected seconds per stage on a 2-core machine (rates measured at 0.6-3.2 GB, BENCHMARKS.md): the weights
    of the job's progress, so that its estimate of the time left follows the long stages, and the pace of the
    export stage's ticker (the trace reports nothing until it returns)."""
    g = max(weight_bytes / GB, 0.05)
    cases = max(2, int(getattr(options, "validation_cases", 3) or 3)) + (1 if options.with_past else 0)
    out = {"load": 4.0 + 2.0 * g, "export": 4.0 + 11.0 * g, "check": 0.5 + 0.3 * g, "parity": cases * (1.0 + 2.0 * g)}
    if options.split_modalities:
        out["split"] = 6.0 + 12.0 * g
    if options.precision or options.kv_cache_dtype != "float32":
        out["precision"] = 6.0 + 10.0 * g
    if options.with_past:
        out["generation"] = 10.0 + 40.0 * g
    out["write"] = 0.5 + 0.5 * g
    return out
