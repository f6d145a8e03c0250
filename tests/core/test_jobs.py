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


def test_stage_events_carry_each_stage_and_its_fraction() -> None:
    from studio.core.jobs import StageProgress

    job = JobState(min_interval=0.0)
    seen: list[StageProgress] = []
    job.subscribe(lambda e, v: seen.append(v) if e == "stage" else None)
    st = Stages(job, {"export": 3.0, "parity": 1.0})
    st.begin("export")
    st.within("export", 0.5)
    st.begin("parity")
    st.within("parity", 1.0)
    assert [(s.name, s.index, s.count, s.fraction) for s in seen] == [
        ("export", 1, 2, 0.0), ("export", 1, 2, 0.5), ("parity", 2, 2, 0.0), ("parity", 2, 2, 1.0)]
    assert job.stage is not None and job.stage.text() == "parity 2/2 100%"


def test_eta_follows_the_progress_and_formats() -> None:
    from studio.core.jobs import Eta, format_eta

    now = [100.0]
    eta = Eta(clock=lambda: now[0])
    assert eta.update(0.5) is None  # under 1 %: no figure yet
    now[0] = 110.0
    assert eta.update(20.0) == pytest.approx(40.0)  # 10 s for 20 %: 40 s to go
    now[0] = 130.0
    assert eta.update(50.0) == pytest.approx(0.7 * 40.0 + 0.3 * 30.0)
    assert format_eta(None) == "" and format_eta(42) == "about 42s left"
    assert format_eta(200) == "about 3m 20s left" and format_eta(7300) == "about 2h 01m left"


def test_timed_guess_moves_a_silent_stage_and_stops_below_its_cap() -> None:
    import time

    job = JobState(min_interval=0.0)
    fractions: list[float] = []
    job.subscribe(lambda e, v: fractions.append(v.fraction) if e == "stage" else None)
    st = Stages(job, {"export": 1.0})
    with st.timed_guess("export", expected_s=1.0, cap=0.9):
        time.sleep(1.6)
    assert fractions and fractions == sorted(fractions) and 0 < fractions[0] and max(fractions) <= 0.9


def test_cancel_interrupts_a_long_call_within_a_second() -> None:
    """A call with no safe point (a trace) stops at its next Python bytecode once Cancel is asked."""
    import time

    job = JobState()
    result: dict[str, float] = {}

    def work() -> None:
        try:
            with job.interruptible():
                n = 0
                while True:  # pure Python, as a trace's symbolic functions are: never checks the flag itself
                    n += 1
        except JobCancelled:
            result["stopped"] = time.monotonic()

    t = threading.Thread(target=work)
    t.start()
    time.sleep(0.3)
    asked = time.monotonic()
    job.cancel()
    t.join(5)
    assert not t.is_alive() and result["stopped"] - asked < 1.0
    with pytest.raises(JobCancelled):  # outside the block a cancel is the usual safe-point kind
        with job.interruptible():
            pass
