"""Renderers of one InspectionReport: text (terminal), JSON, self-contained HTML and SARIF 2.1.0."""

from __future__ import annotations

import json
from typing import Any

from studio.core.catalogue import N_, _, tr
from studio.core.columns import cell
from studio.core.units import human_bytes
from studio.inspect.report import InspectionReport

FORMATS = ("text", "json", "html", "sarif")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
RULE_TEXT = {
    "op-unsupported": "Operator not supported by the target",
    "op-unlisted": "Operator not in the target's published list",
    "op-unknown": "Target support unknown (no public operator list)",
    "op-risky": "Operator listed as supported but known to misbehave",
    "op-version": "Operator version outside the target's implemented range",
    "op-dtype": "No kernel for the operator's input dtype",
    "cpu-fallback": "Operator falls back to the CPU",
    "domain-unsupported": "Operator domain not handled by the target",
    "domain-policy": "Operator domain not declared for this project",
    "constraint-const-input": "Input must be a constant",
    "constraint-attr": "Attribute value not accepted",
    "constraint-batch": "Target needs batch 1",
    "constraint-dtype": "Input dtype not accepted",
    "constraint-rank": "Tensor rank too high",
    "constraint-static": "Tensor must have a static shape",
    "constraint-empty": "Input must not be empty",
    "host-placement": "Node runs on the host (the toolchain's whole-graph placement)",
    "dynamic-shape": "Dynamic shape the target cannot handle",
    "opset": "Model opset outside the target's range",
    "dtype-int64": "INT64 tensors",
    "dtype-double": "DOUBLE tensors",
    "shape-inference": "ONNX shape inference failed",
    "boundary": "Split-model boundary tensors disagree",
}
# the text report's words for a target's verdict and a finding's severity (translated where shown)
VERDICT_WORDS = {"pass": N_("PASS"), "risky": N_("RISKY"), "fail": N_("FAIL"), "unknown": N_("UNKNOWN")}
SEVERITY_WORDS = {"error": N_("ERROR"), "warning": N_("WARNING"), "note": N_("NOTE")}
VERDICT_NAMES = {"pass": N_("pass"), "risky": N_("risky"), "fail": N_("fail"), "unknown": N_("unknown")}



def verdict_name(verdict: str) -> str:
    """A target verdict (pass, risky, fail, unknown) in the user's language."""
    return _(VERDICT_NAMES.get(verdict, verdict))

def render(report: InspectionReport, fmt: str = "text", *, target: str | None = None) -> str:
    if fmt == "json":
        return report.to_json()
    if fmt == "text":
        return render_text(report, target=target)
    if fmt == "html":
        return render_html(report)
    if fmt == "sarif":
        return json.dumps(to_sarif(report), indent=2)
    from studio.core.errors import InputError

    raise InputError(f"unknown format '{fmt}'", offending=fmt, hint=f"use one of {', '.join(FORMATS)}")


def _count(n: float) -> str:
    for prefix, f in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= f:
            return f"{n / f:.2f}{prefix}"
    return str(int(n))


