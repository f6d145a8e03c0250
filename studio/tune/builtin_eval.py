"""The built-in evaluators: ONNX Runtime's CPU session (ort-cpu) and TVM Relax compiled for this host (tvm-relax).

ort-cpu: the ort-cpu verifier says per node what ORT takes, then a session runs every sample. tvm-relax: the
studio's own ``compile_model`` (TVM Relax, llvm for this host: the same import, legalisation and build a board
target gets, with its diagnosis on failure), then the compiled module runs every sample (TVMRunner).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from studio.tune.evaluate_api import EvalRequest, Evaluation


def load_samples(samples: list[Path]) -> list[dict[str, np.ndarray]]:
    out = []
    for f in samples:
        with np.load(f) as z:
            out.append({k: z[k] for k in z.files})
    return out


def onnx_bytes(model: Path) -> int:
    """The file and its external data, if any."""
    data = model.parent / f"{model.name}.data"
    return model.stat().st_size + (data.stat().st_size if data.is_file() else 0)


def output_names(model: Path) -> list[str]:
    import onnx

    return [o.name for o in onnx.load(str(model), load_external_data=False).graph.output]


def ort_session(model: Path) -> Any:
    from studio.core.runner import ort_session as session
    from studio.core.runner import session_options

    return session(model, session_options(threads=1))  # two candidates run side by side on two cores


class OrtEvaluator:
    target = "ort-cpu"

    def available(self) -> tuple[bool, str]:
        from studio.verify.ort_cpu import verifier

        return verifier().available()

    def evaluate(self, req: EvalRequest) -> Evaluation:
        from studio.verify.ort_cpu import verifier

        t0 = time.perf_counter()
        v = verifier()
        ev = Evaluation(tool=v.tool(), runs_on=f"{v.tool()} on this host", artifact=str(req.model),
                        artifact_bytes=onnx_bytes(req.model))
        ev.result = v.verify(req.model)
        if ev.result.ran and not ev.result.error:
            try:
                s = ort_session(req.model)
                for feed in load_samples(req.samples):
                    ev.outputs.append(s.run(None, {i.name: feed[i.name] for i in s.get_inputs()}))
            except Exception as exc:  # ORT's own exception types
                ev.error = f"{type(exc).__name__}: {str(exc)[:400]}"
        else:
            ev.error = ev.result.error or "ONNX Runtime did not load the model"
        ev.seconds = round(time.perf_counter() - t0, 3)
        return ev

    def host_runner(self, ev: Evaluation, req: EvalRequest) -> Any:
        s = ort_session(req.model)
        names = [i.name for i in s.get_inputs()]
        return lambda feed: s.run(None, {n: feed[n] for n in names})


class TvmEvaluator:
    target = "tvm-relax"

    def available(self) -> tuple[bool, str]:
        from studio.verify.tvm_relax import verifier

        return verifier().available()

    def evaluate(self, req: EvalRequest) -> Evaluation:
        from studio.compile.api import CompileOptions, compile_model
        from studio.core.errors import StudioError
        from studio.verify.api import NodeCheck, VerifyResult

        t0 = time.perf_counter()
        tool = self.available()[1]
        ev = Evaluation(tool=tool, runs_on=f"{tool}, compiled for llvm (this host)")
        samples = load_samples(req.samples)
        shapes = {k: list(v.shape) for k, v in samples[0].items()} if samples else {}
        out = req.work / "tvm-llvm"
        try:
            rep = compile_model(CompileOptions(model=req.model, target="llvm", out=out, shapes=shapes, verify=False,
                                               latency_runs=0, force=True, localise=True))
        except StudioError as exc:
            ev.error = exc.message
            ev.result = VerifyResult(verifier="tvm-relax", target="tvm-relax", tool=tool, ran=False, error=exc.message)
            ev.seconds = round(time.perf_counter() - t0, 3)
            return ev
        if not rep.ok:
            d = rep.diagnosis
            msg = f"{d.stage}: {d.message}" if d else "the compile failed"
            nodes = [NodeCheck(node=n, op_type=o, verdict="unsupported", placement="failed", message=msg[:600])
                     for n, o in zip(d.nodes if d else [], d.op_types if d else [], strict=False)]
            ev.result = VerifyResult(verifier="tvm-relax", target="tvm-relax", tool=tool, ran=bool(nodes),
                                     nodes=nodes, error=msg[:600])
            ev.error = msg
            ev.seconds = round(time.perf_counter() - t0, 3)
            return ev
        ev.result = VerifyResult(verifier="tvm-relax", target="tvm-relax", tool=tool, ran=True,
                                 notes=["compiled for llvm: every node built into the module"])
        ev.artifact = str(out)
        ev.artifact_bytes = sum(f.stat().st_size for f in out.iterdir() if f.is_file() and f.suffix in (".so", ".tar",
                                                                                                          ".bin"))
        try:
            runner = self._runner(out)
            names = output_names(req.model)
            for feed in samples:
                got = runner.infer(feed)
                ev.outputs.append([got[n] for n in names])
        except Exception as exc:  # a compiled module that fails to run is the candidate's failure
            ev.error = f"the compiled module failed to run: {type(exc).__name__}: {str(exc)[:300]}"
        ev.seconds = round(time.perf_counter() - t0, 3)
        return ev

    @staticmethod
    def _runner(folder: Path) -> Any:
        from studio.compile.runner import TVMRunner

        r = TVMRunner(folder)
        r.activate()
        return r

    def host_runner(self, ev: Evaluation, req: EvalRequest) -> Any:
        if not ev.artifact:
            return None
        r = self._runner(Path(ev.artifact))
        return lambda feed: r.infer(feed)


def evaluator(name: str) -> Any:
    """The ``evaluators`` hook of the built-in manifest."""
    if name == "ort-cpu":
        return OrtEvaluator()
    if name == "tvm-relax":
        return TvmEvaluator()
    raise KeyError(f"no built-in evaluator '{name}' (built-in: ort-cpu, tvm-relax)")
