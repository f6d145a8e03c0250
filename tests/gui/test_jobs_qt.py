"""The Qt job adapter: worker thread, queued progress, failure and cancel, one running job per kind."""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("PySide6")

from studio.core.errors import InputError  # noqa: E402
from studio.core.jobs import JobState  # noqa: E402
from studio.gui.jobs_qt import JobRunner  # noqa: E402

pytestmark = pytest.mark.gui


def test_job_runs_off_the_gui_thread_and_reports(qtbot) -> None:  # noqa: ANN001
    runner = JobRunner()
    gui_thread = threading.get_ident()
    seen: dict[str, object] = {}
    progress: list[float] = []
    runner.sig_progress.connect(lambda _h, p: progress.append(p))

    def work(job: JobState) -> int:
        seen["thread"] = threading.get_ident()
        for i in range(5):
            job.set_progress(i * 25, force=True)
        return 42

    results: list[int] = []
    with qtbot.waitSignal(runner.sig_finished, timeout=10000):
        h = runner.start("demo", "demo job", work, on_done=results.append)
    assert seen["thread"] != gui_thread
    assert results == [42] and h.status == "done" and h.progress == 100
    assert progress[-1] == 100
    runner.wait_all()


def test_failure_and_cancel(qtbot) -> None:  # noqa: ANN001
    runner = JobRunner()
    errors: list[Exception] = []

    def bad(job: JobState) -> None:
        raise InputError("no such folder", offending="/nope", hint="check the path")

    with qtbot.waitSignal(runner.sig_finished, timeout=10000):
        h = runner.start("bad", "bad job", bad, on_failed=errors.append)
    assert h.status == "failed" and isinstance(errors[0], InputError)

    def slow(job: JobState) -> None:
        while True:
            job.check_cancelled()
            time.sleep(0.01)

    first = runner.start("long", "first", slow)
    with qtbot.waitSignals([runner.sig_finished, runner.sig_finished], timeout=10000):
        second = runner.start("long", "second", slow)  # same kind: cancels the first
        qtbot.wait(50)
        runner.cancel(second.id)
    assert first.status == "cancelled" and second.status == "cancelled"
    runner.wait_all()


def test_unexpected_exception_is_wrapped(qtbot) -> None:  # noqa: ANN001
    runner = JobRunner()

    def boom(job: JobState) -> None:
        raise ZeroDivisionError("division by zero")

    with qtbot.waitSignal(runner.sig_finished, timeout=10000):
        h = runner.start("boom", "boom", boom)
    assert h.status == "failed" and "ZeroDivisionError" in h.error.message
    assert "traceback" in h.error.details
    runner.wait_all()


def test_parentless_runner_survives_being_dropped_while_running(qtbot) -> None:  # noqa: ANN001
    import gc

    from studio.gui import jobs_qt

    done: list[int] = []

    def work(job: JobState) -> int:
        time.sleep(0.2)
        return 7

    runner = JobRunner()
    runner.start("k", "kept alive", work, on_done=done.append)
    del runner
    gc.collect()
    qtbot.waitUntil(lambda: done == [7], timeout=10000)
    qtbot.waitUntil(lambda: not jobs_qt._LIVE_RUNNERS, timeout=10000)


def test_a_job_stopped_by_cancel_is_cancelled_everywhere(qtbot) -> None:  # noqa: ANN001
    """A load run stops on Cancel and returns its partial figures: that is "cancelled", not "done"."""
    from studio.gui.jobs_panel import JobsPanel

    runner = JobRunner()
    panel = JobsPanel(runner)
    qtbot.addWidget(panel)
    started = threading.Event()

    def work(job: JobState) -> dict[str, int]:
        n = 0
        started.set()
        while not job.cancel_requested and n < 500:
            n += 1
            time.sleep(0.01)
        return {"requests": n}

    got: list[dict[str, int]] = []
    h = runner.start("dashboards:load", "load run", work, on_done=got.append)
    assert started.wait(5)
    with qtbot.waitSignal(runner.sig_finished, timeout=10000):
        runner.cancel(h.id)
    assert h.status == "cancelled" and got and got[0]["requests"] < 500  # the partial result still arrives
    assert panel.rows[h.id].state.text() == "cancelled"
    runner.wait_all()


