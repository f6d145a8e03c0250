"""Parity of a fixed model against the original: ONNX Runtime, random inputs, per-output error figures."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import ValidationError

# Tolerances per precision: (max_abs, min_cosine). INT8 dynamic quantization is judged by cosine similarity.
TOLERANCE = {"fp32": (1e-4, 0.99999), "fp16": (5e-2, 0.999), "int8": (float("inf"), 0.98),
             "int8-static": (float("inf"), 0.98)}


@dataclass
class OutputParity:
    output: str
    max_abs: float
    max_rel: float
    cosine: float
    passed: bool


@dataclass
class ParityCase:
    input_shapes: dict[str, list[int]]
    outputs: list[OutputParity] = field(default_factory=list)
    passed: bool = False
    error: str | None = None


@dataclass
class ParityReport:
    original: str
    fixed: str
    precision: str  # "fp32" | "fp16" | "int8"
    atol: float
    min_cosine: float
    cases: list[ParityCase] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.cases) and all(c.passed for c in self.cases)

    def extremes(self, empty: tuple[float, float] = (0.0, 1.0)) -> tuple[float, float]:
        """(the largest max|diff|, the smallest cosine) over every case's outputs; ``empty`` where none ran."""
        outs = [o for c in self.cases for o in c.outputs]
        if not outs:
            return empty
        return max(o.max_abs for o in outs), min(o.cosine for o in outs)

    def summary_line(self, what: str, runtime: str, *, cosine_bound: bool = True) -> str:
        """``  WHAT (N random cases, RUNTIME): PASSED  max|diff| ... (tol ...)  min cosine ...``, then the errors."""
        worst, cos = self.extremes()
        errs = [c.error for c in self.cases if c.error]
        return (f"  {what} ({len(self.cases)} random cases, {runtime}): {'PASSED' if self.passed else 'FAILED'}  "
                f"max|diff| {worst:.3g} (tol {self.atol:g})  min cosine {cos:.6f}"
                + (f" (>= {self.min_cosine})" if cosine_bound else "") + (f"  errors: {errs}" if errs else ""))


def _session(path: Path | Any) -> Any:
    """An ORT CPU session of a file, or of a ModelProto held in memory."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 3
    src = str(path) if isinstance(path, (str, Path)) else path.SerializeToString()
    name = Path(path).name if isinstance(path, (str, Path)) else "the host graph"
    try:
        return ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
    except Exception as exc:  # ORT raises its own exception types
        raise ValidationError(f"ONNX Runtime cannot load {name}: {str(exc)[:300]}", offending=str(name),
                              hint="check the model with `studio inspect --target ort-cpu`") from None


def random_feed(sess: Any, dims: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random inputs for a session: symbolic dims from ``dims`` (default 2), ids kept small and valid."""
    feed = {}
    for i in sess.get_inputs():
        shape = [d if isinstance(d, int) else dims.get(str(d), 2) for d in i.shape]
        t = i.type
        if "int" in t:
            dtype = np.int64 if "int64" in t else np.int32
            if "mask" in i.name:
                feed[i.name] = np.ones(shape, dtype=dtype)
            else:
                feed[i.name] = rng.integers(0, 5, size=shape).astype(dtype)
        elif "bool" in t:
            feed[i.name] = rng.integers(0, 2, size=shape).astype(bool)
        elif "float16" in t:
            feed[i.name] = rng.standard_normal(shape).astype(np.float16)
        else:
            feed[i.name] = rng.standard_normal(shape).astype(np.float32)
    return feed


