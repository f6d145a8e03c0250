"""Rich-text panels of the inspector page: node details, model statistics, before/after of a fix.

Plain functions from data to HTML (Qt's rich-text subset), so the panels stay thin and testable.
"""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtCore import QCoreApplication

from studio.core.catalogue import _ as core_text
from studio.core.units import human_bytes
from studio.gui.graph import palette
from studio.gui.graph.model import KIND_OP, GNode, GraphData

translate = QCoreApplication.translate


def human_count(n: float) -> str:
    for unit, div in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= div:
            return f"{n / div:.2f} {unit}"
    return f"{n:.0f}"


def _css(theme: str) -> str:
    text, muted = palette.TEXT[theme]
    border = "#d0d7de" if theme == "light" else "#3a414b"
    head = "#f0f2f5" if theme == "light" else "#22262d"
    return (f"<style>body {{ color: {text}; }} h3 {{ margin: 10px 0 4px 0; font-size: 10pt; }}"
            f" .muted {{ color: {muted}; }} .mono {{ font-family: 'DejaVu Sans Mono', monospace; }}"
            f" table.t {{ border-collapse: collapse; }} table.t td, table.t th {{ border-bottom: 1px solid {border};"
            f" padding: 2px 6px 2px 0; }} table.t th {{ background: {head}; text-align: left; color: {muted};"
            f" font-weight: 600; }} .dyn {{ color: {palette.DYNAMIC[theme]}; font-weight: 600; }}</style>")


def verdict_chip(verdict: str, theme: str) -> str:
    solid, fill, border = palette.verdict_colors(theme).get(verdict, palette.verdict_colors(theme)["unknown"])
    label = translate("Verdicts", palette.VERDICT_LABELS.get(verdict, verdict))
    # white-space: Qt's rich text ignores <td nowrap>, and CJK text may break between any two characters
    return (f"<span style='background:{fill}; color:{border}; font-weight:600; white-space:nowrap'>&nbsp;"
            f"{escape(label)}&nbsp;</span>")


SUMMARY_TO_VERDICT = {"pass": "supported", "risky": "risky", "fail": "unsupported", "unknown": "unknown"}


def _shape_html(shape: list[Any] | None, dynamic: bool) -> str:
    if shape is None:
        return "<span class='muted'>?</span>"
    parts = []
    for d in shape:
        if isinstance(d, int):
            parts.append(str(d))
        else:
            parts.append(f"<span class='dyn'>{escape(str(d) if d is not None else '?')}</span>")
    text = " × ".join(parts) if parts else escape(translate("Details", "scalar"))
    return f"<span class='mono'>[{text}]</span>" + (" <span class='dyn'>◆</span>" if dynamic else "")


def _tensor_rows(graph: GraphData, names: list[str], report: Any) -> str:
    rows = []
    dyn_tensors = getattr(getattr(report, "dynamic", None), "tensors", {}) or {}
    for t in names:
        if not t:
            rows.append("<tr><td class='muted'>" + escape(translate("Details", "(omitted)")) + "</td><td></td><td></td></tr>")
            continue
        info = graph.tensors.get(t)
        dyn = dyn_tensors.get(t)
        tag = (" <span class='muted'>" + escape(translate("Details", "(weight)")) + "</span>"
               if info is not None and info.initializer else "")
        dtype = escape(info.dtype) if info is not None else "?"
        shape = _shape_html(info.shape if info is not None else None, dyn is not None)
        origin = ""
        if dyn is not None and getattr(dyn, "origins", None):
            descs = []
            for oid in dyn.origins[:3]:
                o = report.dynamic.origin(oid)
                descs.append(escape(core_text(o.description) if o is not None else oid))
            origin = ("<br><span class='muted'>"
                      + translate("Details", "dynamic from: {origins}").format(origins="; ".join(descs)) + "</span>")
        rows.append(f"<tr><td class='mono'>{escape(t)}{tag}{origin}</td><td>{dtype}</td><td>{shape}</td></tr>")
    return "".join(rows)


