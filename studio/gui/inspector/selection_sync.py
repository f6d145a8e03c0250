"""One selected node across the inspector page: the graph view, the findings table, the Node panel, the Profile
tab's node table and the Netron tab follow whichever of them the user clicked.

Selecting in one view selects in the others, whose own selection signals would echo back: ``syncing`` is set
while the sync itself moves a selection, and the handlers ignore what arrives meanwhile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from studio.gui.inspector import details
from studio.gui.inspector.profile_format import node_time_html

if TYPE_CHECKING:
    from studio.gui.pages.inspect_page import InspectPage


class SelectionSync:
    """Keeps ``page.selected_node`` shown everywhere; ``pending_node`` waits for a graph that is not laid out."""

    def __init__(self, page: InspectPage) -> None:
        self.page = page
        self.syncing = False
        self.pending_node: str | None = None

    # ---- names -----------------------------------------------------------------------------------------
    def node_key(self, name: str) -> str:
        """The report's key for a node shown here (main-graph keys are names)."""
        return name

    def graph_name(self, key: str) -> str:
        graph = self.page.graph
        if graph is None:
            return key
        idx = graph.index_of(key)
        return graph.nodes[idx].name if idx is not None else key

    # ---- showing ---------------------------------------------------------------------------------------
    def show_node(self, name: str) -> None:
        """Fill the Node panel for ``name`` (with its profiled time) and select its Profile row."""
        page = self.page
        if page.graph is None:
            return
        idx = page.graph.index_of(name)
        if idx is None:
            return
        node = page.graph.nodes[idx]
        page.session.select(node.name)
        prof = page.profiler
        timing = ""
        pkey = prof.keys.get(node.name)
        nt = prof.report.node(pkey) if prof.report is not None and pkey else None
        if nt is not None:
            timing = node_time_html(nt, prof.report, page.theme, prof.names)
        page.node_panel.setHtml(details.node_details_html(page.graph, node, page.report, page.current_target,
                                                          page.theme, node_key=self.node_key(node.name),
                                                          extra_html=timing))
        page.profile_panel.select_node(pkey)
        if page.side.currentWidget() not in (page.node_panel, page.changes_panel, page.profile_panel):
            page.side.setCurrentWidget(page.node_panel)

    def select_rows_for(self, name: str) -> None:
        """Select the findings of ``name`` (and of the nodes nested in its bodies) in the table."""
        page = self.page
        rows = page.findings_model.rows_for_node(self.node_key(name))
        if page.graph is not None:  # a node owning a nested body also answers for the nodes inside it
            idx = page.graph.index_of(name)
            if idx is not None:
                for nested in page.graph.nodes[idx].subgraph_nodes:
                    rows += page.findings_model.rows_for_node(nested)
        was = self.syncing
        self.syncing = True
        try:
            page.table.select_rows(rows)
        finally:
            self.syncing = was

    def focus_node(self, name: str) -> bool:
        """Select ``name`` everywhere (graph centred on it, its findings selected, its details shown)."""
        page = self.page
        if page.graph is None or not page.view.ready:
            self.pending_node = name
            return False
        ok = page.view.select(name, center=True, animate=False)
        if ok:
            shown = self.graph_name(name)
            self.show_node(shown)
            self.select_rows_for(shown)
            if page.netron is not None:
                page.netron.select(shown)
        return ok

    def layout_ready(self) -> None:
        """The graph is laid out: focus the node a payload asked for, else bring the selection back."""
        if self.pending_node:
            node, self.pending_node = self.pending_node, None
            self.focus_node(node)
        elif self.page.selected_node:  # after groups opened or closed: ring it, keep the view and the groups
            grouped = self.page.view.layout_reason == "expansion"
            self.page.view.select(self.page.selected_node, center=not grouped, animate=False, reveal=not grouped)

    # ---- clicks in the views ---------------------------------------------------------------------------
    def on_graph_selected(self, name: str) -> None:
        if self.syncing:
            return
        page = self.page
        self.syncing = True
        try:
            if not name:
                page.session.select(None)
                page.table.clearSelection()
                page.profile_panel.select_node(None)
                return
            self._follow(name)
        finally:
            self.syncing = False

    def _follow(self, name: str) -> None:
        """The details, the findings rows and Netron follow node ``name`` (the graph has it selected)."""
        self.show_node(name)
        self.select_rows_for(name)
        if self.page.netron is not None:
            self.page.netron.select(name)

    def on_group_selected(self, path: str) -> None:
        """A collapsed group was clicked: the Node panel sums it up and its members' findings are selected."""
        page = self.page
        exp = getattr(page.view, "expansion", None)
        if self.syncing or not path or exp is None or path not in exp.hier.groups:
            return
        from studio.gui.inspector.group_details import group_details_html

        members = exp.hier.descendants(path)
        base = exp.base
        page.session.select(None)
        page.node_panel.setHtml(group_details_html(base, path, members, page.report, page.current_target,
                                                   page.theme))
        rows = [r for i in members for r in page.findings_model.rows_for_node(self.node_key(base.nodes[i].name))]
        self.syncing = True
        try:
            page.table.select_rows(sorted(set(rows)))
        finally:
            self.syncing = False
        if page.side.currentWidget() not in (page.node_panel, page.changes_panel, page.profile_panel):
            page.side.setCurrentWidget(page.node_panel)

    def on_finding_selected(self, *_args: Any) -> None:
        if self.syncing:
            return
        page = self.page
        rows = page.table.selectionModel().selectedRows()
        if not rows:
            return
        f = page.findings_model.finding(rows[0].row())
        node = f.node
        if not node and f.tensor and page.graph is not None:
            src = page.graph.producer(f.tensor)
            node = page.graph.nodes[src].name if src is not None else None
        if node:
            self.syncing = True
            try:
                page.view.highlight(f.nodes if len(f.nodes) > 1 else [])
                page.view.select(node, center=True)
                self.show_node(node)
                if page.netron is not None:
                    page.netron.select(self.graph_name(node))
            finally:
                self.syncing = False

    def on_netron_clicked(self, name: str) -> None:
        page = self.page
        if page.graph is not None and page.graph.index_of(name) is not None:
            page.view.select(name, center=True)
            self.on_graph_selected(name)

    def on_profile_node(self, key: str) -> None:
        """A Node-table row was clicked: centre and select that node in the graph (and Netron, findings)."""
        page = self.page
        name = page.profiler.names.get(key, key)
        if page.graph is None or page.graph.index_of(name) is None:
            return
        self.syncing = True
        try:
            page.view.highlight([])
            page.view.select(name, center=True)
            self._follow(name)
        finally:
            self.syncing = False

    def on_profile_module(self, keys: list[str]) -> None:
        """A module row: ring the module's nodes and bring its slowest one into view."""
        page = self.page
        prof = page.profiler
        names = [prof.names.get(k, k) for k in keys]
        page.view.highlight(names)
        if prof.report is not None and keys:
            slowest = max(keys, key=lambda k: getattr(prof.report.node(k), "mean_ms", 0.0))
            name = prof.names.get(slowest, slowest)
            if page.graph is not None and page.graph.index_of(name) is not None:
                page.view.select(name, center=True)
                self.show_node(name)


__all__ = ["SelectionSync"]
