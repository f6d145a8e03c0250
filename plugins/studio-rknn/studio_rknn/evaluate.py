"""The rknn evaluators (``rk3588``, ``rk3576``, ``rk3566``): how `studio optimize` judges a candidate.

One toolkit process per candidate (``worker.py`` action ``evaluate``): build at fp16, int8 (w8a8, calibrated on
the candidate's calibration samples) or int8 with ``auto_hybrid`` (layers below a per-layer cosine kept in
float16), export the .rknn (its size is the candidate's size), for int8 ``accuracy_analysis`` on the first sample
(the per-layer error the search reports as blocking layers), then the x86 simulator on every sample. Placement
per ONNX node comes from the same log reading as the verifier's (``result_from_run``).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.catalogue import N_
from studio.core.errors import InputError
from studio.tune.evaluate_api import EvalRequest, Evaluation
from studio_rknn import client
from studio_rknn import env as envmod
from studio_rknn.logparse import parse_accuracy, parse_log
from studio_rknn.manifest import PLATFORMS
from studio_rknn.verifier import RknnVerifier, crash_of, result_from_run, static_inputs, tool_name

_HYBRID = re.compile(r"Meet hybrid type, dtype: float16, tensor: (\S+)")
TIMEOUT = 900  # seconds for one candidate (build + simulator on every sample)


def _npy_lines(files: list[Path], inputs: list[dict[str, Any]], folder: Path, tag: str) -> list[list[str]]:
    """Each .npz sample as the toolkit's inputs: one .npy per input, in the model's input order."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for k, f in enumerate(files):
        with np.load(f) as z:
            row = []
            for j, spec in enumerate(inputs):
                if spec["name"] not in z:
                    raise InputError(f"sample {f.name} has no array '{spec['name']}'", offending=str(f),
                                     hint="every sample needs every input of the device graph")
                p = folder / f"{tag}{k:04d}_{j}.npy"
                np.save(p, np.asarray(z[spec["name"]], dtype=np.dtype(spec["dtype"])).reshape(spec["shape"]))
                row.append(str(p))
        out.append(row)
    return out


class RknnEvaluator:
    def __init__(self, platform: str) -> None:
        self.target = platform
        self.platform = platform

    def available(self) -> tuple[bool, str]:
        status = envmod.check_env()
        return status.ok, (tool_name(status.versions) if status.ok else status.reason)

    def evaluate(self, req: EvalRequest) -> Evaluation:
        t0 = time.perf_counter()
        status = envmod.check_env()
        tool = tool_name(status.versions)
        ev = Evaluation(tool=tool, runs_on=f"{tool} x86 simulator ({self.platform})")
        if not status.ok:
            ev.error = status.reason
            return ev
        try:
            mi = static_inputs(req.model)
        except InputError as exc:
            ev.error = f"{exc.message} ({exc.hint})"
            return ev
        int8 = req.build == "int8"
        work = req.work
        dataset = None
        if int8:
            cal = sorted(Path(req.calibration).glob("*.npz")) if req.calibration else []
            if not cal:
                ev.error = "an int8 build needs calibration samples of the device graph's inputs"
                return ev
            lines = _npy_lines(cal, mi.inputs, work / "dataset", "cal")
            dataset = work / "dataset.txt"
            dataset.write_text("\n".join(" ".join(r) for r in lines) + "\n", encoding="utf-8")
        samples = _npy_lines(list(req.samples), mi.inputs, work / "samples", "s")
        rknn_file = work / "model.rknn"
        log = work / "evaluate.log"
        try:
            rec = client.call("evaluate", model=str(Path(req.model).resolve()), inputs=mi.inputs,
                              platform=self.platform, crop=mi.resized, dataset=str(dataset) if dataset else None,
                              auto_hybrid=req.auto_hybrid if int8 else None, samples=samples,
                              out_dir=str(work / "outputs"), export=str(rknn_file), analyse=bool(req.analyse and int8),
                              log=str(log), timeout=TIMEOUT)
        except client.WorkerError as exc:
            ev.crash = f"{tool}: {exc}"
            ev.error = str(exc)
            ev.seconds = round(time.perf_counter() - t0, 3)
            return ev
        text = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
        parsed = parse_log(text)
        v = RknnVerifier(name=f"rknn-{self.platform}", target=self.platform, platform=self.platform)
        used = {i["name"]: i["shape"] for i in mi.inputs}
        ev.result = result_from_run(v, rec, parsed, mi, tool, used, float(rec.get("seconds", 0.0)))
        what = ("int8 (w8a8)" + (f", auto_hybrid at per-layer cosine {req.auto_hybrid:g}" if req.auto_hybrid else "")
                if int8 else "fp16")
        ev.result.notes = [n.replace("at fp16 (no quantization)", f"at {what}") for n in ev.result.notes]
        ev.crash = ev.result.crash or crash_of(rec, parsed, tool)
        if rec.get("failed_stage"):
            ev.error = ev.result.error or rec.get("error", "")
        ev.outputs = [[np.load(p) for p in files] for files in rec.get("outputs") or []]
        if rknn_file.is_file():
            ev.artifact, ev.artifact_bytes = str(rknn_file), rknn_file.stat().st_size
        ev.kept_float = sorted(set(_HYBRID.findall(text)))
        acc = Path(rec.get("accuracy_dir") or "") / "error_analysis.txt"
        if rec.get("accuracy_dir") and acc.is_file():
            ev.layer_rows = parse_accuracy(acc.read_text(encoding="utf-8", errors="replace"))
        if rec.get("accuracy_error"):
            reason = rec["accuracy_error"][:200]
            ev.notes.append(N_(f"accuracy_analysis did not run: {reason}"))
        ev.notes.append(N_(f"built {what}; outputs from the toolkit's x86 simulator, not the NPU"))
        ev.seconds = round(time.perf_counter() - t0, 3)
        return ev

    def host_runner(self, ev: Evaluation, req: EvalRequest) -> Any:
        return None  # the NPU is not here: the simulator is no latency measure


def evaluator(name: str) -> RknnEvaluator:
    """The ``evaluators`` hook: ``rk3588`` -> that platform's evaluator."""
    if name not in PLATFORMS:
        raise InputError(f"unknown rknn evaluator {name!r}", offending=name, hint="known: " + ", ".join(PLATFORMS))
    return RknnEvaluator(name)
