"""Which groups are open, and what that shows: the state behind the graph view's expand / collapse. No widgets
(the rollup words through the thread-safe QCoreApplication.translate).

One ``Expansion`` per model: the base graph, its hierarchy, the open groups and the layout cache that lets
opening a group lay out only that group and its ancestors (studio.gui.graph.compound). ``layout()`` is what
the view's worker runs; everything else is cheap bookkeeping on the GUI thread.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from studio.gui.graph.compound import LayoutCache, compound_layout
from studio.gui.graph.hierarchy import (
    FLAT_LIMIT,
    Hierarchy,
    Visible,
    build_hierarchy,
    default_expanded,
    visible_graph,
)
from studio.gui.graph.layout import LayoutResult
from studio.gui.graph.model import KIND_GROUP, KIND_OP, GraphData


def wants_hierarchy(graph: GraphData) -> bool:
    """Models above FLAT_LIMIT op nodes open as groups; smaller ones keep the plain layered view."""
    return sum(1 for n in graph.nodes if n.kind == KIND_OP) > FLAT_LIMIT


@dataclass
class Expansion:
    base: GraphData
    hier: Hierarchy
    expanded: set[str] = field(default_factory=set)
    cache: LayoutCache = field(default_factory=LayoutCache)

    @classmethod
    def of(cls, base: GraphData) -> Expansion:
        hier = build_hierarchy(base)
        return cls(base, hier, default_expanded(base, hier))

    def snapshot(self) -> frozenset[str]:
        """The open groups now (the layout worker works on this copy while the GUI goes on)."""
        return frozenset(self.expanded)

    def visible(self, expanded: frozenset[str] | None = None) -> Visible:
        return visible_graph(self.base, self.hier, self.snapshot() if expanded is None else expanded)

    def layout(self, vis: Visible) -> LayoutResult:
        return compound_layout(vis, self.hier, self.cache)

    # ---- changes (each returns whether anything changed) -----------------------------------------------
    def expand(self, path: str) -> bool:
        if path not in self.hier.groups or not path or path in self.expanded:
            return False
        self.expanded.update(p for p in self.chain_of_group(path))
        return True

    def collapse(self, path: str) -> bool:
        """Close ``path`` and everything inside it (reopening shows its top level, not a deep state)."""
        if path not in self.expanded:
            return False
        inside = [p for p in self.expanded if p == path or self.is_inside(p, path)]
        self.expanded.difference_update(inside)
        return True

    def expand_all(self) -> bool:
        before = set(self.expanded)
        self.expanded = self.hier.all_paths()
        return self.expanded != before

    def collapse_all(self) -> bool:
        changed = bool(self.expanded)
        self.expanded = set()
        return changed

    def expand_to_depth(self, depth: int) -> bool:
        before = set(self.expanded)
        self.expanded = self.hier.depth_paths(depth)
        return self.expanded != before

    def reveal(self, base_index: int) -> bool:
        """Open every group on the way to base node ``base_index``."""
        chain = self.hier.chain(base_index)
        missing = [p for p in chain if p not in self.expanded]
        self.expanded.update(missing)
        return bool(missing)

    # ---- questions -------------------------------------------------------------------------------------
    def chain_of_group(self, path: str) -> list[str]:
        out = []
        p: str | None = path
        while p:
            out.append(p)
            p = self.hier.groups[p].parent
        return out[::-1]

    def is_inside(self, path: str, outer: str) -> bool:
        p = self.hier.groups[path].parent if path in self.hier.groups else None
        while p:
            if p == outer:
                return True
            p = self.hier.groups[p].parent
        return False

    def max_depth(self) -> int:
        return max((g.depth for g in self.hier.groups.values()), default=0)

    def rollup(self, verdict_of: dict[int, str], paths: list[str] | None = None) -> dict[str, Counter[str]]:
        """Verdict counts of the op nodes below each group (base node index -> verdict in, path -> counts)."""
        out: dict[str, Counter[str]] = {}
        for path in paths if paths is not None else list(self.hier.groups):
            if not path:
                continue
            out[path] = Counter(verdict_of[i] for i in self.hier.descendants(path) if i in verdict_of)
        return out


def unit_heat(graph: GraphData, values: dict[str, float], reduce: str = "sum") -> np.ndarray:
    """0..1 per drawn unit (NaN where nothing was measured): a collapsed group (or a node owning nested
    bodies) takes the sum of its members (time) or, with ``reduce="max"``, the largest (divergence, error)."""
    heat = np.full(len(graph.nodes), np.nan)
    for name, v in values.items():
        i = graph.index_of(name)
        if i is not None:
            x, old = max(0.0, float(v)), heat[i]
            heat[i] = x if np.isnan(old) else (old + x if reduce == "sum" else max(old, x))
    top = float(np.nanmax(heat)) if not np.all(np.isnan(heat)) else 0.0
    return heat / (top or 1.0)


# verdict -> the word counted on a group (English; rollup_text translates it in the "GraphRollup" context)
ROLLUP_WORDS: dict[str, str] = {"unsupported": QT_TRANSLATE_NOOP("GraphRollup", "unsupported"),
                                "risky": QT_TRANSLATE_NOOP("GraphRollup", "risky"),
                                "unknown": QT_TRANSLATE_NOOP("GraphRollup", "unknown")}
# a group's members, plural and singular
_NOUNS = {"nodes": (QT_TRANSLATE_NOOP("GraphRollup", "nodes"), QT_TRANSLATE_NOOP("GraphRollup", "node")),
          "inputs": (QT_TRANSLATE_NOOP("GraphRollup", "inputs"), QT_TRANSLATE_NOOP("GraphRollup", "input")),
          "outputs": (QT_TRANSLATE_NOOP("GraphRollup", "outputs"), QT_TRANSLATE_NOOP("GraphRollup", "output"))}


def rollups_for(exp: Expansion, graph: GraphData, frame_paths: list[str], base_verdicts: dict[int, str],
                dynamic_tensors: set[str], words: dict[str, str] | None = None,
                ) -> tuple[dict[int, str], dict[str, str], dict[str, str | None]]:
    """What the scene writes on collapsed groups (unit -> text) and open frames (path -> text), and each
    frame's worst verdict, from the verdicts of the base nodes below them and the dynamic tensors.
    ``words``: which verdicts are counted, worst first, and what they are called (the diff view counts
    its colours as removed / changed / added)."""
    words = words or ROLLUP_WORDS
    groups = exp.hier.groups
    dyn_base = ({n.index for n in exp.base.nodes if any(o in dynamic_tensors for o in n.outputs)}
                if dynamic_tensors else set())
    paths = [n.scope for n in graph.nodes if n.kind == KIND_GROUP] + list(frame_paths)
    counts = exp.rollup(base_verdicts, paths)

    def dynamic_in(path: str) -> int:
        return sum(1 for i in exp.hier.descendants(path) if i in dyn_base) if dyn_base else 0

    units = {n.index: rollup_text(counts.get(n.scope), groups[n.scope].size, dynamic_in(n.scope), words,
                                  groups[n.scope].noun) for n in graph.nodes if n.kind == KIND_GROUP}
    frames = {p: rollup_text(counts.get(p), groups[p].size, dynamic_in(p), words, groups[p].noun)
              for p in frame_paths}
    worst = {p: next((v for v in words if (counts.get(p) or {}).get(v)), None) for p in frame_paths}
    return units, frames, worst


def rollup_text(counts: Counter[str] | None, size: int, dynamic: int = 0,
                words: dict[str, str] | None = None, noun: str = "nodes") -> str:
    """``12 unsupported · 4 risky · 58 nodes``: the worst first, supported left out (it is the default);
    ``noun`` names the members ("inputs" for a box of graph inputs)."""
    translate = QCoreApplication.translate  # thread-safe: layouts run off the GUI thread
    words = words or ROLLUP_WORDS
    parts = [f"{counts[v]:,} {translate('GraphRollup', w)}" for v, w in words.items() if counts and counts.get(v)]
    if dynamic:
        parts.append(translate("GraphRollup", "{n} dynamic").format(n=f"{dynamic:,}"))
    plural, one = _NOUNS.get(noun, (noun, noun[:-1] if noun.endswith("s") else noun))
    parts.append(f"{size:,} {translate('GraphRollup', one if size == 1 else plural)}")
    return " · ".join(parts)
