"""The label layer: names at a fixed, legible size when the zoom makes the boxes too small for their own text.

Text in the tiles scales with the zoom and is drawn only while it stays at least LEGIBLE_PX tall (lod.py).
Below that zoom (Fit on a big graph, or an opened group's whole body) this layer writes each unit's name as a
chip of LAYER_PX pixels centred on its box, in the box's colour, as many as fit without overlapping (the
most important first: the selection and search matches, open groups' titles, collapsed groups by size, the
graph's inputs and outputs, then ops by verdict severity and by how rare their op type is, so one MatMul
among forty Constants is named). Text is never shrunk: a name that does not fit is left out, not drawn small.

The placement is made in scene space for the current zoom over the visible region and a margin around it, so
a repaint of part of the viewport (scrolling) draws the same chips; it is made again when the zoom changes or
the view leaves that region (then the whole layer is repainted once).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from studio.gui.graph.lod import LOD_LABEL, LOD_OVERVIEW
from studio.gui.graph.model import KIND_GROUP, KIND_OP

if TYPE_CHECKING:
    from studio.gui.graph.scene import GraphScene

CELL_W, CELL_H = 6.0, 4.0  # occupancy grid of the placement, device pixels
PAD_X, PAD_Y = 4.0, 1.0  # a chip's padding around its text
GAP = 2.0  # free space kept between chips
MAX_CHIP_PX = 190.0  # a longer name is elided in the middle
TRIES = 3  # candidates tried per chip-sized cell
MIN_SHORT_PX = 40.0  # a name is shortened to its box's width only when the box is at least this wide
REGION = 1.0  # viewports of margin placed around the visible one (panning within it keeps the placement)

# priority classes (lower: placed first)
P_PINNED, P_FRAME, P_GROUP, P_IO, P_OP = 0, 1, 2, 3, 4


@dataclass
class Chip:
    """One placed label: its text, the scene point it is anchored at, its size in device pixels."""

    text: str
    x: float  # scene x of the anchor
    y: float  # scene y of the anchor
    w: float  # device pixels
    h: float
    unit: int  # the visible unit (-1: a frame title)
    kind: str  # "op" | "group" | "io" | "frame"
    centred: bool = True  # False: (x, y) is the chip's top-left corner (frame titles)


def place(x: np.ndarray, y: np.ndarray, w: np.ndarray, h: np.ndarray, order: np.ndarray,
          centred: np.ndarray | None = None, owner: np.ndarray | None = None,
          stage: np.ndarray | None = None) -> list[int]:
    """Greedy placement without overlaps, in device pixels: candidates in ``order`` (most important first),
    chip i centred on (x[i], y[i]) (or with its top-left corner there where ``centred`` is False), of size
    w[i] x h[i]. Several candidates may share an ``owner`` (a full name, then a shorter one tried later): once
    one of them is placed the others are skipped. Returns the indices placed. Cost is linear: an occupancy
    grid of CELL_W x CELL_H cells, and at most TRIES candidates per chip-sized cell and ``stage`` tried."""
    n = len(order)
    if n == 0:
        return []
    cen = np.ones(len(x), dtype=bool) if centred is None else centred
    x0 = np.where(cen, x - w / 2, x) - GAP / 2
    y0 = np.where(cen, y - h / 2, y) - GAP / 2
    x1, y1 = x0 + w + GAP, y0 + h + GAP
    ox, oy = float(x0[order].min()), float(y0[order].min())
    # at most TRIES per coarse cell of a typical chip's size (the first in priority order): a dense zoomed-out
    # graph has thousands of candidates for a few hundred places
    cw, ch = max(float(np.median(w[order])), 8.0), max(float(np.median(h[order])), 8.0)
    cx, cy = np.floor((x[order] - ox) / cw).astype(np.int64), np.floor((y[order] - oy) / ch).astype(np.int64)
    key = (cx * 1_000_003 + cy) * 4 + (stage[order] if stage is not None else 0)
    by_cell = np.argsort(key, kind="stable")  # within a cell: priority order
    sorted_key = key[by_cell]
    starts = np.r_[0, np.flatnonzero(sorted_key[1:] != sorted_key[:-1]) + 1]
    rank = np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))
    keep = np.zeros(n, dtype=bool)
    keep[by_cell[rank < TRIES]] = True
    tries = order[keep]  # keeps the priority order
    gx0 = np.floor((x0[tries] - ox) / CELL_W).astype(np.int64)
    gy0 = np.floor((y0[tries] - oy) / CELL_H).astype(np.int64)
    gx1 = np.ceil((x1[tries] - ox) / CELL_W).astype(np.int64)
    gy1 = np.ceil((y1[tries] - oy) / CELL_H).astype(np.int64)
    occ = np.zeros((int(gy1.max()) + 1, int(gx1.max()) + 1), dtype=bool)
    out: list[int] = []
    owners = owner.tolist() if owner is not None else None
    done: set[int] = set()
    for k, i in enumerate(tries.tolist()):
        if owners is not None and owners[i] in done:
            continue
        a, b, c, d = gy0[k], gy1[k], gx0[k], gx1[k]
        cells = occ[a:b, c:d]
        if not cells.any():
            cells[:, :] = True
            out.append(i)
            if owners is not None:
                done.add(owners[i])
    return out


class LabelLayer(QGraphicsItem):
    """One item over the whole scene that paints the chips; the scene invalidates it when colours change."""

    def __init__(self, scene: GraphScene) -> None:
        super().__init__()
        self.gs = scene
        self._rect = scene.geometry.scene_rect
        self._chips: list[Chip] = []
        self._key: tuple[float, int] | None = None  # (zoom, state version) of the placement
        self._region = QRectF()
        self._version = 0
        self._widths: dict[tuple[str, int], float] = {}
        self.setZValue(8)  # above tiles and frames, below the selection overlay
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption, True)

    def boundingRect(self) -> QRectF:
        return self._rect

    def invalidate(self) -> None:
        """Verdicts, selection or search changed: place again at the next paint."""
        self._version += 1
        self.update()

    # ---- what the tests and the view read --------------------------------------------------------------
    @property
    def chips(self) -> list[Chip]:
        """The chips of the last placement (empty while the boxes carry their own text)."""
        return list(self._chips)

    def font_for(self, kind: str) -> QFont:
        th = self.gs.theme
        return th.font_layer_group if kind in ("group", "frame") else th.font_layer

    # ---- placement -------------------------------------------------------------------------------------
    def _width(self, text: str, fm: QFontMetricsF, px: int) -> float:
        key = (text, px)
        w = self._widths.get(key)
        if w is None:
            w = self._widths[key] = fm.horizontalAdvance(text)
        return w

    def _place(self, lod: float, region: QRectF) -> None:
        gs = self.gs
        g = gs.geometry
        th = gs.theme
        nodes = gs.graph.nodes
        cand_text: list[str] = []
        cand: list[tuple[float, float, float, float, int, str, bool, tuple[float, ...]]] = []
        pinned = set(gs.overlay.matches.tolist()) | ({gs.overlay.selected} if gs.overlay.selected is not None
                                                      else set())
        rx0, ry0, rx1, ry1 = region.left(), region.top(), region.right(), region.bottom()
        # frame titles: top-left of each open group, outer ones first
        for f in gs.frames:
            fr = f.frame
            if fr.x1 < rx0 or fr.x0 > rx1 or fr.y1 < ry0 or fr.y0 > ry1:
                continue
            cand_text.append(f"▾ {fr.label}")
            cand.append((fr.x0, fr.y0, 0.0, 0.0, -1, "frame", False, (P_FRAME, fr.depth, 0.0)))
        vis = np.flatnonzero((g.x1 >= rx0) & (g.x0 <= rx1) & (g.y1 >= ry0) & (g.y0 <= ry1))
        overview = lod < LOD_OVERVIEW
        ops = Counter(nodes[i].op_type for i in vis.tolist() if nodes[i].kind == KIND_OP)
        sev = {0: 0, 1: 1, 4: 2, 2: 3, 3: 4}  # verdict index -> badness (unsupported worst)
        for i in vis.tolist():
            node = nodes[i]
            cx, cy = float(g.x0[i] + g.x1[i]) / 2, float(g.y0[i] + g.y1[i]) / 2
            if node.kind == KIND_GROUP:
                kind = "io" if gs.is_io_group(i) else "group"
                size = gs.group_size(i)
                text = f"⊞ {node.op_type}"
                prio: tuple[float, ...] = (P_GROUP, -size, 0.0)
            elif overview:
                continue  # far out only groups and frames are named
            elif node.kind == KIND_OP:
                kind, text = "op", node.op_type
                prio = (P_OP, -sev.get(int(gs.verdict_index[i]), 0), ops[node.op_type])
            else:
                kind = "io"
                text = (node.outputs or node.inputs or [node.name])[0]
                prio = (P_IO, 0.0, 0.0)
            if i in pinned:
                prio = (P_PINNED, 0.0, 0.0)
            cand_text.append(text)
            cand.append((cx, cy, 0.0, 0.0, i, kind, True, prio))
        self._chips = []
        if not cand:
            return
        # stage 0: each name whole (up to MAX_CHIP_PX); stage 1, for the ones that found no room: the name
        # elided to the box's own width on screen (attention_mask -> atte…mask), when that still says something
        rows: list[tuple[int, int, str, float, float]] = []  # (candidate, stage, text, width, height)
        for k, ((_x, _y, _w, _h, unit, kind, centred, _p), text) in enumerate(zip(cand, cand_text, strict=True)):
            font = self.font_for(kind)
            fm = th.fm_layer_group if font is th.font_layer_group else th.fm_layer
            px = font.pixelSize()
            full = self._width(text, fm, px)
            if full > MAX_CHIP_PX - 2 * PAD_X:
                text = fm.elidedText(text, Qt.TextElideMode.ElideMiddle, MAX_CHIP_PX - 2 * PAD_X)
                full = self._width(text, fm, px)
            height = fm.height() + 2 * PAD_Y
            rows.append((k, 0, text, full + 2 * PAD_X, height))
            box = float(g.x1[unit] - g.x0[unit]) * lod if centred and unit >= 0 else 0.0
            if box >= MIN_SHORT_PX and box < full + 2 * PAD_X:
                short = fm.elidedText(text, Qt.TextElideMode.ElideMiddle, box - 2 * PAD_X)
                if len(short.replace("…", "")) >= 3:
                    rows.append((k, 1, short, self._width(short, fm, px) + 2 * PAD_X, height))
        m = len(rows)
        xs, ys, ws, hs = np.empty(m), np.empty(m), np.empty(m), np.empty(m)
        cen, owner, stage = np.empty(m, dtype=bool), np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
        for r, (k, st, _text, width, height) in enumerate(rows):
            x, y, _w, _h, _u, _kind, centred, _p = cand[k]
            xs[r] = x * lod + (0.0 if centred else PAD_X)
            ys[r] = y * lod + (0.0 if centred else PAD_Y + 2)
            ws[r], hs[r], cen[r], owner[r], stage[r] = width, height, centred, k, st
        order = np.array(sorted(range(m), key=lambda r: (rows[r][1], *cand[rows[r][0]][7], rows[r][0])),
                         dtype=np.int64)
        for r in place(xs, ys, ws, hs, order, cen, owner, stage):
            k, _st, text, width, height = rows[r]
            x, y, _w, _h, unit, kind, centred, _p = cand[k]
            ax, ay = (x, y) if centred else (x + PAD_X / lod, y + (PAD_Y + 2) / lod)
            self._chips.append(Chip(text, ax, ay, width, height, unit, kind, centred))

    # ---- painting --------------------------------------------------------------------------------------
    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        if lod >= LOD_LABEL:
            self._chips, self._key = [], None
            return
        view_rect = self._viewport_scene_rect(painter, widget)
        key = (round(lod, 5), self._version)
        if key != self._key or not self._region.contains(view_rect):
            mx, my = view_rect.width() * REGION, view_rect.height() * REGION
            self._region = view_rect.adjusted(-mx, -my, mx, my)
            self._place(lod, self._region)
            if self._key is not None and key[0] == self._key[0]:  # moved out of the region: repaint it all
                QTimer.singleShot(0, self._repaint)
            self._key = key
        self._paint_chips(painter, option.exposedRect)

    def _repaint(self) -> None:
        import shiboken6

        if shiboken6.isValid(self) and self.scene() is not None:  # the scene may be gone (a new layout)
            self.update()

    @staticmethod
    def _viewport_scene_rect(painter: QPainter, widget: QWidget | None) -> QRectF:
        inv, ok = painter.worldTransform().inverted()
        if widget is None or not ok:
            return QRectF(-1e9, -1e9, 2e9, 2e9)
        return inv.mapRect(QRectF(widget.rect()))

    def _paint_chips(self, painter: QPainter, exposed: QRectF) -> None:
        t = painter.worldTransform()
        painter.save()
        painter.resetTransform()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        device_exposed = t.mapRect(exposed).adjusted(-2, -2, 2, 2)
        for c in self._chips:
            p = t.map(QPointF(c.x, c.y))
            r = QRectF(p.x() - c.w / 2, p.y() - c.h / 2, c.w, c.h) if c.centred else QRectF(p.x(), p.y(), c.w, c.h)
            if not r.intersects(device_exposed):
                continue
            fill, border, text = self._colours(c)
            painter.setPen(QPen(border, 1.0))
            painter.setBrush(fill)
            radius = c.h / 2 if c.kind == "io" else 4.0
            painter.drawRoundedRect(r, radius, radius)
            painter.setFont(self.font_for(c.kind))
            painter.setPen(text)
            painter.drawText(r, Qt.AlignmentFlag.AlignCenter, c.text)
        painter.restore()

    def _colours(self, c: Chip) -> tuple[QColor, QColor, QColor]:
        """(fill, border, text) of a chip: the box's own colours, so a chip inside its box reads as its label."""
        gs = self.gs
        th = gs.theme
        if c.kind == "frame":
            return QColor(th.canvas), QColor(th.muted), th.text
        if c.kind == "io":
            return th.io_fill, th.io_fill, th.io_text
        _solid, fill, border = gs.color_index(c.unit)
        dark = gs.heat is not None and fill.lightness() < 150
        return fill, border, th.on_dark if dark else th.text


__all__ = ["Chip", "LabelLayer", "place"]
