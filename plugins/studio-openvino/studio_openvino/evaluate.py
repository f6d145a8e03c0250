"""The ``openvino`` evaluator of `studio optimize`: OpenVINO's own conversion and CPU placement per node (the
verifier), then ``compile_model(model, "CPU")`` runs every sample. OpenVINO reads the ONNX file itself, so the
candidate's size is that file's; the CPU plugin's inference precision is reported with the figures.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from studio.tune.evaluate_api import EvalRequest, Evaluation


def _samples(files: list[Path]) -> list[dict[str, np.ndarray]]:
    out = []
    for f in files:
        with np.load(f) as z:
            out.append({k: z[k] for k in z.files})
    return out


def _compiled(model: Path) -> Any:
    import openvino as ov

    core = ov.Core()
    return core.compile_model(core.read_model(str(model)), "CPU", {"INFERENCE_NUM_THREADS": 1})


class OpenVinoEvaluator:
    target = "openvino"

    def available(self) -> tuple[bool, str]:
        from studio_openvino.verifier import OpenVinoCpuVerifier

        return OpenVinoCpuVerifier().available()

    def evaluate(self, req: EvalRequest) -> Evaluation:
        from studio_openvino.verifier import OpenVinoCpuVerifier

        t0 = time.perf_counter()
        v = OpenVinoCpuVerifier()
        res = v.verify(req.model)
        ev = Evaluation(tool=res.tool, result=res, artifact=str(req.model),
                        artifact_bytes=req.model.stat().st_size + _data_bytes(req.model))
        if not res.ran or res.error or any(n.verdict == "unsupported" for n in res.nodes):
            ev.error = res.error or "OpenVINO refused nodes of the model"
            ev.seconds = round(time.perf_counter() - t0, 3)
            return ev
        try:
            compiled = _compiled(req.model)
            prec = str(compiled.get_property("INFERENCE_PRECISION_HINT"))
            ev.runs_on = f"{res.tool}, CPU plugin, inference precision {prec}"
            for feed in _samples(req.samples):
                got = compiled(_feed(compiled, feed))
                ev.outputs.append([np.asarray(x) for x in got.to_tuple()])
        except Exception as exc:  # OpenVINO raises RuntimeError with its own words
            ev.error = f"OpenVINO CPU: {type(exc).__name__}: {str(exc)[:400]}"
        ev.seconds = round(time.perf_counter() - t0, 3)
        return ev

    def host_runner(self, ev: Evaluation, req: EvalRequest) -> Any:
        compiled = _compiled(req.model)
        return lambda feed: compiled(_feed(compiled, feed))


def _feed(compiled: Any, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The sample's arrays by the compiled model's input names: an input may carry several names (OpenVINO
    merges a Cast's output name into the parameter's), so the one the sample uses is picked."""
    out = {}
    for i in compiled.inputs:
        names = i.get_names()
        name = next((n for n in feed if n in names), i.get_any_name())
        out[name] = feed[name]
    return out


def _data_bytes(model: Path) -> int:
    data = model.parent / f"{model.name}.data"
    return data.stat().st_size if data.is_file() else 0


def evaluator(name: str) -> OpenVinoEvaluator:
    """The ``evaluators`` hook of the plugin's manifest."""
    return OpenVinoEvaluator()
