"""Where the real tool and the static profile disagree, per node and per model, each side with its source.

The static verdict is the inspector's (``InspectionReport.node_verdicts[target]``, from a profile with a
source); the tool's is a ``VerifyResult`` (tool and version). A disagreement is a node one side calls
unsupported and the other does not ("risky" and "unknown" are not "unsupported": a CPU fallback runs), or a
node one side places on the host and the other on the device (``placement_disagreements``). At the model
level both sides speak the vocabulary of ``studio.inspect.model_verdict``: ``static_model`` against
``tool_model``; a tool that crashed agrees or disagrees with nothing (``model_agrees`` is None).
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
    tool_crashed: bool = False
    static_model: dict[str, Any] = field(default_factory=dict)  # ModelVerdict.to_dict() from the profile
    tool_model: dict[str, Any] = field(default_factory=dict)  # ModelVerdict.to_dict() from the tool
    placement_disagreements: list[NodeDisagreement] = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        """Builds or not, the same on both sides (a crashed tool counts as agreeing: it said nothing)."""
        return self.tool_crashed or self.static_fails == self.tool_fails

    @property
    def model_agrees(self) -> bool | None:
        """The whole-model verdict is the same word on both sides; None when the tool crashed."""
        if self.tool_crashed or not self.static_model or not self.tool_model:
            return None
        return self.static_model["verdict"] == self.tool_model["verdict"]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "agrees": self.agrees, "model_agrees": self.model_agrees}


def tool_fails(result: VerifyResult) -> bool:
    """The tool refused the model: a node it could not take, or a model-level error (not its own crash)."""
    if result.crash:
        return False
    return bool(result.error) or any(n.verdict == BLOCKING for n in result.nodes)


def static_fails(report: Any, target: str) -> bool:
    """The profile refuses the model (its summary is "fail": an unsupported node or model-level rule)."""
    t = report.targets.get(target)
    return t is not None and t.verdict == "fail"


def profile_source(report: Any, target: str) -> str:
    t = report.targets.get(target)
    return f"{t.name}: {t.source}" if t is not None else ""


def compare(report: Any, result: VerifyResult, lm: Any = None) -> Comparison:
    """Node by node and for the whole model: the static verdicts of ``result.target`` in ``report`` against
    the tool's; ``lm`` (the inspector's LoadedModel at the tool's shapes) prices the tool's host fallback."""
    from studio.verify.model_level import host_nodes, verified_verdict

    target = result.target
    verdicts = report.node_verdicts.get(target, {})
    reasons = report.node_reasons.get(target, {})
    summary = report.targets.get(target)
    cmp = Comparison(target=target, verifier=result.verifier, tool=result.tool,
                     profile_source=profile_source(report, target), ran=result.ran,
                     static_fails=static_fails(report, target), tool_fails=tool_fails(result),
                     error=result.error, notes=list(result.notes), nodes_checked=len(result.nodes),
                     tool_crashed=bool(result.crash))
    cmp.tool_model = verified_verdict(result, lm).to_dict()
    if summary is not None and summary.model is not None:
        cmp.static_model = summary.model.to_dict()
    for n in result.nodes:
        sv = verdicts.get(n.node)
        if sv is None or n.verdict == "unknown":
            continue
        if (sv == BLOCKING) != (n.verdict == BLOCKING):
            cmp.disagreements.append(NodeDisagreement(
                node=n.node, op_type=n.op_type, domain=n.domain, static_verdict=sv,
                static_reason=reasons.get(n.node, ""), tool_verdict=n.verdict, tool_message=n.message))
    if result.crash or not cmp.static_model:
        return cmp
    static_host = {h["node"]: h for h in cmp.static_model.get("host_nodes", [])}
    tool_host = {h.node for h in host_nodes(result)}
    by_node = result.by_node()
    for key in sorted(set(static_host) ^ tool_host):
        n = by_node.get(key)
        if n is None or n.verdict in ("unknown", BLOCKING):
            continue
        cmp.placement_disagreements.append(NodeDisagreement(
            node=key, op_type=n.op_type, domain=n.domain,
            static_verdict="host" if key in static_host else "device",
            static_reason=static_host[key]["reason"] if key in static_host else reasons.get(key, ""),
            tool_verdict="host" if key in tool_host else (n.placement or "not placed"), tool_message=n.message))
    return cmp


def compare_all(report: Any, results: list[VerifyResult]) -> list[Comparison]:
    return [compare(report, r) for r in results if r.target in report.targets]
