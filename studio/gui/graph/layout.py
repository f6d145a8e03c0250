"""Layered (Sugiyama) layout of a GraphData with python-igraph's C implementation. No Qt here.

Layers are assigned here, not by igraph: a node sits one layer below its deepest producer, and nodes with no
producers (Constant, graph inputs) sit just above their first consumer instead of all in row 0. Without that
pull-down an exported transformer puts hundreds of Constants in the top row, and every one of their edges
crosses the whole graph. igraph then orders each layer (barycenter crossing reduction) and routes long edges
through dummy vertices, which become the edges' control points.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from studio.gui.graph.model import KIND_OP, GraphData

NODE_W = 156.0
NODE_H = 38.0
IO_H = 26.0
X_UNIT = NODE_W + 34.0  # igraph's unit horizontal gap, in scene pixels
Y_UNIT = NODE_H + 46.0  # one layer, in scene pixels
MAX_SPAN = 48  # edges longer than this many layers are cut (drawn as two stubs), not routed through dummies
STUB = 16.0


@dataclass
class LayoutResult:
    """Node centres and sizes, and per drawn edge its polyline (scene pixels)."""

    x: np.ndarray  # (N,) centre x
    y: np.ndarray  # (N,) centre y
    w: np.ndarray
    h: np.ndarray
    layer: np.ndarray
    edge_pairs: list[tuple[int, int]]  # one drawn edge per (src, dst) pair
    edge_tensors: list[list[str]]  # tensors carried by each drawn edge
    edge_points: list[list[tuple[float, float]]]  # points from the source's bottom to the target's top
    edge_cut: list[bool]  # True: a long edge drawn as a stub under the source and one above the target
    engine: str = "igraph"
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    frames: list = field(default_factory=list)  # compound.Frame per open group (the flat layout has none)

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        if len(self.x) == 0:
            return (0.0, 0.0, 0.0, 0.0)
        return (float((self.x - self.w / 2).min()), float((self.y - self.h / 2).min()),
                float((self.x + self.w / 2).max()), float((self.y + self.h / 2).max()))


def igraph_core() -> ModuleType | None:
    """igraph's C core (``igraph._igraph``), loaded without the ``igraph`` package's __init__.

    That __init__ imports matplotlib.pyplot for plotting, 2.5-4 s here; the layout needs only the C
    ``GraphBase._layout_sugiyama``, which loads in 30 ms. None when igraph is not installed.
    """
    mod = sys.modules.get("igraph._igraph")
    if mod is not None:
        return mod
    with _IGRAPH_LOCK:  # two views laying out at once must not both initialise the C module (igraph refuses)
        return _load_igraph_core()


_IGRAPH_LOCK = threading.Lock()


def _load_igraph_core() -> ModuleType | None:
    mod = sys.modules.get("igraph._igraph")
    if mod is not None:
        return mod
    try:
        spec = importlib.util.find_spec("igraph")
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        for loc in locations:
            for so in sorted(Path(loc).glob("_igraph*")):
                if so.suffix not in (".so", ".pyd"):
                    continue
                ext = importlib.util.spec_from_file_location("igraph._igraph", so)
                if ext is None or ext.loader is None:
                    continue
                mod = importlib.util.module_from_spec(ext)
                ext.loader.exec_module(mod)
                sys.modules["igraph._igraph"] = mod
                return mod
    except (ImportError, OSError):
        pass
    try:  # an unusual layout of the package: the plain (slow) import still works
        import igraph

        return sys.modules.get("igraph._igraph") or getattr(igraph, "_igraph", None)
    except ImportError:
        return None


def assign_layers(n: int, pairs: list[tuple[int, int]]) -> list[int] | None:
    """Longest-path layers with source nodes pulled down next to their first consumer; None on a cycle."""
    succ: list[list[int]] = [[] for _ in range(n)]
    pred: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for s, d in pairs:
        succ[s].append(d)
        pred[d].append(s)
        indeg[d] += 1
    order: list[int] = []
    queue = deque(i for i in range(n) if indeg[i] == 0)
    while queue:
        v = queue.popleft()
        order.append(v)
        for d in succ[v]:
            indeg[d] -= 1
            if indeg[d] == 0:
                queue.append(d)
    if len(order) != n:
        return None
    is_source = [not pred[i] for i in range(n)]
    layer = [0] * n
    for v in order:
        if is_source[v]:
            continue
        deepest = [layer[p] for p in pred[v] if not is_source[p]]
        layer[v] = (max(deepest) + 1) if deepest else 1
    for v in range(n):
        if is_source[v]:
            layer[v] = max(0, min((layer[d] for d in succ[v]), default=1) - 1)
    base = min(layer, default=0)
    return [v - base for v in layer]


def sugiyama_by_component(core: Any, nv: int, edges: list[tuple[int, int]], layers: list[int],
              iters: int) -> tuple[list[float], list[list[list[float]]]]:
    """igraph's Sugiyama x and per-edge bends [x, layer], run on each weakly connected component and the
    components set side by side in graph order. igraph 1.0 garbles the routing of a graph with several
    components or an isolated vertex, and numbers the bends by the layers its component's vertices use."""
    parent = list(range(nv))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        parent[find(a)] = find(b)
    verts: dict[int, list[int]] = {}
    for v in range(nv):
        verts.setdefault(find(v), []).append(v)
    comp_edges: dict[int, list[int]] = {}
    for k, (a, _b) in enumerate(edges):
        comp_edges.setdefault(find(a), []).append(k)
    xs = [0.0] * nv
    routing: list[list[list[float]]] = [[] for _ in edges]
    offset = 0.0
    for root in sorted(verts, key=lambda r: verts[r][0]):
        vs, ce = verts[root], comp_edges.get(root, [])
        if not ce:
            xs[vs[0]] = offset
            offset += 1.0
            continue
        local = {v: i for i, v in enumerate(vs)}
        used = sorted({layers[v] for v in vs})
        rank = {lay: i for i, lay in enumerate(used)}
        graph = core.GraphBase(len(vs), [(local[edges[k][0]], local[edges[k][1]]) for k in ce], True)
        raw, r = core.GraphBase._layout_sugiyama(graph, [rank[layers[v]] for v in vs], None, 1, 1, iters)
        lo, hi = min(p[0] for p in raw), max(p[0] for p in raw)
        for v in vs:
            xs[v] = raw[local[v]][0] - lo + offset
        for j, k in enumerate(ce):
            routing[k] = [[x - lo + offset, float(used[int(round(y))])] for x, y in r[j]]
        offset += hi - lo + 1.0
    return xs, routing


