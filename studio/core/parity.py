"""Parity, written once: inputs, a reference and a candidate run through the runner interface, one tolerance rule.

Every check that two runs compute the same thing (export: ONNX Runtime vs PyTorch; fix and fuse: the fixed graph
vs the original; compile: the compiled module vs ONNX Runtime; rknn: the simulator vs ONNX Runtime; a board:
``package.agent_runner.AgentRunner`` vs ONNX Runtime) makes its
inputs with ``random_inputs`` (or brings its own), runs both sides as ``studio.core.runner`` runners (or brings
the reference's answers, as export does with PyTorch's) and judges each output with ``compare``:

    with OnnxRuntimeRunner(a) as ref, OnnxRuntimeRunner(b) as cand:
        rep = run_parity(ref, cand, tolerance=TOLERANCES["fp16"], cases=2, dims={"sequence": 8})
    rep.passed, rep.extremes(), [o.max_abs for c in rep.cases for o in c.outputs]

**The tolerance rule** (``Tolerance``): an output passes when its shape is the reference's, every element holds
``|candidate - reference| <= atol + rtol * |reference|`` (``numpy.isclose``: a NaN never passes, equal infinities
do) and, where ``min_cosine`` is set, the cosine of the two flattened arrays is at least ``min_cosine`` (two
all-zero arrays: 1). ``max_rel`` is ``|diff| / max(|reference|, 1e-12)``, reported, never judged.

**The defaults by precision** (``TOLERANCES``), reconciled from what export, fix, compile and rknn used:
``fp32`` atol 1e-4 / rtol 1e-3, no cosine bound (export's and TVM's defaults: another runtime computing the same
float32 graph); ``fp16`` atol 5e-2 plus cosine 0.999 (fix, export --precision and rknn fp16 agreed);
``int8`` (also ``int8-static``, ``int8-dynamic``) judged by cosine 0.98 alone, atol infinite (quantisation moves
single elements far; the direction of the output is what must hold). ``REWRITE`` (atol 1e-4, rtol 0, cosine
0.99999) is for a rewrite of the same float32 graph run by the same runtime (``studio fix``, attention fusion):
tighter, the cosine guarding outputs whose magnitudes are small. A caller's own ``--atol`` / ``--rtol`` replace
the numbers, never the rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from studio.core.catalogue import N_, _, tr
from studio.core.runner import BaseRunner

ID_HIGH = 3  # random ids are drawn from [0, 3): valid in any vocabulary, any small gather table
REL_FLOOR = 1e-12  # max_rel's denominator floor; REL_CAP: the largest ratio reported
REL_CAP = 1e30


@dataclass(frozen=True)
class Tolerance:
    """``|c - r| <= atol + rtol * |r|`` elementwise, and ``cosine >= min_cosine`` where it is set."""

    atol: float
    rtol: float = 0.0
    min_cosine: float | None = None


INT8 = Tolerance(float("inf"), 0.0, 0.98)
TOLERANCES: dict[str, Tolerance] = {"fp32": Tolerance(1e-4, 1e-3), "fp16": Tolerance(5e-2, 0.0, 0.999),
                                    "int8": INT8, "int8-static": INT8, "int8-dynamic": INT8}
REWRITE = Tolerance(1e-4, 0.0, 0.99999)
PARITY_WORDS = {True: N_("PASSED"), False: N_("FAILED")}  # a summary line's verdict (translated where shown)


@dataclass
class OutputParity:
    """One output of one case: the figures and the verdict (fields as every report's JSON has carried them)."""

    output: str
    max_abs: float
    max_rel: float
    passed: bool
    cosine: float | None = None
    shape: list[int] | None = None  # the reference's shape (the candidate's where they differ)


@dataclass
class ParityCase:
    """One feed through both sides: its input shapes, one row per output, or the error a run raised."""

    input_shapes: dict[str, list[int]]
    outputs: list[OutputParity] = field(default_factory=list)
    passed: bool = False
    error: str | None = None


@dataclass
class ParityReport:
    """Every case under one tolerance."""

    atol: float = 0.0
    min_cosine: float | None = None
    rtol: float = 0.0
    cases: list[ParityCase] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.cases) and all(c.passed for c in self.cases)

    @property
    def tolerance(self) -> Tolerance:
        return Tolerance(self.atol, self.rtol, self.min_cosine)

    def extremes(self, empty: tuple[float, float] = (0.0, 1.0)) -> tuple[float, float]:
        """(the largest max|diff|, the smallest cosine) over every case's outputs; ``empty`` where none ran."""
        outs = [o for c in self.cases for o in c.outputs]
        if not outs:
            return empty
        return max(o.max_abs for o in outs), min(1.0 if o.cosine is None else o.cosine for o in outs)

    def summary_line(self, what: str, runtime: str, *, cosine_bound: bool = True) -> str:
        """``  WHAT (N random cases, RUNTIME): PASSED  max|diff| ... (tol ...)  min cosine ...``, then the errors, in
        the user's language (studio.core.catalogue): ``what`` (mark it with ``N_``) and the verdict translated, the
        runtime, the figures and the errors as they are."""
        worst, cos = self.extremes()
        errs = [c.error for c in self.cases if c.error]
        bound = tr(" (>= {min_cosine})", min_cosine=self.min_cosine) \
            if cosine_bound and self.min_cosine is not None else ""
        return ("  " + tr("{what} ({cases} random cases, {runtime}): {verdict}  max|diff| {worst} (tol {atol})  "
                          "min cosine {cosine}", what=_(what), cases=len(self.cases), runtime=runtime,
                          verdict=_(PARITY_WORDS[self.passed]), worst=f"{worst:.3g}", atol=f"{self.atol:g}",
                          cosine=f"{cos:.6f}")
                + bound + (tr("  errors: {errors}", errors=errs) if errs else ""))


