"""A tool's answer as a whole-model verdict, in the vocabulary the static profiles use (inspect.model_verdict).

The tool ran and placed every node on the device: ``runs``; some nodes on the host (risky, placement "cpu"):
``host-fallback`` with those nodes and the cost; a node it refused or a model-level error: ``does-not-build``
with the node, "tool" as the rule and the tool's words; the tool itself failed (``VerifyResult.crash``, or
the verifier raised): ``tool-crashed`` with the trace and the tool's version, never the model's failure.
"""

from __future__ import annotations

from typing import Any

from studio.core.catalogue import N_
from studio.inspect.model_verdict import (
    CRASHED,
    FAILS,
    FALLBACK,
    RUNS,
    Blocker,
    HostNode,
    ModelVerdict,
    fallback_cost,
)
from studio.verify.api import VerifyResult


def host_nodes(result: VerifyResult) -> list[HostNode]:
    """Nodes the tool ran on the host: a fallback (risky) placed on the CPU; layout glue it moved is not one."""
    return [HostNode(n.node, n.op_type, n.message[:300]) for n in result.nodes
            if n.verdict == "risky" and n.placement == "cpu"]


def verified_verdict(result: VerifyResult, lm: Any = None) -> ModelVerdict:
    """``result`` as a ModelVerdict; ``lm`` (the inspector's LoadedModel, at the shapes the tool built at) prices
    a fallback: host FLOPs and the tensors that cross."""
    by = result.tool
    notes = list(result.notes)
    if result.crash:
        return ModelVerdict(result.target, CRASHED, "verified", by, crash=result.crash, notes=notes)
    refused = [n for n in result.nodes if n.verdict == "unsupported"]
    if not result.ran or result.error or refused:
        blockers = [Blocker(n.node, n.op_type, "tool", n.message[:600]) for n in refused]
        if result.error and not any(result.error[:200] in b.message for b in blockers):
            blockers.append(Blocker(None, None, "tool-error", result.error[:600]))
        return ModelVerdict(result.target, FAILS, "verified", by, blockers=blockers, notes=notes)
    host = host_nodes(result)
    if not host:
        return ModelVerdict(result.target, RUNS, "verified", by, notes=notes)
    mv = ModelVerdict(result.target, FALLBACK, "verified", by, host_nodes=host, notes=notes)
    if lm is not None:
        placed = {n.node for n in result.nodes if n.placement in ("accelerator", "cpu")}
        mv.cost = fallback_cost(lm, {h.node for h in host}, placed)
    return mv


def crashed_result(name: str, target: str, tool: str, exc: BaseException) -> VerifyResult:
    """A verifier that raised: the tool (or its driver) crashed; its trace, never a verdict on the model."""
    import traceback

    trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-12:])
    return VerifyResult(verifier=name, target=target, tool=tool, ran=False,
                        error=N_(f"verifier failed: {type(exc).__name__}: {exc}"), crash=trace)
