"""JobState semantics: throttled progress, cancel at safe points, partial results, stage weights."""

from __future__ import annotations

import threading

import pytest

from studio.core.errors import JobCancelled
from studio.core.jobs import JobState, Stages


def test_progress_is_throttled_but_100_always_arrives() -> None:
    job = JobState(min_interval=10.0)
    seen: list[float] = []
    job.subscribe(lambda ev, val: seen.append(val) if ev == "progress" else None)
    for i in range(1, 100):
        job.set_progress(i)
    job.set_progress(100)
    assert seen[0] == 1 and seen[-1] == 100 and len(seen) == 2


def test_cancel_raises_at_the_next_safe_point() -> None:
    job = JobState(name="export")
    job.check_cancelled()
    job.cancel()
    assert job.cancel_requested
    with pytest.raises(JobCancelled, match="export cancelled"):
        job.step(1, 10)


def test_partial_results_and_log_are_kept() -> None:
    job = JobState()
    events: list[str] = []
    job.subscribe(lambda ev, _val: events.append(ev))
    job.set_status("tracing")
    job.set_partial("case0", {"passed": True})
    assert job.partial == {"case0": {"passed": True}}
    assert job.log_lines == ["tracing"]
    assert events == ["log", "status", "partial"]


def test_stages_map_onto_one_range() -> None:
    job = JobState(min_interval=0)
    stages = Stages(job, {"load": 1, "export": 3})
    stages.begin("load")
    assert job.progress == 0
    stages.within("load", 1.0)
    assert job.progress == pytest.approx(25)
    stages.begin("export")
    stages.within("export", 0.5)
    assert job.progress == pytest.approx(62.5)


def test_listeners_hear_events_from_a_worker_thread() -> None:
    job = JobState(min_interval=0)
    seen: list[float] = []
    job.subscribe(lambda ev, val: seen.append(val) if ev == "progress" else None)
    t = threading.Thread(target=lambda: [job.set_progress(p) for p in (10, 20, 30)])
    t.start()
    t.join()
    assert seen == [10, 20, 30]
