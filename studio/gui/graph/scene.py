"""The graph scene: nodes and edges grouped into tiles, each tile one QGraphicsItem painted by level of detail.

One item per node would make Qt call Python ``paint`` 10,000 times for a zoomed-out frame; a tile of a few
dozen nodes draws them with a handful of calls (``drawRects`` per colour, one path for all its edges) when
zoomed out, and node by node, with text, only when zoomed in far enough that few nodes are visible. Geometry
(paths, tiles) is built off the GUI thread by ``build_geometry``; the GUI thread only creates the tile items.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QStyleOptionGraphicsItem, QWidget

from studio.gui.graph import palette
from studio.gui.graph.geometry import GraphGeometry, TileData, build_geometry
from studio.gui.graph.items import (
    COLOURED,
    FrameItem,
    OverlayItem,
    OverviewItem,
    paint_edge_counts,
    paint_group_node,
)
from studio.gui.graph.labels import LabelLayer
from studio.gui.graph.lod import LOD_BOXES, LOD_LABEL, LOD_NAME, LOD_OVERVIEW, LOD_SHAPES
from studio.gui.graph.model import KIND_GROUP, KIND_OP
from studio.gui.graph.paint_kit import Theme

__all__ = ["GraphScene", "GraphGeometry", "TileItem", "build_geometry", "LOD_BOXES", "LOD_LABEL", "LOD_NAME",
           "LOD_OVERVIEW", "LOD_SHAPES"]

OVERVIEW_GROUP = 16


class GraphScene(QGraphicsScene):
    """Holds the geometry and the per-node colour state; tiles and the overlay read from it."""

    def __init__(self, geometry: GraphGeometry, theme: str = "light", parent: object = None,
                 expansion: object = None) -> None:
        super().__init__(parent)
        self.geometry = geometry
        self.graph = geometry.graph
        self.expansion = expansion  # studio.gui.graph.expansion.Expansion when the graph shows groups
        self.rollups: dict[int, str] = {}  # collapsed group unit -> "12 unsupported · 4 risky · 58 nodes"
        self.frame_rollups: dict[str, str] = {}  # open group path -> the same for its title bar
        self.frame_worst: dict[str, int] = {}  # open group path -> palette.VERDICTS index of its worst node
        self._base_verdicts: dict[int, str] = {}
        self.rollup_words: dict[str, str] | None = None  # expansion.ROLLUP_WORDS unless a view says otherwise
        n = len(self.graph.nodes)
        self.theme = Theme(theme)
        self.verdict_index = np.zeros(n, dtype=np.int8)  # palette.VERDICTS index per node
        self.heat: np.ndarray | None = None  # 0..1 per node, NaN where unmeasured; set -> heat colouring
        self.dynamic_tensors: set[str] = set()
        self.dynamic_edge = np.zeros(len(geometry.layout.edge_pairs), dtype=bool)
        self.dynamic_node = np.zeros(n, dtype=bool)  # produces a dynamic tensor
        self._text_cache: dict[tuple[int, int], str] = {}
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.BspTreeIndex)
        self.setSceneRect(geometry.scene_rect)
        self.setBackgroundBrush(QBrush(self.theme.canvas))
        self.tiles = [TileItem(self, t) for t in geometry.tiles]
        for item in self.tiles:
            self.addItem(item)
        # tiles are ordered by column then row, so consecutive ones are vertical neighbours
        self.overviews = [OverviewItem(self.tiles[i:i + OVERVIEW_GROUP])
                          for i in range(0, len(self.tiles), OVERVIEW_GROUP)]
        for item in self.overviews:
            item.setVisible(False)
            self.addItem(item)
        self.overview_mode = False
        self.overlay = OverlayItem(self)
        self.addItem(self.overlay)
        self.frames = [FrameItem(self, f) for f in geometry.layout.frames]
        for item in self.frames:
            self.addItem(item)
        self.labels = LabelLayer(self)  # names at a legible size when the boxes are too small for them
        self.addItem(self.labels)
        self._update_rollups()

    # ---- state -----------------------------------------------------------------------------------------
    def set_theme(self, theme: str) -> None:
        self.theme = Theme(theme)
        self.setBackgroundBrush(QBrush(self.theme.canvas))
        self._text_cache.clear()
        self._refresh_tiles()

    def set_verdicts(self, verdicts: dict[str, str] | None) -> None:
        """``verdicts``: node name -> supported|risky|unsupported|unknown; absent nodes are 'none'. A collapsed
        group takes its worst node's colour and counts them; an open group's title bar counts them too."""
        idx = np.zeros(len(self.graph.nodes), dtype=np.int8)
        base = self.graph.base
        self._base_verdicts = {}
        for name, v in (verdicts or {}).items():
            i = self.graph.index_of(name)
            if i is not None:
                # a nested node's (or a collapsed group's member's) verdict colours its owner; the worst wins
                idx[i] = max(idx[i], palette.VERDICT_INDEX.get(str(v), 4), key=_severity)
            b = base.index_of(name) if base is not None else None
            if b is not None:
                self._base_verdicts[b] = str(v)
        self.verdict_index = idx
        self._update_rollups()
        self._refresh_tiles()

    def _update_rollups(self) -> None:
        """Counts per collapsed group unit and per open group frame, from the base nodes' verdicts."""
        if self.expansion is None:
            return
        from studio.gui.graph.expansion import rollups_for

        self.rollups, self.frame_rollups, worst = rollups_for(
            self.expansion, self.graph, [f.frame.path for f in self.frames], self._base_verdicts,
            self.dynamic_tensors, self.rollup_words)
        self.frame_worst = {p: palette.VERDICT_INDEX.get(v, 0) if v else 0 for p, v in worst.items()}
        self._text_cache.clear()

    def set_rollup_words(self, words: dict[str, str] | None) -> None:
        self.rollup_words = words
        self._update_rollups()
        self._refresh_tiles()

    def set_heat(self, values: dict[str, float] | tuple | None) -> None:
        """Colour by a per-node number instead of verdicts (None turns it off); ``(values, "max")`` makes a
        collapsed group show its largest member (divergence) instead of the sum (time)."""
        from studio.gui.graph.expansion import unit_heat

        vals, reduce = values if isinstance(values, tuple) else (values, "sum")
        self.heat = unit_heat(self.graph, vals, reduce) if vals else None
        self._refresh_tiles()

    def set_dynamic(self, tensors: set[str] | None) -> None:
        self.dynamic_tensors = set(tensors or ())
        lay = self.geometry.layout
        self.dynamic_edge = np.array([any(t in self.dynamic_tensors for t in ts) for ts in lay.edge_tensors],
                                     dtype=bool)
        self.dynamic_node = np.array([any(o in self.dynamic_tensors for o in n.outputs) for n in self.graph.nodes],
                                     dtype=bool)
        self._update_rollups()
        self._refresh_tiles()

    def color_index(self, i: int) -> tuple[QColor, QColor, QColor]:
        """(solid, fill, border) for node ``i`` in the current mode."""
        th = self.theme
        if self.heat is not None:
            v = self.heat[i]
            if math.isnan(v):
                return th.solid[0], th.fill[0], th.border[0]
            c = th.heat[min(9, int(v * 9.999))]
            return c, c, c.darker(130)
        k = int(self.verdict_index[i])
        return th.solid[k], th.fill[k], th.border[k]

    def node_at(self, pos: QPointF) -> int | None:
        g = self.geometry
        px, py = pos.x(), pos.y()
        hit = np.flatnonzero((g.x0 <= px) & (px <= g.x1) & (g.y0 <= py) & (py <= g.y1))
        return int(hit[0]) if len(hit) else None

    def elided(self, i: int, level: int, text: str, font_metrics: QFontMetricsF, width: float) -> str:
        key = (i, level)
        s = self._text_cache.get(key)
        if s is None:
            s = font_metrics.elidedText(text, Qt.TextElideMode.ElideMiddle, width)
            self._text_cache[key] = s
        return s

    def set_overview(self, on: bool) -> None:
        """Zoomed far out, paint groups of tiles as single items; zoomed in, the tiles themselves."""
        if on == self.overview_mode:
            return
        self.overview_mode = on
        for t in self.tiles:
            t.setVisible(not on)
        for o in self.overviews:
            o.setVisible(on)

    def sync_frames(self, zoom: float) -> None:
        """Far out only the outer open groups are boxed (2,000 frames, one paint call each: 38 ms a repaint)."""
        depth = 0 if zoom < LOD_OVERVIEW else 1 if zoom < LOD_BOXES * 0.5 else 99
        if depth != getattr(self, "_frame_depth", None):
            self._frame_depth = depth
            for f in self.frames:
                f.setVisible(f.frame.depth <= depth)

    def _refresh_tiles(self) -> None:
        for t in self.tiles:
            t.invalidate()
        for o in self.overviews:
            o.invalidate()
        for f in self.frames:
            f.update()
        self.overlay.update()
        if hasattr(self, "labels"):
            self.labels.invalidate()

    def is_io_group(self, i: int) -> bool:
        """A collapsed box of graph inputs or outputs (hierarchy.IO_PREFIX), drawn as a stack of pills."""
        node = self.graph.nodes[i]
        if node.kind != KIND_GROUP or self.expansion is None:
            return False
        g = self.expansion.hier.groups.get(node.scope)  # type: ignore[attr-defined]
        return g is not None and g.noun != "nodes"

    def group_size(self, i: int) -> int:
        node = self.graph.nodes[i]
        if node.kind != KIND_GROUP or self.expansion is None:
            return 0
        g = self.expansion.hier.groups.get(node.scope)  # type: ignore[attr-defined]
        return g.size if g is not None else 0


