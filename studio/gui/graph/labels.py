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
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from studio.gui.graph.lod import LAYER_GROUP_PX, LAYER_PX, LOD_LABEL, LOD_OVERVIEW
from studio.gui.graph.model import KIND_GROUP, KIND_OP

if TYPE_CHECKING:
    from studio.gui.graph.scene import GraphScene

CELL_W, CELL_H = 6.0, 4.0  # occupancy grid of the placement, device pixels
PAD_X, PAD_Y = 4.0, 1.0  # a chip's padding around its text
GAP = 2.0  # free space kept between chips
MAX_CHIP_PX = 190.0  # a longer name is elided in the middle
TRIES = 3  # candidates tried per chip-sized cell
MIN_SHORT_PX = 40.0  # a name is shortened to its box's width only when the box is at least this wide
REGION = 0.5  # viewports of margin placed around the visible one (panning within it keeps the placement)

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
          stage: np.ndarray | None = None, upgrade: dict[int, int] | None = None) -> list[int]:
    """Greedy placement without overlaps, in device pixels: candidates in ``order`` (most important first),
    chip i centred on (x[i], y[i]) (or with its top-left corner there where ``centred`` is False), of size
    w[i] x h[i]. Several candidates may share an ``owner`` (a full name, then a shorter one tried later): once
    one of them is placed the others are skipped. Returns the indices placed. Cost is linear: an occupancy
    grid of CELL_W x CELL_H cells, and at most TRIES candidates per chip-sized cell and ``stage`` tried.
    ``upgrade`` maps a placed candidate to a wider one around it (a name shortened to its box -> the whole name):
    after everything is placed, the wider one replaces it where the space around is still free."""
    n = len(order)
    if n == 0:
        return []
    cen = np.ones(len(x), dtype=bool) if centred is None else centred
    x0 = np.where(cen, x - w / 2, x) - GAP / 2
    y0 = np.where(cen, y - h / 2, y) - GAP / 2
    x1, y1 = x0 + w + GAP, y0 + h + GAP
    span = np.r_[order, np.fromiter(upgrade.values(), dtype=np.int64)] if upgrade else order
    ox, oy = float(x0[span].min()), float(y0[span].min())
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
    occ = np.zeros((int(np.ceil((y1[span].max() - oy) / CELL_H)) + 1,
                    int(np.ceil((x1[span].max() - ox) / CELL_W)) + 1), dtype=bool)
    out: list[int] = []
    owners = owner.tolist() if owner is not None else None
    done: set[int] = set()
    for i, a, b, c, d in zip(tries.tolist(), gy0.tolist(), gy1.tolist(), gx0.tolist(), gx1.tolist(), strict=True):
        if owners is not None and owners[i] in done:
            continue
        cells = occ[a:b, c:d]
        if not cells.any():
            cells[:, :] = True
            out.append(i)
            if owners is not None:
                done.add(owners[i])
    if upgrade:
        _upgrade(out, upgrade, occ, x0, y0, x1, y1, ox, oy)
    return out


def _upgrade(out: list[int], upgrade: dict[int, int], occ: np.ndarray, x0: np.ndarray, y0: np.ndarray,
             x1: np.ndarray, y1: np.ndarray, ox: float, oy: float) -> None:
    """Widen placed chips in place (``out``) where their wider candidate's cells are free but for their own."""

    def cells(i: int) -> tuple[int, int, int, int]:
        return (int(np.floor((y0[i] - oy) / CELL_H)), int(np.ceil((y1[i] - oy) / CELL_H)),
                int(np.floor((x0[i] - ox) / CELL_W)), int(np.ceil((x1[i] - ox) / CELL_W)))

    for k, i in enumerate(out):
        j = upgrade.get(i)
        if j is None:
            continue
        a, b, c, d = cells(i)
        ja, jb, jc, jd = cells(j)
        if ja < 0 or jc < 0 or jb > occ.shape[0] or jd > occ.shape[1]:
            continue  # past the grid's edge: nothing known there, keep the short name
        occ[a:b, c:d] = False
        if occ[ja:jb, jc:jd].any():
            occ[a:b, c:d] = True
        else:
            occ[ja:jb, jc:jd] = True
            out[k] = j


