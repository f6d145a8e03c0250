"""The open-loop due-time timers (studio.telemetry.due_timer): they never return before the due time, on a real
timerfd and on the loops' own sleeps (the off-Linux fallback), and a cancelled wait leaves the timer clean."""

from __future__ import annotations

import asyncio
import sys
import threading
import time

import pytest

from studio.telemetry.due_timer import AsyncDueTimer, ThreadDueTimer

STEPS_S = [0.0, 0.0002, 0.0007, 0.0013, 0.003, -0.001]  # due offsets from now: sub-ms, a few ms, already past


def _loops() -> list[str]:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return ["asyncio"]
    return ["asyncio", "uvloop"]


def _run(loop_name: str, coro_fn):  # type: ignore[no-untyped-def]
    factory = None
    if loop_name == "uvloop":
        import uvloop

        factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(coro_fn())


@pytest.mark.parametrize("fallback", [False, True], ids=["timerfd", "sleep-fallback"])
@pytest.mark.parametrize("loop_name", _loops())
def test_async_timer_never_returns_before_due(loop_name: str, fallback: bool) -> None:
    async def main() -> list[tuple[float, float]]:
        timer = AsyncDueTimer()
        if sys.platform.startswith("linux") and not fallback:
            assert timer.fd >= 0
        if fallback:
            timer.close()  # fd -1: the asyncio.sleep path (uvloop's sleeps return up to 1 ms early)
        seen = []
        try:
            for _ in range(20):
                for step in STEPS_S:
                    due = time.perf_counter() + step
                    await timer.wait_until(due)
                    seen.append((due, time.perf_counter()))
        finally:
            timer.close()
        return seen

    for due, woke in _run(loop_name, main):
        assert woke >= due


@pytest.mark.parametrize("loop_name", _loops())
def test_async_timer_cancelled_cleanly_and_reusable(loop_name: str) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        timer = AsyncDueTimer()
        task = asyncio.create_task(timer.wait_until(time.perf_counter() + 30.0))
        await asyncio.sleep(0.01)
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        due = time.perf_counter() + 0.002  # the same timer, re-armed after the cancelled wait
        await timer.wait_until(due)
        assert time.perf_counter() >= due
        fd = timer.fd
        timer.close()
        assert timer.fd == -1
        if fd >= 0:
            assert not loop.remove_reader(fd)  # close() took its reader off the loop
        timer.close()  # twice is harmless

    _run(loop_name, main)


@pytest.mark.parametrize("fallback", [False, True], ids=["timerfd", "sleep-fallback"])
def test_thread_timer_never_before_due_and_stopped_from_another_thread(fallback: bool) -> None:
    timer = ThreadDueTimer()
    if sys.platform.startswith("linux") and not fallback:
        assert timer.fd >= 0
    if fallback:
        timer.close()  # fd -1: time.sleep in steps
    try:
        for _ in range(20):
            for step in STEPS_S:
                due = time.time() + step
                timer.wait_until(due)
                assert time.time() >= due
        t = threading.Thread(target=timer.wait_until, args=(time.time() + 30.0,))
        t.start()
        time.sleep(0.02)
        assert t.is_alive()  # blocked in its read
        t0 = time.perf_counter()
        timer.stop()  # ends the wait under way ...
        t.join(timeout=5)
        assert not t.is_alive() and time.perf_counter() - t0 < 1.0
        t0 = time.perf_counter()
        timer.wait_until(time.time() + 30.0)  # ... and every later one
        assert time.perf_counter() - t0 < 1.0
    finally:
        timer.close()
    assert timer.fd == -1

