"""Pre-check before the TVM import: name every node whose op TVM Relax cannot take, and fail fast.

Two sources, both cheap: the inspector's ``tvm-relax`` target profile (studio.inspect, when present), and
the installed TVM's own ONNX converter table (exact for the installed version). The inspector's dynamic-dim
tracing is carried into the compile report so users see where each dynamic dim comes from.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import onnx

from studio.core.catalogue import N_
from studio.core.reports import to_jsonable

log = logging.getLogger(__name__)

PROFILE = "tvm-relax"
# Ops the importer handles outside its converter table.
_DIRECT = {"If", "Constant"}
_HINTS = {
    "Loop": N_("unroll the loop at export (fixed iteration count) or move it out of the graph into the host code"),
    "Scan": N_("unroll the scan at export, or split the model so the recurrent part runs in ONNX Runtime"),
    "LSTM": N_("export the recurrent layer unrolled, or run that part with ONNX Runtime"),
    "GRU": N_("export the recurrent layer unrolled, or run that part with ONNX Runtime"),
    "RNN": N_("export the recurrent layer unrolled, or run that part with ONNX Runtime"),
}


@dataclass
class Finding:
    node: str
    op_type: str
    message: str
    hint: str
    source: str  # "inspector:tvm-relax" | "tvm-frontend"


@dataclass
class PrecheckResult:
    findings: list[Finding] = field(default_factory=list)  # blocking: the compile stops before import
    warnings: list[Finding] = field(default_factory=list)  # risky ops: compile goes on, report lists them
    inspector: str = "not run"  # "ran" | "not installed" | "failed: ..."
    verdict: str | None = None  # the inspector's verdict for tvm-relax
    dynamic: Any = None  # the inspector's dynamic-dim tracing, as JSON

    @property
    def ok(self) -> bool:
        return not self.findings


def _node_name(node: onnx.NodeProto, i: int) -> str:
    return node.name or f"{node.op_type}_{i}"


def _walk(graph: onnx.GraphProto, prefix: str = ""):  # type: ignore[no-untyped-def]
    """Nodes of the graph and of every sub-graph (If branches, Loop bodies)."""
    for i, node in enumerate(graph.node):
        yield prefix + _node_name(node, i), node
        for attr in node.attribute:
            subs = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)
            for sg in subs:
                yield from _walk(sg, prefix + _node_name(node, i) + "/")


def tvm_frontend_findings(model: onnx.ModelProto) -> list[Finding]:
    """Nodes whose op the installed TVM's ONNX importer has no converter for."""
    from studio.compile.tvm_backend import require_tvm

    require_tvm()
    from tvm.relax.frontend.onnx.onnx_frontend import _get_convert_map

    table = set(_get_convert_map()) | _DIRECT
    out = []
    for name, node in _walk(model.graph):
        if node.domain not in ("", "ai.onnx"):
            out.append(Finding(name, node.op_type, N_(f"custom-domain op {node.domain}::{node.op_type} has no TVM "
                               "Relax converter"), N_("replace the custom op with standard ONNX ops at export"),
                               "tvm-frontend"))
        elif node.op_type not in table:
            out.append(Finding(name, node.op_type, N_(f"TVM Relax's ONNX importer has no converter for {node.op_type}"),
                               _HINTS.get(node.op_type, N_("rewrite this op at export (another opset or a "
                                          "decomposition), or split the model so this part runs in ONNX Runtime")),
                               "tvm-frontend"))
    return out


def _inspector_result(path: Path) -> tuple[list[Finding], list[Finding], str, str | None, Any]:
    try:
        from studio.inspect.api import inspect_model
    except ImportError:
        return [], [], "not installed", None, None
    try:
        rep = inspect_model(path, targets=[PROFILE])
    except Exception as exc:  # the inspector is advisory here; TVM's own table still runs
        log.warning("inspector failed on %s: %s", path, exc)
        return [], [], f"failed: {exc}", None, None
    targets = getattr(rep, "targets", None) or {}
    tr = targets.get(PROFILE) if isinstance(targets, dict) else None
    verdict = getattr(tr, "verdict", None) if tr is not None else None
    findings, warnings = [], []
    for f in getattr(rep, "findings", []) or []:
        if getattr(f, "target", PROFILE) not in (PROFILE, "*"):
            continue
        nodes = list(getattr(f, "nodes", None) or []) or [str(getattr(f, "node", "") or "")]
        for node in nodes:
            item = Finding(node, str(getattr(f, "op_type", "") or ""), str(getattr(f, "message", "")),
                           str(getattr(f, "hint", "") or ""), "inspector:" + PROFILE)
            if str(getattr(f, "severity", "")) == "error" or getattr(f, "verdict", "") == "unsupported":
                findings.append(item)
            elif str(getattr(f, "severity", "")) == "warning":
                warnings.append(item)
    return findings, warnings, "ran", None if verdict is None else str(verdict), \
        to_jsonable(getattr(rep, "dynamic", None))


def precheck(model: onnx.ModelProto, path: Path | None) -> PrecheckResult:
    """Findings from the inspector's profile (when installed) merged with TVM's converter table."""
    res = PrecheckResult()
    if path is not None:
        found, res.warnings, res.inspector, res.verdict, res.dynamic = _inspector_result(path)
        res.findings.extend(found)
    seen = {(f.node, f.op_type) for f in res.findings}
    res.findings.extend(f for f in tvm_frontend_findings(model) if (f.node, f.op_type) not in seen)
    return res
