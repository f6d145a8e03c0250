"""The verdicts a report stands by on one target once a tool has answered: "the tool wins" made concrete.

``InspectionReport.verification["targets"][t]`` (studio.verify.run.merged) keeps both views: the profile's and
the tool's, and per node which holds. Everything that shows a verdict (the inspector's chip, graph colours,
findings, the CLI summary) reads it through :func:`effective`, so a tool that built the model the profile
called FAIL changes the chip, the colours and the findings it covers at once, each with its source. Qt-free.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from studio.inspect.model_verdict import ModelVerdict


@dataclass
class Effective:
    """One target's verdicts as they stand: per node, the whole model, and who said each."""

    target: str
    node_verdicts: dict[str, str]  # node key -> supported | risky | unsupported | unknown
    model: ModelVerdict | None  # the whole-model verdict that holds (the tool's where it ran)
    static_model: ModelVerdict | None  # the profile's, for "the profile said ..."
    holds: str = "static"  # "static" | "verified"
    note: str = ""  # why (a tool ran and overrides; a tool crashed and the profile is kept; no tool)
    by_node: dict[str, str] = field(default_factory=dict)  # node key -> who said its verdict ("static" nodes: "")
    overridden: dict[str, tuple[str, str]] = field(default_factory=dict)  # node -> (profile's, tool's) verdict

    @property
    def verified(self) -> bool:
        return self.holds == "verified"

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for v in self.node_verdicts.values():
            out[v] = out.get(v, 0) + 1
        return out

    def overrides_finding(self, finding: Any) -> str:
        """The tool's word on a finding's node(s), "" when the finding stands: a tool that ran and accepted
        every node the finding names overrides it ("rknn-toolkit2 2.5.0: supported")."""
        if not self.verified or finding.target not in (self.target, "*"):
            return ""
        nodes = list(finding.nodes or ([finding.node] if finding.node else []))
        said = [self.overridden.get(n) for n in nodes]
        if not nodes or any(s is None for s in said):
            return ""
        tool_says = sorted({s[1] for s in said if s is not None})
        by = sorted({self.by_node.get(n, "") for n in nodes} - {""})
        return f"{', '.join(by) or 'the tool'}: {', '.join(tool_says)}"


def effective(report: Any, target: str) -> Effective:
    """``report``'s verdicts on ``target``: the tool's where a verifier ran (and did not crash), else the
    profile's; a report without verification is the profile's alone."""
    static_nodes = dict(report.node_verdicts.get(target, {}))
    summary = report.targets.get(target)
    static_model = getattr(summary, "model", None)
    merged = ((getattr(report, "verification", None) or {}).get("targets") or {}).get(target)
    if not merged:
        return Effective(target, static_nodes, static_model, static_model)
    verified = merged.get("verified")
    holds = merged.get("holds", "static")
    model = ModelVerdict.from_dict(verified) if holds == "verified" and verified else static_model
    nodes, by, overridden = dict(static_nodes), {}, {}
    for key, entry in (merged.get("nodes") or {}).items():
        if entry.get("source") != "verified":
            continue
        nodes[key] = entry["verdict"]
        by[key] = entry.get("by", "")
        if static_nodes.get(key) != entry["verdict"]:
            overridden[key] = (static_nodes.get(key, "unknown"), entry["verdict"])
    return Effective(target, nodes, model, static_model, holds, merged.get("note", ""), by, overridden)
