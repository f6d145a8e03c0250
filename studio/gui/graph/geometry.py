"""The graph's geometry, built off the GUI thread (studio.gui.graph.layout_worker): node rectangles, edge paths and
tiles of nodes for the scene's items (studio.gui.graph.scene). Qt value types only (QRectF, QPainterPath), no
items and no scene, so a worker thread can make it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QPainterPath

from studio.gui.graph.layout import LayoutResult
from studio.gui.graph.model import GraphData

TILE = 800.0


@dataclass
class TileData:
    nodes: np.ndarray  # node indices
    edges: list[int]  # routed edges whose source lies in this tile
    stubs: list[tuple[int, int]]  # (edge, node) stubs of cut edges drawn at this tile's node
    rect: QRectF = field(default_factory=QRectF)


@dataclass
class GraphGeometry:
    """Node boxes and tiles (computed in the layout worker); edge paths are made lazily, per painted tile."""

    graph: GraphData
    layout: LayoutResult
    x0: np.ndarray
    y0: np.ndarray
    x1: np.ndarray
    y1: np.ndarray
    node_edges: list[list[int]]  # per node: drawn edges touching it
    tiles: list[TileData]
    seconds: float = 0.0
    expansion: object = None  # the groups' state a worker built with this geometry (a new grouped model)
    _paths: dict[int, QPainterPath] = field(default_factory=dict, repr=False)

    def rect_of(self, i: int) -> QRectF:
        return QRectF(self.x0[i], self.y0[i], self.x1[i] - self.x0[i], self.y1[i] - self.y0[i])

    def is_cut(self, k: int) -> bool:
        return self.layout.edge_cut[k]

    def edge_path(self, k: int) -> QPainterPath:
        """Edge ``k`` as a smooth curve through its bends (for a cut edge: its two stubs)."""
        path = self._paths.get(k)
        if path is None:
            pts = self.layout.edge_points[k]
            if self.layout.edge_cut[k]:
                path = QPainterPath(QPointF(*pts[0]))
                path.lineTo(QPointF(*pts[1]))
                path.moveTo(QPointF(*pts[2]))
                path.lineTo(QPointF(*pts[3]))
            else:
                path = _edge_path(pts)
            self._paths[k] = path
        return path

    def stub_path(self, k: int, at_source: bool) -> QPainterPath:
        pts = self.layout.edge_points[k]
        a, b = (pts[0], pts[1]) if at_source else (pts[2], pts[3])
        path = QPainterPath(QPointF(*a))
        path.lineTo(QPointF(*b))
        return path

    @property
    def scene_rect(self) -> QRectF:
        if not self.tiles:
            return QRectF(0, 0, 400, 300)
        r = QRectF()
        for t in self.tiles:
            r = r.united(t.rect)
        return r.adjusted(-120, -120, 120, 120)


def _edge_path(pts: list[tuple[float, float]]) -> QPainterPath:
    path = QPainterPath(QPointF(*pts[0]))
    for (ax, ay), (bx, by) in zip(pts[:-1], pts[1:], strict=True):
        dy = (by - ay) * 0.5
        path.cubicTo(ax, ay + dy, bx, by - dy, bx, by)
    return path


def build_geometry(graph: GraphData, layout: LayoutResult) -> GraphGeometry:
    """Boxes and tiles: plain numbers (QRectF is a value type), so this is safe in a worker thread."""
    import time

    t0 = time.perf_counter()
    x, y, w, h = layout.x, layout.y, layout.w, layout.h
    x0, y0, x1, y1 = x - w / 2, y - h / 2, x + w / 2, y + h / 2
    n = len(graph.nodes)
    tx = np.floor(x / TILE).astype(np.int64)
    ty = np.floor(y / TILE).astype(np.int64)
    keys = tx * 1_000_003 + ty
    order = np.argsort(keys, kind="stable")
    uniq, starts = np.unique(keys[order], return_index=True)
    inverse = np.empty(n, dtype=np.int64)
    tiles: list[TileData] = []
    bounds: list[list[float]] = []
    for k, (a, b) in enumerate(zip(starts, list(starts[1:]) + [n], strict=True)):
        idx = order[a:b]
        inverse[idx] = k
        tiles.append(TileData(nodes=idx, edges=[], stubs=[]))
        bounds.append([float(x0[idx].min()), float(y0[idx].min()), float(x1[idx].max()), float(y1[idx].max())])
    node_edges: list[list[int]] = [[] for _ in range(n)]
    tile_of = inverse.tolist()
    for k, ((s, d), pts, cut) in enumerate(zip(layout.edge_pairs, layout.edge_points, layout.edge_cut,
                                                strict=True)):
        node_edges[s].append(k)
        node_edges[d].append(k)
        if cut:
            tiles[tile_of[s]].stubs.append((k, s))
            tiles[tile_of[d]].stubs.append((k, d))
            continue
        ts = tile_of[s]
        tiles[ts].edges.append(k)
        bb = bounds[ts]
        for px, py in pts:
            if px < bb[0]:
                bb[0] = px
            elif px > bb[2]:
                bb[2] = px
            if py > bb[3]:
                bb[3] = py
    for t, (rx0, ry0, rx1, ry1) in zip(tiles, bounds, strict=True):
        # room for what is drawn outside the boxes: output shapes, stub labels, arrowheads
        t.rect = QRectF(rx0 - 90, ry0 - 30, rx1 - rx0 + 260, ry1 - ry0 + 60)
    return GraphGeometry(graph, layout, x0, y0, x1, y1, node_edges, tiles, seconds=time.perf_counter() - t0)
