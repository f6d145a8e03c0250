"""Where the real tool and the static profile disagree, per node and per model, each side with its source.

The static verdict is the inspector's (``InspectionReport.node_verdicts[target]``, from a profile with a
source); the tool's is a ``VerifyResult`` (tool and version). A disagreement is a node one side calls
unsupported and the other does not ("risky" and "unknown" are not "unsupported": a CPU fallback runs).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from studio.verify.api import VerifyResult

BLOCKING = "unsupported"


@dataclass
class NodeDisagreement:
    """One node where the two answers differ; ``tool_verdict`` wins (the tool ran it)."""

    node: str
    op_type: str
    domain: str
    static_verdict: str
    static_reason: str
    tool_verdict: str
    tool_message: str


@dataclass
class Comparison:
    """One verifier against the target's static profile on one model."""

    target: str
    verifier: str
    tool: str  # e.g. "onnxruntime 1.32.0 (CPUExecutionProvider)"
    profile_source: str  # e.g. "studio/resources/targets/tvm-relax.yaml (https://...)"
    ran: bool
    static_fails: bool
    tool_fails: bool
    error: str = ""
    notes: list[str] = field(default_factory=list)
    disagreements: list[NodeDisagreement] = field(default_factory=list)
    nodes_checked: int = 0

    @property
    def agrees(self) -> bool:
        return self.static_fails == self.tool_fails

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "agrees": self.agrees}


def tool_fails(result: VerifyResult) -> bool:
    """The tool refused the model: a node it could not take, or a model-level error."""
    return bool(result.error) or any(n.verdict == BLOCKING for n in result.nodes)


def static_fails(report: Any, target: str) -> bool:
    """The profile refuses the model (its summary is "fail": an unsupported node or model-level rule)."""
    t = report.targets.get(target)
    return t is not None and t.verdict == "fail"


def profile_source(report: Any, target: str) -> str:
    t = report.targets.get(target)
    return f"{t.name}: {t.source}" if t is not None else ""


def compare(report: Any, result: VerifyResult) -> Comparison:
    """Node by node: static verdicts of ``result.target`` in ``report`` against the tool's."""
    target = result.target
    verdicts = report.node_verdicts.get(target, {})
    reasons = report.node_reasons.get(target, {})
    cmp = Comparison(target=target, verifier=result.verifier, tool=result.tool,
                     profile_source=profile_source(report, target), ran=result.ran,
                     static_fails=static_fails(report, target), tool_fails=tool_fails(result),
                     error=result.error, notes=list(result.notes), nodes_checked=len(result.nodes))
    for n in result.nodes:
        sv = verdicts.get(n.node)
        if sv is None or n.verdict == "unknown":
            continue
        if (sv == BLOCKING) != (n.verdict == BLOCKING):
            cmp.disagreements.append(NodeDisagreement(
                node=n.node, op_type=n.op_type, domain=n.domain, static_verdict=sv,
                static_reason=reasons.get(n.node, ""), tool_verdict=n.verdict, tool_message=n.message))
    return cmp


def compare_all(report: Any, results: list[VerifyResult]) -> list[Comparison]:
    return [compare(report, r) for r in results if r.target in report.targets]