# -- inputs --------------------------------------------------------------------------------------------------


def np_dtype(type_name: str) -> np.dtype:
    """A numpy dtype from any runner's type spelling: ONNX Runtime's ``tensor(float)``, KServe's ``FP32`` (the
    agent), Triton's ``TYPE_FP32`` or a numpy name (``float32``); float32 when unknown."""
    if type_name.startswith("tensor(") or type_name.isupper():
        from studio.core.kserve_dtypes import CONFIG_TO_KSERVE, ORT_TO_KSERVE, V2_TO_NUMPY

        v2 = ORT_TO_KSERVE.get(type_name) or CONFIG_TO_KSERVE.get(type_name) or type_name
        return V2_TO_NUMPY.get(v2, np.dtype(np.float32))
    try:
        return np.dtype(type_name or "float32")
    except TypeError:
        return np.dtype(np.float32)


# symbolic dims the studio's exports declare as the sum of others (studio.export.stages.past: the attention mask of
# a decoder with its KV cache is (batch, total_sequence = past_sequence + sequence))
SUM_DIMS: dict[str, tuple[str, ...]] = {"total_sequence": ("past_sequence", "sequence")}


def random_inputs(specs: Mapping[str, tuple[str, Sequence[Any]]], *, shapes: Mapping[str, Sequence[int]] | None = None,
                  dims: Mapping[str, int] | None = None, default_dim: int = 2,
                  rng: np.random.Generator | int = 0, given: Mapping[str, np.ndarray] | None = None
                  ) -> dict[str, np.ndarray]:
    """Seeded random inputs from input specs (``runner.input_metadata()``: name -> (type, shape)).

    Shapes: ``shapes[name]`` where given; else each symbolic dim from ``dims`` (by name, then lower-cased), from
    a given shape that fixed the same symbol, else ``default_dim``. Values: floats standard normal in the
    input's dtype; masks (a name with "mask") and bools all ones; other integers ids in [0, ID_HIGH); an input in
    ``given`` (a processor's grid: not an id) takes that array, and its shape fixes its symbols."""
    given = {k: v for k, v in (given or {}).items() if k in specs}
    shapes, dims = {**dict(shapes or {}), **{k: list(v.shape) for k, v in given.items()}}, dict(dims or {})
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    symbols: dict[str, int] = {}
    for name, (_t, shape) in specs.items():
        if name in shapes and len(shapes[name]) == len(shape):
            for want, have in zip(shapes[name], shape, strict=True):
                if not isinstance(have, int) and have:
                    symbols.setdefault(str(have), int(want))
    def size(d: Any) -> int:
        if isinstance(d, int) and d >= 0:
            return d
        key = str(d)
        if key in dims or key.lower() in dims or key in symbols:
            return int(dims.get(key, dims.get(key.lower(), symbols.get(key, default_dim))))
        if key in SUM_DIMS:  # a decoder with past: the mask covers the cache and the new tokens
            return sum(size(part) for part in SUM_DIMS[key])
        return default_dim

    feed: dict[str, np.ndarray] = {}
    for name, (type_name, shape) in specs.items():
        dims_now = [int(d) for d in shapes[name]] if name in shapes else [size(d) for d in shape]
        dt = np_dtype(type_name)
        if name in given:
            feed[name] = np.ascontiguousarray(given[name], dtype=dt)
        elif dt.kind == "f":
            feed[name] = gen.standard_normal(dims_now).astype(dt)
        elif dt.kind == "b" or "mask" in name.lower():
            feed[name] = np.ones(dims_now, dtype=dt)
        else:
            feed[name] = gen.integers(0, ID_HIGH, size=dims_now).astype(dt)
    return feed


