"""Renderers of one DiffReport: text (terminal, CI logs), JSON and a self-contained HTML page."""

from __future__ import annotations

import html
from typing import Any

from studio.core.catalogue import N_, _, tr
from studio.core.errors import InputError
from studio.diff.report import (
    ADDED,
    CHANGED,
    REMOVED,
    DiffReport,
    FieldChange,
    NodeChange,
    TensorChange,
    summary_message,
)

FORMATS = ("text", "json", "html")
TEXT_LIMIT = 400  # node lines in text; JSON always has every change
HTML_LIMIT = 5000
MARK = {ADDED: "+", REMOVED: "-", CHANGED: "~"}
# how nodes were matched (studio.diff.match), as the text report's summary says it
METHOD_WORDS = {"name": N_("name"), "tensor": N_("tensor"), "neighbours": N_("neighbours"),
                "signature": N_("signature")}


def render(report: DiffReport, fmt: str = "text") -> str:
    if fmt == "json":
        return report.to_json() + "\n"
    if fmt == "text":
        return render_text(report)
    if fmt == "html":
        return render_html(report)
    raise InputError(f"unknown format '{fmt}'", offending=fmt, hint=f"use one of {', '.join(FORMATS)}")


def _v(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return "[" + ", ".join("?" if d is None else str(d) for d in value) + "]"
    return str(value)


def field_text(c: FieldChange) -> str:
    if c.kind in ("op_type", "domain", "verdict"):
        return f"{c.kind} {_v(c.a)} -> {_v(c.b)}"
    return f"{c.kind} {c.what}: {_v(c.a)} -> {_v(c.b)}"


def node_title(n: NodeChange) -> str:
    if n.status == ADDED:
        return f"{n.b} ({n.op_b})"
    if n.status == REMOVED:
        return f"{n.a} ({n.op_a})"
    op = n.op_a if n.op_a == n.op_b else f"{n.op_a} -> {n.op_b}"
    return f"{n.a} ({op})" + ("" if n.a == n.b else f" = B {n.b}")


def tensor_text(t: TensorChange) -> str:
    if t.status == ADDED:
        return f"{t.dtype_b} {_v(t.shape_b)}"
    if t.status == REMOVED:
        return f"{t.dtype_a} {_v(t.shape_a)}"
    return f"{t.dtype_a} {_v(t.shape_a)} -> {t.dtype_b} {_v(t.shape_b)}"


def render_text(r: DiffReport, limit: int = TEXT_LIMIT) -> str:
    """The terminal report in the user's language (studio.core.catalogue): the summary, labels and notes
    translated; node and tensor names, ops, dtypes, shapes and the change kinds (the JSON's ids) as they are."""
    s = r.summary
    lines = ["A: " + tr("{model} ({count} nodes)", model=r.model_a, count=s.nodes_a),
             "B: " + tr("{model} ({count} nodes)", model=r.model_b, count=s.nodes_b)]
    if r.target:
        lines.append(tr("verdicts for target: {target}", target=r.target))
    lines.append(summary_message(s, r.has_changes, tr) if r.summary.message else "")
    by = ", ".join(f"{_(METHOD_WORDS.get(k, k))} {v}" for k, v in s.matched_by.items())
    lines.append(tr("  matched {matched} ({by}); unchanged {unchanged}, changed {changed} ({wiring} op / attribute / "
                    "wiring, {shapes} shapes only), added {added} (in B only), removed {removed} (in A only)",
                    matched=s.matched, by=by or _("none"), unchanged=s.unchanged, changed=s.changed,
                    wiring=s.changed - s.changed_shape_only, shapes=s.changed_shape_only, added=s.added,
                    removed=s.removed))
    if s.changed_by_kind:
        lines.append(tr("  changed by kind: {kinds}", kinds=", ".join(f"{k} {v}" for k, v in s.changed_by_kind.items())))
    lines += [tr("  note: {note}", note=_(n)) for n in r.notes]
    if r.tensors:
        lines += ["", _("graph inputs, outputs and initializers:")]
        lines += [f"  {MARK[t.status]} {t.section} {t.name}: {tensor_text(t)}" for t in r.tensors[:limit]]
        if len(r.tensors) > limit:
            lines.append(tr("  ... {count} more (use --format json for all)", count=len(r.tensors) - limit))
    if r.nodes:
        lines += ["", _("nodes:")]
        for n in r.nodes[:limit]:
            verdict = ""
            if n.status == ADDED and n.verdict_b:
                verdict = f"  [{n.verdict_b}]"
            elif n.status == REMOVED and n.verdict_a:
                verdict = f"  [{n.verdict_a}]"
            lines.append(f"  {MARK[n.status]} {node_title(n)}{verdict}")
            lines += [f"      {field_text(c)}" for c in n.changes]
        if len(r.nodes) > limit:
            lines.append(tr("  ... {count} more nodes (use --format json for all)", count=len(r.nodes) - limit))
    return "\n".join(lines) + "\n"


_CSS = """body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;font-size:13px;vertical-align:top}th{background:#f3f3f3}
.added{background:#d9f2d9}.removed{background:#f8d0d0}.changed{background:#fff1c2}.unrelated{color:#a00}
code{font-size:12px}ul{margin:0;padding-left:1.2em}"""


def render_html(r: DiffReport, limit: int = HTML_LIMIT) -> str:
    e = html.escape
    s = r.summary
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>Diff: {e(r.model_a)} vs {e(r.model_b)}"
           f"</title><style>{_CSS}</style></head><body>",
           f"<h1>Model diff</h1><p>A: <code>{e(r.model_a)}</code> ({s.nodes_a} nodes)<br>"
           f"B: <code>{e(r.model_b)}</code> ({s.nodes_b} nodes)"
           + (f"<br>verdicts for target <code>{e(r.target)}</code>" if r.target else "") + "</p>",
           f"<p class='{'unrelated' if s.unrelated else ''}'><b>{e(s.message)}</b></p>",
           "<table>"]
    rows = [("matched", f"{s.matched} (" + ", ".join(f"{k} {v}" for k, v in s.matched_by.items()) + ")"),
            ("unchanged", s.unchanged), ("changed", s.changed), ("added", s.added), ("removed", s.removed),
            ("changed by kind", ", ".join(f"{k} {v}" for k, v in s.changed_by_kind.items()) or "-")]
    out += [f"<tr><th>{e(k)}</th><td>{e(str(v))}</td></tr>" for k, v in rows]
    out.append("</table>")
    out += [f"<p>note: {e(n)}</p>" for n in r.notes]
    if r.tensors:
        out.append("<h2>Graph inputs, outputs and initializers</h2><table><tr><th></th><th>section</th>"
                   "<th>name</th><th>A</th><th>B</th></tr>")
        for t in r.tensors[:limit]:
            out.append(f"<tr class='{t.status}'><td>{t.status}</td><td>{e(t.section)}</td><td><code>{e(t.name)}"
                       f"</code></td><td>{e(_v(t.dtype_a))} {e(_v(t.shape_a))}</td>"
                       f"<td>{e(_v(t.dtype_b))} {e(_v(t.shape_b))}</td></tr>")
        out.append("</table>")
    out.append(f"<h2>Nodes ({len(r.nodes)} added, removed or changed)</h2>")
    if len(r.nodes) > limit:
        out.append(f"<p>first {limit} shown; the JSON report has all {len(r.nodes)}</p>")
    out.append("<table><tr><th></th><th>A</th><th>B</th><th>op</th><th>matched by</th><th>what changed</th></tr>")
    for n in r.nodes[:limit]:
        op = n.op_a or n.op_b if n.op_a == n.op_b or not (n.op_a and n.op_b) else f"{n.op_a} -> {n.op_b}"
        what = "".join(f"<li>{e(field_text(c))}</li>" for c in n.changes)
        out.append(f"<tr class='{n.status}'><td>{n.status}</td><td><code>{e(n.a or '')}</code></td>"
                   f"<td><code>{e(n.b or '')}</code></td><td>{e(op)}</td><td>{e(n.matched_by)}</td>"
                   f"<td>{'<ul>' + what + '</ul>' if what else ''}</td></tr>")
    out.append("</table></body></html>\n")
    return "\n".join(out)