def _severity(k: int) -> int:
    """Order verdict indices by how bad they are: unsupported > risky > unknown > supported > none."""
    return {0: 0, 1: 1, 4: 2, 2: 3, 3: 4}.get(int(k), 0)


class TileItem(QGraphicsItem):
    def __init__(self, scene: GraphScene, data: TileData) -> None:
        super().__init__()
        self.gs = scene
        self.data = data
        self._rect = data.rect
        self._groups: list[tuple[int, list[QRectF]]] | None = None
        self._paths: tuple[QPainterPath, QPainterPath, QPainterPath, QPainterPath] | None = None
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption, True)

    def boundingRect(self) -> QRectF:
        return self._rect

    def invalidate(self) -> None:
        self._groups = None
        self._paths = None
        self.update()

    def _edge_paths(self) -> tuple[QPainterPath, QPainterPath, QPainterPath, QPainterPath]:
        """(plain edges, dynamic edges, arrowheads, cut stubs), composed once per state change."""
        if self._paths is None:
            g = self.gs.geometry
            plain, dyn, arrows, stubs = QPainterPath(), QPainterPath(), QPainterPath(), QPainterPath()
            arrows.setFillRule(Qt.FillRule.WindingFill)  # two heads on one spot must not cancel out
            for k in self.data.edges:
                (dyn if self.gs.dynamic_edge[k] else plain).addPath(g.edge_path(k))
                ex, ey = g.layout.edge_points[k][-1]
                arrows.addPolygon(QPolygonF([QPointF(ex - 4.5, ey - 8), QPointF(ex + 4.5, ey - 8),
                                             QPointF(ex, ey)]))
                arrows.closeSubpath()
            for k, node in self.data.stubs:
                stubs.addPath(g.stub_path(k, g.layout.edge_pairs[k][0] == node))
            self._paths = (plain, dyn, arrows, stubs)
        return self._paths

    def _color_groups(self) -> list[tuple[int, list[QRectF]]]:
        if self._groups is None:
            g = self.gs.geometry
            by: dict[int, list[QRectF]] = {}
            keys: dict[int, int] = {}
            nodes = self.gs.graph.nodes
            for i in self.data.nodes:
                key = self.gs.color_index(int(i))[0].rgba() if nodes[i].kind in COLOURED else -1
                keys[key] = int(i)
                by.setdefault(key, []).append(QRectF(g.x0[i], g.y0[i], g.x1[i] - g.x0[i], g.y1[i] - g.y0[i]))
            self._groups = [(keys[k], rects) for k, rects in by.items()]
        return self._groups

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        th = self.gs.theme
        plain, dyn, arrows, stubs = self._edge_paths()
        if lod < LOD_BOXES:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
            pen = QPen(th.edge, 0)  # cosmetic: one device pixel whatever the zoom
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(plain)
            painter.drawPath(stubs)
            if not dyn.isEmpty():
                painter.setPen(QPen(th.dynamic, 0))
                painter.drawPath(dyn)
            painter.setPen(Qt.PenStyle.NoPen)
            for rep, rects in self._color_groups():
                kind = self.gs.graph.nodes[rep].kind
                painter.setBrush(th.io_fill if kind not in COLOURED else self.gs.color_index(rep)[0])
                painter.drawRects(rects)
            return

        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(QPen(th.edge, 1.3))
        painter.drawPath(plain)
        dash = QPen(th.edge, 1.3, Qt.PenStyle.DashLine)
        painter.setPen(dash)
        painter.drawPath(stubs)
        if not dyn.isEmpty():
            painter.setPen(QPen(th.dynamic, 2.2))
            painter.drawPath(dyn)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(th.edge)
        painter.drawPath(arrows)

        g = self.gs.geometry
        ex = option.exposedRect
        idx = self.data.nodes
        vis = idx[(g.x1[idx] >= ex.left() - 100) & (g.x0[idx] <= ex.right() + 100)
                  & (g.y1[idx] >= ex.top() - 40) & (g.y0[idx] <= ex.bottom() + 40)]
        nodes = self.gs.graph.nodes
        for i in vis:
            i = int(i)
            node = nodes[i]
            r = QRectF(g.x0[i], g.y0[i], g.x1[i] - g.x0[i], g.y1[i] - g.y0[i])
            if node.kind == KIND_GROUP:
                paint_group_node(painter, self.gs, i, r, lod)
                continue
            if node.kind != KIND_OP:
                self._paint_io(painter, i, r, lod)
                continue
            solid, fill, border = self.gs.color_index(i)
            painter.setPen(QPen(border, 1.2))
            painter.setBrush(fill)
            painter.drawRoundedRect(r, 5, 5)
            # verdict stripe on the left edge: readable even when the fill is pale
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(solid)
            painter.drawRoundedRect(QRectF(r.left(), r.top(), 5, r.height()), 2.5, 2.5)
            if self.gs.dynamic_node[i]:
                painter.setBrush(th.dynamic)
                painter.drawEllipse(QPointF(r.right() - 8, r.top() + 8), 3.5, 3.5)
            if lod < LOD_LABEL:  # too small for legible text: the label layer names the box
                continue
            dark_fill = self.gs.heat is not None and fill.lightness() < 150  # hot heat: light text
            painter.setPen(th.on_dark if dark_fill else th.text)
            painter.setFont(th.font_op)
            inner = r.adjusted(9, 2, -14, -2)
            op = self.gs.elided(i, 0, node.op_type, th.fm_op, inner.width())
            if lod >= LOD_NAME:  # op type and name, both legible
                painter.drawText(QRectF(inner.left(), inner.top() + 1, inner.width(), 17),
                                 Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, op)
                painter.setFont(th.font_small)
                painter.setPen(th.on_dark_muted if dark_fill else th.muted)
                label = self.gs.elided(i, 1, node.name, th.fm_small, inner.width())
                painter.drawText(QRectF(inner.left(), inner.top() + 18, inner.width(), 14),
                                 Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, label)
            else:
                painter.drawText(inner, Qt.AlignmentFlag.AlignCenter, op)
            if lod >= LOD_SHAPES:
                self._paint_shape_label(painter, i, r)
        if lod >= LOD_NAME:
            self._paint_stub_labels(painter)
            paint_edge_counts(painter, self)

    def _paint_io(self, painter: QPainter, i: int, r: QRectF, lod: float) -> None:
        th = self.gs.theme
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(th.io_fill)
        painter.drawRoundedRect(r, r.height() / 2, r.height() / 2)
        if lod < LOD_LABEL:  # the label layer names it
            return
        painter.setPen(th.io_text)
        painter.setFont(th.font_op)
        node = self.gs.graph.nodes[i]
        tensor = node.outputs[0] if node.outputs else (node.inputs[0] if node.inputs else node.name)
        painter.drawText(r.adjusted(10, 0, -10, 0), Qt.AlignmentFlag.AlignCenter,
                         self.gs.elided(i, 3, tensor, th.fm_op, r.width() - 20))
        if lod >= LOD_SHAPES and node.outputs:
            self._paint_shape_label(painter, i, r)

    def _paint_shape_label(self, painter: QPainter, i: int, r: QRectF) -> None:
        """The first output's dtype and shape under the box, where its edge leaves (amber when dynamic)."""
        node = self.gs.graph.nodes[i]
        if not node.outputs:
            return
        info = self.gs.graph.tensors.get(node.outputs[0])
        if info is None:
            return
        th = self.gs.theme
        painter.setFont(th.font_small)
        painter.setPen(th.dynamic if node.outputs[0] in self.gs.dynamic_tensors else th.muted)
        text = info.shape_text()
        painter.drawText(QRectF(r.center().x() + 6, r.bottom() + 1, 200, 12),
                         Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)

    def _paint_stub_labels(self, painter: QPainter) -> None:
        """Cut edges name their tensor at both stubs, so the reader can search for the other end."""
        g = self.gs.geometry
        th = self.gs.theme
        painter.setFont(th.font_small)
        painter.setPen(th.muted)
        for k, node in self.data.stubs:
            pts = g.layout.edge_points[k]
            tensor = g.layout.edge_tensors[k][0]
            at_source = g.layout.edge_pairs[k][0] == node
            x, y = (pts[1] if at_source else pts[2])
            text = ("↓ " if at_source else "↘ ") + tensor
            text = th.fm_small.elidedText(text, Qt.TextElideMode.ElideMiddle, 150)
            painter.drawText(QRectF(x + 4, y - (0 if at_source else 12), 160, 12),
                             Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)