def cast_to(specs: Mapping[str, tuple[str, Sequence[Any]]], feed: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``feed`` cast to the input types of ``specs`` (a candidate that changed an input's precision), only the
    inputs the specs name."""
    return {n: np.asarray(feed[n]).astype(np_dtype(t)) for n, (t, _s) in specs.items() if n in feed}


# -- comparison ----------------------------------------------------------------------------------------------


def cosine(reference: Any, candidate: Any) -> float:
    """The cosine of two arrays flattened (float64); two all-zero arrays agree (1.0): a ReLU head on a negative
    batch is the same output, not an undefined cosine; one zero array against another: 0.0. Overflow (an fp16
    graph's saturated values) gives a non-finite cosine, never a warning."""
    r = np.asarray(reference, dtype=np.float64).ravel()
    c = np.asarray(candidate, dtype=np.float64).ravel()
    with np.errstate(all="ignore"):
        nr, nc = float(np.linalg.norm(r)), float(np.linalg.norm(c))
        if nr > 0 and nc > 0:
            return float(r @ c / (nr * nc))
    return 1.0 if np.array_equal(r, c) else 0.0


def compare_output(name: str, reference: Any, candidate: Any, tol: Tolerance) -> OutputParity:
    """One output judged by the tolerance rule (module docstring)."""
    ref, got = np.asarray(reference), np.asarray(candidate)
    if ref.shape != got.shape:
        return OutputParity(name, float("inf"), float("inf"), False, 0.0, list(got.shape))
    r64, g64 = ref.astype(np.float64), got.astype(np.float64)
    if not r64.size:
        return OutputParity(name, 0.0, 0.0, True, 1.0, list(ref.shape))
    diff = np.abs(g64 - r64)
    max_abs = float(diff.max())
    max_rel = min(float((diff / np.maximum(np.abs(r64), REL_FLOOR)).max()), REL_CAP)
    cos = cosine(r64, g64)
    passed = bool(np.all(np.isclose(g64, r64, atol=tol.atol, rtol=tol.rtol)))
    if tol.min_cosine is not None:
        passed = passed and cos >= tol.min_cosine
    return OutputParity(name, max_abs, max_rel, passed, cos, list(ref.shape))


def compare(reference: Mapping[str, Any], candidate: Mapping[str, Any], tol: Tolerance) -> list[OutputParity]:
    """Every reference output against the candidate's of the same name; a candidate that renamed every output
    (and has as many) is matched by position. A missing output is a failed row."""
    if reference and candidate and not set(reference) & set(candidate) and len(reference) == len(candidate):
        candidate = dict(zip(reference, candidate.values(), strict=True))
    rows = []
    for name, want in reference.items():
        if name not in candidate:
            rows.append(OutputParity(name, float("inf"), float("inf"), False, 0.0, list(np.shape(want))))
        else:
            rows.append(compare_output(name, want, candidate[name], tol))
    return rows


# -- runs ----------------------------------------------------------------------------------------------------


def run_case(reference: Any, candidate: Any, feed: Mapping[str, np.ndarray], tol: Tolerance, *,
             cast_for_reference: bool = False, strict: bool = False) -> ParityCase:
    """Both runners (active) on one feed, compared. ``cast_for_reference``: the feed cast to the reference's
    input types; ``strict``: the output counts must agree and a case that compared nothing fails. A run that
    raises is a failed case carrying its error."""
    case = ParityCase(input_shapes={k: list(v.shape) for k, v in feed.items()})
    try:
        ref_feed = cast_to(reference.input_metadata(), feed) if cast_for_reference else dict(feed)
        want = reference.infer(ref_feed)
        got = candidate.infer(dict(feed))
    except Exception as exc:  # a failed run is a failed case, reported
        from studio.core.errors import JobCancelled

        if isinstance(exc, JobCancelled):
            raise
        case.error = f"{type(exc).__name__}: {str(exc)[:300]}"
        return case
    case.outputs = compare(want, got, tol)
    counts = not strict or len(got) >= len(want)
    case.passed = counts and (bool(case.outputs) or not strict) and all(o.passed for o in case.outputs)
    return case


def run_parity(reference: Any, candidate: Any, *, tolerance: Tolerance, feeds: Iterable[Mapping[str, Any]] | None = None,
               cases: int = 2, seed: int = 0, dims: Mapping[str, int] | None = None, inputs_from: Any = None,
               cast_for_reference: bool = False, strict: bool = False,
               given: Mapping[str, np.ndarray] | None = None) -> ParityReport:
    """``cases`` seeded random feeds (from ``inputs_from``'s input specs, default the candidate's; symbolic
    dims from ``dims``; the arrays in ``given`` as they are) or the given ``feeds``, each through both runners
    (activated here when they are not), judged by ``tolerance``."""
    rep = ParityReport(atol=tolerance.atol, rtol=tolerance.rtol, min_cosine=tolerance.min_cosine)
    started = [r for r in (reference, candidate) if not r.active]
    for r in started:
        r.activate()
    try:
        if feeds is None:
            rng = np.random.default_rng(seed)
            specs = (inputs_from or candidate).input_metadata()
            feeds = [random_inputs(specs, dims=dims, rng=rng, given=given) for _case in range(cases)]
        for feed in feeds:
            rep.cases.append(run_case(reference, candidate, feed, tolerance, cast_for_reference=cast_for_reference,
                                      strict=strict))
    finally:
        for r in started:
            r.deactivate()
    return rep


class _Recorded(BaseRunner):
    """A reference's answers replayed in order (``recorded_reference``); a run that raised raises again."""

    name = "recorded reference"

    def __init__(self, specs: dict[str, Any], answers: list[dict[str, np.ndarray] | Exception]) -> None:
        super().__init__()
        self.specs, self.answers = specs, list(answers)

    def activate_impl(self) -> None:
        return None

    def infer_impl(self, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def input_metadata(self) -> dict[str, Any]:
        return self.specs


def recorded_reference(reference: Any, *, cases: int = 2, seed: int = 0, dims: Mapping[str, int] | None = None,
                       given: Mapping[str, np.ndarray] | None = None) -> tuple[BaseRunner, list[dict[str, Any]]]:
    """Run ``reference`` (not yet active) on ``cases`` seeded random feeds of its own inputs, then close it: its
    answers as a runner that replays them, and the feeds. For a model too large to hold beside its candidate."""
    rng = np.random.default_rng(seed)
    answers: list[dict[str, np.ndarray] | Exception] = []
    with reference:
        specs = reference.input_metadata()
        feeds = [random_inputs(specs, dims=dims, rng=rng, given=given) for _case in range(cases)]
        for feed in feeds:
            try:
                answers.append(reference.infer(dict(feed)))
            except Exception as exc:  # a failed run is the case's error, reported by run_case
                from studio.core.errors import JobCancelled

                if isinstance(exc, JobCancelled):
                    raise
                answers.append(exc)
    return _Recorded(specs, answers), feeds
