"""Bounded ring buffers of (time, value) per series for live views: fixed memory, thread-safe pushes,
min/max decimation for display so redraw cost does not grow with run length."""

from __future__ import annotations

import threading
from collections.abc import Iterable

import numpy as np

from studio.telemetry.samples import Sample


class RingBuffer:
    """The last ``capacity`` points of one series (numpy storage, no growth).

    Stored twice ("mirrored": index i and i + capacity), so the points in time order are always one
    contiguous slice: display decimation reads a view instead of copying and rolling the whole buffer
    every frame.
    """

    def __init__(self, capacity: int = 50_000) -> None:
        self.capacity = capacity
        self._t = np.zeros(2 * capacity, dtype=np.float64)
        self._v = np.zeros(2 * capacity, dtype=np.float64)
        self.n = 0  # points held
        self.head = 0  # next write index
        self.total = 0  # points ever pushed (a version number for redraw)

    @property
    def t(self) -> np.ndarray:
        return self._t[:self.capacity]

    @property
    def v(self) -> np.ndarray:
        return self._v[:self.capacity]

    def push(self, t: float, v: float) -> None:
        h, c = self.head, self.capacity
        self._t[h] = self._t[h + c] = t
        self._v[h] = self._v[h + c] = v
        self.head = (h + 1) % c
        self.n = min(self.n + 1, c)
        self.total += 1

    def push_many(self, ts: np.ndarray, vs: np.ndarray) -> None:
        k = pushed = len(ts)
        c = self.capacity
        if k >= c:
            ts, vs = ts[-c:], vs[-c:]
            k = c
        end = self.head + k
        for arr, src in ((self._t, ts), (self._v, vs)):
            arr[self.head:end] = src  # end <= 2c: the mirror half takes the overflow...
            if end <= c:
                arr[self.head + c:end + c] = src
            else:  # ...and the wrapped part goes to the front as well
                first = c - self.head
                arr[self.head + c:2 * c] = src[:first]
                arr[:k - first] = src[first:]
        self.head = end % c
        self.n = min(self.n + k, c)
        self.total += pushed

    def views(self) -> tuple[np.ndarray, np.ndarray]:
        """Time-ordered views (no copy): valid until the next push; read them under the store's lock."""
        start = self.head if self.n == self.capacity else 0
        return self._t[start:start + self.n], self._v[start:start + self.n]

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Copies in time order."""
        t, v = self.views()
        return t.copy(), v.copy()


def decimate(t: np.ndarray, v: np.ndarray, max_points: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    """Min/max per bucket (spikes stay visible) down to at most ``max_points`` points: each bucket gives its
    minimum and maximum in time order, so a bucket narrower than a pixel column draws as the vertical
    stroke that column would show. Every point is in a bucket (the first one also takes the remainder), so
    the line starts at the first point. Always returns new arrays (never views of ``t`` / ``v``).

    The studio's one decimator: the Dashboards' curves (measured faster than pyqtgraph's own peak
    downsampling with clip-to-view, BENCHMARKS.md) and the HTML report's SVG plots."""
    t, v = np.asarray(t, dtype=np.float64), np.asarray(v, dtype=np.float64)
    n = len(t)
    if len(v) != n:
        raise ValueError(f"decimate: {n} times but {len(v)} values")
    if max_points < 2:
        raise ValueError(f"decimate: max_points must be at least 2 (one min/max pair), not {max_points}")
    if n <= max_points:
        return t.copy(), v.copy()
    buckets = max_points // 2
    per = n // buckets
    rest = n - buckets * per  # the oldest points, folded into the first bucket
    tv = t[rest:].reshape(buckets, per)
    vv = v[rest:].reshape(buckets, per)
    imin, imax = vv.argmin(axis=1), vv.argmax(axis=1)
    rows = np.arange(buckets)
    first = np.minimum(imin, imax)
    second = np.maximum(imin, imax)
    ot = np.empty(2 * buckets)
    ov = np.empty(2 * buckets)
    ot[0::2], ot[1::2] = tv[rows, first], tv[rows, second]
    ov[0::2], ov[1::2] = vv[rows, first], vv[rows, second]
    if rest:
        head = v[:rest + per]
        lo, hi = int(head.argmin()), int(head.argmax())
        a, b = min(lo, hi), max(lo, hi)
        ot[0], ot[1], ov[0], ov[1] = t[a], t[b], v[a], v[b]
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

    def snapshot(self, key: tuple[str, str], max_points: int = 2000,
                 t_range: tuple[float, float] | None = None) -> tuple[int, np.ndarray, np.ndarray] | None:
        """(version, t, v) decimated for display (only points within ``t_range`` when given, plus one on
        each side so lines reach the edges), or None when the series has no values."""
        with self.lock:
            buf = self.buffers.get(key)
            if buf is None or buf.n == 0:
                return None
            version = buf.total
            t, v = buf.views()
            if t_range is not None:
                i0 = max(0, int(np.searchsorted(t, t_range[0])) - 1)
                i1 = min(len(t), int(np.searchsorted(t, t_range[1], side="right")) + 1)
                t, v = t[i0:i1], v[i0:i1]
            dt, dv = decimate(t, v, max_points)  # copies: the views are only valid under the lock
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
