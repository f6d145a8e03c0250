"""The search's workers: a process pool of two (the machine's cores) at low priority, each worker in its own process
group, so a cancel or the time limit stops the candidates being judged and the toolkit processes they started.

Spawned, never forked: the GUI's process holds Qt and job threads that a fork would copy half-alive.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from studio.core.errors import JobCancelled
from studio.tune.judge import Judged, Task, judge, worker_init


class TimeUp(Exception):
    """The search's time limit passed while candidates were being judged."""


class Pool:
    def __init__(self, workers: int = 2) -> None:
        self.workers = workers
        self._pool: cf.ProcessPoolExecutor | None = None

    def _get(self) -> cf.ProcessPoolExecutor:
        if self._pool is None:
            self._pool = cf.ProcessPoolExecutor(max_workers=self.workers,
                                                mp_context=multiprocessing.get_context("spawn"),
                                                initializer=worker_init)
        return self._pool

    def run(self, tasks: list[Task], job: Any, deadline: float, on_done: Callable[[Judged], None]) -> list[Judged]:
        """Judge ``tasks``; each result goes to ``on_done`` as it arrives. A cancel raises JobCancelled and the
        deadline TimeUp, both after stopping every worker."""
        if not tasks:
            return []
        try:
            futures = {self._get().submit(judge, t): t for t in tasks}
        except BrokenProcessPool:  # a worker died in an earlier round (the OOM killer): start a fresh pool
            self.stop()
            futures = {self._get().submit(judge, t): t for t in tasks}
        results: list[Judged] = []
        pending = set(futures)
        while pending:
            done, pending = cf.wait(pending, timeout=0.25, return_when=cf.FIRST_COMPLETED)
            for f in done:
                try:
                    res = f.result()
                except Exception as exc:  # a worker that died (killed by the OOM killer, a signal)
                    t = futures[f]
                    res = Judged(t.id, t.part, status="crashed", error=f"the worker judging it died: {exc}")
                results.append(res)
                on_done(res)
            if job is not None and job.cancel_requested:
                self.stop()
                raise JobCancelled("optimize cancelled")
            if pending and time.monotonic() > deadline:
                self.stop()
                raise TimeUp()
        return results

    def stop(self) -> None:
        """Kill every worker and whatever it started (its process group), then drop the pool."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        procs = dict(getattr(pool, "_processes", None) or {})
        for pid in procs:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        pool.shutdown(wait=False, cancel_futures=True)
        for p in procs.values():
            try:
                p.join(timeout=5)
            except Exception:
                pass

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
