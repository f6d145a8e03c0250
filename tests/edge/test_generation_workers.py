"""The agent's kept generation threads (studio.agent.generate_routes.GenerationWorkers): a request reuses an idle
thread instead of starting one (Thread.start blocks the event loop until the thread runs), a new one starts only
when all are busy, and a generation that raises never takes its thread down with it."""

from __future__ import annotations

import threading
import time

from studio.agent.generate_routes import GenerationWorkers


def _run_and_wait(workers: GenerationWorkers, fn) -> None:  # type: ignore[no-untyped-def]
    done = threading.Event()

    def job() -> None:
        try:
            fn()
        finally:
            done.set()

    idle = workers.idle
    workers.submit(job)
    assert done.wait(10)
    deadline = time.monotonic() + 10  # the thread counts itself idle just after the job returns
    while workers.idle < max(idle, 1) and time.monotonic() < deadline:
        time.sleep(0.001)


def test_sequential_generations_reuse_one_thread_and_busy_ones_add_threads() -> None:
    workers = GenerationWorkers()
    seen: set[int] = set()
    for _ in range(5):
        _run_and_wait(workers, lambda: seen.add(threading.get_ident()))
    assert workers.started == 1 and len(seen) == 1
    gate, running = threading.Event(), threading.Semaphore(0)

    def blocked() -> None:
        running.release()
        gate.wait(10)

    for _ in range(3):
        workers.submit(blocked)
    for _ in range(3):
        assert running.acquire(timeout=10)  # all three run at once: none waits behind another
    assert workers.started == 3
    gate.set()


def test_a_generation_that_raises_leaves_its_thread_serving() -> None:
    workers = GenerationWorkers()

    def boom() -> None:
        raise RuntimeError("the runtime failed")

    _run_and_wait(workers, boom)
    ran = threading.Event()
    _run_and_wait(workers, ran.set)
    assert ran.is_set() and workers.started == 1