def node_details_html(graph: GraphData, node: GNode, report: Any, target: str | None, theme: str = "light",
                      node_key: str | None = None, extra_html: str = "") -> str:
    """Op, domain, attributes, inputs/outputs with dtypes and shapes, and the verdict for every target.

    ``extra_html`` goes right under the node's name (the inspector puts the profiled time there)."""
    key = node_key or node.name
    out = [_css(theme)]
    title = escape(node.op_type)
    out.append(f"<p style='font-size:13pt; font-weight:600; margin:0'>{title}"
               f" <span class='muted' style='font-size:9pt; font-weight:400'>{escape(node.domain)}</span></p>")
    out.append(f"<p class='mono' style='margin:2px 0 6px 0'>{escape(node.name)}</p>")
    if extra_html:
        out.append(extra_html)
    if node.kind != KIND_OP:
        tensor = (node.outputs or node.inputs or [node.name])[0]
        info = graph.tensors.get(tensor)
        kind = translate("Details", "Graph input") if node.kind == "input" else translate("Details", "Graph output")
        out.append(f"<p>{kind} <span class='mono'>{escape(tensor)}</span></p>")
        if info is not None:
            out.append(f"<p>{escape(info.dtype)} {_shape_html(info.shape, info.symbolic)}</p>")
        return "".join(out)

    if report is not None and report.node_verdicts:
        from studio.verify.effective import effective

        out.append("<h3>" + translate("Details", "Verdict per target") + "</h3><table class='t' width='100%'>")
        for tid in report.node_verdicts:
            eff = effective(report, tid)  # a tool's answer where one ran, said with its source
            v = eff.node_verdicts.get(key, "supported")
            reason = core_text((report.node_reasons.get(tid, {}) or {}).get(key, ""))  # the core's words, translated
            if key in eff.by_node:
                was = eff.overridden.get(key)
                said = translate("Details", " (the profile said {verdict}: {reason})")
                reason = f"{eff.by_node[key]}" + (said.format(verdict=was[0], reason=reason) if was else "")
            mark = "; font-weight:600" if tid == target else ""
            # the reason on its own row under the id and chip: the panel is narrow, and a third column beside two
            # cells that never wrap was left a few characters wide
            out.append(f"<tr><td style='white-space:nowrap{mark}'>{escape(tid)}</td>"
                       f"<td width='100%' style='white-space:nowrap'>{verdict_chip(v, theme)}</td></tr>")
            if reason:
                out.append(f"<tr><td colspan='2' class='muted' style='padding-left:10px'>{escape(reason)}</td></tr>")
        out.append("</table>")
    head = ("<table class='t' width='100%'><tr><th>" + translate("Details", "tensor") + "</th><th>"
            + translate("Details", "dtype") + "</th><th>" + translate("Details", "shape") + "</th></tr>")
    out.append("<h3>" + translate("Details", "Inputs") + "</h3>" + head)
    out.append(_tensor_rows(graph, node.inputs, report) + "</table>")
    out.append("<h3>" + translate("Details", "Outputs") + "</h3>" + head)
    out.append(_tensor_rows(graph, node.outputs, report) + "</table>")
    attrs = node.attributes
    out.append("<h3>" + translate("Details", "Attributes") + "</h3>")
    if attrs:
        out.append("<table class='t' width='100%'>")
        for k, v in attrs.items():
            out.append(f"<tr><td>{escape(k)}</td><td class='mono'>{escape(v)}</td></tr>")
        out.append("</table>")
    else:
        out.append("<p class='muted'>" + translate("Details", "none") + "</p>")
    if node.subgraph_nodes:
        out.append("<h3>" + translate("Details", "Nested graphs") + "</h3><p>"
                   + translate("Details", "{n} nodes inside (verdicts of nested nodes colour this node)").format(
                       n=len(node.subgraph_nodes)) + "</p>")
    return "".join(out)