def _crossing_iterations(n: int) -> int:
    """Barycenter sweeps: more for small graphs (cheap, nicer), fewer past a few thousand nodes."""
    return 100 if n <= 3000 else 30


def compute_layout(graph: GraphData, *, maxiter: int | None = None) -> LayoutResult:
    """Place every node of ``graph``; runs in a worker thread (about 0.5 s for 10,000 nodes here)."""
    t0 = time.perf_counter()
    n = len(graph.nodes)
    carried: dict[tuple[int, int], list[str]] = {}
    for e in graph.edges:
        if e.src != e.dst:
            carried.setdefault((e.src, e.dst), []).append(e.tensor)
    pairs = list(carried)
    w = np.full(n, NODE_W)
    h = np.array([NODE_H if node.kind == KIND_OP else IO_H for node in graph.nodes], dtype=float)
    if n == 0:
        empty = np.zeros(0)
        return LayoutResult(empty, empty, empty, empty, empty.astype(int), [], [], [], [], seconds=0.0)

    t_layers = time.perf_counter()
    layers = assign_layers(n, pairs)
    timings = {"layers": time.perf_counter() - t_layers}
    t_lay = time.perf_counter()
    core = igraph_core()
    # An input or a position-id chain read by every block spans thousands of layers: routing it through
    # dummies would add ~700k of them to a 10k-node transformer (and seconds of layout), so it is cut.
    cut = [layers is not None and layers[d] - layers[s] > MAX_SPAN for s, d in pairs]
    routed = [p for p, c in zip(pairs, cut, strict=True) if not c]
    if core is not None and layers is not None:  # per component: igraph garbles the routing of several
        xs_c, routing = sugiyama_by_component(core, n, routed, layers, maxiter or _crossing_iterations(n))
        coords = np.column_stack([np.asarray(xs_c, dtype=float), np.asarray(layers, dtype=float)])
        engine = "igraph"
    elif core is not None:
        g = core.GraphBase(n, routed, True)
        raw, routing = core.GraphBase._layout_sugiyama(g, layers, None, 1, 1, maxiter or _crossing_iterations(n))
        coords = np.asarray(raw[:n], dtype=float)
        engine = "igraph"
    else:  # the gui extra was installed without igraph: a plain layered placement keeps the view usable
        coords, routing = _fallback_layout(n, layers or [0] * n)
        engine = "fallback"
    timings["sugiyama"] = time.perf_counter() - t_lay
    if routing is not None:
        _separate(coords, routing)

    xs = coords[:, 0] * X_UNIT
    ys = coords[:, 1] * Y_UNIT
    xl, yl, hl = xs.tolist(), ys.tolist(), h.tolist()
    points: list[list[tuple[float, float]]] = []
    k = -1
    for (s, d), is_cut in zip(pairs, cut, strict=True):
        sb, dt = yl[s] + hl[s] / 2, yl[d] - hl[d] / 2
        if is_cut:
            points.append([(xl[s], sb), (xl[s], sb + STUB), (xl[d], dt - STUB), (xl[d], dt)])
            continue
        k += 1
        mids = routing[k] if routing is not None and k < len(routing) else []
        pts = [(xl[s], sb)]
        pts.extend((px * X_UNIT, py * Y_UNIT) for px, py in mids)
        pts.append((xl[d], dt))
        points.append(pts)
    layer_arr = np.asarray(layers if layers is not None else coords[:, 1], dtype=int)
    return LayoutResult(xs, ys, w, h, layer_arr, pairs, [carried[p] for p in pairs], points, cut, engine=engine,
                        seconds=time.perf_counter() - t0, timings=timings)


