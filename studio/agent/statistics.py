"""Triton's statistics extension for the agent: per model version counters, JSON and gRPC answers.

Measured in the inference paths (HTTP fast path, staged pipeline, gRPC), per request and per served version:

- ``success``: requests answered, from the request's start to its encoded response (the same interval as the
  ``studio_agent_request_duration_seconds`` histogram, so counts and sums agree with ``/metrics``);
- ``fail``: requests for a served version that failed (bad input: 400 / INVALID_ARGUMENT; a failed run: 500 /
  INTERNAL), counted with the time they took; the ``outcome="error"`` requests in ``/metrics``;
- ``compute_input``: reading and decoding the body into tensors and checking them (plus preprocessing for raw
  inputs); ``queue``: waiting for an inference worker (and, in the staged pipeline, for every stage);
  ``compute_infer``: the model run; ``compute_output``: encoding the response.

As in Triton, the counts of ``queue`` and ``compute_*`` are the successes; ``cache_hit`` / ``cache_miss`` stay
zero (the agent has no response cache). The agent reports ``max_batch_size: 0`` in its model config, and Triton
counts a request of such a model as one inference of batch size 1 (``std::max(1, batch_size)``), so
``inference_count`` and ``execution_count`` are the successes and ``batch_stats`` has one entry, batch size 1.
``last_inference`` is the wall-clock time (ms since the epoch) of the last successful execution.

Counters live per (model, version) for the life of the agent process: a version that is rolled back to shows its
earlier counts plus the new ones; an install of a fresh bundle starts its version at zero. Only served versions
are reported, and an unknown model or version is Triton's 400 / INVALID_ARGUMENT with Triton's message.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

_NS = 1e9


class StatisticsError(ValueError):
    """A statistics request for a model or version that is not served (Triton: INVALID_ARG -> HTTP 400)."""


def _duration(count: int, seconds: float) -> dict[str, int]:
    return {"count": count, "ns": max(0, round(seconds * _NS))}


@dataclass(slots=True)
class ModelVersionStats:
    """Cumulative counters of one model version; ``record_*`` may be called from any thread.

    The hot path only adds floats under an uncontended lock (about 1 us a request); integers in ns are made
    when a report is asked for. Executions of batch size 1 (every request today) are the totals minus the
    other batch sizes, so only those keep a table of their own."""

    name: str
    version: str
    success_count: int = 0
    success_s: float = 0.0
    fail_count: int = 0
    fail_s: float = 0.0
    queue_s: float = 0.0
    compute_input_s: float = 0.0
    compute_infer_s: float = 0.0
    compute_output_s: float = 0.0
    inference_count: int = 0
    last_inference: float = 0.0  # time.time() of the last successful execution
    #: batch size (other than 1) -> [executions, compute_input s, compute_infer s, compute_output s]
    other_batches: dict[int, list[float]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def record_success(self, total_s: float, queue_s: float, input_s: float, infer_s: float, output_s: float,
                       batch_size: int = 1) -> None:
        """One answered request (one execution); durations in seconds (``time.perf_counter`` differences)."""
        with self.lock:
            self.success_count += 1
            self.success_s += total_s
            self.queue_s += queue_s
            self.compute_input_s += input_s
            self.compute_infer_s += infer_s
            self.compute_output_s += output_s
            self.inference_count += batch_size
            self.last_inference = time.time()
            if batch_size != 1:
                b = self.other_batches.setdefault(batch_size, [0, 0.0, 0.0, 0.0])
                b[0] += 1
                b[1] += input_s
                b[2] += infer_s
                b[3] += output_s

    def record_failure(self, total_s: float) -> None:
        with self.lock:
            self.fail_count += 1
            self.fail_s += total_s

    def to_json(self) -> dict[str, Any]:
        """Triton's ``$model_stat`` object (what ``TRITONSERVER_ServerModelStatistics`` writes)."""
        with self.lock:
            n = self.success_count
            c_in, c_inf, c_out = self.compute_input_s, self.compute_infer_s, self.compute_output_s
            batches = {k: list(v) for k, v in self.other_batches.items()}
            ones = [n - sum(int(b[0]) for b in batches.values()), c_in - sum(b[1] for b in batches.values()),
                    c_inf - sum(b[2] for b in batches.values()), c_out - sum(b[3] for b in batches.values())]
            if ones[0] > 0:
                batches[1] = ones
            return {
                "name": self.name, "version": self.version, "last_inference": int(self.last_inference * 1000),
                "inference_count": self.inference_count, "execution_count": n,
                "inference_stats": {
                    "success": _duration(n, self.success_s), "fail": _duration(self.fail_count, self.fail_s),
                    "queue": _duration(n, self.queue_s), "compute_input": _duration(n, c_in),
                    "compute_infer": _duration(n, c_inf), "compute_output": _duration(n, c_out),
                    "cache_hit": _duration(0, 0.0), "cache_miss": _duration(0, 0.0)},
                "response_stats": {},
                "batch_stats": [{"batch_size": size, "compute_input": _duration(int(b[0]), b[1]),
                                 "compute_infer": _duration(int(b[0]), b[2]),
                                 "compute_output": _duration(int(b[0]), b[3])}
                                for size, b in sorted(batches.items())],
                "memory_usage": [],
            }

    def to_proto(self, pb: Any) -> Any:
        """The same numbers as a ``ModelStatistics`` message of ``pb`` (tritonclient.grpc.service_pb2)."""
        d = self.to_json()
        inf = d["inference_stats"]
        sd = pb.StatisticDuration
        return pb.ModelStatistics(
            name=d["name"], version=d["version"], last_inference=d["last_inference"],
            inference_count=d["inference_count"], execution_count=d["execution_count"],
            inference_stats=pb.InferStatistics(**{k: sd(**v) for k, v in inf.items()}),
            batch_stats=[pb.InferBatchStatistics(batch_size=b["batch_size"], compute_input=sd(**b["compute_input"]),
                                                 compute_infer=sd(**b["compute_infer"]),
                                                 compute_output=sd(**b["compute_output"]))
                         for b in d["batch_stats"]])


