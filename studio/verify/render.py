"""The CLI section of `inspect --verify`: per target the tool's whole-model verdict (and version) beside the
profile's (and its source), which host nodes each side names, and what a tool that crashed or could not run
said; every line says whose verdict it is. In the user's language (studio.core.catalogue): the fixed words and a
verifier's notes and errors translated, a tool's own message as it came."""

from __future__ import annotations

from typing import Any

from studio.core.catalogue import _, tr
from studio.inspect.model_verdict import ModelVerdict


def _fmt_node(d: dict[str, Any]) -> str:
    return (f"    {d['node']} ({d['op_type']}): " + tr("profile says {verdict}", verdict=_(d["static_verdict"]))
            + (f" ({_(d['static_reason'])[:200]})" if d["static_reason"] else "")
            + "; " + tr("tool says {verdict}", verdict=_(d["tool_verdict"]))
            + (f": {d['tool_message'][:300]}" if d["tool_message"] else ""))


def _host_lines(static: dict[str, Any], tool: dict[str, Any], max_nodes: int) -> list[str]:
    """Host-placed nodes, each tagged with who places it there: [verified], [static] or [both]."""
    s = {h["node"]: h for h in static.get("host_nodes", [])}
    t = {h["node"]: h for h in tool.get("host_nodes", [])}
    keys = list(t) + [k for k in s if k not in t]
    if not keys:
        return []
    out = ["    " + _("host nodes ([verified] the tool, [static] the profile, [both]):")]
    for k in keys[:max_nodes]:
        tag = "both" if k in s and k in t else "verified" if k in t else "static"
        h = t.get(k) or s[k]
        out.append(f"      [{tag}] {k} ({h['op_type']}): {_(h['reason'])[:160]}")
    if len(keys) > max_nodes:
        out.append("      " + tr("... {count} more (use --format json for all)", count=len(keys) - max_nodes))
    return out


def _crash_lines(c: dict[str, Any], static: str) -> list[str]:
    tool = ModelVerdict.from_dict(c["tool_model"])
    trace = [ln for ln in tool.crash.strip().splitlines() if ln.strip()]
    lines = [f"  {c['target']}: {c['verifier']} ({c['tool']}) " + tr(
        "CRASHED: a fault of the tool, not a verdict on the model: {error}",
        error=_(c["error"])[:300] or (trace[-1] if trace else ""))]
    lines += ["    " + tr("trace: {line}", line=ln[:200]) for ln in trace[-6:]]
    lines.append("    " + tr("static verdict kept: {verdict}", verdict=static))
    return lines


def text(report: Any, max_nodes: int = 25) -> str:
    """The CLI section: per target, the tool (and version) against the profile (and its source)."""
    v = report.verification
    if not v:
        return ""
    lines = ["", _("verification with the real toolchains (a tool's verdict overrides the profile's where it ran):")]
    for e in v["verifiers"]:
        if not e["ok"]:
            where = tr(" for {target}", target=e["target"]) if e["target"] else ""
            lines.append(f"  {e['name']}{where}: " + tr("unavailable: {reason}; the static verdict is kept",
                                                       reason=_(e["reason"])))
    for p in v.get("broken_plugins", []):
        lines.append("  " + tr("plugin {name}: failed to load: {error}", name=p["plugin"], error=p["error"]))
    results = {r["verifier"]: r for r in v["results"]}
    for c in v["comparisons"]:
        static_mv = ModelVerdict.from_dict(c["static_model"]) if c.get("static_model") else None
        static = static_mv.summary() if static_mv else _("(no static verdict)")
        if c.get("tool_crashed"):
            lines += _crash_lines(c, static)
            continue
        head = f"  {c['target']}: {c['verifier']} ({c['tool']})"
        if not c["ran"] and not c.get("tool_model", {}).get("blockers"):
            lines.append(f"{head}: " + tr("could not run: {error}; the static verdict is kept: {verdict}",
                                          error=_(c["error"])[:400], verdict=static))
            continue
        tool_mv = ModelVerdict.from_dict(c["tool_model"])
        agrees = c.get("model_agrees") and not c["disagreements"]
        source = c["profile_source"]
        lines.append(head + " " + (
            (tr("refuses the model; agrees with the profile '{source}'", source=source) if agrees else
             tr("refuses the model; DISAGREES with the profile '{source}'", source=source))
            if tool_mv.builds is False else
            (tr("accepts the model; agrees with the profile '{source}'", source=source) if agrees else
             tr("accepts the model; DISAGREES with the profile '{source}'", source=source))))
        lines.append(f"    [verified] {tool_mv.summary()}")
        lines.append(f"    [static]   {static}")
        lines += _host_lines(c["static_model"], c["tool_model"], max_nodes)
        refused = [n for n in results.get(c["verifier"], {}).get("nodes", []) if n["verdict"] == "unsupported"]
        shown = {d["node"] for d in c["disagreements"]}
        for n in [n for n in refused if n["node"] not in shown][:max_nodes]:
            lines.append(f"    {n['node']} ({n['op_type']}): " + tr("both refuse it; tool: {message}",
                                                                       message=n["message"][:300]))
        for d in c["disagreements"][:max_nodes]:
            lines.append(_fmt_node(d))
        if len(c["disagreements"]) > max_nodes:
            lines.append("    " + tr("... {count} more (use --format json for all)",
                                      count=len(c["disagreements"]) - max_nodes))
        if c["error"] and not refused:
            lines.append("    " + tr("tool error: {error}", error=_(c["error"])[:400]))
        for n in c["notes"]:
            lines.append("    " + tr("note: {note}", note=_(n)))
    for t in v.get("unverified_targets", []):
        summary = report.targets.get(t)
        src = f"{summary.name}: {summary.source}" if summary is not None else t
        lines.append(f"  {t}: " + tr("no verifier; verdicts are from the list ({source}): the static verdict is kept",
                                     source=src))
    return "\n".join(lines) + "\n"
