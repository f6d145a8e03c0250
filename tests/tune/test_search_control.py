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
