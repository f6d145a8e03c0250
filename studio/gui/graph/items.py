"""Scene items besides the tiles: overview groups, the selection overlay, and the frames of open groups.

Kept apart from scene.py (tiles and the scene's colour state) so each module stays readable; all of them read
the GraphScene they are given and keep no state of their own beyond paint caches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from studio.gui.graph.lod import LOD_BOXES, LOD_LABEL, LOD_NAME
from studio.gui.graph.model import KIND_GROUP, KIND_OP

if TYPE_CHECKING:
    from studio.gui.graph.compound import Frame
    from studio.gui.graph.scene import GraphScene, TileItem

COLOURED = (KIND_OP, KIND_GROUP)  # drawn in their verdict colour (I/O nodes have their own)


class OverviewItem(QGraphicsItem):
    """Several tiles drawn flat in one paint call (boxes per colour, edges as one path)."""

    def __init__(self, tiles: list[TileItem]) -> None:
        super().__init__()
        self.members = tiles
        self.gs = tiles[0].gs
        r = QRectF()
        for t in tiles:
            r = r.united(t.boundingRect())
        self._rect = r
        self._cache: tuple[QPainterPath, QPainterPath, list[tuple[QBrush, list[QRectF]]]] | None = None

    def boundingRect(self) -> QRectF:
        return self._rect

    def invalidate(self) -> None:
        self._cache = None
        self.update()

    def _content(self) -> tuple[QPainterPath, QPainterPath, list[tuple[QBrush, list[QRectF]]]]:
        if self._cache is None:
            plain, dyn = QPainterPath(), QPainterPath()
            groups: dict[int, tuple[QBrush, list[QRectF]]] = {}
            th = self.gs.theme
            for t in self.members:
                p, d, _arrows, stubs = t._edge_paths()
                plain.addPath(p)
                plain.addPath(stubs)
                dyn.addPath(d)
                for rep, rects in t._color_groups():
                    is_op = self.gs.graph.nodes[rep].kind in COLOURED
                    color = self.gs.color_index(rep)[0] if is_op else th.io_fill
                    key = color.rgba() if is_op else -1
                    groups.setdefault(key, (QBrush(color), []))[1].extend(rects)
            self._cache = (plain, dyn, list(groups.values()))
        return self._cache

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        th = self.gs.theme
        plain, dyn, groups = self._content()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(QPen(th.edge, 0))
        painter.drawPath(plain)
        if not dyn.isEmpty():
            painter.setPen(QPen(th.dynamic, 0))
            painter.drawPath(dyn)
        painter.setPen(Qt.PenStyle.NoPen)
        for brush, rects in groups:
            painter.setBrush(brush)
            painter.drawRects(rects)


class OverlayItem(QGraphicsItem):
    """Selection ring, the selected node's edges, and search matches, above the tiles."""

    def __init__(self, scene: GraphScene) -> None:
        super().__init__()
        self.gs = scene
        self.selected: int | None = None
        self.matches = np.zeros(0, dtype=np.int64)
        self._rect = QRectF()
        self.setZValue(10)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption, True)

    def boundingRect(self) -> QRectF:
        return self._rect

    def set_state(self, selected: int | None, matches: list[int] | None = None) -> None:
        self.prepareGeometryChange()
        self.selected = selected
        if matches is not None:
            self.matches = np.asarray(matches, dtype=np.int64)
        g = self.gs.geometry
        r = QRectF()
        idx = list(self.matches)
        if selected is not None:
            idx.append(selected)
            for k in g.node_edges[selected]:
                r = r.united(g.edge_path(k).controlPointRect())
        if idx:
            a = np.asarray(idx)
            r = r.united(QRectF(float(g.x0[a].min()), float(g.y0[a].min()),
                                float(g.x1[a].max() - g.x0[a].min()), float(g.y1[a].max() - g.y0[a].min())))
        self._rect = r.adjusted(-12, -12, 12, 12) if not r.isNull() else QRectF()
        self.update()
        labels = getattr(self.gs, "labels", None)
        if labels is not None:  # the selection and matches are named first
            labels.invalidate()

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        g = self.gs.geometry
        th = self.gs.theme
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, lod >= LOD_BOXES)
        ex = option.exposedRect
        if len(self.matches):
            m = self.matches
            m = m[(g.x1[m] >= ex.left()) & (g.x0[m] <= ex.right()) & (g.y1[m] >= ex.top())
                  & (g.y0[m] <= ex.bottom())]
            pad = 4 if lod >= LOD_BOXES else 3 / max(lod, 1e-6)
            pen = QPen(th.match, 3.5 if lod >= LOD_BOXES else 0)
            if lod < LOD_BOXES:
                pen.setWidthF(3)
                pen.setCosmetic(True)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            for i in m:
                painter.drawRoundedRect(g.rect_of(int(i)).adjusted(-pad, -pad, pad, pad), 7, 7)
        if self.selected is not None:
            i = self.selected
            pen = QPen(th.selection, 2.6)
            if lod < LOD_BOXES:
                pen = QPen(th.selection, 2)
                pen.setCosmetic(True)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            for k in g.node_edges[i]:
                painter.drawPath(g.edge_path(k))
            ring = QPen(th.selection, 3.2)
            if lod < LOD_BOXES:
                ring = QPen(th.selection, 4)
                ring.setCosmetic(True)
            painter.setPen(ring)
            pad = 3 if lod >= LOD_BOXES else 4 / max(lod, 1e-6)
            painter.drawRoundedRect(g.rect_of(i).adjusted(-pad, -pad, pad, pad), 7, 7)