def test_a_job_that_used_tritonclient_leaves_no_gevent_loop_behind(qtbot) -> None:  # noqa: ANN001
    """tritonclient.http gives each thread a gevent hub (two descriptors) that outlives it; the worker frees it."""
    import socket
    from pathlib import Path

    from studio.core.errors import ConnectionFailed
    from studio.triton.client import TritonClient

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"  # closed: connecting is refused, but gevent was used

    def work(job: JobState) -> str:
        with TritonClient(url, timeout=2) as c:
            try:
                c.server_metadata()
            except ConnectionFailed as exc:
                return exc.message
        return "answered"

    runner = JobRunner()

    def one() -> None:
        with qtbot.waitSignal(runner.sig_finished, timeout=20000):
            runner.start("poll", "poll", work)

    from tests.serving.test_devices_page import live_gevent_hubs

    one()
    runner.wait_all()
    hubs, fds = live_gevent_hubs(), len(list(Path("/proc/self/fd").iterdir()))
    for _ in range(30):
        one()
    runner.wait_all()
    assert live_gevent_hubs() - hubs <= 1, f"{live_gevent_hubs() - hubs} gevent hubs more after 30 jobs"
    assert len(list(Path("/proc/self/fd").iterdir())) - fds < 6


def test_jobs_panel_shows_the_stage_and_the_time_left_and_cancel_interrupts(qtbot) -> None:  # noqa: ANN001
    """A staged job: its row names the stage and how far into it, and estimates the time left; Cancel stops a
    long call inside it (no safe point of its own) at once."""
    from studio.core.jobs import Stages
    from studio.gui.jobs_panel import JobsPanel

    runner = JobRunner()
    panel = JobsPanel(runner)
    qtbot.addWidget(panel)
    in_call = threading.Event()

    def work(job: JobState) -> None:
        stages = Stages(job, {"parity": 1.0, "trace": 3.0})
        stages.begin("parity", "parity on 4 inputs")
        for i in range(4):
            time.sleep(0.35)
            stages.within("parity", (i + 1) / 4)
        stages.begin("trace", "exporting")
        with job.interruptible():
            in_call.set()
            n = 0
            while True:  # a long call that never looks at the cancel flag
                n += 1

    h = runner.start("export", "staged", work)
    row = lambda: panel.rows[h.id]  # noqa: E731
    qtbot.waitUntil(lambda: "trace" in row().stage.text(), timeout=10000)
    assert row().stage.text() == "stage 2 of 2: trace, 0% done" and row().stage.isVisible() is not None
    assert "left" in row().state.text()  # 1.4 s in, 25 % done: an estimate is shown
    assert in_call.wait(5)
    t0 = time.monotonic()
    with qtbot.waitSignal(runner.sig_finished, timeout=10000):
        runner.cancel(h.id)
    assert h.status == "cancelled" and time.monotonic() - t0 < 2.0
    assert row().state.text() == "cancelled"
    runner.wait_all()


def test_a_finished_job_that_never_said_what_it_did_shows_no_starting(qtbot) -> None:  # noqa: ANN001
    """A quick job with no status of its own ends as "done", not "starting…" above "done"."""
    from studio.gui.jobs_panel import JobsPanel

    runner = JobRunner()
    panel = JobsPanel(runner)
    qtbot.addWidget(panel)
    with qtbot.waitSignal(runner.sig_finished, timeout=10000):
        h = runner.start("x", "quick", lambda job: 1)
    row = panel.rows[h.id]
    assert row.state.text() == "done" and row.status.isHidden()
    runner.wait_all()
