"""A small graph drawn around a failing node (Diagnosis.snippet), with the focus node highlighted.

The snippet is a dict ``{"nodes": [...], "edges": [...], "focus": name}``. Nodes may be names or dicts with
``name`` (or ``id``) and ``op_type`` (or ``op``); edges may be ``[src, dst]``, ``[src, dst, tensor]`` or dicts
with ``src``/``from``/``source``, ``dst``/``to``/``target`` and ``tensor``/``label``. With no edges, edges are
derived from nodes' ``inputs``/``outputs`` tensor names. Layout is layered (longest path from the sources),
which is all a handful of nodes needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QFont, QFontMetrics, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView, QWidget

from studio.gui.theme import colors

NODE_W, NODE_H, GAP_X, GAP_Y = 168.0, 46.0, 28.0, 40.0


@dataclass
class SnippetNode:
    name: str
    op_type: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def parse_snippet(snippet: dict[str, Any] | None) -> tuple[list[SnippetNode], list[tuple[str, str, str]], str | None]:
    """Normalise the tolerant snippet format into nodes, (src, dst, label) edges and the focus name."""
    if not snippet:
        return [], [], None
    nodes: list[SnippetNode] = []
    io: dict[str, tuple[list[str], list[str]]] = {}
    for raw in snippet.get("nodes", []) or []:
        if isinstance(raw, str):
            nodes.append(SnippetNode(raw))
            continue
        if not isinstance(raw, dict):
            continue
        name = str(raw.get("name") or raw.get("id") or f"node{len(nodes)}")
        op = str(raw.get("op_type") or raw.get("op") or "")
        nodes.append(SnippetNode(name, op, {k: v for k, v in raw.items() if k not in ("name", "id")}))
        io[name] = ([str(x) for x in raw.get("inputs", []) or []], [str(x) for x in raw.get("outputs", []) or []])
    names = {n.name for n in nodes}
    edges: list[tuple[str, str, str]] = []
    for raw in snippet.get("edges", []) or []:
        if isinstance(raw, (list, tuple)) and len(raw) >= 2:
            src, dst, label = str(raw[0]), str(raw[1]), str(raw[2]) if len(raw) > 2 else ""
        elif isinstance(raw, dict):
            src = str(raw.get("src") or raw.get("from") or raw.get("source") or "")
            dst = str(raw.get("dst") or raw.get("to") or raw.get("target") or "")
            label = str(raw.get("tensor") or raw.get("label") or raw.get("name") or "")
        else:
            continue
        for n in (src, dst):
            if n and n not in names:  # an edge to a graph input/output: show it as a plain node
                nodes.append(SnippetNode(n))
                names.add(n)
        if src and dst:
            edges.append((src, dst, label))
    if not edges and io:
        producer = {t: n for n, (_i, outs) in io.items() for t in outs}
        for n, (ins, _o) in io.items():
            for t in ins:
                if t in producer and producer[t] != n:
                    edges.append((producer[t], n, t))
    focus = snippet.get("focus")
    return nodes, edges, str(focus) if focus else None


def layered_layout(nodes: list[SnippetNode], edges: list[tuple[str, str, str]]) -> dict[str, tuple[int, int]]:
    """(layer, position) for every node: layer = longest path from a source; cycles are cut."""
    preds: dict[str, list[str]] = {n.name: [] for n in nodes}
    for s, d, _ in edges:
        if s in preds and d in preds:
            preds[d].append(s)
    layer: dict[str, int] = {}

    def depth(n: str, seen: frozenset[str]) -> int:
        if n in layer:
            return layer[n]
        ps = [p for p in preds[n] if p not in seen]
        layer[n] = 0 if not ps else 1 + max(depth(p, seen | {n}) for p in ps)
        return layer[n]

    for n in nodes:
        depth(n.name, frozenset())
    succs: dict[str, list[str]] = {n.name: [] for n in nodes}
    for s, d, _ in edges:
        if s in succs and d in succs:
            succs[s].append(d)
    for n in nodes:  # sources sit just above their first consumer, not all in the top row
        if not preds[n.name] and succs[n.name]:
            layer[n.name] = max(0, min(layer[c] for c in succs[n.name]) - 1)
    pos: dict[str, tuple[int, int]] = {}
    rows: dict[int, list[str]] = {}
    for n in nodes:
        rows.setdefault(layer[n.name], []).append(n.name)
    for lay in sorted(rows):  # order each row by where its predecessors sit (one barycentre pass)
        def bary(name: str) -> float:
            ps = [pos[p][1] for p in preds[name] if p in pos]
            return sum(ps) / len(ps) if ps else float("inf")

        ordered = sorted(rows[lay], key=lambda nm: (bary(nm), rows[lay].index(nm)))
        for i, name in enumerate(ordered):
            pos[name] = (lay, i)
    return pos


class GraphSnippetView(QGraphicsView):
    """Read-only view of a diagnosis snippet; fits itself to its size and repaints on theme changes."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setScene(QGraphicsScene(self))
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setMinimumHeight(200)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.snippet: dict[str, Any] | None = None
        self.focus_name: str | None = None
        self.node_names: list[str] = []

    def set_snippet(self, snippet: dict[str, Any] | None) -> None:
        self.snippet = snippet
        self._draw()

    def _draw(self) -> None:
        scene = self.scene()
        scene.clear()
        c = colors()
        self.setBackgroundBrush(QBrush(c["base"]))
        nodes, edges, focus = parse_snippet(self.snippet)
        self.focus_name = focus
        self.node_names = [n.name for n in nodes]
        if not nodes:
            t = scene.addText(self.tr("no graph snippet for this failure"))
            t.setDefaultTextColor(c["muted"])
            return
        pos = layered_layout(nodes, edges)
        bold = QFont(self.font())
        bold.setBold(True)
        fm = QFontMetrics(bold)
        node_w = max([NODE_W] + [fm.horizontalAdvance(n.op_type or "(tensor)") + 24.0 for n in nodes])
        node_w = min(node_w, 2 * NODE_W)
        width_by_layer: dict[int, int] = {}
        for lay, i in pos.values():
            width_by_layer[lay] = max(width_by_layer.get(lay, 0), i + 1)
        widest = max(width_by_layer.values())
        centers: dict[str, QPointF] = {}
        for n in nodes:
            lay, i = pos[n.name]
            row_w = width_by_layer[lay]
            x = (i + (widest - row_w) / 2.0) * (node_w + GAP_X)
            y = lay * (NODE_H + GAP_Y)
            centers[n.name] = QPointF(x + node_w / 2, y + NODE_H / 2)
        edge_pen = QPen(c["muted"], 1.4)
        small = QFont(self.font())
        small.setPointSizeF(max(7.0, small.pointSizeF() - 2))
        for s, d, label in edges:
            if s not in centers or d not in centers:
                continue
            a = centers[s] + QPointF(0, NODE_H / 2)
            b = centers[d] - QPointF(0, NODE_H / 2)
            path = QPainterPath(a)
            mid = (a.y() + b.y()) / 2
            path.cubicTo(QPointF(a.x(), mid), QPointF(b.x(), mid), b)
            item = scene.addPath(path, edge_pen)
            if label:
                item.setToolTip(label)
            head = QPolygonF([b, b + QPointF(-5, -9), b + QPointF(5, -9)])  # edges end vertically
            scene.addPolygon(head, edge_pen, QBrush(c["muted"]))
        for n in nodes:
            ctr = centers[n.name]
            rect = QRectF(ctr.x() - node_w / 2, ctr.y() - NODE_H / 2, node_w, NODE_H)
            is_focus = n.name == focus
            pen = QPen(c["fail"] if is_focus else c["border"], 2.6 if is_focus else 1.2)
            shape = QPainterPath()
            shape.addRoundedRect(rect, 6, 6)
            box = scene.addPath(shape, pen, QBrush(c["focus"] if is_focus else c["node"]))
            box.setToolTip(f"{n.op_type or 'tensor'}  {n.name}")
            box.setData(0, n.name)
            title = scene.addSimpleText(n.op_type or "(tensor)", bold)
            title.setBrush(QBrush(c["fail"] if is_focus else c["text"]))
            label = str(n.extra.get("label") or "").splitlines()
            caption = label[-1] if label and label[-1] != (n.op_type or "") else n.name
            sub = scene.addSimpleText(self._elide(caption, small, node_w), small)
            sub.setBrush(QBrush(c["muted"]))
            tb, sbr = title.boundingRect(), sub.boundingRect()
            title.setPos(ctr.x() - tb.width() / 2, rect.top() + 5)
            sub.setPos(ctr.x() - sbr.width() / 2, rect.bottom() - sbr.height() - 5)
        scene.setSceneRect(scene.itemsBoundingRect().adjusted(-16, -16, 16, 16))
        self._fit()

    def _elide(self, text: str, font: QFont, width: float) -> str:
        return QFontMetrics(font).elidedText(text, Qt.TextElideMode.ElideMiddle, int(width - 12))

    def _fit(self) -> None:
        rect = self.scene().sceneRect()
        if rect.isEmpty():
            return
        self.resetTransform()
        view = self.viewport().rect()
        # shrink to fit, but never below a readable size: scroll bars take over from there
        scale = max(min(view.width() / rect.width(), view.height() / rect.height(), 1.0), 0.8)
        if scale > 0:
            self.scale(scale, scale)
        self.centerOn(rect.center())

    def resizeEvent(self, event) -> None:  # noqa: N802,ANN001
        super().resizeEvent(event)
        self._fit()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.StyleChange) and self.snippet is not None:
            self._draw()
