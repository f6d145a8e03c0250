"""The rknn verifiers (``rknn-rk3588``, ``rknn-rk3576``, ``rknn-rk3566``): a real toolkit build per model.

``verify`` builds the model at static shapes (fp16, no quantization), starts the x86 simulator and runs it
once, then reads the toolkit's log into per-node verdicts (``placement``). Everything toolkit-side happens in
the plugin's environment through ``worker.py``; this process reads the ONNX file only (no weights).
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studio.core.catalogue import N_
from studio.core.errors import InputError
from studio.verify.api import VerifyResult
from studio_rknn import client
from studio_rknn import env as envmod
from studio_rknn.logparse import parse_log
from studio_rknn.placement import node_checks

LOADED_STAGES = ("load", "build", "init_runtime", "inference")  # reached one of these: the toolkit loaded it


@dataclass
class ModelInputs:
    """The model's graph inputs at the shapes the toolkit gets, and the inspector's node index."""

    inputs: list[dict[str, Any]]
    refs: list[Any]  # main-graph NodeRefs (inspector keys)
    resized: bool = False  # some input is built at another shape than the model's own (named to the toolkit)


def static_inputs(model: Path, shapes: dict[str, list[int]] | None = None) -> ModelInputs:
    """Graph inputs with static shapes (given ``shapes`` win); dynamic ones without a shape: InputError."""
    from studio.inspect.api import load_structure
    from studio.inspect.model import dtype_name

    lm = load_structure(model)
    shapes = dict(shapes or {})
    unknown = sorted(set(shapes) - set(lm.graph_inputs))
    if unknown:
        raise InputError(f"--shape names an input the model does not have: {', '.join(unknown)}",
                         offending=", ".join(unknown), hint=f"the model's inputs: {', '.join(lm.graph_inputs)}")
    inputs, dynamic, resized = [], [], False
    for name in lm.graph_inputs:
        info = lm.tensors.get(name)
        shape = shapes.get(name)
        if shape is not None and (info is None or info.shape != list(shape)):
            resized = True
        if shape is None:
            if info is None or info.dynamic:
                dims = "?" if info is None or info.shape is None else ",".join(str(d) for d in info.shape)
                dynamic.append(f"{name} [{dims}]")
                continue
            shape = [int(d) for d in info.shape]  # type: ignore[union-attr]
        dt = dtype_name(info.elem_type) if info is not None else "float"
        inputs.append({"name": name, "shape": [int(d) for d in shape], "dtype": _numpy_dtype(dt)})
    if dynamic:
        example = " ".join(f"--shape {n}={_example_dims(lm.tensors.get(n))}" for n in
                           (d.split(" ")[0] for d in dynamic))
        raise InputError("rknn-toolkit2 builds at static input shapes and these inputs are dynamic (the dims the "
                         "model declares): " + "; ".join(dynamic), offending=", ".join(d.split(" ")[0] for d in dynamic),
                         hint=f"give each a shape, e.g. {example} (the GUI: Verify tab, Static shapes), or make the "
                              "model static first (studio fix MODEL --static DIM=N,...)")
    refs = [r for r in lm.nodes if not r.graph]
    return ModelInputs(inputs, refs, resized)


def _example_dims(info: Any) -> str:
    """A static example of a dynamic input's shape: its own static dims, 1 for the first dynamic one, 8 after."""
    if info is None or not info.shape:
        return "1"
    return ",".join(str(d) if isinstance(d, int) and d > 0 else "1" if ax == 0 else "8"
                    for ax, d in enumerate(info.shape))


def _numpy_dtype(onnx_name: str) -> str:
    return {"float": "float32", "double": "float64", "bool": "bool"}.get(onnx_name, onnx_name)


def tool_name(versions: dict[str, str] | None = None) -> str:
    v = (versions or {}).get("rknn-toolkit2") or envmod.TOOLKIT_VERSION
    return f"rknn-toolkit2 {v}"