_BADNESS = np.array([0, 1, 3, 4, 2], dtype=np.int64)  # palette.VERDICTS index -> how bad (unsupported worst)


@dataclass
class _Static:
    """Per scene, zoom-independent: each unit's centre, name, chip size, class, group size, op-type count; each
    open group's frame box, title and depth."""

    cx: np.ndarray
    cy: np.ndarray
    text: list[str]
    kind: list[str]
    big: np.ndarray  # group-sized font
    w: np.ndarray  # chip width (device px, whole name)
    h: np.ndarray
    cls: np.ndarray  # P_GROUP | P_IO | P_OP
    size: np.ndarray
    freq: np.ndarray
    fx0: np.ndarray
    fy0: np.ndarray
    fx1: np.ndarray
    fy1: np.ndarray
    fw: np.ndarray
    fh: np.ndarray
    fdepth: np.ndarray
    ftext: list[str]

    @classmethod
    def of(cls, layer: LabelLayer) -> _Static:
        gs = layer.gs
        g, th, nodes = gs.geometry, gs.theme, gs.graph.nodes
        n = len(nodes)
        counts = Counter(node.op_type for node in nodes if node.kind == KIND_OP)
        text, kind = [""] * n, [""] * n
        big = np.zeros(n, dtype=bool)
        klass = np.full(n, P_OP, dtype=np.int64)
        size = np.zeros(n, dtype=np.int64)
        freq = np.zeros(n, dtype=np.int64)
        for i, node in enumerate(nodes):
            if node.kind == KIND_GROUP:
                io = gs.is_io_group(i)
                text[i], kind[i], klass[i], size[i] = f"⊞ {node.op_type}", "io" if io else "group", P_GROUP, \
                    gs.group_size(i)
                big[i] = not io
            elif node.kind == KIND_OP:
                text[i], kind[i], freq[i] = node.op_type, "op", counts[node.op_type]
            else:
                text[i], kind[i], klass[i] = (node.outputs or node.inputs or [node.name])[0], "io", P_IO
        w, h = np.empty(n), np.empty(n)
        limit = MAX_CHIP_PX - 2 * PAD_X
        for i in range(n):
            fm, px = (th.fm_layer_group, LAYER_GROUP_PX) if big[i] else (th.fm_layer, LAYER_PX)
            width = layer._width(text[i], fm, px)
            if width > limit:
                text[i] = fm.elidedText(text[i], Qt.TextElideMode.ElideMiddle, limit)
                width = layer._width(text[i], fm, px)
            w[i], h[i] = width + 2 * PAD_X, fm.height() + 2 * PAD_Y
        frames = [f.frame for f in gs.frames]
        ftext = [f"▾ {fr.label}" for fr in frames]
        fm = th.fm_layer_group
        fw = np.array([layer._width(t, fm, LAYER_GROUP_PX) + 2 * PAD_X for t in ftext]) if frames else np.zeros(0)
        fh = np.full(len(frames), fm.height() + 2 * PAD_Y)

        def arr(attr: str) -> np.ndarray:
            return np.array([getattr(fr, attr) for fr in frames], dtype=np.float64) if frames else np.zeros(0)

        return cls(cx=(g.x0 + g.x1) / 2, cy=(g.y0 + g.y1) / 2, text=text, kind=kind, big=big, w=w, h=h, cls=klass,
                   size=size, freq=freq, fx0=arr("x0"), fy0=arr("y0"), fx1=arr("x1"), fy1=arr("y1"), fw=fw, fh=fh,
                   fdepth=np.array([fr.depth for fr in frames], dtype=np.int64), ftext=ftext)


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
        self._static_data: _Static | None = None
        self._pixmaps: dict[tuple, QPixmap] = {}  # chip pixmaps by text, kind, colours and size
        self._pixmap_text: dict[int, tuple[str, int]] = {}
        self.setZValue(8)  # above tiles and frames, below the selection overlay
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption, True)

    def boundingRect(self) -> QRectF:
        return self._rect

    def invalidate(self) -> None:
        """Verdicts, selection, search or theme changed: place again at the next paint (names, sizes and
        boxes are the scene's own and stay: a theme changes colours, not the fonts' pixel sizes)."""
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

    def _static(self) -> _Static:
        """What does not change with the zoom, per unit and per frame: made once per scene (numpy arrays, so a
        zoom step places thousands of units without a Python loop over them)."""
        if self._static_data is None:
            self._static_data = _Static.of(self)
        return self._static_data

    def _place(self, lod: float, region: QRectF) -> None:
        gs = self.gs
        st = self._static()
        rx0, ry0, rx1, ry1 = region.left(), region.top(), region.right(), region.bottom()
        self._chips = []
        # units in the region (far out: groups only) and frames in the region
        g = gs.geometry
        inside = (g.x1 >= rx0) & (g.x0 <= rx1) & (g.y1 >= ry0) & (g.y0 <= ry1)
        if lod < LOD_OVERVIEW:
            inside &= st.cls == P_GROUP
        units = np.flatnonzero(inside)
        frames = np.flatnonzero((st.fx1 >= rx0) & (st.fx0 <= rx1) & (st.fy1 >= ry0) & (st.fy0 <= ry1))
        if not len(units) and not len(frames):
            return
        # priority: class, then within it (groups: bigger first; ops: worse verdict, then rarer op type)
        cls = st.cls[units].copy()
        pinned = [i for i in ([gs.overlay.selected] if gs.overlay.selected is not None else [])
                  + gs.overlay.matches.tolist() if 0 <= i < len(st.cls)]
        if pinned:
            cls[np.isin(units, pinned)] = P_PINNED
        badness = _BADNESS[np.asarray(gs.verdict_index, dtype=np.int64)[units]]
        second = np.where(cls == P_GROUP, -st.size[units], np.where(cls == P_OP, -badness, 0)).astype(np.float64)
        third = np.where(cls == P_OP, st.freq[units], 0).astype(np.float64)
        n_u, n_f = len(units), len(frames)
        # candidates: units (centred) then frames (top-left corner); stage 0 whole names
        xs = np.concatenate([st.cx[units] * lod, st.fx0[frames] * lod + PAD_X])
        ys = np.concatenate([st.cy[units] * lod, st.fy0[frames] * lod + PAD_Y + 2])
        ws = np.concatenate([st.w[units], st.fw[frames]])
        hs = np.concatenate([st.h[units], st.fh[frames]])
        cen = np.concatenate([np.ones(n_u, dtype=bool), np.zeros(n_f, dtype=bool)])
        key1 = np.concatenate([cls, np.full(n_f, P_FRAME)]).astype(np.float64)
        key2 = np.concatenate([second, st.fdepth[frames].astype(np.float64)])
        key3 = np.concatenate([third, np.zeros(n_f)])
        owner = np.arange(n_u + n_f)
        stage = np.zeros(n_u + n_f, dtype=np.int64)
        texts: list[str | None] = [None] * (n_u + n_f)  # None: the static full text
        # stage 1: a name that is wider than its box (and the box wide enough to say something) shortened to it
        box = (g.x1[units] - g.x0[units]) * lod
        short = np.flatnonzero((box >= MIN_SHORT_PX) & (box < st.w[units]))
        if len(short):
            extra_txt: list[str] = []
            extra_w = np.empty(len(short))
            th = gs.theme
            for k, j in enumerate(short.tolist()):
                i = int(units[j])
                fm, px = (th.fm_layer_group, LAYER_GROUP_PX) if st.big[i] else (th.fm_layer, LAYER_PX)
                t = fm.elidedText(st.text[i], Qt.TextElideMode.ElideMiddle, float(box[j]) - 2 * PAD_X)
                extra_txt.append(t if len(t.replace("…", "")) >= 3 else "")
                extra_w[k] = self._width(t, fm, px) + 2 * PAD_X
            keep = np.array([bool(t) for t in extra_txt], dtype=bool)
            short, extra_w = short[keep], extra_w[keep]
            extra_txt = [t for t in extra_txt if t]
            xs, ys = np.concatenate([xs, xs[short]]), np.concatenate([ys, ys[short]])
            ws, hs = np.concatenate([ws, extra_w]), np.concatenate([hs, hs[short]])
            cen = np.concatenate([cen, np.ones(len(short), dtype=bool)])
            key1, key2, key3 = (np.concatenate([key1, key1[short]]), np.concatenate([key2, key2[short]]),
                                np.concatenate([key3, key3[short]]))
            owner = np.concatenate([owner, short])
            stage = np.concatenate([stage, np.ones(len(short), dtype=np.int64)])
            texts += extra_txt
        # a name wider than its box that has a short form reserves the short one first (its whole name would
        # spill over a neighbour's box and blank that neighbour's name) and widens afterwards where space is free
        upgrade: dict[int, int] = {}
        if len(short):
            first_short = n_u + n_f
            for k, j in enumerate(short.tolist()):
                upgrade[first_short + k] = j
            stage[first_short:] = 0
            drop = np.zeros(len(xs), dtype=bool)
            drop[short] = True
        else:
            drop = np.zeros(len(xs), dtype=bool)
        order = np.lexsort((np.arange(len(xs)), key3, key2, key1, stage))
        order = order[~drop[order]]
        for r in place(xs, ys, ws, hs, order, cen, owner, stage, upgrade):
            k = int(owner[r])
            if k < n_u:
                i = int(units[k])
                text = texts[r] if texts[r] is not None else st.text[i]
                kind = st.kind[i]
                self._chips.append(Chip(text, float(st.cx[i]), float(st.cy[i]), float(ws[r]), float(hs[r]), i, kind))
            else:
                f = int(frames[k - n_u])
                self._chips.append(Chip(st.ftext[f], float(st.fx0[f]) + PAD_X / lod,
                                        float(st.fy0[f]) + (PAD_Y + 2) / lod, float(ws[r]), float(hs[r]), -1,
                                        "frame", centred=False))

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
        """The scene area being drawn: the view's viewport, or (QGraphicsView.render into an image) the device."""
        inv, ok = painter.worldTransform().inverted()
        if not ok:
            return QRectF(-1e9, -1e9, 2e9, 2e9)
        return inv.mapRect(QRectF(widget.rect() if widget is not None else painter.viewport()))

    def _paint_chips(self, painter: QPainter, exposed: QRectF) -> None:
        """Each chip as a pixmap drawn 1:1 in device pixels (made once per text and colours: a zoom step
        paints a few hundred chips, and shaping their text anew each time cost more than the rest)."""
        t = painter.worldTransform()
        painter.save()
        painter.resetTransform()
        device_exposed = t.mapRect(exposed).adjusted(-2, -2, 2, 2)
        for c in self._chips:
            p = t.map(QPointF(c.x, c.y))
            x, y = (p.x() - c.w / 2, p.y() - c.h / 2) if c.centred else (p.x(), p.y())
            if not device_exposed.intersects(QRectF(x, y, c.w, c.h)):
                continue
            painter.drawPixmap(QPointF(round(x), round(y)), self._chip_pixmap(c))
        painter.restore()

    def _chip_pixmap(self, c: Chip) -> QPixmap:
        fill, border, text = self._colours(c)
        key = (c.text, c.kind, fill.rgba(), border.rgba(), text.rgba(), int(c.w), int(c.h))
        pm = self._pixmaps.get(key)
        if pm is None:
            if len(self._pixmaps) > 4096:  # a long session of zooming through many names: start again
                self._pixmaps.clear()
                self._pixmap_text.clear()
            pm = QPixmap(int(c.w) + 1, int(c.h) + 1)
            pm.fill(Qt.GlobalColor.transparent)
            qp = QPainter(pm)
            qp.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            qp.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
            r = QRectF(0.5, 0.5, c.w - 1, c.h - 1)
            qp.setPen(QPen(border, 1.0))
            qp.setBrush(fill)
            radius = r.height() / 2 if c.kind == "io" else 4.0
            qp.drawRoundedRect(r, radius, radius)
            qp.setFont(self.font_for(c.kind))
            qp.setPen(text)
            qp.drawText(r, Qt.AlignmentFlag.AlignCenter, c.text)
            qp.end()
            self._pixmaps[key] = pm
            self._pixmap_text[pm.cacheKey()] = (c.text, self.font_for(c.kind).pixelSize())
        return pm

    def chip_text(self, cache_key: int) -> tuple[str, int] | None:
        """(text, font pixel size) of a chip pixmap drawn at 1:1 (what a test reads off the painter)."""
        return self._pixmap_text.get(cache_key)

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