def render_text(r: InspectionReport, *, target: str | None = None, max_per_target: int = 25) -> str:
    """The terminal report, in the user's language (studio.core.catalogue): headings, verdict words and the
    fixed sentences translated; ids, op names, numbers and paths as they are; English byte-for-byte as before."""
    s = r.stats
    ext = (tr(" ({size} external in {files})", size=human_bytes(s.external_data_bytes),
              files=", ".join(s.external_data_files)) if s.external_data_bytes else "")
    lines = [tr("model: {model}", model=r.model),
             tr("  opsets: {opsets}   IR {ir}   producer: {producer}",
                opsets=", ".join(f"{d} {v}" for d, v in r.opset_imports.items()), ir=r.ir_version,
                producer=r.producer or "-"),
             tr("  nodes: {nodes} ({main} main, {nested} nested graphs)   params: {params}   initializers: {size}",
                nodes=s.nodes, main=s.main_graph_nodes, nested=s.subgraphs, params=_count(s.parameters),
                size=human_bytes(s.initializer_bytes)) + ext,
             tr("  est. FLOPs: {flops}   activations: peak {peak}", flops=_count(s.flops),
                peak=human_bytes(s.activation_bytes_peak))
             + (tr("   for {shapes}", shapes=s.input_shapes) if s.input_shapes else "")
             + (f"   ({_(s.estimate_note)})" if s.estimate_note else ""),
             tr("  shape inference: {status}", status=_(r.shape_inference))]
    top = ", ".join(f"{k} {v}" for k, v in list(s.op_histogram.items())[:8])
    lines.append(tr("  ops: {ops}", ops=top) + (" ..." if len(s.op_histogram) > 8 else ""))
    d = r.dynamic
    if d.is_static:
        lines.append(_("dynamic dims: none (all shapes static)"))
    else:
        lines.append(tr("dynamic dims: {tensors} tensors depend on {origins} origin(s)", tensors=len(d.tensors),
                        origins=len(d.origins)))
        for o in d.origins[:20]:
            lines.append(f"  - [{o.kind}] " + tr("{description} -> reaches {count} tensors",
                                                 description=_op_text(o.op_type, o.description),
                                                 count=o.reaches))
        if len(d.origins) > 20:
            lines.append(tr("  ... {count} more origins", count=len(d.origins) - 20))
    lines.append("")
    lines.append(" ".join((cell(_("target"), 14), cell(_("verdict"), 8), cell(_("supported"), 9, True),
                           cell(_("risky"), 6, True), cell(_("unsupp."), 7, True), cell(_("unknown"), 7, True),
                           " " + _("name"))))
    for t in r.targets.values():
        if target and t.id != target:
            continue
        c = t.counts
        lines.append(f"{t.id:14} {cell(_(VERDICT_WORDS.get(t.verdict, t.verdict.upper())), 8)} "
                     f"{c.get('supported', 0):9} {c.get('risky', 0):6} "
                     f"{c.get('unsupported', 0):7} {c.get('unknown', 0):7}  {t.name}")
    lines += _model_lines(r, target)
    policy = [f for f in r.findings if f.target == "*"]
    if policy:
        lines += ["", _("all targets:")]
        lines += [_finding_line(f) for f in policy]
    for t in r.targets.values():
        if target and t.id != target:
            continue
        fs = [f for f in r.findings if f.target == t.id]
        if not fs:
            continue
        order = {"error": 0, "warning": 1, "note": 2}
        fs.sort(key=lambda f: order.get(f.severity, 3))
        lines += ["", f"{t.id} ({verdict_name(t.verdict)}):"]
        lines += [_finding_line(f) for f in fs[:max_per_target]]
        if len(fs) > max_per_target:
            lines.append(tr("  ... {count} more findings (use --format json for all)", count=len(fs) - max_per_target))
    bad = [b for b in r.boundaries if b.status != "ok"]
    if r.boundaries:
        lines += ["", tr("split-model boundaries: {checked} checked, {problems} problems", checked=len(r.boundaries),
                         problems=len(bad))]
        lines += [f"  - [{b.status}] {_(b.message)}" for b in bad]
    return "\n".join(lines) + "\n"


def _model_lines(r: InspectionReport, target: str | None) -> list[str]:
    """The whole-model verdict of each target (from the profiles), and which targets a tool here can verify."""
    rows = [t for t in r.targets.values() if t.model is not None and (not target or t.id == target)]
    if not rows:
        return []
    out = ["", _("whole model (static: the profiles' model of each toolchain):")]
    for t in rows:
        assert t.model is not None
        out.append(f"  {t.id:12} {t.model.summary()}")
    can = {tid: [e for e in es if e.get("ok")] for tid, es in (r.verifiers or {}).items()}
    here = [f"{tid} ({', '.join(e['reason'] for e in es)})" for tid, es in can.items() if es]
    if here and not r.verification:
        out.append(tr("  verifiers installed here: {verifiers}: add --verify to ask them (tools that build at static "
                      "shapes also need --shape NAME=DIMS for dynamic inputs)", verifiers="; ".join(here)))
    return out


def _finding_line(f: Any) -> str:
    where = f.node or f.tensor or ""
    if f.count > 1:
        where += tr(" (+{count} more)", count=f.count - 1)
    sub = tr("  [in {subgraph}]", subgraph=f.subgraph) if f.subgraph else ""
    line = (f"  {cell(_(SEVERITY_WORDS.get(f.severity, f.severity.upper())), 7)} {cell(_(f.verdict), 11)} "
            f"{where}{sub}: "
            f"{finding_message(f)}")
    if f.hint:
        line += "\n          " + tr("hint: {hint}", hint=_(f.hint))
    return line


def finding_message(f: Any) -> str:
    """A finding's message in the user's language, for every view (this report, the Inspector's findings): the
    core's words translated through its template, a target profile's sentence inside it (its ``{reason}`` /
    ``{why}``) through its own entry: a shipped profile's is in the catalogue, a user's stays as written."""
    return _op_text(f.op_type, f.message)


def _op_text(op_type: str | None, text: str) -> str:
    """A node's text reads ``"{op}: {reason}"``: the reason translated on its own (its entry or template)."""
    op = f"{op_type}: " if op_type else ""
    return op + _(text[len(op):]) if op and text.startswith(op) else _(text)


