"""The Node panel for a collapsed group (a module box of a grouped graph): what is inside it, per target.

Why: clicking a group selected it in the graph while the Node panel still said "Select a node"; a user looking at
a 300-node ``text_model`` box wants its verdicts, its ops and its findings before opening it.
"""

from __future__ import annotations

from collections import Counter
from html import escape
from typing import Any

from PySide6.QtCore import QCoreApplication

from studio.gui.graph.model import KIND_OP, GraphData
from studio.gui.inspector.details import _css, verdict_chip

translate = QCoreApplication.translate

TOP_OPS = 12
VERDICT_ORDER = ("unsupported", "risky", "unknown", "supported")


def group_details_html(graph: GraphData, path: str, members: list[int], report: Any, target: str | None,
                       theme: str = "light") -> str:
    """``path``'s op nodes (``members``: indices in ``graph``): counts per verdict for every target (the tool's
    answer where one ran), how many outputs are dynamic, and its most frequent ops."""
    from studio.verify.effective import effective

    ops = [graph.nodes[i] for i in members if graph.nodes[i].kind == KIND_OP]
    label = path.rsplit(".", 1)[-1] or path
    kind = translate("GroupDetails", "group")  # outside the f-string, where lupdate finds it
    out = [_css(theme),
           f"<p style='font-size:13pt; font-weight:600; margin:0'>{escape(label)} "
           f"<span class='muted' style='font-size:9pt; font-weight:400'>{escape(kind)}</span></p>",
           f"<p class='mono' style='margin:2px 0 6px 0'>{escape(path)}</p>"]
    dyn = set(getattr(getattr(report, "dynamic", None), "tensors", {}) or {})
    n_dyn = sum(1 for n in ops if any(o in dyn for o in n.outputs)) if dyn else 0
    out.append("<p>" + translate("GroupDetails", "{n} nodes, {types} op types, {dyn} with dynamic outputs. "
                                 "Double-click the box to open it; its findings are selected below.").format(
        n=f"{len(ops):,}", types=len({n.op_type for n in ops}), dyn=f"{n_dyn:,}") + "</p>")
    if report is not None and report.node_verdicts:
        out.append("<h3>" + translate("GroupDetails", "Verdicts per target") + "</h3><table class='t' width='100%'>")
        for tid in report.node_verdicts:
            verdicts = effective(report, tid).node_verdicts
            counts = Counter(verdicts.get(n.name, "supported") for n in ops)
            cells = " ".join(f"{verdict_chip(v, theme)}&nbsp;{counts[v]:,}" for v in VERDICT_ORDER if counts[v])
            weight = "600" if tid == target else "400"
            # the id above its counts, both the panel's whole width: beside each other, a 1366x768 Node panel
            # (about 240 px) cut 'unsupported 151' short
            out.append(f"<tr><td><span style='font-weight:{weight}'>{escape(tid)}</span><br>{cells}</td></tr>")
        out.append("</table>")
    hist = Counter(n.op_type for n in ops).most_common()
    if hist:
        out.append("<h3>" + translate("GroupDetails", "Operators") + "</h3><table class='t' width='100%'>")
        for op, n in hist[:TOP_OPS]:
            out.append(f"<tr><td class='mono'>{escape(op)}</td><td align='right'>{n:,}</td></tr>")
        if len(hist) > TOP_OPS:
            more = translate("GroupDetails", "… {n} more op types").format(n=len(hist) - TOP_OPS)
            out.append(f"<tr><td class='muted' colspan='2'>{escape(more)}</td></tr>")
        out.append("</table>")
    return "".join(out)
