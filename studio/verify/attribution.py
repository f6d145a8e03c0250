"""Turning a tool's failure into per-node verdicts: which node its message names, and node-by-node checks.

Tools stop at the first node they cannot take and name it in their own words (ORT: "Could not find an
implementation for Cast(28) node with name 'c'"; TVM: "operators are not supported ... Foo"). The message is
parsed for a node name or an op type; ``check_each_node`` then asks the tool about every node alone so each
node gets the tool's own answer, not a guess from the first failure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from studio.verify.api import NodeCheck, VerifyResult

# (pattern, group of the op type, group of the node name, group of the domain); groups 0 = absent
_PATTERNS: list[tuple[re.Pattern[str], int, int, int]] = [
    (re.compile(r"Error converting operator (\w+)"), 1, 0, 0),
    (re.compile(r"Could not find an implementation for (\w+)\((\d+)\) node with name '([^']*)'"), 1, 3, 0),
    (re.compile(r"Failed to find kernel for (\w+)\((\d+)\) \(node:'([^']*)'"), 1, 3, 0),
    (re.compile(r"([\w.]+):(\w+)\(-?\d+\) is not a registered function/op"), 2, 0, 1),
    (re.compile(r"Node \(([^)]*)\) Op \((\w+)\)"), 2, 1, 0),
    (re.compile(r"of operator \((\w+)\) in node \(([^)]*)\)"), 1, 2, 0),
    (re.compile(r"In Node, \(\"([^\"]*)\", (\w+), \"([^\"]*)\""), 2, 1, 3),
    (re.compile(r"operators are not supported for frontend ONNX: ([\w, ]+)"), 1, 0, 0),
    (re.compile(r"Unsupported op(?:eration)?[: ]+'?(\w+)'?"), 1, 0, 0),
]


@dataclass
class Blame:
    """What a tool's message names: op type(s), node name, domain (each may be empty)."""

    ops: list[str]
    node: str = ""
    domain: str = ""


def blame(message: str) -> Blame | None:
    """The first node or op the message names, or None when it names neither."""
    for pat, g_op, g_name, g_dom in _PATTERNS:
        m = pat.search(message)
        if m is None:
            continue
        ops = [o.strip() for o in m.group(g_op).split(",") if o.strip()]
        return Blame(ops=ops, node=m.group(g_name) if g_name else "", domain=m.group(g_dom) if g_dom else "")
    return None


def blamed_keys(message: str, refs: list[Any]) -> list[str]:
    """Node keys (inspector spelling) the message points at: by name first, else every node of the op."""
    b = blame(message)
    if b is None:
        return []
    if b.node:
        named = [r.key for r in refs if r.node.name == b.node]
        if named:
            return named
    return [r.key for r in refs if r.node.op_type in b.ops]


def merge_blame(nodes: list[NodeCheck], message: str, refs: list[Any]) -> None:
    """Fold the whole-model message into the node checks: a node it names by name always gets it; an op it
    names only matters when no node failed alone (the failure depends on the node's context)."""
    b = blame(message)
    if b is None:
        return
    by_key = {c.node: c for c in nodes}
    named = [r.key for r in refs if b.node and r.node.name == b.node]
    if not named and any(c.verdict == "unsupported" for c in nodes):
        return
    for k in named or blamed_keys(message, refs):
        c = by_key.get(k)
        if c is not None:
            c.verdict, c.message = "unsupported", short(message)


def short(message: str, limit: int = 600) -> str:
    """A tool message trimmed for a report cell (the whole first line; long C++ traces cut)."""
    text = " ".join(str(message).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


Check = Callable[[Any], str]  # one-node ModelProto -> "" (the tool took it) or the tool's message


def check_each_node(model: Any, check: Check, *, max_nodes: int = 5000) -> list[NodeCheck]:
    """Ask the tool about every node alone; a node whose body fails is cleared when a body node is blamed."""
    from studio.verify.single_node import iter_node_models

    out: list[NodeCheck] = []
    answers: dict[str, str] = {}
    for i, nm in enumerate(iter_node_models(model)):
        if i >= max_nodes:
            out.append(NodeCheck(node=nm.key, op_type=nm.op_type, domain=nm.domain, verdict="unknown",
                                 message=f"not checked: node-by-node check stops after {max_nodes} nodes"))
            continue
        if nm.model is None:
            out.append(NodeCheck(node=nm.key, op_type=nm.op_type, domain=nm.domain, verdict="unknown",
                                 message=f"not checked alone: {nm.problem}"))
            continue
        if nm.same_as and nm.same_as in answers:
            msg = answers[nm.same_as]
        else:
            try:
                msg = check(nm.model)
            except Exception as exc:  # the check itself broke: say so for this node, carry on
                msg = f"{type(exc).__name__}: {exc}"
            answers[nm.key] = msg
        out.append(NodeCheck(node=nm.key, op_type=nm.op_type, domain=nm.domain,
                             verdict="unsupported" if msg else "supported", message=short(msg)))
    failed = {c.node for c in out if c.verdict == "unsupported"}
    for c in out:  # If/Loop/Scan: the body node is the culprit, not the owner
        if c.verdict == "unsupported" and any(k.startswith(c.node + "/") for k in failed):
            culprit = next(k for k in failed if k.startswith(c.node + "/"))
            c.verdict, c.message = "supported", f"fails only through its body node '{culprit}'"
    return out


def whole_then_each(res: VerifyResult, proto: Any, refs: list[Any], err: str, check: Check, *,
                    failed_note: str, placement: str = "") -> bool:
    """The verifiers' shared shape: the whole model passed (every node supported, True), or the tool's
    message is the result's error and every node is asked alone, the whole-model message folded in (False)."""
    if not err:
        res.nodes = [NodeCheck(node=r.key, op_type=r.op_type, domain=r.domain, verdict="supported",
                               placement=placement) for r in refs]
        return True
    res.error = short(err)
    res.nodes = check_each_node(proto, check)
    res.notes.append(failed_note)
    merge_blame(res.nodes, err, refs)
    return False


def note_model_level(res: VerifyResult, note: str) -> None:
    """When no node failed alone, the failure is the model's: say so."""
    if not any(c.verdict == "unsupported" for c in res.nodes):
        res.notes.append(note)
