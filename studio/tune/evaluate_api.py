"""How a target's own tool judges one candidate: the contract built-in and plugin evaluators share.

An evaluator builds (or loads) the device graph with the target's compiler or runtime, says where each node ran
(a VerifyResult, the verifiers' vocabulary) and returns the graph's outputs on every sample, so the search can
compare them with the FP32 original. Plugins contribute ``evaluators`` items keyed by target id
(``{"evaluators": {"rk3588": {"module": "studio_rknn.evaluate", "target": "rk3588"}}}``; the module's
``evaluator(name)`` returns the object). Nothing here imports a tool.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


@dataclass
class EvalRequest:
    model: Path  # the device graph (after any host split)
    target: str
    samples: list[Path]  # one .npz per sample: the device graph's inputs
    work: Path  # a scratch folder of this candidate (artifacts stay there for latency and the result)
    build: str = ""  # a backend's own precision: rknn "fp16" | "int8" ("" = its default)
    calibration: Path | None = None  # folder of .npz samples (a backend's own int8 calibration)
    auto_hybrid: float | None = None  # rknn int8: per-layer cosine below which layers stay float16
    analyse: bool = False  # per-layer error rows of a quantized build (rknn accuracy_analysis)


@dataclass
class Evaluation:
    """One tool's answer on one candidate."""

    tool: str  # tool and version ("rknn-toolkit2 2.5.0", "openvino 2026.4.1 (CPU)")
    result: Any = None  # studio.verify.api.VerifyResult: per node where it ran (None: the tool never loaded it)
    outputs: list[list[Any]] = field(default_factory=list)  # per sample, the outputs in the graph's order
    runs_on: str = ""  # where the outputs came from ("rknn-toolkit2 2.5.0 x86 simulator", "ONNX Runtime CPU")
    artifact: str = ""  # what a deployment loads (.rknn, compiled folder, the ONNX itself)
    artifact_bytes: int = 0
    layer_rows: list[dict[str, Any]] = field(default_factory=list)  # per-layer error of a quantized build
    kept_float: list[str] = field(default_factory=list)  # layers a hybrid build kept in float
    seconds: float = 0.0
    error: str = ""  # the build or a run failed (the tool's words)
    crash: str = ""  # the tool itself crashed (never the model's failure)
    notes: list[str] = field(default_factory=list)


class Evaluator(Protocol):
    target: str

    def available(self) -> tuple[bool, str]:
        """(usable, tool and version / why not); cheap."""
        ...

    def evaluate(self, req: EvalRequest) -> Evaluation:
        ...

    def host_runner(self, ev: Evaluation, req: EvalRequest) -> Any:
        """A callable feed -> outputs that runs the artifact on this host (latency), or None (not runnable here)."""
        ...


def evaluator_targets() -> dict[str, tuple[bool, str]]:
    """Target -> (usable, tool or why not) of every evaluator the plugins declare, from the manifests (a
    contribution's missing requirements make it unusable; nothing is imported)."""
    from studio.core.plugins import providers

    out: dict[str, tuple[bool, str]] = {}
    for plugin, name in providers("evaluators"):
        c = plugin.contribution("evaluators", name)
        if c is None:
            continue
        target = str(c.meta.get("target") or name)
        state, reason = c.state()
        ok = state in ("available", "loaded")
        if target not in out or ok:
            out[target] = (ok, c.meta.get("tool", name) if ok else reason)
    return out


def get_evaluator(target: str) -> Evaluator:
    """The evaluator for ``target`` (imported now); an InputError when none is usable."""
    from studio.core.errors import InputError, PluginError
    from studio.core.plugins import providers

    for plugin, name in providers("evaluators"):
        c = plugin.contribution("evaluators", name)
        if c is None or str(c.meta.get("target") or name) != target:
            continue
        try:
            ev = c.resolve()
        except PluginError as exc:
            raise InputError(f"the evaluator of target '{target}' cannot load: {exc.message}", offending=target,
                             hint=exc.hint) from exc
        ok, why = ev.available()
        if not ok:
            raise InputError(f"the tool for target '{target}' is not usable here: {why}", offending=target, hint=why)
        return ev
    raise InputError(f"no tool here can judge target '{target}'", offending=target,
                     hint="`studio plugins` lists what is installed")
