"""One runner interface for every place a model runs (ORT local, Triton, edge agent, TVM module).

``activate / infer / deactivate``, usable as a context manager, with per-call timing recorded so
comparisons and benchmarks are written once against it (after Polygraphy's BaseRunner).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import ModelError


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


class OnnxRuntimeRunner(BaseRunner):
    """Local ONNX Runtime session on CPU (or the given providers)."""

    name = "onnxruntime"

    def __init__(self, model: Path | str | bytes, providers: list[str] | None = None,
                 session_options: Any = None) -> None:
        super().__init__()
        self.model = model
        self.providers = providers or ["CPUExecutionProvider"]
        self.session_options = session_options
        self.session: Any = None

    def activate_impl(self) -> None:
        import onnxruntime as ort

        src = self.model if isinstance(self.model, bytes) else str(self.model)
        try:
            self.session = ort.InferenceSession(src, sess_options=self.session_options, providers=self.providers)
        except Exception as exc:
            raise ModelError(f"ONNX Runtime cannot load the model: {exc}",
                             offending=None if isinstance(self.model, bytes) else str(self.model),
                             hint="run `studio inspect MODEL --target ort-cpu` to see which node it rejects") from exc

    def infer_impl(self, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        names = [o.name for o in self.session.get_outputs()]
        return dict(zip(names, self.session.run(names, feed), strict=True))

    def deactivate_impl(self) -> None:
        self.session = None

    def input_metadata(self) -> dict[str, tuple[str, list[Any]]]:
        return {i.name: (i.type, list(i.shape)) for i in self.session.get_inputs()}
