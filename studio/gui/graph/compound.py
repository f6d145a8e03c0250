"""Layout of a graph with groups: each open group is laid out on its own, as a box inside its parent. No Qt.

Every open group (and the root) places its members, the nodes it holds directly and its child groups (a
collapsed child is one box, an open one the box of its own layout), in layers with python-igraph's crossing
reduction, then packs each layer by the members' real widths. A group's layout is cached under the set of open
groups inside it, so opening a group lays out that group and re-packs its ancestors (a few dozen boxes each)
while every other group keeps its layout: opening ``layers.3`` never moves the inside of ``layers.7``.
Edges run from the source's bottom to the target's top; one that would run upwards or across more than
MAX_SPAN_PX is drawn as two labelled stubs, as in the flat layout. The others leave and enter open groups
through ports on their bottom and top and follow the bends each container gives them (igraph's dummy
vertices, each taking a thin slot in its layer), so they run beside boxes instead of across them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from studio.gui.graph.hierarchy import Hierarchy, Visible
from studio.gui.graph.layout import (
    IO_H,
    NODE_H,
    NODE_W,
    STUB,
    LayoutResult,
    assign_layers,
    igraph_core,
    sugiyama_by_component,
)
from studio.gui.graph.model import KIND_GROUP, KIND_OP

GROUP_W, GROUP_H = 210.0, 56.0
H_GAP, V_GAP = 30.0, 44.0
PAD, TITLE_H = 14.0, 26.0
MAX_SPAN_PX = 30 * (NODE_H + V_GAP)
MAX_ROUTED = 30  # member pairs spanning more layers of their container are not routed through bends
ROUTE_GAP = 12.0  # between a bend or port of a routed edge and its neighbours in a layer


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
    ports: dict[tuple[str, object], float] = field(default_factory=dict)  # ("pi"|"po", member) -> x
    routes: dict[tuple[object, object], list[tuple[float, float]]] = field(default_factory=dict)  # bends


@dataclass
class LayoutCache:
    """Local layouts kept between expansions (key: container path and the open groups inside it)."""

    entries: dict[tuple[str, frozenset[str]], _Local] = field(default_factory=dict)
    computed: int = 0  # containers laid out by the last call (the rest came from the cache)


def unit_size(kind: str, io_group: bool = False) -> tuple[float, float]:
    """A box's size; a collapsed box of graph inputs or outputs is an I/O pill with room for its stack."""
    if kind == KIND_GROUP:
        return (GROUP_W, IO_H + 8) if io_group else (GROUP_W, GROUP_H)
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
    # members fed from outside their container enter through a port on its top, members feeding out leave
    # through one on its bottom: the container routes those edges itself instead of across its content
    ins: dict[str, set[tuple[str, object]]] = {p: set() for p in frames_of}
    outs: dict[str, set[tuple[str, object]]] = {p: set() for p in frames_of}
    split: dict[tuple[int, int], int] = {}
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
        split[(s, d)] = k
        a = ("u", s) if container[s] == lca else ("f", cs[k])
        b = ("u", d) if container[d] == lca else ("f", cd[k])
        if a != b:
            local_pairs[lca].add((a, b))
        for j in range(k, len(cs)):
            outs[cs[j]].add(("u", s) if j == len(cs) - 1 else ("f", cs[j + 1]))
        for j in range(k, len(cd)):
            ins[cd[j]].add(("u", d) if j == len(cd) - 1 else ("f", cd[j + 1]))

    first_of: dict[tuple[str, object], int] = {("u", u): vis.base_of[u] for u in range(n)}
    for p in open_:
        first_of[("f", p)] = hier.groups[p].first
    sizes: dict[tuple[str, object], tuple[float, float]] = {
        ("u", u): unit_size(g.nodes[u].kind, g.nodes[u].kind == KIND_GROUP and hier.groups[g.nodes[u].scope].noun
                            != "nodes") for u in range(n)}
    locals_: dict[str, _Local] = {}
    inside: dict[str, set[str]] = {p: set() for p in frames_of}  # the open groups below each container
    for q in open_:
        for anc in chains[q][:-1]:
            inside[anc].add(q)
    for p in sorted(frames_of, key=lambda x: -len(chains[x])):  # deepest first
        key = (p, frozenset(inside[p]))
        loc = cache.entries.get(key)
        members = [("u", u) for u in units_of[p]] + [("f", c) for c in frames_of[p]]
        if loc is None or set(loc.offsets) != set(members):
            loc = _layout_container(members, local_pairs[p], sizes, first_of, bool(p), ins[p], outs[p])
            cache.entries[key] = loc
            cache.computed += 1
        locals_[p] = loc
        if p:
            sizes[("f", p)] = (loc.width, loc.height)

    x0 = np.zeros(n)
    y0 = np.zeros(n)
    frames: list[Frame] = []
    origin: dict[str, tuple[float, float, float, float]] = {}  # inner top-left, outer top and bottom

    def place(p: str, ox: float, oy: float) -> None:
        loc = locals_[p]
        if p:
            grp = hier.groups[p]
            frames.append(Frame(p, grp.label, len(chains[p]) - 1, grp.size, ox, oy, ox + loc.width, oy + loc.height))
        ix, iy = (ox + PAD, oy + TITLE_H + PAD) if p else (ox, oy)
        origin[p] = (ix, iy, oy, oy + loc.height)
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

    def bends(c: str, a: object, b: object) -> list[tuple[float, float]]:
        ix, iy = origin[c][:2]
        return [(ix + x, iy + y) for x, y in locals_[c].routes.get((a, b), ())]

    def port(c: str, key: tuple[str, object], bottom: bool) -> list[tuple[float, float]]:
        x = locals_[c].ports.get(key)
        return [] if x is None else [(origin[c][0] + x, origin[c][3 if bottom else 2])]

    for s, d in pairs:
        sx, sb, tx, tt = float(xs[s]), float(y0[s] + h[s]), float(xs[d]), float(y0[d])
        is_cut = tt < sb or tt - sb > MAX_SPAN_PX
        cut.append(is_cut)
        if is_cut:
            points.append([(sx, sb), (sx, sb + STUB), (tx, tt - STUB), (tx, tt)])
            continue
        cs, cd, k = chains[container[s]], chains[container[d]], split[(s, d)]
        route = [(sx, sb)]
        for j in range(len(cs) - 1, k - 1, -1):  # out of the source's containers, inner first
            mem = ("u", s) if j == len(cs) - 1 else ("f", cs[j + 1])
            route += bends(cs[j], mem, ("po", mem)) + port(cs[j], ("po", mem), True)
        a = ("u", s) if len(cs) == k else ("f", cs[k])
        b = ("u", d) if len(cd) == k else ("f", cd[k])
        route += bends(cs[k - 1], a, b)
        for j in range(k, len(cd)):  # into the target's containers, outer first
            mem = ("u", d) if j == len(cd) - 1 else ("f", cd[j + 1])
            route += port(cd[j], ("pi", mem), False) + bends(cd[j], ("pi", mem), mem)
        points.append(route + [(tx, tt)])
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
                      titled: bool, ins: set | frozenset = frozenset(), outs: set | frozenset = frozenset()) -> _Local:
    """Layers (cycles between groups broken in graph order), igraph's order within a layer, then packing by
    real widths. Ports (``ins`` on the top layer, ``outs`` below the last) and the bends of edges spanning
    layers take a thin slot in each layer they pass, so routes run beside the boxes, not across them."""
    m = len(members)
    order = sorted(members, key=lambda x: first_of[x])
    index = {mem: i for i, mem in enumerate(order)}
    keys: list[object] = list(order)  # per vertex: a member, or a port ("pi" | "po", member)
    port_pairs: list[tuple[int, int]] = []
    for kind, group in (("pi", ins), ("po", outs)):
        for mem in sorted(group, key=lambda x: index[x]):
            keys.append((kind, mem))
            port_pairs.append((len(keys) - 1, index[mem]) if kind == "pi" else (index[mem], len(keys) - 1))
    nv = len(keys)
    fwd = _acyclic(m, {(index[a], index[b]) for a, b in pairs}) + port_pairs
    layers = assign_layers(nv, fwd) or list(range(nv))
    bottom = max(layers[:m], default=0) + 1
    for v in range(m, nv):
        layers[v] = 0 if v < m + len(ins) else bottom
    routed = [(a, b) for a, b in fwd if layers[b] - layers[a] <= MAX_ROUTED]
    xs: list[float] = [float(i) for i in range(nv)]
    routing: list = []
    core = igraph_core() if nv > 2 else None
    if core is not None and routed:
        xs, routing = sugiyama_by_component(core, nv, routed, layers, 30 if nv > 500 else 100)
    # per layer its items: (igraph x, width, real box?, vertex or (edge, bend))
    by_layer: dict[int, list[tuple[float, float, bool, object]]] = {}
    for v in range(nv):
        real = v < m
        by_layer.setdefault(layers[v], []).append((xs[v], sizes[order[v]][0] if real else 0.0, real, v))
    for k, pts in enumerate(routing):
        for j, (bx, by) in enumerate(pts):
            by_layer.setdefault(int(round(by)), []).append((float(bx), 0.0, False, (k, j)))
    _transpose(by_layer, routed, routing)
    offsets: dict[tuple[str, object], tuple[float, float]] = {}
    at: dict[object, tuple[float, float, float]] = {}  # item -> (centre x, row top, row bottom)
    unit_w = NODE_W + H_GAP
    y = 0.0
    right = 0.0
    left = 0.0
    for lay in sorted(by_layer):
        row = by_layer[lay]
        placed: list[float] = []
        for k, (wx, wi, real, _ref) in enumerate(row):
            x = wx * unit_w - wi / 2
            if placed:
                _px, pw, preal, _pr = row[k - 1]
                x = max(x, placed[-1] + pw + (H_GAP if real and preal else ROUTE_GAP))
            placed.append(x)
        shift = sum(p - (it[0] * unit_w - it[1] / 2) for p, it in zip(placed, row, strict=True)) / len(row)
        height = max((sizes[order[it[3]]][1] for it in row if it[2]), default=0.0)
        for (_wx, wi, real, ref), x in zip(row, placed, strict=True):
            x -= shift
            at[ref] = (x + wi / 2, y, y + height)
            if real:
                offsets[order[ref]] = (x, y)  # type: ignore[index]
            left = min(left, x)
            right = max(right, x + wi)
        if any(it[2] for it in row):  # a layer of ports only takes no room
            y += height + V_GAP
    offsets = {k: (x - left, yy) for k, (x, yy) in offsets.items()}
    ports = {keys[v]: at[v][0] - left for v in range(m, nv)}
    routes: dict[tuple[object, object], list[tuple[float, float]]] = {}
    for k, (a, b) in enumerate(routed):
        pts = routing[k] if k < len(routing) else []
        bends: list[tuple[float, float]] = []
        for j in range(len(pts)):
            cx, top, low = at[(k, j)]
            bends += [(cx - left, top), (cx - left, low)]
        if bends:
            routes[(keys[a], keys[b])] = bends
    width, height = right - left, max(0.0, y - V_GAP)
    if titled:
        width, height = max(width, GROUP_W) + 2 * PAD, height + TITLE_H + 2 * PAD
    return _Local(offsets, width, height, ports, routes)