def stats_html(stats: Any, graph: GraphData | None, report: Any, theme: str = "light") -> str:
    """Model statistics from the report (nodes, op histogram, parameters, bytes, FLOPs, activation memory)."""
    out = [_css(theme)]
    if stats is None:
        return out[0] + "<p class='muted'>" + translate("Details", "No model inspected yet.") + "</p>"
    sub = translate("Details", "({main} in the main graph, {subgraphs} subgraphs)").format(
        main=f"{stats.main_graph_nodes:,}", subgraphs=stats.subgraphs)
    ext = translate("Details", "{size} in {files} file(s), {tensors} tensors").format(
        size=human_bytes(stats.external_data_bytes), files=len(stats.external_data_files),
        tensors=stats.external_tensors)
    rows = [(translate("Details", "Nodes"), f"{stats.nodes:,}" + (f" <span class='muted'>{sub}</span>"
                                                                  if stats.subgraphs else "")),
            (translate("Details", "Parameters"), human_count(stats.parameters) + (f" <span class='muted'>({stats.parameters:,})</span>"
                                                              if stats.parameters >= 1000 else "")),
            (translate("Details", "Initializers"), f"{stats.initializers:,} · {human_bytes(stats.initializer_bytes)}"),
            (translate("Details", "External data"), ext if stats.external_data_files else translate("Details", "none")),
            (translate("Details", "File size"), human_bytes(stats.file_bytes)),
            (translate("Details", "FLOPs (est.)"), human_count(stats.flops) + "FLOP"),
            (translate("Details", "Activations peak"), human_bytes(stats.activation_bytes_peak)),
            (translate("Details", "Activations total"), human_bytes(stats.activation_bytes_total))]
    if report is not None:
        opsets = ", ".join(f"{escape(k)} {v}" for k, v in report.opset_imports.items())
        rows.insert(0, (translate("Details", "Opsets"), opsets))
        rows.insert(1, (translate("Details", "IR / producer"), f"{report.ir_version} · {escape(report.producer or '—')}"))
    out.append("<table class='t' width='100%'>")
    for k, v in rows:
        # the key column as wide as its longest key: a fixed share broke "Parameters" mid-word in a narrow dock
        out.append(f"<tr><td class='muted' style='white-space:nowrap'>{k}</td><td>{v}</td></tr>")
    out.append("</table>")
    if stats.estimate_note:
        out.append(f"<p class='muted'>{escape(core_text(stats.estimate_note))}</p>")  # the core's note, translated
    if stats.inputs:
        out.append("<h3>" + translate("Details", "Inputs") + "</h3><table class='t' width='100%'>")
        for name, d in stats.inputs.items():
            dyn = any(not isinstance(x, int) for x in (d.get("shape") or [None]))
            out.append(f"<tr><td class='mono'>{escape(name)}</td><td>{escape(str(d.get('dtype')))}</td>"
                       f"<td>{_shape_html(d.get('shape'), dyn)}</td></tr>")
        out.append("</table>")
    hist = sorted(stats.op_histogram.items(), key=lambda kv: (-kv[1], kv[0]))
    if hist:
        top = hist[0][1] or 1
        bar = palette.SELECTION[theme]
        out.append("<h3>" + translate("Details", "Operators ({n} types)").format(n=len(hist))
                   + "</h3><table width='100%' cellspacing='0' cellpadding='1'>")
        for op, n in hist[:40]:
            pct = max(1, round(100 * n / top))
            out.append(f"<tr><td width='40%' class='mono'>{escape(op)}</td><td width='12%' align='right'>{n:,}"
                       f"&nbsp;</td><td><table width='{pct}%' cellspacing='0' cellpadding='0'><tr>"
                       f"<td bgcolor='{bar}' height='9'></td></tr></table></td></tr>")
        if len(hist) > 40:
            more = translate("Details", "… {n} more op types").format(n=len(hist) - 40)
            out.append(f"<tr><td class='muted' colspan='3'>{more}</td></tr>")
        out.append("</table>")
    return "".join(out)


def dynamic_html(report: Any, theme: str = "light") -> str:
    out = [_css(theme)]
    dyn = getattr(report, "dynamic", None)
    if dyn is None:
        return out[0]
    if not dyn.origins:
        out.append("<p>" + translate("Details", "All shapes are static.") + "</p>")
        return "".join(out)
    head = translate("Details", "{tensors} tensors have dynamic dims, from {origins} origin(s):").format(
        tensors=f"{len(dyn.tensors):,}", origins=len(dyn.origins))
    out.append(f"<p>{head}</p><table class='t' width='100%'><tr><th>" + translate("Details", "origin") + "</th><th>"
               + translate("Details", "kind") + "</th><th>" + translate("Details", "reaches") + "</th></tr>")
    for o in dyn.origins:
        out.append(f"<tr><td>{escape(core_text(o.description))}</td><td>{escape(o.kind)}</td><td>{o.reaches:,}</td>"
                   "</tr>")
    out.append("</table>")
    return "".join(out)


