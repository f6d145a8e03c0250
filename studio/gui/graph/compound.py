"""Layout of a graph with groups: each open group is laid out on its own, as a box inside its parent. No Qt.

Every open group (and the root) places its members, the nodes it holds directly and its child groups (a
collapsed child is one box, an open one the box of its own layout), in layers with python-igraph's crossing
reduction, then packs each layer by the members' real widths. A group's layout is cached under the set of open
groups inside it, so opening a group lays out that group and re-packs its ancestors (a few dozen boxes each)
while every other group keeps its layout: opening ``layers.3`` never moves the inside of ``layers.7``.
Edges run from the source's bottom to the target's top; one that would run upwards or across more than
MAX_SPAN_PX is drawn as two labelled stubs, as in the flat layout.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from studio.gui.graph.hierarchy import Hierarchy, Visible
from studio.gui.graph.layout import IO_H, NODE_H, NODE_W, STUB, LayoutResult, assign_layers, igraph_core
from studio.gui.graph.model import KIND_GROUP, KIND_OP

GROUP_W, GROUP_H = 210.0, 56.0
H_GAP, V_GAP = 30.0, 44.0
PAD, TITLE_H = 14.0, 26.0
MAX_SPAN_PX = 30 * (NODE_H + V_GAP)


@dataclass
class Frame:
    """An open group drawn as a titled box around its members (scene coordinates)."""

    path: str
    label: str
    depth: int
    size: int  # op nodes below
    x0: float = 0.0
    y0: float = 0.0
    x1: float = 0.0
    y1: float = 0.0


@dataclass
class _Local:
    """One container's layout: member offsets from its inner top-left, and its outer size."""

    offsets: dict[tuple[str, object], tuple[float, float]]  # ("u", unit) | ("f", path) -> top-left
    width: float
    height: float


@dataclass
class LayoutCache:
    """Local layouts kept between expansions (key: container path and the open groups inside it)."""

    entries: dict[tuple[str, frozenset[str]], _Local] = field(default_factory=dict)
    computed: int = 0  # containers laid out by the last call (the rest came from the cache)


def unit_size(kind: str) -> tuple[float, float]:
    if kind == KIND_GROUP:
        return GROUP_W, GROUP_H
    return NODE_W, NODE_H if kind == KIND_OP else IO_H


def compound_layout(vis: Visible, hier: Hierarchy, cache: LayoutCache | None = None) -> LayoutResult:
    t0 = time.perf_counter()
    cache = cache if cache is not None else LayoutCache()
    cache.computed = 0
    g = vis.graph
    n = len(g.nodes)
    open_ = {p for p in vis.expanded if p in hier.groups and _all_open(hier, p, vis.expanded)}
    # the container (open group, "" = root) holding each unit directly
    container: list[str] = []
    for u in g.nodes:
        if u.kind == KIND_GROUP:
            container.append(hier.groups[u.scope].parent or "")
        else:
            container.append(hier.group_of[vis.base_of[u.index]] or "")
    frames_of: dict[str, list[str]] = {p: [] for p in open_ | {""}}
    for p in sorted(open_, key=lambda x: hier.groups[x].first):
        frames_of[hier.groups[p].parent or ""].append(p)
    units_of: dict[str, list[int]] = {p: [] for p in frames_of}
    for u in range(n):
        units_of[container[u]].append(u)
    # each edge belongs to the lowest open group holding both ends
    chains = {p: _frame_chain(hier, p) for p in frames_of}
    local_pairs: dict[str, set[tuple[tuple[str, object], tuple[str, object]]]] = {p: set() for p in frames_of}
    carried: dict[tuple[int, int], list[str]] = {}
    for e in g.edges:
        if e.src == e.dst:
            continue
        carried.setdefault((e.src, e.dst), []).append(e.tensor)
    for s, d in carried:
        cs, cd = chains[container[s]], chains[container[d]]
        k = 0
        while k < len(cs) and k < len(cd) and cs[k] == cd[k]:
            k += 1
        lca = cs[k - 1]
        a = ("u", s) if container[s] == lca else ("f", cs[k])
        b = ("u", d) if container[d] == lca else ("f", cd[k])
        if a != b:
            local_pairs[lca].add((a, b))

    first_of: dict[tuple[str, object], int] = {("u", u): vis.base_of[u] for u in range(n)}
    for p in open_:
        first_of[("f", p)] = hier.groups[p].first
    sizes: dict[tuple[str, object], tuple[float, float]] = {("u", u): unit_size(g.nodes[u].kind) for u in range(n)}
    locals_: dict[str, _Local] = {}
    for p in sorted(frames_of, key=lambda x: -len(chains[x])):  # deepest first
        inner = frozenset(q for q in open_ if q != p and p in chains[q])
        key = (p, inner)
        loc = cache.entries.get(key)
        members = [("u", u) for u in units_of[p]] + [("f", c) for c in frames_of[p]]
        if loc is None or set(loc.offsets) != set(members):
            loc = _layout_container(members, local_pairs[p], sizes, first_of, titled=bool(p))
            cache.entries[key] = loc
            cache.computed += 1
        locals_[p] = loc
        if p:
            sizes[("f", p)] = (loc.width, loc.height)

    x0 = np.zeros(n)
    y0 = np.zeros(n)
    frames: list[Frame] = []

    def place(p: str, ox: float, oy: float) -> None:
        loc = locals_[p]
        if p:
            grp = hier.groups[p]
            frames.append(Frame(p, grp.label, len(chains[p]) - 1, grp.size, ox, oy, ox + loc.width, oy + loc.height))
        ix, iy = (ox + PAD, oy + TITLE_H + PAD) if p else (ox, oy)
        for (kind, ref), (dx, dy) in loc.offsets.items():
            if kind == "u":
                x0[ref], y0[ref] = ix + dx, iy + dy  # type: ignore[index]
            else:
                place(str(ref), ix + dx, iy + dy)

    place("", 0.0, 0.0)
    w = np.array([sizes[("u", u)][0] for u in range(n)]) if n else np.zeros(0)
    h = np.array([sizes[("u", u)][1] for u in range(n)]) if n else np.zeros(0)
    xs, ys = x0 + w / 2, y0 + h / 2
    pairs = list(carried)
    points, cut = [], []
    for s, d in pairs:
        sx, sb, tx, tt = float(xs[s]), float(y0[s] + h[s]), float(xs[d]), float(y0[d])
        is_cut = tt < sb or tt - sb > MAX_SPAN_PX
        cut.append(is_cut)
        points.append([(sx, sb), (sx, sb + STUB), (tx, tt - STUB), (tx, tt)] if is_cut else [(sx, sb), (tx, tt)])
    layer = np.rint(ys / (NODE_H + V_GAP)).astype(int) if n else np.zeros(0, dtype=int)
    frames.sort(key=lambda f: f.depth)
    return LayoutResult(xs, ys, w, h, layer, pairs, [carried[p] for p in pairs], points, cut, engine="compound",
                        seconds=time.perf_counter() - t0, timings={"containers_laid_out": float(cache.computed)},
                        frames=frames)