def _separate(coords: np.ndarray, routing: list) -> None:
    """Push apart nodes and edge bends that igraph left closer than one slot in a layer (it does, at times).

    Per layer, left to right, each item moves right to its minimum distance from the previous one
    (placed[i] = max(x[i], placed[i-1] + gap[i]), solved as a segmented running maximum), then the layer
    is shifted back by its mean move so it stays centred where igraph put it. Nodes take one slot, bends 0.3.
    """
    n = len(coords)
    bend_edge = [k for k, pts in enumerate(routing) for _ in pts]
    bend_pos = [j for pts in routing for j in range(len(pts))]
    bends = np.asarray([p for pts in routing for p in pts], dtype=float).reshape(-1, 2)
    x = np.concatenate([coords[:, 0], bends[:, 0]])
    layer = np.rint(np.concatenate([coords[:, 1], bends[:, 1]])).astype(np.int64)
    size = np.concatenate([np.ones(n), np.full(len(bends), 0.3)])
    order = np.lexsort((x, layer))
    xs, ls, ss = x[order], layer[order], size[order]
    first = np.ones(len(xs), dtype=bool)
    first[1:] = ls[1:] != ls[:-1]
    gap = np.zeros(len(xs))
    gap[1:] = (ss[1:] + ss[:-1]) / 2
    gap[first] = 0.0
    seg = np.cumsum(first) - 1
    seg_start = np.flatnonzero(first)
    c = np.cumsum(gap)
    c -= c[seg_start][seg]  # running gap sum restarts at each layer
    span = float(np.ptp(xs - c)) + 1.0 if len(xs) else 1.0
    lifted = (xs - c) + seg * span  # later layers always above earlier ones: one global cummax per layer
    placed = np.maximum.accumulate(lifted) - seg * span + c
    moved = placed - xs
    counts = np.bincount(seg)
    shift = np.bincount(seg, weights=moved) / counts
    final = placed - shift[seg]
    new_x = np.empty_like(x)
    new_x[order] = final
    coords[:, 0] = new_x[:n]
    for k, j, bx in zip(bend_edge, bend_pos, new_x[n:].tolist(), strict=True):
        routing[k][j][0] = bx


def _fallback_layout(n: int, layers: list[int]) -> tuple[np.ndarray, list[list[list[float]]]]:
    rows: dict[int, int] = {}
    coords = np.zeros((n, 2))
    for v in range(n):
        col = rows.get(layers[v], 0)
        rows[layers[v]] = col + 1
        coords[v] = (col, layers[v])
    return coords, []
