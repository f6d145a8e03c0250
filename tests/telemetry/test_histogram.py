"""The streaming histogram against numpy on known distributions, including p99.9."""

from __future__ import annotations

import numpy as np
import pytest

from studio.telemetry.histogram import LatencyHistogram

DISTS = {
    "uniform_1_10ms": lambda r, n: r.uniform(0.001, 0.010, n),
    "lognormal": lambda r, n: r.lognormal(np.log(0.002), 0.6, n),
    "exponential": lambda r, n: 0.0002 + r.exponential(0.003, n),
    "bimodal_tail": lambda r, n: np.where(r.random(n) < 0.98, r.normal(0.0015, 0.0001, n).clip(1e-4),
                                          r.normal(0.080, 0.005, n)),
}


@pytest.mark.parametrize("name", sorted(DISTS))
def test_percentiles_match_numpy(name: str) -> None:
    rng = np.random.default_rng(42)
    x = DISTS[name](rng, 200_000)
    h = LatencyHistogram()
    h.record_many(x)
    assert h.count == x.size
    ms = x * 1e3
    for p in (50.0, 90.0, 95.0, 99.0, 99.9):
        want = float(np.percentile(ms, p, method="inverted_cdf"))
        got = h.percentile_ms(p)
        # 3 significant digits plus 1 us quantisation of the recorded values
        assert got == pytest.approx(want, rel=2e-3, abs=1.5e-3), (p, got, want)
    assert h.max_ms() == pytest.approx(ms.max(), rel=2e-3)
    assert h.mean_ms() == pytest.approx(ms.mean(), rel=2e-3)


def test_record_single_and_many_agree() -> None:
    x = np.random.default_rng(1).lognormal(-6, 0.5, 5000)
    a, b = LatencyHistogram(), LatencyHistogram()
    for v in x:
        a.record(float(v))
    b.record_many(x)
    assert a.summary() == b.summary()


def test_merge_encode_decode_roundtrip() -> None:
    rng = np.random.default_rng(3)
    a, b = LatencyHistogram(), LatencyHistogram()
    a.record_many(rng.uniform(0.001, 0.002, 1000))
    b.record_many(rng.uniform(0.010, 0.020, 1000))
    a.merge(b)
    assert a.count == 2000
    back = LatencyHistogram.decode(a.encode())
    assert back.summary().p99_ms == a.summary().p99_ms and back.count == 2000
    assert 1.0 <= a.percentile_ms(25) <= 2.0 and 10.0 <= a.percentile_ms(75) <= 20.0


def test_empty_and_clamped() -> None:
    h = LatencyHistogram()
    assert h.summary().p99_ms is None and h.percentile_ms(50) is None
    h.record(0.0)  # below 1 us: clamped, still counted
    h.record(7200.0)  # two hours: clamped to the ceiling
    assert h.count == 2 and h.clamped == 2
    assert h.max_ms() == pytest.approx(3_600_000, rel=1e-3)