def _all_open(hier: Hierarchy, path: str, expanded: frozenset[str]) -> bool:
    g = hier.groups[path].parent
    while g:
        if g not in expanded:
            return False
        g = hier.groups[g].parent
    return True


def _frame_chain(hier: Hierarchy, path: str) -> list[str]:
    out = [path]
    while path:
        path = hier.groups[path].parent or ""
        out.append(path)
    out.reverse()
    return out


def _layout_container(members: list[tuple[str, object]], pairs: set, sizes: dict, first_of: dict,
                      titled: bool) -> _Local:
    """Layers (graph order breaks cycles), igraph's order within a layer, then packing by real widths."""
    m = len(members)
    index = {mem: i for i, mem in enumerate(sorted(members, key=lambda x: first_of[x]))}
    order = sorted(members, key=lambda x: index[x])
    fwd = sorted({(index[a], index[b]) for a, b in pairs if index[a] < index[b]})
    layers = assign_layers(m, fwd) or list(range(m))
    xs: list[float] = [float(i) for i in range(m)]
    core = igraph_core() if m > 2 else None
    if core is not None and fwd:
        graph = core.GraphBase(m, fwd, True)
        raw, _routing = core.GraphBase._layout_sugiyama(graph, layers, None, 1, 1, 30 if m > 500 else 100)
        xs = [float(p[0]) for p in raw[:m]]
    by_layer: dict[int, list[int]] = {}
    for i in range(m):
        by_layer.setdefault(layers[i], []).append(i)
    offsets: dict[tuple[str, object], tuple[float, float]] = {}
    unit_w = NODE_W + H_GAP
    y = 0.0
    right = 0.0
    left = 0.0
    rows: list[tuple[list[int], list[float]]] = []
    for lay in sorted(by_layer):
        row = sorted(by_layer[lay], key=lambda i: xs[i])
        want = [xs[i] * unit_w for i in row]
        placed: list[float] = []
        for k, i in enumerate(row):
            wi = sizes[order[i]][0]
            x = want[k] - wi / 2
            if placed:
                prev = row[k - 1]
                x = max(x, placed[-1] + sizes[order[prev]][0] + H_GAP)
            placed.append(x)
        shift = sum(p - (wv - sizes[order[i]][0] / 2) for p, wv, i in zip(placed, want, row, strict=True)) / len(row)
        placed = [p - shift for p in placed]
        rows.append((row, placed))
        height = max(sizes[order[i]][1] for i in row)
        for i, x in zip(row, placed, strict=True):
            offsets[order[i]] = (x, y)
            left = min(left, x)
            right = max(right, x + sizes[order[i]][0])
        y += height + V_GAP
    offsets = {k: (x - left, yy) for k, (x, yy) in offsets.items()}
    width, height = right - left, max(0.0, y - V_GAP)
    if titled:
        width, height = max(width, GROUP_W) + 2 * PAD, height + TITLE_H + 2 * PAD
    return _Local(offsets, width, height)
