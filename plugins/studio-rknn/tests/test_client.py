"""Batches that survive the toolkit: a process that dies or stalls costs one model, recorded with why."""

from __future__ import annotations

import os
from pathlib import Path

from studio_rknn import client


def _fake_env(root: Path, script: str) -> Path:
    (root / "bin").mkdir(parents=True)
    py = root / "bin" / "python"
    py.write_text("#!/bin/sh\n" + script + "\n")
    os.chmod(py, 0o755)
    return root


def _jobs(tmp_path: Path, n: int) -> list[dict]:
    jobs = []
    for i in range(n):
        log = tmp_path / f"m{i}.log"
        log.write_text("I rknn-toolkit2 version: 2.5.0\nstudio-rknn: reached load\n")
        jobs.append({"id": f"m{i}", "model": f"m{i}.onnx", "inputs": [], "log": str(log)})
    return jobs


def test_a_crashing_toolkit_is_recorded_per_model(tmp_path: Path) -> None:
    env = _fake_env(tmp_path / "env", "kill -ABRT $$")
    recs = client.check_many(_jobs(tmp_path, 2), tmp_path / "out.jsonl", env=env, timeout_per_job=5)
    assert [r["failed_stage"] for r in recs] == ["crash", "crash"]
    assert "SIGABRT" in recs[0]["error"] and recs[0]["reached"] == "load"  # the worker's stage mark survives


def test_a_stalled_toolkit_is_stopped_and_resumes_after_it(tmp_path: Path) -> None:
    env = _fake_env(tmp_path / "env", "sleep 30")
    out = tmp_path / "out.jsonl"
    recs = client.check_many(_jobs(tmp_path, 1), out, env=env, timeout_per_job=1)
    assert recs[0]["failed_stage"] == "timeout" and "within 1 s" in recs[0]["error"]
    again = client.check_many(_jobs(tmp_path, 1), out, env=env, timeout_per_job=1)  # answered from out
    assert again == recs
