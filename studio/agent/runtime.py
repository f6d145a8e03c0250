"""Loading a verified bundle version into ONNX Runtime sessions, and the warm-up that gates activation.

This is the ONNX Runtime link of "verification at load": :func:`load_deployment` re-verifies the version
folder (signature + every digest) with :func:`studio.edge.verify.verify_directory` before any session is
created, so a file changed on disk after installation is never loaded.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import BundleError, ModelError
from studio.core.external_data import check_model_files
from studio.edge.manifest import Manifest
from studio.edge.tensors import KSERVE_TO_NP, ORT_TO_KSERVE
from studio.edge.trust import TrustedKeys
from studio.edge.verify import verify_directory
from studio.generate.serving import is_generation_model, load_generation


@dataclass
class TensorSpec:
    name: str
    datatype: str
    shape: list[int]  # -1 for dynamic

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "datatype": self.datatype, "shape": self.shape}


@dataclass
class ServedModel:
    """One ONNX Runtime session served under a KServe model name."""

    name: str
    version: str
    path: Path
    session: Any
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]
    providers: list[str]
    output_names: list[str] = field(default_factory=list)
    avg_run_s: float = 1.0  # moving average of session.run time; starts "slow" until measured
    raw_inputs: dict[str, Any] = field(default_factory=dict)  # name -> preprocess.RawInput (staged pipeline)
    generation: Any = None  # studio.generate.serving model (generate routes) when the bundle marks it one

    #: models whose runs average below this are run on the event loop itself: a thread hand-off would cost
    #: more than the run (sub-millisecond edge models), while slower ones go to the worker pool
    INLINE_BELOW_S = 0.0005

    def __post_init__(self) -> None:
        # precomputed once: the per-request checks only look things up
        self._expected = {t.name: (t, None if KSERVE_TO_NP.get(t.datatype) is None
                                   else np.dtype(KSERVE_TO_NP[t.datatype])) for t in self.inputs}
        self._output_set = frozenset(self.output_names)

    def has_output(self, name: str) -> bool:
        return name in self._output_set

    @property
    def run_inline(self) -> bool:
        return self.avg_run_s < self.INLINE_BELOW_S

    def infer(self, feed: dict[str, np.ndarray], outputs: list[str] | None = None) -> dict[str, np.ndarray]:
        names = outputs or self.output_names
        t0 = time.perf_counter()
        res = self.session.run(names, feed)
        dt = time.perf_counter() - t0
        self.avg_run_s = dt if self.avg_run_s >= 1.0 else 0.9 * self.avg_run_s + 0.1 * dt
        return dict(zip(names, res, strict=True))

    def check_inputs(self, feed: dict[str, np.ndarray]) -> None:
        """Triton-like errors for wrong names / dtypes / ranks, before ORT gives a cryptic one."""
        expected = self._expected
        for name in feed:
            if name not in expected:
                raise ValueError(f"unexpected inference input '{name}' for model '{self.name}'{self._to_generate()}")
        for name, (spec, want) in expected.items():
            if name not in feed:
                raise ValueError(f"expected input '{name}' for model '{self.name}'{self._to_generate()}")
            arr = feed[name]
            if want is not None and want != arr.dtype and not (
                    spec.datatype == "BYTES" and arr.dtype == np.object_):
                raise ValueError(f"input '{name}': datatype mismatch, expected {spec.datatype}")
            if len(arr.shape) != len(spec.shape) or any(
                    s not in (-1, a) for s, a in zip(spec.shape, arr.shape, strict=True)):
                raise ValueError(f"input '{name}': shape {list(arr.shape)} does not match {spec.shape}")

    def _to_generate(self) -> str:
        """For a generation model: /infer runs its decoder graph alone; prompts and media go to /generate."""
        if self.generation is None:
            return ""
        takes = " / ".join(f"'{a}'" for a in self.generation.describe().get("accepts") or ["text_input"])
        return (f": a generation model, whose /infer runs the decoder graph alone on the tensors its metadata "
                f"lists; {takes} go to POST /v2/models/{self.name}/generate")

    def metadata(self) -> dict[str, Any]:
        d = {"name": self.name, "versions": [self.version], "platform": "onnxruntime_onnx",
             "inputs": [t.to_dict() for t in self.inputs], "outputs": [t.to_dict() for t in self.outputs]}
        if self.raw_inputs:  # BYTES inputs the staged pipeline preprocesses into the tensors above
            d["raw_inputs"] = [r.describe() for r in self.raw_inputs.values()]
        if self.generation is not None:  # served on /generate and /generate_stream too
            d["generation"] = self.generation.describe()
        return d

    def warmup(self) -> float:
        """Run one request of zeros (dynamic dims = 1); raises ModelError when the model cannot answer it.
        A generation model warms up by generating (zeros cannot feed a KV cache of consistent lengths)."""
        if self.generation is not None:
            try:
                return float(self.generation.warmup())
            except Exception as exc:
                raise ModelError(f"warm-up generation failed on {self.name} {self.version}: {exc}",
                                 offending=str(self.path), hint="try the export with `studio generate`") from exc
        feed = {}
        for t in self.inputs:
            shape = [d if d > 0 else 1 for d in t.shape]
            dt = KSERVE_TO_NP.get(t.datatype, np.float32)
            feed[t.name] = (np.array([b""] * int(np.prod(shape)), dtype=object).reshape(shape)
                            if t.datatype == "BYTES" else np.zeros(shape, dtype=dt))
        t0 = time.perf_counter()
        try:
            for _ in range(3):  # the first run allocates; later ones give the steady-state time
                self.infer(feed)
        except Exception as exc:
            raise ModelError(f"warm-up request failed on {self.name} {self.version}: {exc}",
                             offending=str(self.path),
                             hint="the model loads but cannot run a request; check it with `studio inspect`") from exc
        return time.perf_counter() - t0


@dataclass
class Deployment:
    """One bundle version, loaded: its manifest and the models it serves."""

    name: str
    version: str
    directory: Path
    manifest: Manifest
    models: dict[str, ServedModel]
    warmup_s: float = 0.0
    loaded_at: float = field(default_factory=time.time)

    def close(self) -> None:
        """Stop what its runtimes started (the rknn simulator's worker process); ORT sessions need nothing."""
        for m in self.models.values():
            close = getattr(m.session, "close", None)
            if callable(close):
                try:
                    close()
                except Exception:  # closing is best effort: the version is no longer served
                    pass


class RuntimeMissing(ModelError, kind="dependency"):
    """The bundle needs a runtime this agent does not have (HTTP 422: the bundle cannot run here)."""


def runtime_loader(name: str, manifest: Manifest, runtime: dict[str, Any]) -> Any:
    """The loader of a bundle runtime ("tvm", "rknn", a plugin's) from the plugin registry, or RuntimeMissing
    naming what to install. Loaders take (directory, spec, manifest, runtime, board=...) -> ServedModel. A
    runtime contribution may name a ``missing`` hook (name, version, its runtime.json section) that raises the
    precise RuntimeMissing itself: this loader knows no runtime by name."""
    from studio.core.errors import PluginError
    from studio.core.plugins import contribution, import_object, resolve

    try:
        return resolve("runtimes", name)
    except PluginError as exc:
        c = contribution("runtimes", name)
        missing = c.meta.get("missing") if c is not None else None
        if missing:  # the runtime's own account of what to install (tvm: the exact apache-tvm and the pip line)
            try:
                explain = import_object(str(missing))
            except (ImportError, AttributeError, ValueError):
                explain = None
            if callable(explain):
                explain(manifest.name, manifest.version, dict(runtime.get(name) or {}))  # raises RuntimeMissing
        install = str((runtime.get(name) or {}).get("install") or "")
        raise RuntimeMissing(
            f"bundle {manifest.name} {manifest.version} needs the '{name}' runtime, which this agent cannot load: "
            f"{exc.message}", offending=f"runtime: {name}",
            hint=(f"{install}; " if install else "") + "install the plugin that provides it into the agent's "
                 "environment (then restart studio-agent); or deploy an ONNX Runtime bundle of the model") from exc


def _specs(args: list[Any]) -> list[TensorSpec]:
    return [TensorSpec(a.name, ORT_TO_KSERVE.get(a.type, "UNKNOWN"),
                       [d if isinstance(d, int) and d >= 0 else -1 for d in a.shape]) for a in args]


def load_deployment(directory: Path, trusted: TrustedKeys, *, threads: int = 0, board: str = "any") -> Deployment:
    """Verify ``directory`` and create its sessions (not yet activated; warm it up first). Models of another
    runtime than ONNX Runtime go to that runtime's loader (``runtime_loader``); ``board`` is this agent's."""
    import onnxruntime as ort

    manifest = verify_directory(directory, trusted)
    try:
        runtime = json.loads((directory / "runtime.json").read_text(encoding="utf-8"))
        models_spec = runtime["models"]
    except (OSError, ValueError, KeyError) as exc:
        raise BundleError(f"bundle runtime.json is unreadable: {exc}", offending=str(directory / "runtime.json"),
                          hint="rebuild the bundle with `studio package`") from exc
    available = set(ort.get_available_providers())
    wanted = [p for p in runtime.get("execution_providers", []) if p in available]
    providers = wanted or ["CPUExecutionProvider"]
    if "CPUExecutionProvider" not in providers:
        providers.append("CPUExecutionProvider")
    opts = ort.SessionOptions()
    if threads:
        opts.intra_op_num_threads = threads
    models: dict[str, ServedModel] = {}
    dep = Deployment(name=manifest.name, version=manifest.version, directory=directory, manifest=manifest,
                     models=models)
    try:
        _load_models(dep, models_spec, runtime, opts, providers, board)
    except BaseException:
        dep.close()  # a runtime started for an earlier model of the bundle
        raise
    return dep


def _load_models(dep: Deployment, models_spec: list[dict[str, Any]], runtime: dict[str, Any], opts: Any,
                 providers: list[str], board: str) -> None:
    from studio.core.runner import ort_session

    directory, manifest, models = dep.directory, dep.manifest, dep.models
    for spec in models_spec:
        rt = str(spec.get("runtime") or "onnxruntime")
        if rt != "onnxruntime":  # a compiled module (tvm, rknn, ...): its loader re-verifies what it loads
            loader = runtime_loader(rt, manifest, runtime)
            models[spec["name"]] = loader(directory, spec, manifest, runtime, board=board)
            continue
        path = directory / spec["path"]
        check_model_files(path)  # every data file its graph names is there and long enough: else a 422 naming it
        gen = None
        if spec.get("generation") or is_generation_model(path):  # a KV-cache export: /generate runs it too
            gen = load_generation(path.parent, threads=opts.intra_op_num_threads or None)
        try:
            shared = getattr(gen, "session", None)
            sess = shared if shared is not None else ort_session(path, opts, providers, error=None)
        except Exception as exc:
            raise ModelError(f"ONNX Runtime cannot load {spec['path']}: {exc}", offending=str(path),
                             hint="check the model with `studio inspect`") from exc
        outs = sess.get_outputs()
        models[spec["name"]] = ServedModel(name=spec["name"], version=manifest.version, path=path, session=sess,
                                           inputs=_specs(sess.get_inputs()), outputs=_specs(outs),
                                           providers=sess.get_providers(), output_names=[o.name for o in outs],
                                           generation=gen)
        if spec.get("raw_inputs"):  # processor files declared by `studio package`: loaded (and checked) now
            from studio.edge.preprocess import build_preprocessors

            models[spec["name"]].raw_inputs = build_preprocessors(spec["raw_inputs"], directory)


def warmup_deployment(dep: Deployment) -> float:
    total = sum(m.warmup() for m in dep.models.values())
    dep.warmup_s = total
    return total
