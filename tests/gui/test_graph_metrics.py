"""bench/graph_metrics.py on hand-made drawings whose crossings, lengths and boxes are known."""

from __future__ import annotations

import math
import random
import time

import pytest

from bench.graph_metrics import (
    attach_ends,
    bounding_box,
    count_crossings,
    native_edge_polyline,
    svg_path_polyline,
    total_length,
)


def _brute(edges: list[list[list[tuple[float, float]]]], ends: list[tuple[int, int]]) -> int:
    def cross(p: tuple[float, float], q: tuple[float, float], r: tuple[float, float]) -> float:
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])

    def hit(a, b, c, d) -> bool:  # type: ignore[no-untyped-def]
        return cross(a, b, c) * cross(a, b, d) < 0 and cross(c, d, a) * cross(c, d, b) < 0

    n = 0
    for i in range(len(edges)):
        for j in range(i + 1, len(edges)):
            if set(ends[i]) & set(ends[j]):
                continue
            segs_i = [(p[k], p[k + 1]) for p in edges[i] for k in range(len(p) - 1)]
            segs_j = [(p[k], p[k + 1]) for p in edges[j] for k in range(len(p) - 1)]
            n += any(hit(a, b, c, d) for a, b in segs_i for c, d in segs_j)
    return n


def test_an_x_crosses_once_and_parallel_lines_never() -> None:
    x = [[[(0.0, 0.0), (10.0, 10.0)]], [[(0.0, 10.0), (10.0, 0.0)]]]
    assert count_crossings(x, [(0, 1), (2, 3)]) == 1
    parallel = [[[(0.0, 0.0), (0.0, 10.0)]], [[(5.0, 0.0), (5.0, 10.0)]], [[(9.0, 0.0), (9.0, 10.0)]]]
    assert count_crossings(parallel, [(0, 1), (2, 3), (4, 5)]) == 0


def test_shared_end_nodes_touching_and_repeated_crossings() -> None:
    # both edges leave node 0: they meet there, and also cross further down; a shared node rules the pair out
    fan = [[[(0.0, 0.0), (10.0, 10.0), (-10.0, 20.0)]], [[(0.0, 0.0), (0.0, 30.0)]]]
    assert count_crossings(fan, [(0, 1), (0, 2)]) == 0
    assert count_crossings(fan, [(0, 1), (3, 2)]) == 1
    # a zig-zag crossing a vertical line three times is one pair
    zig = [[[(-1.0, 0.0), (1.0, 1.0), (-1.0, 2.0), (1.0, 3.0)]], [[(0.0, -5.0), (0.0, 5.0)]]]
    assert count_crossings(zig, [(0, 1), (2, 3)]) == 1
    # a T (one end on the other line) and collinear overlap are not crossings
    touch = [[[(0.0, 0.0), (10.0, 0.0)]], [[(5.0, 0.0), (5.0, 10.0)]], [[(2.0, 0.0), (8.0, 0.0)]]]
    assert count_crossings(touch, [(0, 1), (2, 3), (4, 5)]) == 0


def test_a_cut_edge_is_two_stubs_and_its_parts_never_cross_each_other() -> None:
    stubs = [[(0.0, 0.0), (0.0, 4.0)], [(10.0, 20.0), (10.0, 24.0)]]
    across = [[(-5.0, 2.0), (5.0, 2.0)]]  # crosses the upper stub only
    gap = [[(-5.0, 10.0), (15.0, 10.0)]]  # runs through the gap between the stubs
    assert count_crossings([stubs, across, gap], [(0, 1), (2, 3), (4, 5)]) == 1