class StatisticsRegistry:
    """Counters of every model version the agent has served since it started."""

    def __init__(self) -> None:
        self._stats: dict[tuple[str, str], ModelVersionStats] = {}
        self._lock = threading.Lock()

    def of(self, name: str, version: str) -> ModelVersionStats:
        """The counters of ``name`` ``version`` (made on first use); a dict lookup on the hot path."""
        s = self._stats.get((name, version))
        if s is None:
            with self._lock:
                s = self._stats.setdefault((name, version), ModelVersionStats(name, version))
        return s

    def forget(self, names: Iterable[str], version: str) -> None:
        """Start ``version`` of ``names`` from zero (a freshly installed bundle reusing a pruned version)."""
        with self._lock:
            for n in names:
                self._stats.pop((n, version), None)

    def select(self, served: Mapping[str, Any], name: str = "", version: str = "") -> list[ModelVersionStats]:
        """The served versions a request names ('' = all models / the served version), as Triton selects them;
        raises :class:`StatisticsError` with Triton's message for a model or version that is not served."""
        if not name:
            return [self.of(n, m.version) for n, m in sorted(served.items())]
        m = served.get(name)
        if m is None:
            raise StatisticsError(f"requested model '{name}' is not available")
        if version and version != m.version:
            raise StatisticsError(f"requested model version is not available for model '{name}'")
        return [self.of(name, m.version)]

    def report(self, served: Mapping[str, Any], name: str = "", version: str = "") -> dict[str, Any]:
        """Triton's ``$stats_model_response``: ``{"model_stats": [...]}``."""
        return {"model_stats": [s.to_json() for s in self.select(served, name, version)]}


def timed_infer(model: Any, feed: Any, wanted: list[str] | None) -> tuple[Any, float, float]:
    """``model.infer(feed, wanted)`` with the ``perf_counter`` stamps of its start and end (run in a worker,
    the start also ends the request's wait in the queue)."""
    t0 = time.perf_counter()
    results = model.infer(feed, wanted)
    return results, t0, time.perf_counter()
