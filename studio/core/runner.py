"""One runner interface for every place a model runs: ORT here (below), a Triton server (``triton/runner.py``),
an edge agent's served model (``package/agent_runner.py``), a TVM module (``compile/runner.py``).

``activate / infer / deactivate``, usable as a context manager, with per-call timing recorded so
comparisons and benchmarks are written once against it (after Polygraphy's BaseRunner).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import ModelError, StudioError


class BaseRunner(ABC):
    name: str = "runner"

    def __init__(self) -> None:
        self.active = False
        self.inference_times: list[float] = []  # seconds, one per infer()

    def activate(self) -> None:
        if not self.active:
            self.activate_impl()
            self.active = True

    def deactivate(self) -> None:
        if self.active:
            self.deactivate_impl()
            self.active = False

    def infer(self, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        if not self.active:
            raise RuntimeError(f"{self.name}: activate() before infer()")
        t0 = time.perf_counter()
        out = self.infer_impl(feed)
        self.inference_times.append(time.perf_counter() - t0)
        return out

    @property
    def last_inference_time(self) -> float | None:
        return self.inference_times[-1] if self.inference_times else None

    def __enter__(self) -> BaseRunner:
        self.activate()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.deactivate()

    @abstractmethod
    def activate_impl(self) -> None: ...

    @abstractmethod
    def infer_impl(self, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]: ...

    def deactivate_impl(self) -> None:
        return None

    def input_metadata(self) -> dict[str, tuple[str, list[Any]]]:
        """name -> (dtype string, shape with None/str for dynamic dims)."""
        return {}


OPT_LEVELS = ("disable", "basic", "extended", "all")


def session_options(*, log_level: int = 3, threads: int | None = None, optimization: str | None = None,
                    config: dict[str, str] | None = None) -> Any:
    """The one ``onnxruntime.SessionOptions`` recipe: quiet (``log_level`` 3: errors only), ``threads``
    intra-op threads where given, a graph optimization level by name (``OPT_LEVELS``), session config entries."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = log_level
    if threads:
        so.intra_op_num_threads = int(threads)
    if optimization is not None:
        so.graph_optimization_level = {
            "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL, "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
            "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
            "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}[optimization]
    for key, value in (config or {}).items():
        so.add_session_config_entry(key, value)
    return so


def ort_session(model: Path | str | bytes | Any, options: Any = None, providers: list[str] | None = None, *,
                error: type[StudioError] | None = ModelError, what: str | None = None) -> Any:
    """The one place an ``onnxruntime.InferenceSession`` is built for a check: a path (external data resolved
    beside it), serialized bytes or a ModelProto held in memory; CPU unless ``providers``; ``options`` from
    ``session_options`` (default: quiet). ORT's refusal is an ``error`` naming ``what`` (default the file);
    ``error=None``: ORT's own exception (export diagnoses its words)."""
    import onnxruntime as ort

    if isinstance(model, (str, Path)):
        src: Any = str(model)
        name = what or Path(model).name
    else:
        src = model if isinstance(model, bytes) else model.SerializeToString()
        name = what or "the model held in memory"
    try:
        return ort.InferenceSession(src, options if options is not None else session_options(),
                                    providers=list(providers or ["CPUExecutionProvider"]))
    except Exception as exc:  # ORT raises its own exception types
        if error is None:
            raise
        raise error(f"ONNX Runtime cannot load {name}: {str(exc)[:300]}", offending=name,
                    hint="check the model with `studio inspect MODEL --target ort-cpu`: it names the node ORT "
                         "rejects") from None


class OnnxRuntimeRunner(BaseRunner):
    """An ONNX Runtime session on CPU (or the given providers) behind the runner interface; ``outputs``: the
    outputs asked for (default all). A feed's extra inputs (ones the graph dropped) are left out."""

    name = "onnxruntime"

    def __init__(self, model: Path | str | bytes | Any, providers: list[str] | None = None,
                 session_options: Any = None, *, outputs: list[str] | None = None,
                 error: type[StudioError] = ModelError) -> None:
        super().__init__()
        self.model = model
        self.providers = providers or ["CPUExecutionProvider"]
        self.session_options = session_options
        self.outputs = outputs
        self.error = error
        self.session: Any = None
        self._given = False

    @classmethod
    def wrap(cls, session: Any, *, outputs: list[str] | None = None) -> OnnxRuntimeRunner:
        """A runner over a session built elsewhere (a custom-op library registered, profiling on); active."""
        r = cls(b"", outputs=outputs)
        r.session, r._given, r.active = session, True, True
        return r

    def activate_impl(self) -> None:
        if not self._given:
            self.session = ort_session(self.model, self.session_options, self.providers, error=self.error)
        self._inputs = {i.name for i in self.session.get_inputs()}

    def infer_impl(self, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        names = self.outputs or [o.name for o in self.session.get_outputs()]
        inputs = getattr(self, "_inputs", None) or {i.name for i in self.session.get_inputs()}
        return dict(zip(names, self.session.run(names, {k: v for k, v in feed.items() if k in inputs}),
                        strict=True))

    def deactivate_impl(self) -> None:
        if not self._given:
            self.session = None

    def input_metadata(self) -> dict[str, tuple[str, list[Any]]]:
        return {i.name: (i.type, list(i.shape)) for i in self.session.get_inputs()}


class ChainedRunner(BaseRunner):
    """Two runners as one: ``first`` on the feed, then ``second`` on the feed plus ``first``'s outputs (a host
    graph split off in front of a device graph). Inputs are ``first``'s and whatever ``second`` takes beyond."""

    name = "chain"

    def __init__(self, first: BaseRunner, second: BaseRunner) -> None:
        super().__init__()
        self.first, self.second = first, second

    def activate_impl(self) -> None:
        self.first.activate()
        self.second.activate()

    def infer_impl(self, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        made = self.first.infer(feed)
        return self.second.infer({**feed, **made})

    def deactivate_impl(self) -> None:
        self.first.deactivate()
        self.second.deactivate()

    def input_metadata(self) -> dict[str, tuple[str, list[Any]]]:
        return self.first.input_metadata()