@dataclass
class RknnVerifier:
    """One Rockchip platform; ``name`` is the registry's verifier id, ``target`` the profile it checks."""

    name: str
    target: str
    platform: str
    env: Path | None = None  # default: env.env_dir() at call time
    timeout: float = 900  # seconds one build may take before it counts as a stalled toolkit

    def check_inputs(self, model: Path, shapes: dict[str, list[int]] | None = None) -> None:
        """InputError naming every dynamic input without a shape (with the dims the model declares)."""
        static_inputs(Path(model), shapes)

    def available(self) -> tuple[bool, str]:
        status = envmod.check_env(self.env)
        return status.ok, (tool_name(status.versions) + f" ({status.path})" if status.ok else status.reason)

    def verify(self, model: Path, shapes: dict[str, list[int]] | None = None, *,
               log_dir: Path | None = None, run: bool = True) -> VerifyResult:
        """Build (fp16) and simulate ``model`` for the platform; per node: NPU, CPU fallback or failed."""
        model = Path(model)
        mi = static_inputs(model, shapes)
        status = envmod.check_env(self.env)
        tool = tool_name(status.versions)
        used = {i["name"]: i["shape"] for i in mi.inputs}
        if not status.ok:
            return VerifyResult(verifier=self.name, target=self.target, tool=tool, ran=False, error=status.reason,
                                shapes=used)
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="studio-rknn-") as tmp:
            logs = Path(log_dir) if log_dir else Path(tmp)
            logs.mkdir(parents=True, exist_ok=True)
            job = {"id": model.stem, "model": str(model.resolve()), "inputs": mi.inputs, "platform": self.platform,
                   "log": str(logs / f"{model.stem}.{self.platform}.log"), "run": run,
                   "crop": mi.resized}
            try:
                rec = client.check_many([job], Path(tmp) / "out.jsonl", env=self.env, timeout_per_job=self.timeout)[0]
            except (OSError, client.WorkerError) as exc:
                reason = str(exc)
                return VerifyResult(verifier=self.name, target=self.target, tool=tool, ran=False, shapes=used,
                                    error=N_(f"the toolkit environment at {status.path} did not run: {reason}; rebuild it: "
                                          f"{envmod.FIX_COMMAND} --force"))
            log = parse_log(Path(job["log"]).read_text(encoding="utf-8", errors="replace"))
        return result_from_run(self, rec, log, mi, tool, used, time.perf_counter() - t0)


def _staged(stage: str, message: str) -> str:
    return message if message.startswith(f"{stage}:") else f"{stage}: {message}"


def crash_of(rec: dict[str, Any], log: Any, tool: str) -> str:
    """The toolkit's own failure, in its words and trace ("" when it refused the model, or built it): its
    process died (a signal) or stalled, or its Python code raised an internal error (TypeError, ...) before
    saying anything of its own."""
    stage = rec.get("failed_stage") or ""
    if stage in ("crash", "timeout"):
        return f"{tool}: {rec.get('error', '')}"
    trace = log.crash() if stage else None
    if trace is None:
        return ""
    return f"{tool} failed inside its own code at {trace.stage or stage}:\n{trace.text}"


def result_from_run(v: RknnVerifier, rec: dict[str, Any], log: Any, mi: ModelInputs, tool: str,
                    used: dict[str, list[int]], seconds: float) -> VerifyResult:
    """The VerifyResult of one check: ``ran`` when the toolkit loaded the model; its first error otherwise.

    A build that passed ``init_runtime`` builds: a failure of the one simulator run afterwards (random inputs)
    is a note, not the model's error. A crash of the toolkit itself is ``crash``, never a refusal."""
    loaded = rec.get("reached") in LOADED_STAGES
    stage = rec.get("failed_stage") or ""
    if stage == "config" and any(w in rec.get("error", "") for w in ("ImportError", "ModuleNotFoundError")):
        return VerifyResult(verifier=v.name, target=v.target, tool=tool, ran=False, shapes=used,
                            error=N_(f"the toolkit environment is broken (it cannot import the toolkit: "
                                  f"{rec.get('error', '')[:300]}); rebuild it: {envmod.FIX_COMMAND} --force"))
    notes = [N_(f"built for {v.platform} at fp16 (no quantization); placement from the toolkit's layer table")]
    error = _staged(stage, log.first_error() or rec.get("error", "")) if stage else ""
    if stage == "inference":
        notes.append(N_(f"the build succeeded; its one simulator run on random inputs failed: {error[:300]}"))
        error, rec = "", {**rec, "failed_stage": ""}
    elif rec.get("reached") == "inference":
        notes.append(N_("ran once in the toolkit's x86 simulator"))
    crash = crash_of(rec, log, tool)
    nodes = node_checks(mi.refs, log, rec) if loaded or stage else []
    if crash:
        for n in nodes:  # the toolkit's fault names no node of the model
            if n.verdict == "unsupported":
                n.verdict, n.placement = "unknown", ""
                n.message = f"not judged: the toolkit crashed ({error[:200]})"
    return VerifyResult(verifier=v.name, target=v.target, tool=tool, ran=loaded, nodes=nodes, error=error,
                        seconds=round(seconds, 3), shapes=used, notes=notes, crash=crash)