class FrameItem(QGraphicsItem):
    """An open group: a tinted box behind its members with its name and roll-up on the title bar."""

    TITLE_H = 26.0

    def __init__(self, scene: GraphScene, frame: Frame) -> None:
        super().__init__()
        self.gs = scene
        self.frame = frame
        self._rect = QRectF(frame.x0, frame.y0, frame.x1 - frame.x0, frame.y1 - frame.y0)
        self.setZValue(-5 + min(frame.depth, 4))
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption, True)

    def boundingRect(self) -> QRectF:
        return self._rect

    def title_rect(self) -> QRectF:
        return QRectF(self._rect.left(), self._rect.top(), self._rect.width(), self.TITLE_H)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        th = self.gs.theme
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        worst = self.gs.frame_worst.get(self.frame.path, 0)
        tint = QColor(th.fill[worst]) if worst else QColor(th.muted)
        tint.setAlpha(26 + 10 * min(self.frame.depth, 4))
        border = QColor(th.border[worst]) if worst else QColor(th.muted)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, lod >= LOD_BOXES)
        pen = QPen(border, 1.2 if lod >= LOD_BOXES else 0)
        painter.setPen(pen)
        painter.setBrush(QBrush(tint))
        painter.drawRoundedRect(self._rect, 8, 8)
        if lod < LOD_LABEL:  # the title would be smaller than legible: the label layer writes it
            return
        painter.setPen(th.text)
        painter.setFont(th.font_op)
        title = f"▾ {self.frame.label}"
        roll = self.gs.frame_rollups.get(self.frame.path, "")
        r = self.title_rect().adjusted(10, 2, -10, 0)
        with_roll = bool(roll) and lod >= LOD_NAME and r.width() >= 340  # a narrow box: the name only
        painter.drawText(r, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                         th.fm_op.elidedText(title, Qt.TextElideMode.ElideMiddle, r.width() * (0.55 if with_roll
                                                                                               else 1.0)))
        if with_roll:
            painter.setFont(th.font_small)
            painter.setPen(th.muted)
            painter.drawText(r, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                             th.fm_small.elidedText(roll, Qt.TextElideMode.ElideRight, r.width() * 0.45))


def paint_io_group(painter: QPainter, gs: GraphScene, i: int, r: QRectF, lod: float) -> None:
    """A collapsed box of graph inputs or outputs: a stack of I/O pills with the stem and the count."""
    th = gs.theme
    pill = QRectF(r.left(), r.top(), r.width() - 8, r.height() - 8)  # the unit leaves room for the stack
    radius = pill.height() / 2
    painter.setPen(QPen(th.canvas, 1.5))
    painter.setBrush(th.io_fill)
    for dy in (8, 4, 0):
        painter.drawRoundedRect(pill.translated(dy, dy), radius, radius)
    if lod < LOD_LABEL:
        return
    painter.setPen(th.io_text)
    painter.setFont(th.font_op)
    node = gs.graph.nodes[i]
    painter.drawText(pill.adjusted(12, 0, -12, 0), Qt.AlignmentFlag.AlignCenter,
                     gs.elided(i, 0, "⊞ " + node.op_type, th.fm_op, pill.width() - 24))


def paint_group_node(painter: QPainter, gs: GraphScene, i: int, r: QRectF, lod: float) -> None:
    """A collapsed group: a box in its worst verdict's colour, stacked like a pile, label and roll-up."""
    if gs.is_io_group(i):
        paint_io_group(painter, gs, i, r, lod)
        return
    th = gs.theme
    solid, fill, border = gs.color_index(i)
    painter.setPen(QPen(border, 1.0))
    painter.setBrush(fill)
    painter.drawRoundedRect(r.translated(5, 5), 6, 6)  # the pile behind: "there is more inside"
    painter.setPen(QPen(border, 2.0))
    painter.drawRoundedRect(r, 6, 6)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(solid)
    painter.drawRoundedRect(QRectF(r.left(), r.top(), 6, r.height()), 3, 3)
    if lod < LOD_LABEL:  # the label layer names it
        return
    dark = gs.heat is not None and fill.lightness() < 150
    painter.setPen(th.on_dark if dark else th.text)
    painter.setFont(th.font_op)
    inner = r.adjusted(12, 4, -8, -4)
    node = gs.graph.nodes[i]
    label = gs.elided(i, 0, "⊞ " + node.op_type, th.fm_op, inner.width())
    if lod >= LOD_NAME:
        painter.drawText(QRectF(inner.left(), inner.top(), inner.width(), 20),
                         Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, label)
        painter.setFont(th.font_small)
        painter.setPen(th.on_dark_muted if dark else th.muted)
        text = gs.elided(i, 1, gs.rollups.get(i, ""), th.fm_small, inner.width())
        painter.drawText(QRectF(inner.left(), inner.top() + 22, inner.width(), 16),
                         Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)
    else:
        painter.drawText(inner, Qt.AlignmentFlag.AlignCenter, label)


def paint_edge_counts(painter: QPainter, tile: TileItem) -> None:
    """An edge carrying several tensors (between groups, drawn once) says how many, above its arrow."""
    lay = tile.gs.geometry.layout
    th = tile.gs.theme
    painter.setFont(th.font_small)
    painter.setPen(th.muted)
    for k in tile.data.edges:
        n = len(lay.edge_tensors[k])
        if n > 1:
            x, y = lay.edge_points[k][-1]
            painter.drawText(QRectF(x + 5, y - 20, 60, 12),
                             Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, f"×{n}")



__all__ = ["COLOURED", "OverviewItem", "OverlayItem", "FrameItem", "paint_edge_counts", "paint_group_node"]
