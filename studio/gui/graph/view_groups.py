"""The graph view's groups: open and close them in place, and open the way to a node that is hidden.

A mixin of GraphView (kept apart so view.py stays about drawing and navigation). The state lives in an
``Expansion`` (Qt-free); every change lays the visible graph out again in the view's worker, where only the
groups whose content changed are laid out anew (compound.LayoutCache), and the view then centres on what the
user acted on: the group just opened or closed, or the node a search or a finding went to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QPoint, QPointF

from studio.gui.graph import palette
from studio.gui.graph.expansion import Expansion, rollup_text
from studio.gui.graph.model import KIND_GROUP, KIND_OP

if TYPE_CHECKING:
    from studio.gui.graph.items import FrameItem
    from studio.gui.graph.model import GraphData
    from studio.gui.graph.scene import GraphScene


class GroupsMixin:
    """Expand / collapse API, the hierarchy-aware parts of selection, search and events, and tooltips."""

    expansion: Expansion | None
    base_graph: GraphData | None
    gscene: GraphScene | None
    graph: GraphData | None
    _focus: tuple[str, str] | None

    # ---- the API the toolbar and tests use -------------------------------------------------------------
    @property
    def grouped(self) -> bool:
        return self.expansion is not None

    def expand(self, path: str) -> bool:
        return self._change(self.expansion.expand(path) if self.expansion else False, ("group", path))

    def collapse(self, path: str) -> bool:
        return self._change(self.expansion.collapse(path) if self.expansion else False, ("group", path))

    def toggle_group(self, path: str) -> bool:
        if self.expansion is None:
            return False
        return self.collapse(path) if path in self.expansion.expanded else self.expand(path)

    def expand_all(self) -> bool:
        return self._change(self.expansion.expand_all() if self.expansion else False, None)

    def collapse_all(self) -> bool:
        return self._change(self.expansion.collapse_all() if self.expansion else False, None)

    def expand_to_depth(self, depth: int) -> bool:
        return self._change(self.expansion.expand_to_depth(depth) if self.expansion else False, None)

    def group_at(self, pos: QPoint) -> str | None:
        """The collapsed group under ``pos`` (view coordinates), else None."""
        idx = self.node_at(pos)  # type: ignore[attr-defined]
        if idx is None or self.graph is None or self.graph.nodes[idx].kind != KIND_GROUP:
            return None
        return self.graph.nodes[idx].scope

    def frame_at(self, pos: QPoint) -> str | None:
        """The innermost open group whose box holds ``pos`` (view coordinates), else None."""
        item = self._frame_item_at(self.mapToScene(pos))  # type: ignore[attr-defined]
        return item.frame.path if item is not None else None

    def _frame_item_at(self, p: QPointF) -> FrameItem | None:
        if self.gscene is None:
            return None
        hits = [f for f in self.gscene.frames if f.boundingRect().contains(p)]
        return max(hits, key=lambda f: f.frame.depth) if hits else None

    def tooltip_for(self, idx: int) -> str:
        assert self.graph is not None
        node = self.graph.nodes[idx]
        if node.kind == KIND_GROUP:
            return self.group_tooltip(idx)
        verdict = "none"
        if self.gscene is not None:
            verdict = palette.VERDICTS[int(self.gscene.verdict_index[idx])]
        lines = [f"<b>{node.op_type}</b> &nbsp;<span style='color:gray'>{node.name}</span>"]
        if node.kind == KIND_OP:
            lines.append(QCoreApplication.translate("GraphView", "verdict: {verdict}").format(
                verdict=QCoreApplication.translate("Verdicts", palette.VERDICT_LABELS[verdict])))
        for label, names in ((QCoreApplication.translate("GraphView", "in"), node.inputs),
                             (QCoreApplication.translate("GraphView", "out"), node.outputs)):
            for t in names[:4]:
                info = self.graph.tensors.get(t)
                shape = f" [{info.shape_text()}]" if info else ""
                lines.append(f"{label}: {t}{shape}")
        return "<br>".join(lines)

    def group_tooltip(self, idx: int) -> str:
        assert self.graph is not None and self.expansion is not None
        node = self.graph.nodes[idx]
        g = self.expansion.hier.groups[node.scope]
        roll = self.gscene.rollups.get(idx, "") if self.gscene is not None else rollup_text(None, g.size)
        return (f"<b>{g.label}</b> &nbsp;<span style='color:gray'>{node.scope}</span><br>{roll}<br>"
                f"<span style='color:gray'>double-click or → to open; ← closes the group around the "
                f"selection</span>")

    # ---- hooks used by GraphView -----------------------------------------------------------------------
    def _change(self, changed: bool, focus: tuple[str, str] | None) -> bool:
        if changed:
            self._relayout(focus)  # type: ignore[attr-defined]
            self.sig_expansion_changed.emit()  # type: ignore[attr-defined]
        return changed

    def _reveal(self, name: str) -> bool:
        """Open the groups hiding ``name``; True when a relayout was started (selection follows it)."""
        if self.expansion is None or self.graph is None or self.base_graph is None:
            return False
        idx = self.graph.index_of(name)
        b = self.base_graph.index_of(name)
        if idx is None or b is None or self.graph.nodes[idx].kind != KIND_GROUP:
            return False
        if self.expansion.reveal(b):
            self._relayout(("node", name))  # type: ignore[attr-defined]
            self.sig_expansion_changed.emit()  # type: ignore[attr-defined]
            return True
        return False

    def _show_focus(self, focus: tuple[str, str] | None) -> None:
        """After a relayout: select the node a search went to, or centre on the group just opened/closed."""
        assert self.graph is not None and self.gscene is not None
        self._selected = None  # type: ignore[attr-defined]
        if focus is not None and focus[0] == "node":
            self.select(  # type: ignore[attr-defined]
                focus[1], emit=True, animate=False)
            return
        if focus is not None:
            frame = next((f for f in self.gscene.frames if f.frame.path == focus[1]), None)
            if frame is not None:  # the opened group whole when it fits at a readable zoom, else its top
                r = frame.boundingRect()
                vw, vh = max(self.viewport().width(), 200), max(self.viewport().height(), 200)  # type: ignore[attr-defined]
                fit = min(vw / r.width(), vh / r.height())
                if fit >= 0.5:
                    self._set_scale(min(fit, 1.0))  # type: ignore[attr-defined]
                    self.centerOn(r.center())  # type: ignore[attr-defined]
                else:
                    scale = max(0.5, min(1.0, vw / r.width()))
                    self._set_scale(scale)  # type: ignore[attr-defined]
                    self.centerOn(QPointF(r.center().x(), r.top() + vh / 2 / scale))  # type: ignore[attr-defined]
            else:
                idx = self.graph.index_of(f"group:{focus[1]}")
                if idx is not None:
                    self._set_selected(idx)
                    self.centerOn(self.gscene.geometry.rect_of(idx).center())
        self.gscene.overlay.set_state(self._selected, self._matches)

    def _selected_group(self) -> str | None:
        sel = getattr(self, "_selected", None)
        if sel is None or self.graph is None or self.graph.nodes[sel].kind != KIND_GROUP:
            return None
        return self.graph.nodes[sel].scope

    def _enclosing_frame(self) -> str | None:
        """The open group around the selection (what ← closes)."""
        sel = getattr(self, "_selected", None)
        if sel is None or self.gscene is None:
            return None
        return self.frame_at(self.mapFromScene(self.gscene.geometry.rect_of(sel).center()))  # type: ignore[attr-defined]
