"""The agent's staged pipeline: preprocess (CPU workers) -> infer (the model's execution provider) ->
postprocess (select + encode the response), overlapped through bounded queues.

Why: with raw inputs (text, image files, audio) a request spends as long in tokenising / decoding / resizing
as in the model. Run one after the other, the accelerator idles while the CPU preprocesses and vice versa;
in stages, request N+1 is preprocessed while request N runs. Every queue is bounded: a slow stage makes its
producers wait (back-pressure), and admission to the first queue waits on the event loop (never blocking it)
instead of letting queues grow without limit. Each stage records its queue wait and service time.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from studio.agent.kserve import InferRequest, encode_response

STAGES = ("preprocess", "infer", "postprocess")
StageObserver = Callable[[str, str, float, float], None]  # (model, stage, queue_s, service_s)


@dataclass
class PipelineJob:
    """One request travelling through the stages; ``t`` holds perf_counter stamps per stage:
    (enqueued, started, finished)."""

    req: InferRequest
    wanted: list[str] | None
    done: Callable[[PipelineJob], None] | None = None
    t: dict[str, list[float]] = field(default_factory=dict)
    feed: dict[str, np.ndarray] | None = None
    results: dict[str, np.ndarray] | None = None
    body: bytes = b""
    header_length: int | None = None
    error: BaseException | None = None


class StagedPipeline:
    """Stages for one served model with raw inputs (see :mod:`studio.edge.preprocess`)."""

    def __init__(self, model: Any, *, pre_workers: int = 2, infer_workers: int = 1, depth: int = 8,
                 observer: StageObserver | None = None) -> None:
        self.model = model
        self.raw = model.raw_inputs
        self.depth = depth
        self.observer = observer
        self.pre_workers, self.infer_workers = max(1, pre_workers), max(1, infer_workers)
        self.queues = {s: queue.Queue(maxsize=depth) for s in STAGES}  # type: ignore[var-annotated]
        self._threads: list[threading.Thread] = []
        self._started = False
        self._lock = threading.Lock()
        self._admit: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- the stages' work (also used by :meth:`run_sequential`) ----------------------------------------
    def preprocess(self, job: PipelineJob) -> None:
        feed: dict[str, np.ndarray] = {}
        for name, arr in job.req.inputs.items():
            r = self.raw.get(name)
            if r is None:
                feed[name] = arr  # a tensor input passed through as it is
                continue
            if arr.dtype != np.object_ or arr.ndim != 1:
                raise ValueError(f"raw input '{name}' must be a BYTES tensor of shape [batch], "
                                 f"got {arr.dtype} {list(arr.shape)}")
            items = [v if isinstance(v, bytes) else str(v).encode() for v in arr]
            for k, v in r.fn(items).items():
                if k in feed:
                    raise ValueError(f"raw input '{name}' produces '{k}', which the request also sends")
                feed[k] = v
        self.model.check_inputs(feed)
        job.feed = feed

    def infer(self, job: PipelineJob) -> None:
        assert job.feed is not None
        job.results = self.model.infer(job.feed, job.wanted)
        job.feed = None

    def postprocess(self, job: PipelineJob) -> None:
        assert job.results is not None
        job.body, job.header_length = encode_response(self.model.name, self.model.version, job.results, job.req)
        job.results = None

    def run_sequential(self, req: InferRequest, wanted: list[str] | None = None) -> PipelineJob:
        """All three stages one after the other in the calling thread (the baseline the pipeline beats)."""
        job = PipelineJob(req, wanted)
        for stage in STAGES:
            t0 = time.perf_counter()
            getattr(self, stage)(job)
            job.t[stage] = [t0, t0, time.perf_counter()]
        return job

    # -- threads ----------------------------------------------------------------------------------------
    def start(self) -> None:
        with self._lock:
            if self._started:
                return
            counts = {"preprocess": self.pre_workers, "infer": self.infer_workers, "postprocess": 1}
            for stage, n in counts.items():
                nxt = STAGES[STAGES.index(stage) + 1] if stage != STAGES[-1] else None
                for i in range(n):
                    th = threading.Thread(target=self._worker, args=(stage, nxt), daemon=True,
                                          name=f"pipeline-{self.model.name}-{stage}-{i}")
                    th.start()
                    self._threads.append(th)
            self._started = True

    def _worker(self, stage: str, nxt: str | None) -> None:
        q_in = self.queues[stage]
        work = getattr(self, stage)
        while True:
            job = q_in.get()
            if job is None:
                return
            t0 = time.perf_counter()
            if stage == "preprocess" and self._loop is not None and self._admit is not None:
                self._loop.call_soon_threadsafe(self._admit.release)  # a place in the first queue is free
            stamps = job.t[stage]
            stamps[1] = t0
            if job.error is None:
                try:
                    work(job)
                except BaseException as exc:  # noqa: BLE001 - delivered to the request, the stage goes on
                    job.error = exc
            stamps[2] = t1 = time.perf_counter()
            if nxt is not None and job.error is None:
                job.t[nxt] = [t1, 0.0, 0.0]
                self.queues[nxt].put(job)  # blocks this worker while the next stage is full: back-pressure
            else:
                self._finish(job)

    def _finish(self, job: PipelineJob) -> None:
        obs = self.observer
        if obs is not None:
            for stage, (enq, start, end) in job.t.items():
                if end:
                    obs(self.model.name, stage, start - enq, end - start)
        if job.done is not None:
            job.done(job)

    def close(self) -> None:
        """Let queued requests finish, then end the threads."""
        with self._lock:
            if not self._started:
                return
            counts = {"preprocess": self.pre_workers, "infer": self.infer_workers, "postprocess": 1}
            for stage in STAGES:  # upstream first: its sentinels arrive after the jobs it hands on
                for _ in range(counts[stage]):
                    self.queues[stage].put(None)
                for th in [t for t in self._threads if f"-{stage}-" in t.name]:
                    th.join(timeout=30)
            self._threads.clear()
            self._started = False

    def queue_depths(self) -> dict[str, int]:
        return {s: q.qsize() for s, q in self.queues.items()}

    # -- asyncio face -----------------------------------------------------------------------------------
    async def submit(self, req: InferRequest, wanted: list[str] | None = None) -> PipelineJob:
        """Run ``req`` through the stages; waits (on the loop) while the first queue is full."""
        loop = asyncio.get_running_loop()
        if self._admit is None or self._loop is not loop:
            self._loop, self._admit = loop, asyncio.Semaphore(self.depth)
        self.start()
        fut: asyncio.Future[PipelineJob] = loop.create_future()

        def done(job: PipelineJob) -> None:
            loop.call_soon_threadsafe(lambda: fut.done() or fut.set_result(job))

        job = PipelineJob(req, wanted, done)
        await self._admit.acquire()
        job.t["preprocess"] = [time.perf_counter(), 0.0, 0.0]
        self.queues["preprocess"].put_nowait(job)  # cannot be full: the semaphore counts its places
        job = await fut
        if job.error is not None:
            raise job.error
        return job
