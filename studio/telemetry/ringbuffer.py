"""Bounded ring buffers of (time, value) per series for live views: fixed memory, thread-safe pushes,
min/max decimation for display so redraw cost does not grow with run length."""

from __future__ import annotations

import threading
from collections.abc import Iterable

import numpy as np

from studio.telemetry.samples import Sample


class RingBuffer:
    """The last ``capacity`` points of one series (numpy storage, no growth)."""

    def __init__(self, capacity: int = 50_000) -> None:
        self.capacity = capacity
        self.t = np.zeros(capacity, dtype=np.float64)
        self.v = np.zeros(capacity, dtype=np.float64)
        self.n = 0  # points held
        self.head = 0  # next write index
        self.total = 0  # points ever pushed (a version number for redraw)

    def push(self, t: float, v: float) -> None:
        self.t[self.head] = t
        self.v[self.head] = v
        self.head = (self.head + 1) % self.capacity
        self.n = min(self.n + 1, self.capacity)
        self.total += 1

    def push_many(self, ts: np.ndarray, vs: np.ndarray) -> None:
        k = len(ts)
        if k >= self.capacity:
            ts, vs = ts[-self.capacity:], vs[-self.capacity:]
            k = self.capacity
        end = self.head + k
        if end <= self.capacity:
            self.t[self.head:end], self.v[self.head:end] = ts, vs
        else:
            first = self.capacity - self.head
            self.t[self.head:], self.v[self.head:] = ts[:first], vs[:first]
            self.t[:k - first], self.v[:k - first] = ts[first:], vs[first:]
        self.head = end % self.capacity
        self.n = min(self.n + k, self.capacity)
        self.total += k

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Copies in time order."""
        if self.n < self.capacity:
            return self.t[:self.n].copy(), self.v[:self.n].copy()
        return np.roll(self.t, -self.head), np.roll(self.v, -self.head)


def decimate(t: np.ndarray, v: np.ndarray, max_points: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    """Min/max per bucket (spikes stay visible) down to about ``max_points`` points."""
    n = len(t)
    if n <= max_points:
        return t, v
    buckets = max_points // 2
    per = n // buckets
    m = buckets * per
    tv = t[n - m:].reshape(buckets, per)
    vv = v[n - m:].reshape(buckets, per)
    imin, imax = vv.argmin(axis=1), vv.argmax(axis=1)
    rows = np.arange(buckets)
    first = np.minimum(imin, imax)
    second = np.maximum(imin, imax)
    ot = np.empty(2 * buckets)
    ov = np.empty(2 * buckets)
    ot[0::2], ot[1::2] = tv[rows, first], tv[rows, second]
    ov[0::2], ov[1::2] = vv[rows, first], vv[rows, second]
    return ot, ov


class SeriesStore:
    """(target, series) -> RingBuffer, plus the latest source/note of each; fed from any thread."""

    def __init__(self, capacity: int = 50_000) -> None:
        self.capacity = capacity
        self.lock = threading.Lock()
        self.buffers: dict[tuple[str, str], RingBuffer] = {}
        self.sources: dict[tuple[str, str], str] = {}
        self.notes: dict[tuple[str, str], str] = {}
        self.latest: dict[tuple[str, str], float | None] = {}

    def push(self, samples: Iterable[Sample]) -> None:
        with self.lock:
            for s in samples:
                key = (s.target, s.series)
                self.sources[key] = s.source
                self.latest[key] = s.value
                if s.value is None:
                    self.notes[key] = s.note
                    continue
                self.notes.pop(key, None)
                buf = self.buffers.get(key)
                if buf is None:
                    buf = self.buffers[key] = RingBuffer(self.capacity)
                buf.push(s.t, s.value)

    def push_arrays(self, target: str, series: str, source: str, ts: np.ndarray, vs: np.ndarray) -> None:
        """Bulk feed (benchmarks, replay): no per-sample Python work."""
        key = (target, series)
        with self.lock:
            buf = self.buffers.get(key)
            if buf is None:
                buf = self.buffers[key] = RingBuffer(self.capacity)
            buf.push_many(ts, vs)
            self.sources[key] = source
            self.latest[key] = float(vs[-1]) if len(vs) else None

    def snapshot(self, key: tuple[str, str], max_points: int = 2000) -> tuple[int, np.ndarray, np.ndarray] | None:
        """(version, t, v) decimated for display, or None when the series has no values."""
        with self.lock:
            buf = self.buffers.get(key)
            if buf is None or buf.n == 0:
                return None
            version = buf.total
            t, v = buf.arrays()
        dt, dv = decimate(t, v, max_points)
        return version, dt, dv

    def version(self, key: tuple[str, str]) -> int:
        buf = self.buffers.get(key)
        return buf.total if buf is not None else 0

    def keys(self) -> list[tuple[str, str]]:
        with self.lock:
            return sorted(set(self.sources))

    def targets(self) -> list[str]:
        with self.lock:
            return sorted({k[0] for k in self.sources})

    def clear(self) -> None:
        with self.lock:
            self.buffers.clear()
            self.sources.clear()
            self.notes.clear()
            self.latest.clear()

    def to_csv_rows(self) -> list[tuple[str, str, float, float, str]]:
        rows = []
        with self.lock:
            items = [(k, b.arrays()) for k, b in self.buffers.items()]
            sources = dict(self.sources)
        for (target, series), (t, v) in items:
            rows += [(target, series, float(a), float(b), sources.get((target, series), ""))
                     for a, b in zip(t, v, strict=True)]
        rows.sort(key=lambda r: r[2])
        return rows
