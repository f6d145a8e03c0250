"""`inspect --verify`: run every usable verifier for the report's targets and put the answers beside the profile's.

The result lands in ``InspectionReport.verification`` (plain JSON data) so every renderer and the GUI read one
object; ``text`` renders the CLI section, where every verdict names its source: the tool and version, or the
profile and the list it was transcribed from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.verify.api import VerifyResult
from studio.verify.compare import Comparison, compare
from studio.verify.registry import VerifierEntry, all_verifiers, broken_plugins


@dataclass
class Verification:
    """All verifier runs on one model: which verifiers exist for its targets, what each said, the comparisons."""

    entries: list[VerifierEntry] = field(default_factory=list)
    results: list[VerifyResult] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    broken: list[tuple[str, str]] = field(default_factory=list)  # (plugin, error) whose manifest failed
    unverified: list[str] = field(default_factory=list)  # targets no verifier covers

    def to_dict(self) -> dict[str, Any]:
        return {"verifiers": [e.to_dict() for e in self.entries],
                "results": [r.to_dict() for r in self.results],
                "comparisons": [c.to_dict() for c in self.comparisons],
                "broken_plugins": [{"plugin": p, "error": e} for p, e in self.broken],
                "unverified_targets": list(self.unverified)}


def verify_report(report: Any, model: Path | str, *, shapes: dict[str, list[int]] | None = None,
                  job: Any = None, entries: list[VerifierEntry] | None = None) -> Verification:
    """Run the usable verifiers of ``report``'s targets on ``model``; attach and return the result."""
    entries = all_verifiers() if entries is None else entries
    targets = list(report.targets)
    mine = [e for e in entries if e.target in targets or not e.target]
    out = Verification(entries=mine, broken=broken_plugins())
    out.unverified = [t for t in targets if not any(e.target == t for e in mine)]
    usable = [e for e in mine if e.ok and e.verifier is not None]
    for i, e in enumerate(usable):
        if job is not None:
            job.check_cancelled()
            job.set_status(f"verifying with {e.name} ({e.reason})")
            job.set_progress(100 * i / max(len(usable), 1))
        try:
            res = e.verifier.verify(Path(model), shapes)
        except Exception as exc:  # a verifier that breaks is reported, the others still run
            res = VerifyResult(verifier=e.name, target=e.target, tool=e.reason, ran=False,
                               error=f"verifier failed: {type(exc).__name__}: {exc}")
        out.results.append(res)
        out.comparisons.append(compare(report, res))
    report.verification = out.to_dict()
    return out


def gate_verdicts(report: Any) -> set[str]:
    """Finding verdicts for the --fail-on gate, where a tool that ran replaces its target's unsupported-ness."""
    comps = [c for c in report.verification.get("comparisons", []) if c.get("ran")]
    verified = {c["target"] for c in comps}
    verdicts = {f.verdict for f in report.findings
                if f.target not in verified or f.verdict != "unsupported"}
    if any(c["tool_fails"] for c in comps):
        verdicts.add("unsupported")
    return verdicts


def fails_on(report: Any, level: str) -> bool:
    """``InspectionReport.fails_on`` with the tools' answers winning where they ran."""
    if level == "dynamic" or not report.verification:
        return bool(report.fails_on(level))
    v = gate_verdicts(report)
    wanted = {"unsupported": {"unsupported"}, "risky": {"unsupported", "risky"},
              "unknown": {"unsupported", "risky", "unknown"}}[level]
    return bool(v & wanted)


def _fmt_node(d: dict[str, Any]) -> str:
    return (f"    {d['node']} ({d['op_type']}): profile says {d['static_verdict']}"
            + (f" ({d['static_reason']})" if d["static_reason"] else "")
            + f"; tool says {d['tool_verdict']}" + (f": {d['tool_message'][:300]}" if d["tool_message"] else ""))


def text(report: Any, max_nodes: int = 25) -> str:
    """The CLI section: per target, the tool (and version) against the profile (and its source)."""
    v = report.verification
    if not v:
        return ""
    lines = ["", "verification with the real toolchains (the tool wins where it disagrees with the profile):"]
    by_target: dict[str, list[dict[str, Any]]] = {}
    for c in v["comparisons"]:
        by_target.setdefault(c["target"], []).append(c)
    for e in v["verifiers"]:
        if not e["ok"]:
            where = f" for {e['target']}" if e["target"] else ""
            lines.append(f"  {e['name']}{where}: unavailable: {e['reason']}")
    for p in v.get("broken_plugins", []):
        lines.append(f"  plugin {p['plugin']}: failed to load: {p['error']}")
    for target, comps in by_target.items():
        for c in comps:
            profile = f"profile '{c['profile_source']}'"
            head = f"  {target}: {c['verifier']} ({c['tool']})"
            if not c["ran"]:
                lines.append(f"{head}: could not run: {c['error'][:400]}")
                continue
            said = "refuses the model" if c["tool_fails"] else "accepts the model"
            agree = "agrees with" if c["agrees"] and not c["disagreements"] else "DISAGREES with"
            lines.append(f"{head} {said}; {agree} the {profile} ({'fail' if c['static_fails'] else 'no failure'})")
            if c["error"]:
                lines.append(f"    tool error: {c['error'][:400]}")
            refused = [n for r in v["results"] if r["verifier"] == c["verifier"] for n in r["nodes"]
                       if n["verdict"] == "unsupported"]
            shown = {d["node"] for d in c["disagreements"]}
            for n in [n for n in refused if n["node"] not in shown][:max_nodes]:
                lines.append(f"    {n['node']} ({n['op_type']}): both refuse it; tool: {n['message'][:300]}")
            for d in c["disagreements"][:max_nodes]:
                lines.append(_fmt_node(d))
            if len(c["disagreements"]) > max_nodes:
                lines.append(f"    ... {len(c['disagreements']) - max_nodes} more (use --format json for all)")
            for n in c["notes"]:
                lines.append(f"    note: {n}")
    for t in v.get("unverified_targets", []):
        summary = report.targets.get(t)
        src = f"{summary.name}: {summary.source}" if summary is not None else t
        lines.append(f"  {t}: no verifier; verdicts are from the list ({src})")
    return "\n".join(lines) + "\n"
