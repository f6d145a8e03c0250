"""The one place rknn-toolkit2 is imported: run with the toolkit environment's python, JSON in, JSON out.

Stand-alone on purpose (stdlib + numpy + rknn only): the toolkit's environment has neither the studio nor its
pins. One request (a JSON object) on stdin, one JSON line on stdout. The toolkit writes progress bars and
coloured logs from Python and from its C++ compiler straight to file descriptors 1 and 2, so both are pointed
at a log file per model (``os.dup2``) and only the response goes to the original stdout; the studio parses
the log (``studio_rknn.logparse``), which keeps the parsing testable without the toolkit.

Actions (each answers ``{"ok": bool, "action": ..., "result": {...}, "error": str}``):
  version                      toolkit and package versions
  check       model, inputs    config -> load_onnx (static sizes) -> build(fp16) -> init_runtime (simulator)
                               [-> one inference]; the stage reached, return codes, the log file
  check_many  jobs, out        ``check`` for each job, one JSON line per job appended to ``out`` (resumable)
  build       model, inputs, output [, dataset]   export a .rknn (fp16, or int8 with a calibration list)
  infer       model|rknn, inputs, arrays, out_dir  simulator outputs as .npy files
  accuracy    model, inputs, dataset, out_dir      accuracy_analysis (per-layer error of the int8 model)
  evaluate    model, inputs, samples, out_dir [, dataset, auto_hybrid, export, analyse]   one build, then the
              simulator on every sample (and accuracy_analysis of the first): what ``studio optimize`` judges by

``worker.py --serve`` stays up for the agent's simulator runtime: the first line is a ``build``-like request
(model, inputs, platform, crop, dataset), answered once the simulator is ready; then each line
``{"arrays": [npy...], "out_dir": DIR}`` is one inference, answered with the output files; EOF ends it.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

STAGES = ("config", "load", "build", "init_runtime", "inference")
_LIBC = ctypes.CDLL(None)


def N_(message: str) -> str:  # noqa: N802 - the catalogue's mark (studio.core.catalogue.N_)
    """``message`` itself: the worker runs in the toolkit's environment, without the studio; the studio's side
    shows its words through the plugin's catalogue (studio.core.message_extract reads this mark)."""
    return message


class StageFailed(Exception):
    """A toolkit call returned non-zero or raised: which stage, and its words."""

    def __init__(self, stage: str, message: str) -> None:
        super().__init__(message)
        self.stage = stage


