"""The search as a job: Cancel stops the workers (and what they started) and writes nothing; a time limit that
passes mid-round keeps the candidates judged and marks the rest skipped, with a warning."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from studio.core.errors import JobCancelled
from studio.core.jobs import JobState
from studio.tune.options import TuneOptions, parse_budget
from studio.tune.report import REPORT_FILE
from studio.tune.search import optimize_for_target


def test_cancel_after_the_first_candidate(clip_export: Path, calibration: Path, tmp_path: Path,
                                          private_cache: Path) -> None:
    job = JobState(name="optimize")
    seen: list[str] = []

    def listener(event: str, value: object) -> None:
        if event == "partial" and value[0] == "candidate":  # type: ignore[index]
            seen.append(value[1].id)  # type: ignore[index]
            job.cancel()

    job.subscribe(listener)
    out = tmp_path / "cancelled"
    opts = TuneOptions(model=clip_export, target="ort-cpu", budget=parse_budget("cosine>=0.99"),
                       calibration=calibration, out=out, parts=["vision"], latency_runs=2)
    with pytest.raises(JobCancelled):
        optimize_for_target(opts, job)
    assert seen  # it was cancelled mid-search, not before
    assert not out.exists() and not private_cache.exists()
    assert not multiprocessing.active_children()  # the pool's workers are gone


def test_time_limit_keeps_what_was_judged(clip_export: Path, calibration: Path, tmp_path: Path) -> None:
    from tests.tune.helpers import run_cli

    out = tmp_path / "short"
    # 0.6 s: the workers' start-up alone (spawned, importing onnx and ORT) takes longer
    rc = run_cli("optimize", clip_export, "--target", "ort-cpu", "--part", "vision", "--calibration", calibration,
                 "--time-limit", "0.01", "--out", out, "--latency-runs", "2")
    rep = json.loads((out / REPORT_FILE).read_text())
    assert any("time limit" in w for w in rep["warnings"])
    (part,) = rep["parts"]
    statuses = {c["status"] for c in part["candidates"]}
    assert "skipped" in statuses
    assert rc == (0 if part["met"] else 1)
    assert all(c["judged"].get("error") for c in part["candidates"] if c["status"] == "skipped")


def test_a_worker_killed_mid_round_is_a_crash_and_the_search_goes_on(clip_export: Path, calibration: Path,
                                                                     tmp_path: Path) -> None:
    """As the OOM killer would: the candidates that worker's pool had pending are reported crashed, the next round
    gets a fresh pool and the result is still written."""
    import os
    import signal

    job = JobState(name="optimize")
    killed: list[int] = []

    def listener(event: str, value: object) -> None:
        if event == "partial" and not killed:
            workers = [p.pid for p in multiprocessing.active_children() if p.pid is not None]
            if workers:
                os.kill(workers[0], signal.SIGKILL)
                killed.append(workers[0])

    job.subscribe(listener)
    out = tmp_path / "survived"
    opts = TuneOptions(model=clip_export, target="ort-cpu", budget=parse_budget("cosine>=0.99"),
                       calibration=calibration, out=out, parts=["vision"], latency_runs=2)
    rep = optimize_for_target(opts, job)
    assert killed
    (part,) = rep.parts
    crashed = [c for c in part.candidates if c.status == "crashed"]
    assert crashed and all("died" in c.judged["error"] for c in crashed)
    assert any(c.round == "precision" and c.status == "built" for c in part.candidates)
    assert (out / REPORT_FILE).is_file() and part.chosen
