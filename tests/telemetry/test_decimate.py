"""The one min/max decimator (studio.telemetry.ringbuffer.decimate): the Dashboards' curves and the HTML report's
SVG plots both use it (the report's own list-based downsample is gone); bad arguments are errors naming them."""

from __future__ import annotations

import re

import numpy as np
import pytest

from studio.telemetry.html_report import MAX_POINTS, svg_line_chart
from studio.telemetry.ringbuffer import decimate


def test_every_point_is_in_a_bucket_and_spikes_survive() -> None:
    n = 10_399  # 400 buckets of 25 and 399 left over: the old live-view decimator dropped the oldest 399
    t = np.arange(n, dtype=np.float64)
    v = np.zeros(n)
    v[3], v[5_000], v[-1] = 9.0, -7.0, 4.0  # a spike among the left-over points, one mid-way, the last point
    dt, dv = decimate(t, v, 800)
    assert len(dt) == 800 and np.all(np.diff(dt) >= 0)
    assert dt[np.argmax(dv)] == 3 and dt[np.argmin(dv)] == 5_000 and dv[-1] == 4.0
    assert dt[0] <= 3 and dt[-1] == n - 1


def test_short_series_and_plain_sequences_are_copied_as_they_are() -> None:
    t, v = [0.0, 1.0, 2.0], [5.0, 6.0, 7.0]  # the HTML report's lists
    dt, dv = decimate(t, v, 800)
    assert dt.tolist() == t and dv.tolist() == v
    a = np.arange(5.0)
    assert decimate(a, a, 10)[0] is not a


def test_the_report_plots_at_most_max_points_and_keeps_the_spike() -> None:
    xs = [float(i) for i in range(20_000)]
    ys: list[float | None] = [1.0] * 20_000
    ys[12_345] = 50.0
    ys[100] = None  # missing samples are left out before decimation, as before
    svg = svg_line_chart({"p99": (xs, ys)}, "Latency", "ms")  # type: ignore[dict-item]
    points = re.search(r'<polyline[^>]*points="([^"]+)"', svg).group(1).split()  # type: ignore[union-attr]
    assert len(points) <= MAX_POINTS
    ys_px = [float(p.split(",")[1]) for p in points]
    assert min(ys_px) < max(ys_px)  # the spike is drawn (higher value, smaller y)


@pytest.mark.parametrize(("t", "v", "max_points", "message"), [
    (np.arange(10.0), np.arange(9.0), 4, "decimate: 10 times but 9 values"),
    (np.arange(10.0), np.arange(10.0), 1, "max_points must be at least 2"),
])
def test_bad_arguments_name_what_is_wrong(t: np.ndarray, v: np.ndarray, max_points: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        decimate(t, v, max_points)