class Redirect:
    """Points fds 1 and 2 at ``log`` for the block (C++ output included), flushing C stdio on the way out."""

    def __init__(self, log: Path) -> None:
        self.log = log

    def __enter__(self) -> Redirect:
        sys.stdout.flush()
        sys.stderr.flush()
        self._fh = open(self.log, "ab", buffering=0)  # noqa: SIM115 - closed in __exit__
        self._saved = (os.dup(1), os.dup(2))
        os.dup2(self._fh.fileno(), 1)
        os.dup2(self._fh.fileno(), 2)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        _LIBC.fflush(None)  # the compiler's buffered printf lines belong to this model's log
        os.dup2(self._saved[0], 1)
        os.dup2(self._saved[1], 2)
        for fd in self._saved:
            os.close(fd)
        self._fh.close()


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str] = {"python": sys.version.split()[0]}
    for dist in ("rknn-toolkit2", "torch", "onnx", "onnxruntime", "numpy", "protobuf", "opencv-python-headless"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = ""
    return out


def _rknn() -> Any:
    from rknn.api import RKNN

    return RKNN(verbose=True, verbose_file=None)


def _call(stage: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """A toolkit call that returns 0 on success (or raises): anything else is a StageFailed for ``stage``."""
    try:
        rc = fn(*args, **kwargs)
    except Exception as exc:  # the toolkit raises ValueError with its own traceback text
        raise StageFailed(stage, f"{type(exc).__name__}: {exc}") from None
    if isinstance(rc, int) and rc != 0:
        name = fn.__name__
        raise StageFailed(stage, N_(f"{name} returned {rc}"))
    return rc


def _feeds(req: dict[str, Any]) -> list[Any]:
    """Inputs for one simulator run: the given .npy files, else seeded random values of each input's dtype."""
    import numpy as np

    if req.get("arrays"):
        return [np.load(p) for p in req["arrays"]]
    rng = np.random.default_rng(0)
    feeds = []
    for spec in req["inputs"]:
        dt = np.dtype(spec.get("dtype") or "float32")
        shape = spec["shape"]
        if dt == np.bool_:
            feeds.append(rng.integers(0, 2, shape).astype(np.bool_))
        elif dt.kind in "iu":
            feeds.append(np.ones(shape, dt))  # valid as ids, masks, token types and divisors alike
        else:
            feeds.append(rng.standard_normal(shape).astype(dt))
    return feeds


MARK = "studio-rknn: reached "  # written into the log after each stage: a crash later still says how far it got


def _mark(reached: dict[str, Any], stage: str) -> None:
    reached["reached"] = stage
    _LIBC.fflush(None)
    os.write(1, f"\n{MARK}{stage}\n".encode())


def _prepare(r: Any, req: dict[str, Any], quantize: bool, reached: dict[str, Any] | None = None) -> None:
    """config -> load_onnx -> build, the shared first half of every action; ``reached`` records the stage."""
    reached = reached if reached is not None else {}
    cfg: dict[str, Any] = {"target_platform": req.get("platform", "rk3588")}
    hybrid = req.get("auto_hybrid") if quantize else None
    if quantize:
        cfg["quantized_dtype"] = req.get("quantized_dtype", "w8a8")
    if hybrid:  # int8 with the layers whose per-layer cosine falls below the threshold kept in float16
        cfg["auto_hybrid_cos_thresh"] = float(hybrid)
    _call("config", r.config, **cfg)
    _mark(reached, "config")
    names = [i["name"] for i in req["inputs"]]
    sizes = [list(i["shape"]) for i in req["inputs"]]
    # names only when the sizes differ from the model's own (the toolkit ignores sizes without names, and with
    # names it warns that it crops the model): the studio sets "crop" then
    _call("load", r.load_onnx, model=req["model"], inputs=(names or None) if req.get("crop") else None,
          input_size_list=sizes or None)
    _mark(reached, "load")
    extra = {"auto_hybrid": True} if hybrid else {}
    _call("build", r.build, do_quantization=quantize, dataset=req.get("dataset") if quantize else None, **extra)
    _mark(reached, "build")


def _next_stage(reached: str) -> str:
    """The stage an unexpected toolkit exception failed in: the one after the last stage reached."""
    if reached in STAGES[:-1]:
        return STAGES[STAGES.index(reached) + 1]
    return reached or "config"


@contextmanager
def _recorded(res: dict[str, Any], log: Path) -> Iterator[list[Any]]:
    """Run ``check`` / ``evaluate``'s stages with the toolkit's output in ``log``: a failure is recorded in
    ``res`` with its stage (never raised: the studio reads how far the model got), every toolkit object put in
    the yielded list is released, and the time taken is recorded, whatever happened."""
    held: list[Any] = []
    t0 = time.perf_counter()
    try:
        with Redirect(log):
            try:
                yield held
            except StageFailed as exc:
                res["failed_stage"], res["error"] = exc.stage, str(exc)
            except Exception as exc:  # anything else the toolkit throws is that stage's failure too
                res["failed_stage"], res["error"] = _next_stage(res["reached"]), f"{type(exc).__name__}: {exc}"
            finally:
                for r in held:
                    try:
                        r.release()
                    except Exception:
                        pass
    finally:
        res["seconds"] = round(time.perf_counter() - t0, 3)


def do_check(req: dict[str, Any]) -> dict[str, Any]:
    """How far the toolkit gets with the model; the log (per-layer table, fallbacks) is parsed by the studio."""
    log = Path(req["log"])
    log.write_bytes(b"")
    res: dict[str, Any] = {"log": str(log), "reached": "", "failed_stage": "", "error": "", "outputs": []}
    with _recorded(res, log) as held:
        r = _rknn()
        held.append(r)
        _prepare(r, req, quantize=False, reached=res)
        _call("init_runtime", r.init_runtime)
        _mark(res, "init_runtime")
        if req.get("run", True):
            outs = r.inference(inputs=_feeds(req), data_format="nchw")
            if outs is None:
                raise StageFailed("inference", N_("inference returned no outputs"))
            res["outputs"] = [list(getattr(o, "shape", ())) for o in outs]
            res["reached"] = "inference"
    return res


def do_check_many(req: dict[str, Any]) -> dict[str, Any]:
    """``check`` per job; appends one line per job to ``out`` at once, so a crash loses one model only."""
    out = Path(req["out"])
    done = 0
    for job in req["jobs"]:
        res = do_check(job)
        res["id"] = job.get("id", job["model"])
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(res) + "\n")
        done += 1
    return {"done": done, "out": str(out)}


def do_build(req: dict[str, Any]) -> dict[str, Any]:
    """Export a .rknn: fp16 by default, int8 (w8a8) when a calibration dataset list is given."""
    log = Path(req["log"])
    quantize = bool(req.get("dataset"))
    with Redirect(log):
        r = _rknn()
        try:
            _prepare(r, req, quantize=quantize)
            Path(req["output"]).parent.mkdir(parents=True, exist_ok=True)
            _call("export", r.export_rknn, req["output"])
        finally:
            r.release()
    return {"log": str(log), "output": req["output"], "dtype": "int8" if quantize else "fp16",
            "bytes": Path(req["output"]).stat().st_size}


def do_infer(req: dict[str, Any]) -> dict[str, Any]:
    """Simulator outputs for the given inputs (an ONNX model is built first: the simulator needs the build)."""
    import numpy as np

    log = Path(req["log"])
    out_dir = Path(req["out_dir"])
    out_dir.mkdir(parents=True, exist_ok=True)
    with Redirect(log):
        r = _rknn()
        try:
            _prepare(r, req, quantize=bool(req.get("dataset")))
            _call("init_runtime", r.init_runtime)
            outs = r.inference(inputs=_feeds(req), data_format="nchw")
        finally:
            r.release()
    if outs is None:
        raise StageFailed("inference", N_("inference returned no outputs"))
    files = []
    for i, o in enumerate(outs):
        p = out_dir / f"output_{i}.npy"
        np.save(p, np.asarray(o))
        files.append(str(p))
    return {"log": str(log), "outputs": files}


def do_accuracy(req: dict[str, Any]) -> dict[str, Any]:
    """The toolkit's accuracy_analysis (simulator): its per-layer error files land in ``out_dir``."""
    log = Path(req["log"])
    out_dir = Path(req["out_dir"])
    with Redirect(log):
        r = _rknn()
        try:
            _prepare(r, req, quantize=bool(req.get("dataset")))
            _call("accuracy", r.accuracy_analysis, inputs=list(req["arrays"]), output_dir=str(out_dir))
        finally:
            r.release()
    return {"log": str(log), "out_dir": str(out_dir),
            "files": sorted(str(p.relative_to(out_dir)) for p in out_dir.rglob("*") if p.is_file())}


def do_evaluate(req: dict[str, Any]) -> dict[str, Any]:
    """Build once (fp16, int8, or int8 with auto_hybrid), export the .rknn when asked, run accuracy_analysis on
    the first sample when asked (int8), then the simulator on each sample; a failure is recorded with its stage
    (the studio reads placement from the log, as for ``check``)."""
    import numpy as np

    log = Path(req["log"])
    log.write_bytes(b"")
    out_dir = Path(req["out_dir"])
    out_dir.mkdir(parents=True, exist_ok=True)
    res: dict[str, Any] = {"log": str(log), "reached": "", "failed_stage": "", "error": "", "outputs": [],
                           "rknn_bytes": 0, "accuracy_dir": ""}
    quantize = bool(req.get("dataset"))
    with _recorded(res, log) as held:
        r = _rknn()
        held.append(r)
        _prepare(r, req, quantize=quantize, reached=res)
        if req.get("export"):
            _call("export", r.export_rknn, req["export"])
            res["rknn_bytes"] = Path(req["export"]).stat().st_size
        if req.get("analyse") and quantize and req.get("samples"):
            acc = out_dir / "analysis"
            try:
                _call("accuracy", r.accuracy_analysis, inputs=list(req["samples"][0]), output_dir=str(acc))
                res["accuracy_dir"] = str(acc)
            except StageFailed as exc:  # the per-layer table is a bonus, the build stands
                res["accuracy_error"] = str(exc)
        _call("init_runtime", r.init_runtime)
        _mark(res, "init_runtime")
        for k, arrays in enumerate(req.get("samples") or []):
            outs = r.inference(inputs=[np.load(p) for p in arrays], data_format="nchw")
            if outs is None:
                raise StageFailed("inference", N_(f"inference returned no outputs for sample {k}"))
            files = []
            for i, o in enumerate(outs):
                f = out_dir / f"s{k:04d}_o{i}.npy"
                np.save(f, np.asarray(o))
                files.append(str(f))
            res["outputs"].append(files)
        res["reached"] = "inference"
    return res


ACTIONS = {"check": do_check, "evaluate": do_evaluate, "check_many": do_check_many, "build": do_build, "infer": do_infer,
           "accuracy": do_accuracy}


def handle(req: dict[str, Any]) -> dict[str, Any]:
    action = req.get("action", "")
    if action == "version":
        try:
            with Redirect(Path(req.get("log") or os.devnull)):
                import rknn.api  # noqa: F401 - importing is the check
        except Exception as exc:
            return {"ok": False, "action": action, "result": {"versions": _versions()},
                    "error": N_(f"cannot import rknn.api: {type(exc).__name__}: {exc}")}
        return {"ok": True, "action": action, "result": {"versions": _versions()}, "error": ""}
    if action not in ACTIONS:
        return {"ok": False, "action": action, "result": {}, "error": N_(f"unknown action {action!r}")}
    if "log" not in req and action != "check_many":
        req["log"] = tempfile.mkstemp(prefix="rknn-", suffix=".log")[1]
    try:
        return {"ok": True, "action": action, "result": ACTIONS[action](req), "error": ""}
    except StageFailed as exc:
        return {"ok": False, "action": action, "result": {"failed_stage": exc.stage, "log": req.get("log", "")},
                "error": str(exc)}
    except Exception as exc:
        return {"ok": False, "action": action, "result": {"log": req.get("log", "")},
                "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}


PATH_KEYS = ("model", "rknn", "output", "out", "out_dir", "log", "dataset", "export")  # a request's fields that are paths
PATH_LIST_KEYS = ("arrays",)


def _absolute_paths(req: dict[str, Any], base: Path) -> dict[str, Any]:
    """The request with its path fields (only those: an action named "build" is not the folder build/) made
    absolute against ``base``, the caller's folder; ``jobs`` (check_many) likewise."""
    out = dict(req)
    for key in PATH_KEYS:
        if isinstance(out.get(key), str) and out[key] and not os.path.isabs(out[key]):
            out[key] = str(base / out[key])
    for key in PATH_LIST_KEYS:
        if isinstance(out.get(key), list):
            out[key] = [str(base / v) if isinstance(v, str) and not os.path.isabs(v) else v for v in out[key]]
    if isinstance(out.get("jobs"), list):
        out["jobs"] = [_absolute_paths(j, base) if isinstance(j, dict) else j for j in out["jobs"]]
    return out


def serve(out: Any) -> int:
    """Build once, then one inference per request line (see the module docstring)."""
    import numpy as np

    def answer(obj: dict[str, Any]) -> None:
        out.write(json.dumps(obj) + "\n")
        out.flush()

    first = sys.stdin.readline()
    try:
        req = json.loads(first or "{}")
    except json.JSONDecodeError as exc:
        answer({"ok": False, "error": f"bad request: {exc}"})
        return 2
    caller = Path.cwd()
    req = _absolute_paths(req, caller)
    log = Path(req.get("log") or tempfile.mkstemp(prefix="rknn-serve-", suffix=".log")[1])
    os.chdir(tempfile.mkdtemp(prefix="rknn-serve-"))  # the toolkit's check*.onnx files land here
    r = None
    try:
        with Redirect(log):
            r = _rknn()
            _prepare(r, req, quantize=bool(req.get("dataset")))
            _call("init_runtime", r.init_runtime)
    except StageFailed as exc:
        answer({"ok": False, "failed_stage": exc.stage, "error": str(exc), "log": str(log)})
        return 1
    answer({"ok": True, "ready": True, "log": str(log), "versions": _versions()})
    for line in sys.stdin:
        try:
            job = _absolute_paths(json.loads(line), caller)
            with Redirect(log):
                outs = r.inference(inputs=[np.load(p) for p in job["arrays"]], data_format="nchw")
            if outs is None:
                raise StageFailed("inference", N_("inference returned no outputs (see the log)"))
            files = []
            for i, o in enumerate(outs):
                p = Path(job["out_dir"]) / f"output_{i}.npy"
                np.save(p, np.asarray(o))
                files.append(str(p))
            answer({"ok": True, "outputs": files})
        except Exception as exc:  # one bad request does not end the runtime
            answer({"ok": False, "error": f"{type(exc).__name__}: {exc}"})
    r.release()
    return 0


def main() -> int:
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    if "--serve" in sys.argv[1:]:
        return serve(out)  # the response channel, kept apart from the toolkit's noise
    try:
        req = json.loads(sys.stdin.read() or "{}")
    except json.JSONDecodeError as exc:
        out.write(json.dumps({"ok": False, "action": "", "result": {}, "error": f"bad request: {exc}"}) + "\n")
        return 2
    # the toolkit drops check*.onnx files into the working folder: run in a scratch one (paths given relative
    # to the caller's folder are made absolute first)
    req = _absolute_paths(req, Path.cwd())
    scratch = tempfile.mkdtemp(prefix="rknn-worker-")
    os.chdir(scratch)
    try:
        resp = handle(req)
    finally:
        os.chdir("/")
        shutil.rmtree(scratch, ignore_errors=True)
    out.write(json.dumps(resp) + "\n")
    out.flush()
    return 0 if resp["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
