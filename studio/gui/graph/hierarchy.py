"""Module hierarchy of a graph, and the graph a reader sees with some groups collapsed. No widgets (words through the
thread-safe QCoreApplication.translate).

Groups come from the exporter's scopes (``/text_model/encoder/layers.0/self_attn/MatMul`` or the dynamo
exporter's name-scope metadata, read by ``studio.profiling.modules.node_scope``: one reader of scopes), so
``text_model > encoder > layers > 0 > self_attn`` nest as the torch modules did. A model without scopes (names
stripped, hand-built graphs) is grouped into runs of consecutive nodes in graph order, cut where the op type
changes, nested until no level holds more than a few dozen boxes. Chains of groups that hold nothing but one
other group are merged (``text_model.encoder``), so every level a reader opens shows a choice.

``visible_graph`` turns a hierarchy and the set of expanded groups into a GraphData whose nodes are the
visible units (nodes, and collapsed groups as one node each); every hidden node's name resolves to the unit
that holds it (``GraphData.index_of``), so verdicts, heat and search land on the box that shows them.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field, replace

from PySide6.QtCore import QCoreApplication

from studio.gui.graph.model import KIND_GROUP, KIND_INPUT, KIND_OP, KIND_OUTPUT, GEdge, GNode, GraphData

FLAT_LIMIT = 200  # models up to this many nodes open fully expanded
TOP_BOXES = 36  # a level with more units than this is split further (op-type runs) or left to the reader
IO_ROW = 6  # more graph inputs (or outputs) than this: runs of similar names are one box (a KV cache's 48)
IO_PREFIX = "~io/"  # the paths of those boxes
RUN_SOURCE = "op-type runs"
SCOPE_SOURCE = "module scopes"


@dataclass
class Group:
    path: str  # dotted module path, or "runs/3/1" for op-type runs; "" is the root
    label: str  # what the box says (last segments)
    depth: int
    parent: str | None
    children: list[str] = field(default_factory=list)  # child group paths, in graph order
    nodes: list[int] = field(default_factory=list)  # direct member nodes (indices in the base graph)
    size: int = 0  # all op nodes below
    first: int = 0  # smallest member node index (graph order)
    noun: str = "nodes"  # what its members are: "nodes", or "inputs" / "outputs" for a box of graph I/O


@dataclass
class Hierarchy:
    groups: dict[str, Group]
    group_of: list[str | None]  # per base node: the group holding it directly (None: always shown, e.g. I/O)
    source: str  # SCOPE_SOURCE | RUN_SOURCE | "none"

    @property
    def root(self) -> Group:
        return self.groups[""]

    def chain(self, i: int) -> list[str]:
        """Group paths from the outermost to the one holding node ``i`` directly (the root left out)."""
        out: list[str] = []
        g = self.group_of[i]
        while g:
            out.append(g)
            g = self.groups[g].parent
        out.reverse()
        return out

    def descendants(self, path: str) -> list[int]:
        """Every node below ``path``, in graph order."""
        out: list[int] = []
        stack = [path]
        while stack:
            g = self.groups[stack.pop()]
            out.extend(g.nodes)
            stack.extend(g.children)
        out.sort()
        return out

    def depth_paths(self, depth: int) -> set[str]:
        """Groups to expand to show every level down to ``depth`` (1 = the top level's groups opened)."""
        return {p for p, g in self.groups.items() if p and g.depth <= depth}

    def all_paths(self) -> set[str]:
        return {p for p in self.groups if p}


def _segments(scope: str) -> list[str]:
    return [s for s in scope.split(".") if s]


def build_hierarchy(graph: GraphData) -> Hierarchy:
    """Groups from scopes when most op nodes have one, else op-type runs; many graph inputs or outputs
    with one name stem (``past_key_values.N.*``) become one box each."""
    ops = [n for n in graph.nodes if n.kind == KIND_OP]
    scoped = sum(1 for n in ops if n.scope)
    h = None
    if ops and scoped >= 0.5 * len(ops):
        h = _from_scopes(graph)
        if len(h.groups) <= 1:
            h = None
    h = h or _from_runs(graph)
    if _io_groups(graph, h.groups, h.group_of):
        _finish(h.groups)
    return h


_FIRST_NUMBER = re.compile(r"[._/:-]?\d")


def io_stem(name: str) -> str:
    """The part of a graph input's or output's name before its first number: ``past_key_values.0.decoder.key``
    and ``past_key_values.11.encoder.value`` share ``past_key_values``; a name without one is its own stem."""
    m = _FIRST_NUMBER.search(name)
    return name[:m.start()] if m and m.start() > 0 else name


def _io_groups(graph: GraphData, groups: dict[str, Group], group_of: list[str | None]) -> bool:
    """A model with more than IO_ROW inputs (or outputs): each stem shared by three or more of them becomes one
    top-level box, so the top level is not one row as wide as the KV cache (Fit then shows it at a size whose
    labels read). Returns whether any box was made."""
    made = False
    for kind, noun in ((KIND_INPUT, "inputs"), (KIND_OUTPUT, "outputs")):
        members = [n.index for n in graph.nodes if n.kind == kind and group_of[n.index] is None]
        if len(members) <= IO_ROW:
            continue
        by_stem: dict[str, list[int]] = {}
        for i in members:
            tensor = (graph.nodes[i].outputs or graph.nodes[i].inputs or [graph.nodes[i].name])[0]
            by_stem.setdefault(io_stem(tensor), []).append(i)
        for stem, idx in by_stem.items():
            if len(idx) < 3:
                continue
            path = f"{IO_PREFIX}{noun}/{stem}"
            groups[path] = Group(path, f"{stem} ×{len(idx)}", 1, "", nodes=list(idx), first=idx[0], noun=noun)
            groups[""].children.append(path)
            for i in idx:
                group_of[i] = path
            made = True
    return made


def _new_root() -> dict[str, Group]:
    return {"": Group("", "", 0, None)}


def _scopes_with_consumers(graph: GraphData) -> list[list[str]]:
    """Each op's scope segments; an unscoped op (a Constant or weight Identity the exporter left at the top)
    takes the deepest scope all its consumers share, so it sits in the module that uses it."""
    by_scope: dict[str, list[str]] = {}  # nodes of one module share its segment list (read only below)
    empty: list[str] = []
    segs: list[list[str]] = []
    for n in graph.nodes:
        if n.kind != KIND_OP or not n.scope:
            segs.append(empty)
            continue
        got = by_scope.get(n.scope)
        if got is None:
            got = by_scope[n.scope] = _segments(n.scope)
        segs.append(got)
    consumers: list[list[int]] = [[] for _ in graph.nodes]
    for e in graph.edges:
        consumers[e.src].append(e.dst)
    for n in reversed(graph.nodes):  # graph order is topological: consumers are resolved first
        if n.kind != KIND_OP or segs[n.index] or not consumers[n.index]:
            continue
        users = [segs[c] for c in consumers[n.index] if graph.nodes[c].kind == KIND_OP]
        if not users or any(not u for u in users):
            continue
        common = users[0]
        for u in users[1:]:
            k = 0
            while k < len(common) and k < len(u) and common[k] == u[k]:
                k += 1
            common = common[:k]
        segs[n.index] = list(common)
    return segs


def _from_scopes(graph: GraphData) -> Hierarchy:
    groups = _new_root()
    group_of: list[str | None] = [None] * len(graph.nodes)
    all_segs = _scopes_with_consumers(graph)
    leaf_of: dict[int, str] = {}  # id of a (shared, alive) segment list -> its innermost group's path
    for n in graph.nodes:
        if n.kind != KIND_OP:
            continue
        segs = all_segs[n.index]
        parent = leaf_of.get(id(segs))
        if parent is None:
            parent = ""
            for k in range(len(segs)):
                path = ".".join(segs[:k + 1])
                if path not in groups:
                    groups[path] = Group(path, segs[k], k + 1, parent, first=n.index)
                    groups[parent].children.append(path)
                parent = path
            leaf_of[id(segs)] = parent
        groups[parent].nodes.append(n.index)
        group_of[n.index] = parent
    _merge_chains(groups, group_of)
    _finish(groups)
    # the top level holding many nodes of its own (unscoped ops of the top graph) gets them run-grouped, so Fit
    # shows a few dozen boxes; an inner module is shown with all its ops when opened (splitting one into runs
    # added crossings between the runs: bench_graph_readability, tiny-qwen2-vl 681 -> 546 without it)
    for path in [""]:
        g = groups[path]
        if len(g.nodes) + len(g.children) > TOP_BOXES and len(g.nodes) > 8:
            parts = max(2, min(TOP_BOXES - len(g.children), len(g.nodes) // 8))
            _runs_into(groups, group_of, path, g.nodes, graph, prefix=f"{path}/~ops" if path else "~ops",
                       parts=parts)
    _finish(groups)
    return Hierarchy(groups, group_of, SCOPE_SOURCE)


def _merge_chains(groups: dict[str, Group], group_of: list[str | None]) -> None:
    """Fold a group holding exactly one child group and no node into that child (labels join with '.')."""
    changed = True
    while changed:
        changed = False
        for path in list(groups):
            g = groups.get(path)
            if g is None or not path or g.nodes or len(g.children) != 1:
                continue
            child = groups[g.children[0]]
            parent = groups[g.parent or ""]
            parent.children[parent.children.index(path)] = child.path
            child.parent, child.label = g.parent, f"{g.label}.{child.label}"
            del groups[path]
            changed = True
    # the root's single child with no sibling nodes is the wrapper (``model``): its children move up, and the
    # ops it holds itself become one group of their own, so the top level shows boxes only
    root = groups[""]
    while len(root.children) == 1 and not root.nodes:
        only = groups[root.children[0]]
        if not only.children:
            break
        root.children = list(only.children)
        for c in only.children:
            groups[c].parent = ""
        del groups[only.path]
        if only.nodes:
            own = QCoreApplication.translate("GraphRollup", "{group} (its own ops)").format(group=only.label)
            top = Group(f"{only.path}/~ops", own, 1, "", nodes=list(only.nodes),
                        first=only.nodes[0])
            groups[top.path] = top
            root.children.append(top.path)
            for i in only.nodes:
                group_of[i] = top.path
    _renumber_depths(groups)


def _renumber_depths(groups: dict[str, Group]) -> None:
    stack = [("", 0)]
    while stack:
        path, d = stack.pop()
        g = groups[path]
        g.depth = d
        stack.extend((c, d + 1) for c in g.children)


def _finish(groups: dict[str, Group]) -> None:
    """Sizes and first indices bottom-up; children in graph order."""
    order = sorted(groups.values(), key=lambda g: -g.depth)
    for g in order:
        g.size = len(g.nodes)
        firsts = [g.nodes[0]] if g.nodes else []
        for c in g.children:
            cg = groups[c]
            g.size += cg.size
            firsts.append(cg.first)
        g.first = min(firsts) if firsts else g.first
    for g in groups.values():
        g.children.sort(key=lambda c: groups[c].first)
        g.nodes.sort()


def _from_runs(graph: GraphData) -> Hierarchy:
    groups = _new_root()
    group_of: list[str | None] = [None] * len(graph.nodes)
    ops = [n.index for n in graph.nodes if n.kind == KIND_OP]
    for i in ops:
        group_of[i] = ""
    groups[""].nodes = list(ops)
    if len(ops) > FLAT_LIMIT:
        _runs_into(groups, group_of, "", ops, graph, prefix="runs")
    _finish(groups)
    return Hierarchy(groups, group_of, RUN_SOURCE if len(groups) > 1 else "none")


def _runs_into(groups: dict[str, Group], group_of: list[str | None], path: str, members: list[int],
               graph: GraphData, prefix: str, parts: int = TOP_BOXES) -> None:
    """Replace ``path``'s direct nodes by about ``parts`` groups of consecutive nodes, recursively."""
    parent = groups[path]
    chunks = _chunks(members, graph, max(2, parts))
    if len(chunks) <= 1:
        return
    parent.nodes = []
    for k, chunk in enumerate(chunks):
        sub = f"{prefix}/{k}"
        ops = Counter(graph.nodes[i].op_type for i in chunk)
        label = f"{len(chunk):,} nodes: " + ", ".join(f"{op} {c}" for op, c in ops.most_common(2))
        g = Group(sub, label, parent.depth + 1, path, nodes=list(chunk), first=chunk[0])
        groups[sub] = g
        parent.children.append(sub)
        for i in chunk:
            group_of[i] = sub
        if len(chunk) > FLAT_LIMIT:
            _runs_into(groups, group_of, sub, chunk, graph, prefix=sub)


def _chunks(members: list[int], graph: GraphData, parts: int) -> list[list[int]]:
    """``members`` (graph order) cut into about ``parts`` runs, each cut moved to a nearby op-type change."""
    n = len(members)
    size = max(1, math.ceil(n / parts))
    out: list[list[int]] = []
    start = 0
    while start < n:
        end = min(n, start + size)
        if end < n:  # prefer to cut where the op type changes, within a quarter of a run
            for k in range(end, min(n, end + size // 4)):
                if graph.nodes[members[k]].op_type != graph.nodes[members[k - 1]].op_type:
                    end = k
                    break
        out.append(members[start:end])
        start = end
    return out


# -- the visible graph ---------------------------------------------------------------------------------------

@dataclass
class Visible:
    """The GraphData drawn for one expansion state, and how it maps to the base graph."""

    graph: GraphData
    unit_of: list[int]  # base node index -> visible unit index
    base_of: list[int]  # visible unit -> its base node (a group: its first member)
    expanded: frozenset[str]


def unit_paths(hier: Hierarchy, expanded: set[str] | frozenset[str]) -> list[str | None]:
    """Per base node: the collapsed group path it is hidden in, or None when the node itself is shown."""
    hidden_for: dict[str | None, str | None] = {None: None, "": None}  # per group: outermost collapsed one
    out: list[str | None] = []
    for g in hier.group_of:
        hidden = hidden_for.get(g, ...)
        if hidden is ...:
            hidden = None
            p = g
            while p:  # walk outwards; the outermost collapsed ancestor wins
                if p not in expanded:
                    hidden = p
                p = hier.groups[p].parent
            hidden_for[g] = hidden
        out.append(hidden)
    return out


def visible_graph(base: GraphData, hier: Hierarchy, expanded: set[str] | frozenset[str]) -> Visible:
    """Nodes outside collapsed groups as they are, each outermost collapsed group as one KIND_GROUP node;
    edges between units once per (source, target, tensor); the unit of every hidden name recorded."""
    hidden_in = unit_paths(hier, expanded)
    nodes: list[GNode] = []
    base_of: list[int] = []
    unit_of = [0] * len(base.nodes)
    group_unit: dict[str, int] = {}
    members: dict[int, list[int]] = {}
    for n in base.nodes:
        path = hidden_in[n.index]
        if path is None:
            unit_of[n.index] = len(nodes)
            base_of.append(n.index)
            nodes.append(replace(n, index=len(nodes)))
            continue
        u = group_unit.get(path)
        if u is None:
            g = hier.groups[path]
            u = group_unit[path] = len(nodes)
            base_of.append(n.index)
            nodes.append(GNode(u, f"group:{path}", g.label, kind=KIND_GROUP, scope=path))
            members[u] = []
        members[u].append(n.index)
        unit_of[n.index] = u
    edges: list[GEdge] = []
    seen: set[tuple[int, int, str]] = set()
    ports: dict[tuple[int, bool], set[str]] = {}  # (group unit, is output) -> tensors already listed
    for e in base.edges:
        s, d, t = unit_of[e.src], unit_of[e.dst], e.tensor
        if s == d:
            continue
        key = (s, d, t)
        if key in seen:
            continue
        seen.add(key)
        edges.append(GEdge(s, d, t))
        for u, out in ((s, True), (d, False)):
            node = nodes[u]
            if node.kind == KIND_GROUP:
                have = ports.setdefault((u, out), set())
                if t not in have:
                    have.add(t)
                    (node.outputs if out else node.inputs).append(t)
    owner = {name: unit_of[i] for name, i in base.nested_owner.items()}
    for u, mem in members.items():
        for i in mem:
            owner[base.nodes[i].name] = u
    graph = GraphData(nodes, edges, base.tensors, name=base.name, opset=base.opset, nested_owner=owner,
                      base=base, members=members)
    return Visible(graph, unit_of, base_of, frozenset(expanded))


def default_expanded(base: GraphData, hier: Hierarchy) -> set[str]:
    """Everything open for a small model; for a larger one the top level only (a readable overview)."""
    ops = sum(1 for n in base.nodes if n.kind == KIND_OP)
    return hier.all_paths() if ops <= FLAT_LIMIT else set()


def path_to(hier: Hierarchy, i: int) -> list[str]:
    """The groups to open so that base node ``i`` is shown itself."""
    return hier.chain(i)