def compare_outputs(names: list[str], ref: list[Any], new: list[Any], atol: float, min_cos: float, *,
                    strict: bool = False) -> list[OutputParity]:
    """Per-output error figures of ``new`` against ``ref`` (max abs / rel, cosine); a shape change fails."""
    outputs: list[OutputParity] = []
    for name, x, y in zip(names, ref, new, strict=strict):
        x64, y64 = np.asarray(x, dtype=np.float64).ravel(), np.asarray(y, dtype=np.float64).ravel()
        if x64.shape != y64.shape:
            outputs.append(OutputParity(name, float("inf"), float("inf"), 0.0, False))
            continue
        diff = np.abs(x64 - y64)
        max_abs = float(diff.max()) if diff.size else 0.0
        max_rel = float((diff / (np.abs(x64) + 1e-6)).max()) if diff.size else 0.0
        nx, ny = np.linalg.norm(x64), np.linalg.norm(y64)
        cos = float(x64 @ y64 / (nx * ny)) if nx > 0 and ny > 0 else (1.0 if max_abs == 0 else 0.0)
        outputs.append(OutputParity(name, max_abs, max_rel, cos, max_abs <= atol and cos >= min_cos))
    return outputs


def check_parity(original: Path, fixed: Path, precision: str = "fp32", *, dims: dict[str, int] | None = None,
                 cases: int = 2, seed: int = 0, host: Any = None) -> ParityReport:
    """``fixed`` against ``original`` on random inputs; ``host`` (a ModelProto): the host graph of a host split,
    run first on the original's inputs, its outputs fed to ``fixed``."""
    atol, min_cos = TOLERANCE[precision]
    rep = ParityReport(original=str(original), fixed=str(fixed), precision=precision, atol=atol, min_cosine=min_cos)
    ref, new = _session(Path(original)), _session(Path(fixed))
    pre = _session(host) if host is not None else None
    rng = np.random.default_rng(seed)
    for _ in range(cases):
        if pre is None:
            feed = random_feed(new, dims or {}, rng)
            rep.cases.append(run_case(ref, new, feed, atol, min_cos, cast_for_ref=True))
            continue
        feed = random_feed(ref, dims or {}, rng)
        rep.cases.append(run_case(ref, _Chain(pre, new), feed, atol, min_cos))
    return rep


class _Chain:
    """A host graph then the device graph, behind the two calls ``run_case`` makes of a session."""

    def __init__(self, host: Any, device: Any) -> None:
        self.host, self.device = host, device

    def run(self, names: Any, feed: dict[str, np.ndarray]) -> list[Any]:
        made = dict(zip([o.name for o in self.host.get_outputs()],
                        self.host.run(None, {i.name: feed[i.name] for i in self.host.get_inputs()}), strict=True))
        both = {**feed, **made}
        return self.device.run(names, {i.name: both[i.name] for i in self.device.get_inputs()})


def run_case(ref: Any, new: Any, feed: dict[str, np.ndarray], atol: float, min_cos: float, *,
             cast_for_ref: bool = False, new_outputs: list[str] | None = None, strict: bool = False) -> ParityCase:
    """Both sessions on one feed (``cast_for_ref``: cast to the reference's input types), the reference's outputs
    compared with ``new``'s (``new_outputs``: asked for by name; ``strict``: the output counts must agree and a
    case that compared nothing fails); a run that raises is a failed case with its error."""
    case = ParityCase(input_shapes={k: list(v.shape) for k, v in feed.items()})
    try:
        ref_feed = {i.name: feed[i.name].astype(_np_type(i.type)) for i in ref.get_inputs() if i.name in feed} \
            if cast_for_ref else feed
        a = ref.run(None, ref_feed)
        b = new.run(new_outputs, feed)
    except Exception as exc:  # a failed run is a failed case, reported
        case.error = f"{type(exc).__name__}: {str(exc)[:300]}"
        return case
    names = [o.name for o in ref.get_outputs()]
    case.outputs.extend(compare_outputs(names, a, b, atol, min_cos, strict=strict))
    case.passed = (bool(case.outputs) or not strict) and all(o.passed for o in case.outputs)
    return case


def _np_type(ort_type: str) -> Any:
    return {"tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(int64)": np.int64,
            "tensor(int32)": np.int32, "tensor(bool)": bool, "tensor(double)": np.float64}.get(ort_type, np.float32)
