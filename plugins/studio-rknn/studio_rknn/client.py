"""The studio's side of the worker: requests, timeouts, and batches that survive a toolkit crash.

The toolkit's compiler aborts the whole process on some models (SIGABRT after "Not Support Dtype"), so a
batch runs in a worker that appends one JSON line per model; when the process dies, the first model without a
line is recorded as crashed (with the tail of its log) and a new worker carries on after it.
"""

from __future__ import annotations

import json
import signal
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from studio.core.catalogue import N_
from studio_rknn import env as envmod


class WorkerError(RuntimeError):
    """The worker could not answer (environment broken, crash, timeout); the message says which."""


def call(action: str, *, env: Path | None = None, timeout: float = 600, **payload: Any) -> dict[str, Any]:
    """One action; the worker's ``result`` dict. A failed action raises WorkerError with the toolkit's words."""
    try:
        resp = envmod.run_worker({"action": action, **payload}, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise WorkerError(N_(f"rknn worker '{action}' did not finish within {timeout:.0f} s")) from None
    except (OSError, ValueError) as exc:
        reason = str(exc)  # translated inside the line where it is shown ({reason})
        raise WorkerError(N_(f"rknn worker '{action}' failed: {reason}")) from None
    if not resp.get("ok"):
        message = resp.get("error") or N_(f"rknn worker '{action}' failed")
        log = resp.get("result", {}).get("log")
        if log and Path(log).exists():  # the toolkit's own first error beats its Python traceback
            from studio_rknn.logparse import parse_log

            first = parse_log(Path(log).read_text(encoding="utf-8", errors="replace")).first_error()
            stage = resp.get("result", {}).get("failed_stage", action)
            message = (first if first.startswith(f"{stage}:") else f"{stage}: {first}") if first else message
        err = WorkerError(message)
        err.result = resp.get("result", {})  # type: ignore[attr-defined]
        raise err
    return resp["result"]


def _signal_name(rc: int) -> str:
    if rc < 0:
        try:
            return signal.Signals(-rc).name
        except ValueError:
            return f"signal {-rc}"
    return f"exit {rc}"


def _log_tail(path: str, lines: int = 6) -> str:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    from studio_rknn.logparse import strip_ansi

    return "\n".join(strip_ansi(text).strip().splitlines()[-lines:])


STALLED = -1000  # _run_batch's code for "no answer within the per-model limit"
LOG_KEEP = 2 * 2**20  # a stalled toolkit can loop and log hundreds of MB: keep the head and the tail


def _run_batch(cmd: list[str], req: str, out: Path, timeout_per_job: float) -> int:
    """Run one worker over a batch; kill it when no new answer line arrives within ``timeout_per_job``."""
    import time

    def lines() -> int:
        try:
            return out.read_bytes().count(b"\n")
        except OSError:
            return 0

    with open(req, encoding="utf-8") as stdin:
        proc = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=envmod.clean_env())
        seen, since = lines(), time.monotonic()
        while proc.poll() is None:
            time.sleep(0.2)
            now = lines()
            if now != seen:
                seen, since = now, time.monotonic()
            elif time.monotonic() - since > timeout_per_job:
                proc.kill()
                proc.wait()
                return STALLED
    return proc.returncode


def _trim(log: Path) -> None:
    try:
        size = log.stat().st_size
        if size <= 2 * LOG_KEEP:
            return
        with open(log, "rb") as fh:
            head = fh.read(LOG_KEEP)
            fh.seek(size - LOG_KEEP)
            tail = fh.read()
        log.write_bytes(head + f"\n[studio-rknn: {size - 2 * LOG_KEEP} bytes cut]\n".encode() + tail)
    except OSError:
        pass


def _reached(path: str) -> str:
    """The last stage the worker marked in a log (its marks survive a crash that loses the JSON answer)."""
    from studio_rknn.worker import MARK

    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    marks = [ln[len(MARK):].strip() for ln in text.splitlines() if ln.startswith(MARK)]
    return marks[-1] if marks else ""


def check_many(jobs: list[dict[str, Any]], out: Path, *, env: Path | None = None, timeout_per_job: float = 120,
               progress: Callable[[int, int], None] | None = None) -> list[dict[str, Any]]:
    """``check`` for every job (each: id, model, inputs, log[, platform, run]); results in job order.

    ``out`` (JSONL) is appended to and read back, so an interrupted batch resumes where it stopped.
    """
    done: dict[str, dict[str, Any]] = {}
    if out.exists():
        for line in out.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                done[rec["id"]] = rec
    py = str(envmod.env_python(env))
    while True:
        todo = [j for j in jobs if j["id"] not in done]
        if progress:
            progress(len(jobs) - len(todo), len(jobs))
        if not todo:
            break
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
            json.dump({"action": "check_many", "jobs": todo, "out": str(out)}, fh)
            req = fh.name
        try:
            rc = _run_batch([py, "-I", str(envmod.worker_path())], req, out, timeout_per_job)
        finally:
            Path(req).unlink(missing_ok=True)
        before = len(done)
        for line in out.read_text(encoding="utf-8").splitlines() if out.exists() else []:
            if line.strip():
                rec = json.loads(line)
                done[rec["id"]] = rec
        if rc == 0 and all(j["id"] in done for j in jobs):
            continue
        # the worker died on the first job it did not answer: that job crashed the toolkit
        victim = next(j for j in jobs if j["id"] not in done)
        if rc == STALLED:
            _trim(Path(victim["log"]))
            rec = {"id": victim["id"], "log": victim["log"], "reached": _reached(victim["log"]),
                   "failed_stage": "timeout", "outputs": [], "seconds": timeout_per_job,
                   "error": N_(f"the toolkit did not finish this model within {timeout_per_job:.0f} s (stopped): "
                            f"{_log_tail(victim['log'], 2)[:300]}")}
        else:
            rec = {"id": victim["id"], "log": victim["log"], "reached": _reached(victim["log"]),
                   "failed_stage": "crash", "outputs": [], "seconds": 0.0,
                   "error": N_(f"the toolkit's process died ({_signal_name(rc)}) on this model: "
                            f"{_log_tail(victim['log'])}")}
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec) + "\n")
        done[victim["id"]] = rec
        if len(done) == before and rc == 0:
            break
    return [done[j["id"]] for j in jobs]
