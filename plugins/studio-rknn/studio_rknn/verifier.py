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
        first = dynamic[0].split(" ")[0]
        info = lm.tensors.get(first)
        dims = ",".join(str(d) if isinstance(d, int) and d > 0 else "1" for d in (info.shape or [])) \
            if info is not None and info.shape else "1,3,224,224"
        raise InputError("rknn-toolkit2 builds at static input shapes; these inputs are dynamic: "
                         + "; ".join(dynamic), offending=", ".join(d.split(" ")[0] for d in dynamic),
                         hint=f"give each a shape (--shape {first}={dims}; the GUI: Static shapes) or make the "
                              "model static first (studio fix --static)")
    refs = [r for r in lm.nodes if not r.graph]
    return ModelInputs(inputs, refs, resized)


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
                rec = client.check_many([job], Path(tmp) / "out.jsonl", env=self.env)[0]
            except (OSError, client.WorkerError) as exc:
                return VerifyResult(verifier=self.name, target=self.target, tool=tool, ran=False,
                                    error=f"the toolkit did not run: {exc}", shapes=used)
            log = parse_log(Path(job["log"]).read_text(encoding="utf-8", errors="replace"))
        return result_from_run(self, rec, log, mi, tool, used, time.perf_counter() - t0)


def result_from_run(v: RknnVerifier, rec: dict[str, Any], log: Any, mi: ModelInputs, tool: str,
                    used: dict[str, list[int]], seconds: float) -> VerifyResult:
    """The VerifyResult of one check: ``ran`` when the toolkit loaded the model; its first error otherwise."""
    loaded = rec.get("reached") in LOADED_STAGES
    error = ""
    if rec.get("failed_stage"):
        error = f"{rec['failed_stage']}: {log.first_error() or rec.get('error', '')}"
    notes = [f"built for {v.platform} at fp16 (no quantization); placement from the toolkit's layer table"]
    if rec.get("reached") == "inference":
        notes.append("ran once in the toolkit's x86 simulator")
    return VerifyResult(verifier=v.name, target=v.target, tool=tool, ran=loaded,
                        nodes=node_checks(mi.refs, log, rec) if loaded or rec.get("failed_stage") else [],
                        error=error, seconds=round(seconds, 3), shapes=used, notes=notes)
