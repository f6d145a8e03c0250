"""Readability measures of a drawn graph: edge crossings, total edge length, bounding box. No Qt.

A drawn edge is a list of parts (a routed edge has one, a cut edge two stubs), each a polyline of (x, y)
points; curves are sampled into polylines first (``native_edge_polyline`` for the graph view's curves,
``svg_path_polyline`` for Netron's SVG paths). ``count_crossings`` counts pairs of edges whose polylines
properly intersect, leaving out pairs that share an end node (edges fanning out of one node touch at it and
are not crossings). Segments are bucketed in a uniform grid (long segments split to the cell size first), so
candidate pairs are only those in one cell: a 10,000-edge graph takes well under a second.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

Point = tuple[float, float]
Polyline = Sequence[Point]
Edge = Sequence[Polyline]  # the parts of one drawn edge

SAMPLES = 8  # line pieces per cubic curve
_PAIR_CHUNK = 4_000_000  # candidate pairs tested per numpy batch (bounds memory on dense cells)


def cubic_points(p0: Point, c1: Point, c2: Point, p3: Point, samples: int = SAMPLES) -> list[Point]:
    """Points of a cubic Bezier at ``samples`` equal steps of t, from just after p0 to p3."""
    out: list[Point] = []
    for k in range(1, samples + 1):
        t = k / samples
        u = 1.0 - t
        a, b, c, d = u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t
        out.append((a * p0[0] + b * c1[0] + c * c2[0] + d * p3[0], a * p0[1] + b * c1[1] + c * c2[1] + d * p3[1]))
    return out


def native_edge_polyline(points: Polyline, samples: int = SAMPLES) -> list[Point]:
    """The graph view's curve through an edge's points (scene._edge_path: a cubic per piece, with vertical
    tangents half the piece's height long), sampled."""
    pts = [tuple(map(float, p)) for p in points]
    out: list[Point] = [pts[0]]  # type: ignore[list-item]
    for (ax, ay), (bx, by) in zip(pts[:-1], pts[1:], strict=True):
        dy = (by - ay) * 0.5
        out.extend(cubic_points((ax, ay), (ax, ay + dy), (bx, by - dy), (bx, by), samples))
    return out


_TOKEN = re.compile(r"[MmLlCcZzHhVv]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def svg_path_polyline(d: str, samples: int = SAMPLES) -> list[list[Point]]:
    """An SVG path's ``d`` (M, L, H, V, C and Z, absolute or relative) as polylines, one per subpath."""
    parts: list[list[Point]] = []
    cur: list[Point] = []
    x = y = 0.0
    start = (0.0, 0.0)
    cmd = ""
    tokens = _TOKEN.findall(d)
    i = 0

    def num() -> float:
        nonlocal i
        v = float(tokens[i])
        i += 1
        return v

    while i < len(tokens):
        if tokens[i].isalpha():
            cmd = tokens[i]
            i += 1
            if cmd in "Zz":
                if cur:
                    cur.append(start)
                x, y = start
                continue
        rel = cmd.islower()
        c = cmd.upper()
        if c == "M":
            nx, ny = num(), num()
            x, y = (x + nx, y + ny) if rel else (nx, ny)
            if len(cur) > 1:
                parts.append(cur)
            cur = [(x, y)]
            start = (x, y)
            cmd = "l" if rel else "L"  # further pairs after a moveto are linetos
        elif c == "L":
            nx, ny = num(), num()
            x, y = (x + nx, y + ny) if rel else (nx, ny)
            cur.append((x, y))
        elif c == "H":
            nx = num()
            x = x + nx if rel else nx
            cur.append((x, y))
        elif c == "V":
            ny = num()
            y = y + ny if rel else ny
            cur.append((x, y))
        elif c == "C":
            v = [num() for _ in range(6)]
            if rel:
                v = [v[k] + (x if k % 2 == 0 else y) for k in range(6)]
            cur.extend(cubic_points((x, y), (v[0], v[1]), (v[2], v[3]), (v[4], v[5]), samples))
            x, y = v[4], v[5]
        else:
            raise ValueError(f"unsupported SVG path command {cmd!r}")
    if len(cur) > 1:
        parts.append(cur)
    return parts


def _segments(edges: Sequence[Edge]) -> tuple[np.ndarray, np.ndarray]:
    """(S, 4) segments x0, y0, x1, y1 and the edge each belongs to."""
    segs: list[np.ndarray] = []
    owner: list[np.ndarray] = []
    for e, parts in enumerate(edges):
        for part in parts:
            a = np.asarray(part, dtype=float).reshape(-1, 2)
            if len(a) < 2:
                continue
            s = np.hstack([a[:-1], a[1:]])
            keep = (s[:, 0] != s[:, 2]) | (s[:, 1] != s[:, 3])
            segs.append(s[keep])
            owner.append(np.full(int(keep.sum()), e, dtype=np.int64))
    if not segs:
        return np.zeros((0, 4)), np.zeros(0, dtype=np.int64)
    return np.vstack(segs), np.concatenate(owner)


def total_length(edges: Sequence[Edge]) -> float:
    s, _ = _segments(edges)
    return float(np.hypot(s[:, 2] - s[:, 0], s[:, 3] - s[:, 1]).sum())


def bounding_box(boxes: Sequence[tuple[float, float, float, float]], edges: Sequence[Edge] = ()) -> tuple[
        float, float, float, float]:
    """(x0, y0, x1, y1) around node boxes (x0, y0, x1, y1) and every edge point."""
    xs0, ys0, xs1, ys1 = [], [], [], []
    if len(boxes):
        b = np.asarray(boxes, dtype=float).reshape(-1, 4)
        xs0.append(b[:, 0].min())
        ys0.append(b[:, 1].min())
        xs1.append(b[:, 2].max())
        ys1.append(b[:, 3].max())
    s, _ = _segments(edges)
    if len(s):
        xs0.append(min(s[:, 0].min(), s[:, 2].min()))
        ys0.append(min(s[:, 1].min(), s[:, 3].min()))
        xs1.append(max(s[:, 0].max(), s[:, 2].max()))
        ys1.append(max(s[:, 1].max(), s[:, 3].max()))
    if not xs0:
        return (0.0, 0.0, 0.0, 0.0)
    return (float(min(xs0)), float(min(ys0)), float(max(xs1)), float(max(ys1)))


def count_crossings(edges: Sequence[Edge], ends: Sequence[tuple[int, int]] | None = None,
                    cell: float | None = None) -> int:
    """How many pairs of edges properly cross (touching and collinear overlap are not crossings). ``ends``
    holds each edge's (source node, target node); pairs sharing a node are left out. ``cell``: the grid's cell
    size (default four times the median segment length)."""
    return len(crossing_pairs(edges, ends, cell))


def crossing_pairs(edges: Sequence[Edge], ends: Sequence[tuple[int, int]] | None = None,
                   cell: float | None = None) -> np.ndarray:
    """The (i, j) edge pairs (i < j) that cross, as a (K, 2) array; see count_crossings."""
    seg, own = _segments(edges)
    if len(seg) < 2:
        return np.zeros((0, 2), dtype=np.int64)
    length = np.hypot(seg[:, 2] - seg[:, 0], seg[:, 3] - seg[:, 1])
    if cell is None:
        cell = max(4.0 * float(np.median(length)), 1e-9)
    # split segments longer than a cell, so each spans at most 2 x 2 cells
    pieces = np.maximum(1, np.ceil(length / cell)).astype(np.int64)
    idx = np.repeat(np.arange(len(seg)), pieces)
    first = np.cumsum(pieces) - pieces
    k = np.arange(len(idx)) - np.repeat(first, pieces)
    t0 = k / pieces[idx]
    t1 = (k + 1) / pieces[idx]
    s = seg[idx]
    dx, dy = s[:, 2] - s[:, 0], s[:, 3] - s[:, 1]
    ax, ay = s[:, 0] + t0 * dx, s[:, 1] + t0 * dy
    bx, by = s[:, 0] + t1 * dx, s[:, 1] + t1 * dy
    own = own[idx]
    # grid cells of each piece's bounding box
    ox, oy = min(ax.min(), bx.min()), min(ay.min(), by.min())
    cx0 = np.floor((np.minimum(ax, bx) - ox) / cell).astype(np.int64)
    cx1 = np.floor((np.maximum(ax, bx) - ox) / cell).astype(np.int64)
    cy0 = np.floor((np.minimum(ay, by) - oy) / cell).astype(np.int64)
    cy1 = np.floor((np.maximum(ay, by) - oy) / cell).astype(np.int64)
    ncx = int(max(cx1.max(), 0)) + 1
    rows_p, rows_c = [], []
    for ddx in (0, 1):
        for ddy in (0, 1):
            m = (cx0 + ddx <= cx1) & (cy0 + ddy <= cy1)
            rows_p.append(np.flatnonzero(m))
            rows_c.append((cy0[m] + ddy) * ncx + cx0[m] + ddx)
    piece = np.concatenate(rows_p)
    cellid = np.concatenate(rows_c)
    order = np.lexsort((piece, cellid))
    piece, cellid = piece[order], cellid[order]
    starts = np.flatnonzero(np.r_[True, cellid[1:] != cellid[:-1]])
    group_end = np.repeat(np.r_[starts[1:], len(cellid)], np.diff(np.r_[starts, len(cellid)]))
    later = group_end - np.arange(len(cellid)) - 1  # entries after each one in its cell
    if ends is not None:
        e = np.asarray(ends, dtype=np.int64).reshape(-1, 2)
        src, dst = e[:, 0], e[:, 1]
    found: list[np.ndarray] = []
    n_edges = len(edges)
    pos = 0
    while pos < len(later):
        # a batch of positions whose pairs fit in one chunk
        csum = np.cumsum(later[pos:])
        stop = pos + max(1, int(np.searchsorted(csum, _PAIR_CHUNK, side="right")))
        cnt = later[pos:stop]
        total = int(cnt.sum())
        if total:
            a = np.repeat(np.arange(pos, stop), cnt)
            off = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt)
            b = a + 1 + off
            pa, pb = piece[a], piece[b]
            ea, eb = own[pa], own[pb]
            keep = ea != eb
            if ends is not None:
                keep &= (src[ea] != src[eb]) & (src[ea] != dst[eb]) & (dst[ea] != src[eb]) & (dst[ea] != dst[eb])
            pa, pb, ea, eb = pa[keep], pb[keep], ea[keep], eb[keep]
            hit = _proper_intersections(ax[pa], ay[pa], bx[pa], by[pa], ax[pb], ay[pb], bx[pb], by[pb])
            lo, hi = np.minimum(ea[hit], eb[hit]), np.maximum(ea[hit], eb[hit])
            found.append(np.unique(lo * n_edges + hi))
        pos = stop
    if not found:
        return np.zeros((0, 2), dtype=np.int64)
    keys = np.unique(np.concatenate(found))
    return np.stack([keys // n_edges, keys % n_edges], axis=1)


def _proper_intersections(ax: np.ndarray, ay: np.ndarray, bx: np.ndarray, by: np.ndarray, cx: np.ndarray,
                          cy: np.ndarray, dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """Segments AB and CD cross at a point inside both (strict orientation test, a small relative tolerance)."""
    def orient(px: np.ndarray, py: np.ndarray, qx: np.ndarray, qy: np.ndarray, rx: np.ndarray,
               ry: np.ndarray) -> np.ndarray:
        return (qx - px) * (ry - py) - (qy - py) * (rx - px)

    scale = np.maximum.reduce([np.abs(bx - ax), np.abs(by - ay), np.abs(dx - cx), np.abs(dy - cy)]) + 1e-12
    eps = 1e-9 * scale * scale
    d1 = orient(ax, ay, bx, by, cx, cy)
    d2 = orient(ax, ay, bx, by, dx, dy)
    d3 = orient(cx, cy, dx, dy, ax, ay)
    d4 = orient(cx, cy, dx, dy, bx, by)
    return (((d1 > eps) & (d2 < -eps)) | ((d1 < -eps) & (d2 > eps))) & \
        (((d3 > eps) & (d4 < -eps)) | ((d3 < -eps) & (d4 > eps)))


def attach_ends(edges: Sequence[Edge], boxes: Sequence[tuple[float, float, float, float]],
                tol: float = 2.0) -> list[tuple[int, int]]:
    """(source, target) box index of each edge, from the box its first / last point lies on (within ``tol``);
    -1 - k (a unique id) when no box holds that end. For layouts read back from a picture (Netron's SVG)."""
    b = np.asarray(boxes, dtype=float).reshape(-1, 4)
    cell = max(float(np.median(b[:, 2] - b[:, 0])) if len(b) else 1.0, 1.0) * 2
    grid: dict[tuple[int, int], list[int]] = {}
    for i, (x0, y0, x1, y1) in enumerate(b.tolist()):
        for gx in range(math.floor((x0 - tol) / cell), math.floor((x1 + tol) / cell) + 1):
            for gy in range(math.floor((y0 - tol) / cell), math.floor((y1 + tol) / cell) + 1):
                grid.setdefault((gx, gy), []).append(i)

    def box_at(p: Point, fallback: int) -> int:
        best, best_d = fallback, math.inf
        for i in grid.get((math.floor(p[0] / cell), math.floor(p[1] / cell)), ()):
            x0, y0, x1, y1 = b[i]
            d = max(x0 - p[0], p[0] - x1, y0 - p[1], p[1] - y1, 0.0)  # 0 inside, else the distance out
            if d <= tol and d < best_d:
                best, best_d = i, d
        return best

    out: list[tuple[int, int]] = []
    for k, parts in enumerate(edges):
        first, last = parts[0][0], parts[-1][-1]
        out.append((box_at(first, -1 - 2 * k), box_at(last, -2 - 2 * k)))
    return out
