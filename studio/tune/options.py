"""What `studio optimize` is asked: the model or export, the target, the accuracy budget, the objective, the
calibration folder, the time limit, where to write. Checked before any work: bad input is an InputError naming
the flag and the value (exit 2), and nothing is written. No onnx, numpy or torch import here.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import InputError

OBJECTIVES = ("npu-coverage", "size", "host-latency")
METRICS = {"cosine": ">=", "max-abs": "<=", "top1-agree": ">="}  # budget metric -> the only sensible comparison
BUDGET_HINT = "write it like --budget cosine>=0.99, --budget max-abs<=0.05 or --budget top1-agree>=0.98"
PRECISION_CHOICES = ("fp32", "fp16", "int8", "int8-dynamic")
_BUDGET = re.compile(r"^\s*([a-z0-9-]+)\s*(>=|<=)\s*([-+0-9.eE]+)\s*$")


@dataclass(frozen=True)
class Budget:
    """``metric op value``: the accuracy a variant must keep against the FP32 original on the calibration set."""

    metric: str
    op: str
    value: float

    def __str__(self) -> str:
        return f"{self.metric}{self.op}{self.value:g}"

    def met(self, value: float | None) -> bool:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return False
        return value >= self.value if self.op == ">=" else value <= self.value

    def better(self, a: float | None, b: float | None) -> bool:
        """``a`` is more accurate than ``b`` in this metric's direction (None is the worst)."""
        if a is None:
            return False
        if b is None:
            return True
        return a > b if self.op == ">=" else a < b


def parse_budget(text: str | None) -> Budget:
    """``cosine>=0.99`` | ``max-abs<=X`` | ``top1-agree>=P``; anything else names --budget."""
    if text is None or not str(text).strip():
        return Budget("cosine", ">=", 0.99)
    m = _BUDGET.match(str(text))
    if not m:
        raise InputError(f"--budget '{text}' is not METRIC>=VALUE or METRIC<=VALUE", offending=str(text),
                         hint=BUDGET_HINT)
    metric, op, raw = m.groups()
    if metric not in METRICS:
        raise InputError(f"--budget: unknown metric '{metric}'", offending=str(text),
                         hint=f"metrics: {', '.join(METRICS)}; {BUDGET_HINT}")
    if op != METRICS[metric]:
        raise InputError(f"--budget: {metric} takes '{METRICS[metric]}', not '{op}'", offending=str(text),
                         hint=BUDGET_HINT)
    try:
        value = float(raw)
    except ValueError:
        raise InputError(f"--budget: '{raw}' is not a number", offending=str(text), hint=BUDGET_HINT) from None
    if not math.isfinite(value):
        raise InputError(f"--budget: '{raw}' is not a finite number", offending=str(text), hint=BUDGET_HINT)
    if metric in ("cosine", "top1-agree") and not 0.0 < value <= 1.0:
        raise InputError(f"--budget: {metric} must be in (0, 1], got {value:g}", offending=str(text),
                         hint=BUDGET_HINT)
    if metric == "max-abs" and value < 0:
        raise InputError(f"--budget: max-abs must be >= 0, got {value:g}", offending=str(text), hint=BUDGET_HINT)
    return Budget(metric, op, value)


@dataclass
class TuneOptions:
    model: Path  # an .onnx file or an export folder
    target: str
    budget: Budget = field(default_factory=lambda: Budget("cosine", ">=", 0.99))
    objective: str = "npu-coverage"
    calibration: Path | None = None
    time_limit_min: float = 30.0
    out: Path | None = None  # default: WORKSPACE/optimized/NAME-TARGET, else ./optimized/NAME-TARGET
    parts: list[str] = field(default_factory=list)  # export parts to optimize (default: all)
    precisions: list[str] = field(default_factory=list)  # restrict the precisions tried (e.g. ["int8"])
    workers: int = 2
    use_cache: bool = True
    force: bool = False  # replace a non-empty --out
    latency_runs: int = 30
    profile_dirs: list[Path] | None = None

    def to_key(self) -> dict[str, Any]:
        """What the result depends on besides the files and the tools (the cache key's options)."""
        return {"target": self.target, "budget": str(self.budget), "objective": self.objective,
                "time_limit_min": self.time_limit_min, "parts": sorted(self.parts),
                "precisions": sorted(self.precisions), "latency_runs": self.latency_runs}


def check_options(o: TuneOptions) -> None:
    """Every flag checked (InputError naming it) before any model is read or anything written."""
    if o.objective not in OBJECTIVES:
        raise InputError(f"--objective: unknown objective '{o.objective}'", offending=o.objective,
                         hint=f"one of {', '.join(OBJECTIVES)}")
    if not isinstance(o.time_limit_min, (int, float)) or not math.isfinite(o.time_limit_min) \
            or o.time_limit_min <= 0:
        raise InputError(f"--time-limit must be a positive number of minutes, got {o.time_limit_min}",
                         offending=f"--time-limit {o.time_limit_min}", hint="e.g. --time-limit 10")
    bad = [p for p in o.precisions if p not in PRECISION_CHOICES]
    if bad:
        raise InputError(f"--precision: unknown precision {', '.join(bad)}", offending=", ".join(bad),
                         hint=f"one or more of {', '.join(PRECISION_CHOICES)}")
    if o.workers < 1:
        raise InputError("--workers must be at least 1", offending=str(o.workers), hint="e.g. --workers 2")
    if not Path(o.model).exists():
        raise InputError(f"{o.model} does not exist", offending=str(o.model),
                         hint="pass an .onnx file or an export folder (studio export --split-modalities)")
    check_target(o.target, o.profile_dirs)
    if o.calibration is not None:
        from studio.optimize.calibration import scan

        scan(o.calibration)


def check_target(target: str, profile_dirs: list[Path] | None = None) -> None:
    """A known target with a tool here to judge it (an evaluator contribution); else an InputError."""
    from studio.inspect.profiles import list_targets
    from studio.tune.evaluate_api import evaluator_targets

    known = [p.id for p in list_targets(profile_dirs)]
    judged = evaluator_targets()
    if target not in known:
        raise InputError(f"unknown target '{target}'", offending=target,
                         hint=f"targets a tool can judge here: {', '.join(sorted(judged)) or 'none'}; every "
                              f"target: {', '.join(known)}")
    if target not in judged:
        raise InputError(f"no tool here can judge target '{target}': the search builds every candidate with the "
                         "target's own compiler or runtime", offending=target,
                         hint=f"targets with a tool here: {', '.join(sorted(judged)) or 'none'} (rknn-toolkit2 via "
                              "plugins/studio-rknn, OpenVINO via plugins/studio-openvino, TVM, ONNX Runtime)")
    ok, why = judged[target]
    if not ok:
        raise InputError(f"the tool for target '{target}' is not usable here: {why}", offending=target, hint=why)