def changes_html(title: str, diff: Any, theme: str = "light", steps: list[str] | None = None,
                 parity: Any = None) -> str:
    """Before/after of a fix from studio.optimize's AnalysisDiff (per target, dynamic origins, nodes, weights)."""
    ok, bad = ("#1a7f37", "#cf222e") if theme == "light" else ("#3fb950", "#f85149")

    def arrow(a: Any, b: Any, fmt: Any = str) -> str:
        if a == b:
            return fmt(a)
        return f"{fmt(a)} → <b style='color:{ok if b < a else bad}'>{fmt(b)}</b>"

    out = [_css(theme), f"<p style='font-weight:600; font-size:11pt'>{escape(title)}</p>"]
    for step in steps or []:
        out.append(f"<p style='margin:1px 0'>✓ {escape(step)}</p>")
    if parity is not None:
        max_abs, worst = parity.extremes(empty=(float("nan"), float("nan")))
        color = ok if parity.passed else bad
        verdict = translate("Details", "passed") if parity.passed else translate("Details", "FAILED")
        line = translate("Details", "Parity against the original ({precision}, {cases} input cases): {verdict}"
                                    " · max |Δ| {max_abs} · min cosine {cosine}")
        out.append("<p>" + line.format(precision=escape(parity.precision), cases=len(parity.cases),
                                       verdict=f"<b style='color:{color}'>{verdict}</b>", max_abs=f"{max_abs:.2e}",
                                       cosine=f"{worst:.6f}") + "</p>")
        dims = getattr(parity, "dims", None)
        if dims is not None and getattr(parity, "dims_source", ""):  # a fix's parity says what it was fed
            sizes = ", ".join(f"{k}={v}" for k, v in dims.items())
            said = translate("Details", "Parity inputs: {sizes} (--static first, then the model's processor files "
                                        "on the sample image and clip)").format(sizes=escape(sizes)) if sizes else \
                translate("Details", "Parity inputs: default sizes (no --static and no processor files beside "
                                     "the model)")
            out.append(f"<p style='margin:1px 0'>{said}</p>")
    summary = translate("Details", "nodes {nodes} · weights {weights} · dynamic origins {origins}")
    out.append("<p>" + summary.format(
        nodes=arrow(diff.nodes_before, diff.nodes_after),
        weights=arrow(diff.initializer_bytes_before, diff.initializer_bytes_after, human_bytes),
        origins=arrow(len(diff.dynamic_before), len(diff.dynamic_after))) + "</p>")
    heads = (translate("Details", "target"), translate("Details", "verdict"), translate("Details", "unsupported"),
             translate("Details", "risky"), translate("Details", "resolved"), translate("Details", "new"))
    out.append("<table class='t' width='100%'><tr>" + "".join(f"<th>{h}</th>" for h in heads) + "</tr>")
    order = {"pass": 0, "unknown": 1, "risky": 2, "fail": 3}
    said = {"pass": translate("Details", "pass"), "unknown": translate("Details", "unknown"),
            "risky": translate("Details", "risky"), "fail": translate("Details", "fail")}
    for tid, d in diff.targets.items():
        va, vb = d.before, d.after
        ta, tb = escape(said.get(va, va)), escape(said.get(vb, vb))
        vtxt = ta if va == vb else (f"{ta} → <b style='color:{ok if order.get(vb, 9) < order.get(va, 9) else bad}'>"
                                    f"{tb}</b>")
        u = arrow(d.counts_before.get("unsupported", 0), d.counts_after.get("unsupported", 0))
        r = arrow(d.counts_before.get("risky", 0), d.counts_after.get("risky", 0))
        out.append(f"<tr><td>{escape(tid)}</td><td>{vtxt}</td><td>{u}</td><td>{r}</td>"
                   f"<td style='color:{ok}'>{len(d.resolved) or ''}</td>"
                   f"<td style='color:{bad}'>{len(d.introduced) or ''}</td></tr>")
    out.append("</table>")
    resolved = sorted({m for d in diff.targets.values() for m in d.resolved})
    introduced = sorted({m for d in diff.targets.values() for m in d.introduced})
    for label, items, color in ((translate("Details", "Resolved"), resolved, ok),
                                (translate("Details", "New"), introduced, bad)):
        if items:
            out.append(f"<h3 style='color:{color}'>{label} ({len(items)})</h3>")
            for m in items[:12]:
                out.append(f"<p style='margin:1px 0' class='muted'>• {escape(m)}</p>")
            if len(items) > 12:
                out.append("<p class='muted'>" + translate("Details", "… {n} more").format(n=len(items) - 12) + "</p>")
    return "".join(out)
