"""Ring buffers behind the live plots: contents against a plain list, decimation keeps the extremes."""

from __future__ import annotations

import numpy as np

from studio.telemetry.ringbuffer import RingBuffer, SeriesStore, decimate


def test_ring_buffer_matches_a_list_under_mixed_pushes() -> None:
    rng = np.random.default_rng(1)
    for cap in (1, 7, 50):
        rb, ref_t, ref_v = RingBuffer(cap), [], []
        for step in range(400):
            if rng.random() < 0.3:
                rb.push(float(step), -float(step))
                ref_t.append(float(step))
                ref_v.append(-float(step))
            else:
                ts = np.arange(int(rng.integers(0, 2 * cap + 3))) + step * 1000.0
                rb.push_many(ts, ts * 2)
                ref_t += list(ts)
                ref_v += list(ts * 2)
            t, v = rb.arrays()
            assert list(t) == ref_t[-cap:] and list(v) == ref_v[-cap:], (cap, step)
            vt, vv = rb.views()
            assert np.array_equal(vt, t) and np.array_equal(vv, v)
            assert rb.n == min(cap, len(ref_t)) and rb.total == len(ref_t)


def test_decimate_keeps_spikes_and_order() -> None:
    t = np.arange(100_000, dtype=np.float64)
    v = np.zeros_like(t)
    v[12_345], v[67_890] = 50.0, -40.0
    dt, dv = decimate(t, v, 1000)
    assert len(dt) <= 1000 and np.all(np.diff(dt) >= 0)
    assert dv.max() == 50.0 and dv.min() == -40.0
    assert dt[np.argmax(dv)] == 12_345 and dt[np.argmin(dv)] == 67_890


def test_snapshot_of_a_time_range_is_a_copy() -> None:
    store = SeriesStore(capacity=1000)
    ts = np.arange(3000, dtype=np.float64)
    store.push_arrays("tgt", "s", "src", ts, ts * 10)  # wraps: the last 1000 remain
    version, t, v = store.snapshot(("tgt", "s"), 5000, (2500.0, 2600.0))  # type: ignore[misc]
    assert version == 3000
    assert t[0] == 2499 and t[-1] == 2601 and np.array_equal(v, t * 10)  # one point beyond each edge
    store.push_arrays("tgt", "s", "src", ts + 10_000, ts)
    assert t[0] == 2499  # not a view into the buffer