def _acyclic(m: int, pairs: set[tuple[int, int]]) -> list[tuple[int, int]]:
    """``pairs`` less the back edges of a depth-first walk in graph order (members are numbered in it).

    Between groups, graph order is not the flow: a group's first node can be a Constant emitted early, so
    ``layers.1`` can come before ``layers.0``; only edges that close a cycle are dropped, so every edge
    of an acyclic container keeps pointing down.
    """
    succ: list[list[int]] = [[] for _ in range(m)]
    for a, b in sorted(pairs):
        succ[a].append(b)
    state = [0] * m  # 0 unseen, 1 on the walk's stack, 2 done
    back: set[tuple[int, int]] = set()
    for root in range(m):
        if state[root]:
            continue
        state[root] = 1
        stack = [(root, 0)]
        while stack:
            v, k = stack[-1]
            if k == len(succ[v]):
                state[v] = 2
                stack.pop()
                continue
            stack[-1] = (v, k + 1)
            w = succ[v][k]
            if state[w] == 1:
                back.add((v, w))
            elif state[w] == 0:
                state[w] = 1
                stack.append((w, 0))
    return sorted(p for p in pairs if p not in back)


def _transpose(by_layer: dict[int, list[tuple[float, float, bool, object]]], routed: list[tuple[int, int]],
               routing: list, passes: int = 6) -> None:
    """Sort each layer by igraph's x, then swap neighbours while that removes crossings with the layers above
    and below (dagre's transpose step; igraph's barycenter sweeps stop short of it). A swapped pair trades its
    x slots, so igraph's spacing stays. Edges are the links between consecutive items of each routed chain."""
    rows = {lay: sorted(items, key=lambda it: it[0]) for lay, items in by_layer.items()}
    by_layer.update(rows)
    if all(len(row) < 2 for row in rows.values()):
        return
    layer_of: dict[object, int] = {it[3]: lay for lay, items in rows.items() for it in items}
    up: dict[object, list[object]] = {}
    down: dict[object, list[object]] = {}
    for k, (a, b) in enumerate(routed):
        chain: list[object] = [a] + [(k, j) for j in range(len(routing[k]) if k < len(routing) else 0)] + [b]
        for x, y in zip(chain[:-1], chain[1:], strict=True):
            if layer_of.get(y, -1) == layer_of.get(x, -2) + 1:
                down.setdefault(x, []).append(y)
                up.setdefault(y, []).append(x)
    pos = {it[3]: i for items in rows.values() for i, it in enumerate(items)}

    def crossings(a: object, b: object) -> int:  # of a's and b's edges with a left of b
        c = 0
        for nb in (up, down):
            pa, pb = [pos[x] for x in nb.get(a, ())], [pos[x] for x in nb.get(b, ())]
            c += sum(1 for x in pa for y in pb if x > y)
        return c

    for _ in range(passes):
        improved = False
        for lay in sorted(rows):
            row = rows[lay]
            if len(row) < 2:
                continue
            for i in range(len(row) - 1):
                a, b = row[i][3], row[i + 1][3]
                if (a in up or a in down) and (b in up or b in down) and crossings(b, a) < crossings(a, b):
                    row[i], row[i + 1] = row[i + 1], row[i]
                    pos[a], pos[b] = i + 1, i
                    improved = True
        if not improved:
            break
    for lay, row in rows.items():  # each item takes the x slot of its new place
        if len(row) < 2:
            continue
        slots = sorted(it[0] for it in row)
        by_layer[lay] = [(x, *it[1:]) for x, it in zip(slots, row, strict=True)]  # type: ignore[misc]