def to_sarif(r: InspectionReport) -> dict[str, Any]:
    from studio import __version__

    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    results = []
    uri = r.model
    for f in r.findings:
        if f.rule not in index:
            index[f.rule] = len(rules)
            rules.append({"id": f.rule, "name": f.rule.replace("-", " ").title().replace(" ", ""),
                          "shortDescription": {"text": RULE_TEXT.get(f.rule, f.rule)},
                          "defaultConfiguration": {"level": f.severity if f.severity in ("error", "warning", "note")
                                                   else "warning"}})
        loc: dict[str, Any] = {"physicalLocation": {"artifactLocation": {"uri": uri}}}
        if f.node or f.tensor:
            name = f.node or f.tensor
            loc["logicalLocations"] = [{"name": name.rsplit("/", 1)[-1], "fullyQualifiedName": name,
                                        "kind": "member" if f.node else "variable"}]
        text = f"[{f.target}] {f.message}" + (f" Hint: {f.hint}" if f.hint else "")
        results.append({"ruleId": f.rule, "ruleIndex": index[f.rule],
                        "level": f.severity if f.severity in ("error", "warning", "note") else "warning",
                        "message": {"text": text}, "locations": [loc],
                        "properties": {"target": f.target, "verdict": f.verdict, "opType": f.op_type,
                                       "domain": f.domain, "subgraph": f.subgraph, "nodes": f.nodes[:200],
                                       "count": f.count}})
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0",
            "runs": [{"tool": {"driver": {"name": "studio-inspect", "version": __version__,
                                          "informationUri": "https://example.invalid/deployment-studio",
                                          "rules": rules}},
                      "artifacts": [{"location": {"uri": uri}}],
                      "results": results,
                      "properties": {"targets": {k: v.verdict for k, v in r.targets.items()}}}]}


_CSS = """body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;font-size:13px}th{background:#f3f3f3}
.pass{background:#d9f2d9}.risky{background:#fff1c2}.fail{background:#f8d0d0}.unknown{background:#e4e4ee}
.error{color:#a00}.warning{color:#8a6d00}.note{color:#555}code{font-size:12px}"""


def render_html(r: InspectionReport) -> str:
    import html  # here: the JSON and text paths do without its entity tables (2 ms of import)

    e = html.escape
    s = r.stats
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>Inspection: {e(r.model)}</title>"
           f"<style>{_CSS}</style></head><body>",
           f"<h1>Inspection of <code>{e(r.model)}</code></h1>",
           "<table>",
           *(f"<tr><th>{e(k)}</th><td>{e(str(v))}</td></tr>" for k, v in (
               ("opsets", ", ".join(f"{d} {v}" for d, v in r.opset_imports.items())),
               ("nodes", f"{s.nodes} ({s.main_graph_nodes} main graph, {s.subgraphs} nested graphs)"),
               ("parameters", _count(s.parameters)), ("initializers", human_bytes(s.initializer_bytes)),
               ("external data", f"{human_bytes(s.external_data_bytes)} in {', '.join(s.external_data_files) or '-'}"),
               ("estimated FLOPs", _count(s.flops)), ("peak activations", human_bytes(s.activation_bytes_peak)),
               ("estimate note", s.estimate_note or "-"), ("shape inference", r.shape_inference))),
           "</table><h2>Targets</h2><table><tr><th>target</th><th>verdict</th><th>whole model</th>"
           "<th>supported</th><th>risky</th><th>unsupported</th><th>unknown</th><th>source</th></tr>"]
    held = (r.verification or {}).get("targets", {})
    for t in r.targets.values():
        c = t.counts
        mv = held.get(t.id, {}).get("verified") if held.get(t.id, {}).get("holds") == "verified" else None
        whole = (f"{mv['verdict']} [verified: {mv['by']}]" if mv else
                 f"{t.model.summary()} [static]" if t.model is not None else "")
        out.append(f"<tr class='{e(t.verdict)}'><td>{e(t.id)}</td><td>{e(t.verdict)}</td><td>{e(whole)}</td>"
                   f"<td>{c.get('supported', 0)}</td><td>{c.get('risky', 0)}</td><td>{c.get('unsupported', 0)}</td>"
                   f"<td>{c.get('unknown', 0)}</td><td>{e(t.source)}</td></tr>")
    out.append("</table><h2>Dynamic dims</h2>")
    if r.dynamic.is_static:
        out.append("<p>All shapes are static.</p>")
    else:
        out.append("<table><tr><th>origin</th><th>kind</th><th>reaches</th></tr>")
        out += [f"<tr><td>{e(o.description)}</td><td>{e(o.kind)}</td><td>{o.reaches}</td></tr>"
                for o in r.dynamic.origins]
        out.append("</table>")
    out.append(f"<h2>Findings ({len(r.findings)})</h2><table><tr><th>target</th><th>severity</th><th>verdict</th>"
               "<th>node</th><th>op</th><th>message</th><th>hint</th></tr>")
    for f in r.findings:
        node = (f.node or f.tensor or "") + (f" (+{f.count - 1})" if f.count > 1 else "")
        out.append(f"<tr><td>{e(f.target)}</td><td class='{e(f.severity)}'>{e(f.severity)}</td><td>{e(f.verdict)}</td>"
                   f"<td><code>{e(node)}</code></td><td>{e(f.op_type or '')}</td><td>{e(f.message)}</td>"
                   f"<td>{e(f.hint)}</td></tr>")
    out.append("</table><h2>Operators</h2><table><tr><th>op</th><th>count</th></tr>")
    out += [f"<tr><td>{e(k)}</td><td>{v}</td></tr>" for k, v in s.op_histogram.items()]
    out.append("</table></body></html>\n")
    return "\n".join(out)