def test_a_grid_of_lines_crosses_rows_times_columns_and_agrees_with_brute_force() -> None:
    rows = [[[(0.0, 10.0 * i + 5), (100.0, 10.0 * i + 5)]] for i in range(7)]
    cols = [[[(10.0 * j + 5, 0.0), (10.0 * j + 5, 100.0)]] for j in range(9)]
    edges = rows + cols
    ends = [(2 * k, 2 * k + 1) for k in range(len(edges))]
    assert count_crossings(edges, ends) == 63
    assert count_crossings(edges, ends, cell=3.0) == 63  # many cells per line: split pieces, pairs counted once
    rng = random.Random(7)
    rand = [[[(rng.uniform(0, 50), rng.uniform(0, 50)) for _ in range(rng.randint(2, 5))]] for _ in range(60)]
    rends = [(rng.randrange(20), rng.randrange(20, 40)) for _ in rand]
    assert count_crossings(rand, rends) == _brute(rand, rends)


def test_lengths_and_the_bounding_box() -> None:
    edges = [[[(0.0, 0.0), (3.0, 4.0)]], [[(0.0, 0.0), (0.0, 1.0)], [(0.0, 5.0), (0.0, 7.0)]]]
    assert total_length(edges) == pytest.approx(8.0)
    assert bounding_box([(0.0, 0.0, 2.0, 1.0), (-4.0, 3.0, 1.0, 6.0)], edges) == (-4.0, 0.0, 3.0, 7.0)


def test_curves_are_sampled_through_their_end_points() -> None:
    pts = native_edge_polyline([(0.0, 0.0), (100.0, 50.0), (100.0, 100.0)], samples=8)
    assert pts[0] == (0.0, 0.0) and pts[8] == pytest.approx((100.0, 50.0)) and pts[-1] == pytest.approx((100.0, 100.0))
    assert len(pts) == 17
    # a straight vertical piece stays straight: its length is exact
    assert total_length([[native_edge_polyline([(5.0, 0.0), (5.0, 30.0)])]]) == pytest.approx(30.0)
    # Netron's paths: M, L, C (a quarter-circle-like arc from (0,0) to (10,10)), a relative l, and a second subpath
    parts = svg_path_polyline("M0,0 L0,5 C0,10 5,10 10,10 l5,0 M20 20 H30 V40 Z", samples=4)
    assert len(parts) == 2
    first, second = parts
    assert first[0] == (0.0, 0.0) and first[1] == (0.0, 5.0) and first[-2] == pytest.approx((10.0, 10.0))
    assert first[-1] == (15.0, 10.0) and len(first) == 2 + 4 + 1
    assert second == [(20.0, 20.0), (30.0, 20.0), (30.0, 40.0), (20.0, 20.0)]
    arc = total_length([[first[1:6]]])
    assert 10.0 < arc < 5 * math.pi / 2 + 5  # longer than the chord's legs' shortest path, shorter than a detour


def test_ends_are_found_on_the_box_borders() -> None:
    boxes = [(0.0, 0.0, 10.0, 10.0), (0.0, 50.0, 10.0, 60.0), (40.0, 50.0, 50.0, 60.0)]
    edges = [[[(5.0, 10.0), (5.0, 50.0)]], [[(9.0, 10.5), (45.0, 49.0)]], [[(100.0, 100.0), (5.0, 50.0)]]]
    assert attach_ends(edges, boxes) == [(0, 1), (0, 2), (-5, 1)]


def test_many_thousand_edges_count_in_seconds() -> None:
    rng = random.Random(1)
    edges = []
    for k in range(8000):  # a tall layered drawing: short edges between neighbouring rows, some long ones
        x0, y0 = rng.uniform(0, 4000), rng.uniform(0, 40000)
        span = 1 if k % 10 else rng.randint(2, 40)
        pts = [(x0, y0)] + [(x0 + rng.uniform(-300, 300), y0 + 80.0 * (s + 1)) for s in range(span)]
        edges.append([native_edge_polyline(pts)])
    ends = [(2 * k, 2 * k + 1) for k in range(len(edges))]
    t = time.perf_counter()
    n = count_crossings(edges, ends)
    assert n > 0
    assert time.perf_counter() - t < 10.0
