"""Streaming latency histogram: bounded memory, exact enough for p99.9 (HdrHistogram, 3 significant digits).

Latencies are recorded in microseconds between 1 us and 1 hour; values outside are clamped and counted, so a
pathological request cannot make the recorder raise in the middle of a load run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from studio.core.errors import DependencyMissing
from studio.core.reports import Report

LOWEST_US = 1
HIGHEST_US = 3_600_000_000  # one hour
SIGNIFICANT_DIGITS = 3
PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9)


def _hdr_class() -> Any:
    try:
        from hdrh.histogram import HdrHistogram
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise DependencyMissing.for_module("hdrhistogram", "telemetry", "The latency histogram") from exc
    return HdrHistogram


@dataclass
class LatencySummary(Report):
    """Percentiles of one histogram, in milliseconds."""

    schema_version: int = 1
    count: int = 0
    mean_ms: float | None = None
    min_ms: float | None = None
    p50_ms: float | None = None
    p90_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    p999_ms: float | None = None
    max_ms: float | None = None
    clamped: int = 0


def summarize_seconds(seconds: Any) -> LatencySummary:
    """Exact percentiles of a small in-memory sample (one window) with numpy; ms out."""
    import numpy as np

    a = np.asarray(seconds, dtype=np.float64) * 1e3
    if a.size == 0:
        return LatencySummary()
    p50, p90, p95, p99, p999 = np.percentile(a, list(PERCENTILES), method="inverted_cdf")
    return LatencySummary(count=int(a.size), mean_ms=float(a.mean()), min_ms=float(a.min()), p50_ms=float(p50),
                          p90_ms=float(p90), p95_ms=float(p95), p99_ms=float(p99), p999_ms=float(p999),
                          max_ms=float(a.max()))


class LatencyHistogram:
    """Records latencies (seconds in, microseconds inside) and answers percentiles in milliseconds."""

    def __init__(self, hdr: Any | None = None) -> None:
        self._hdr = hdr if hdr is not None else _hdr_class()(LOWEST_US, HIGHEST_US, SIGNIFICANT_DIGITS)
        self.clamped = 0

    # -- recording ---------------------------------------------------------------------------
    def record(self, seconds: float) -> None:
        us = int(round(seconds * 1e6))
        if us < LOWEST_US or us > HIGHEST_US:
            self.clamped += 1
            us = min(max(us, LOWEST_US), HIGHEST_US)
        self._hdr.record_value(us)

    def record_many(self, seconds: Any) -> None:
        """Record an iterable of latencies; equal microsecond values are added in one call (fast path)."""
        import numpy as np

        us = np.rint(np.asarray(seconds, dtype=np.float64) * 1e6).astype(np.int64)
        if us.size == 0:
            return
        out = (us < LOWEST_US) | (us > HIGHEST_US)
        if out.any():
            self.clamped += int(out.sum())
            us = np.clip(us, LOWEST_US, HIGHEST_US)
        values, counts = np.unique(us, return_counts=True)
        for v, c in zip(values.tolist(), counts.tolist(), strict=True):
            self._hdr.record_value(v, c)

    def merge(self, other: LatencyHistogram) -> None:
        self._hdr.add(other._hdr)
        self.clamped += other.clamped

    def reset(self) -> None:
        self._hdr.reset()
        self.clamped = 0

    # -- queries -----------------------------------------------------------------------------
    @property
    def count(self) -> int:
        return int(self._hdr.get_total_count())

    def percentile_ms(self, p: float) -> float | None:
        """Value at percentile ``p`` (0..100), or None when nothing was recorded."""
        if self.count == 0:
            return None
        return self._hdr.get_value_at_percentile(p) / 1000.0

    def percentiles_ms(self, ps: tuple[float, ...] = PERCENTILES) -> dict[float, float | None]:
        if self.count == 0:
            return {p: None for p in ps}
        values = self._hdr.get_percentile_to_value_dict(list(ps))
        return {p: values[p] / 1000.0 for p in ps}

    def mean_ms(self) -> float | None:
        return None if self.count == 0 else self._hdr.get_mean_value() / 1000.0

    def max_ms(self) -> float | None:
        return None if self.count == 0 else self._hdr.get_max_value() / 1000.0

    def min_ms(self) -> float | None:
        return None if self.count == 0 else self._hdr.get_min_value() / 1000.0

    def summary(self) -> LatencySummary:
        if self.count == 0:
            return LatencySummary(clamped=self.clamped)
        pc = self.percentiles_ms()
        return LatencySummary(count=self.count, mean_ms=self.mean_ms(), min_ms=self.min_ms(),
                              p50_ms=pc[50.0], p90_ms=pc[90.0], p95_ms=pc[95.0], p99_ms=pc[99.0],
                              p999_ms=pc[99.9], max_ms=self.max_ms(), clamped=self.clamped)

    # -- persistence -------------------------------------------------------------------------
    def encode(self) -> bytes:
        """Compressed HdrHistogram payload (base64), so a recording keeps the full distribution per window."""
        return self._hdr.encode()

    @classmethod
    def decode(cls, payload: bytes | str) -> LatencyHistogram:
        hdr_cls = _hdr_class()
        if isinstance(payload, str):
            payload = payload.encode()
        return cls(hdr_cls.decode(payload))
