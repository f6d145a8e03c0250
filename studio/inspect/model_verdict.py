"""The verdict of a whole model on one target: one vocabulary for the static profiles and the real tools.

A user reads the verdict of the model, not of its nodes, so the static profile and every verifier answer the
same four questions in the same words:

- ``runs``: the model builds and every computing node runs on the target's device;
- ``host-fallback``: it builds and runs, with named nodes falling back to the host (and what that costs:
  tensors crossing between host and device, the host's share of the FLOPs);
- ``does-not-build``: the build stops (the node, the rule or the tool's message that stopped it);
- ``tool-crashed``: the tool itself failed (its trace and version): a fault of the tool, never counted as the
  model's failure;
- ``unknown``: no list and no tool can say.

``ModelVerdict.source`` says who answered ("static": a profile, with its source; "verified": a tool run, with
the tool and version). Nothing here imports onnx or numpy: the inspector's start-up stays light.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from studio.core.catalogue import N_

RUNS = "runs"
FALLBACK = "host-fallback"
FAILS = "does-not-build"
CRASHED = "tool-crashed"
UNKNOWN = "unknown"
MODEL_VERDICTS = (RUNS, FALLBACK, FAILS, CRASHED, UNKNOWN)
WORDS = {RUNS: N_("runs fully on the accelerator"), FALLBACK: N_("runs, with nodes falling back to the host"),
         FAILS: N_("does not build"), CRASHED: N_("the tool itself crashed (not a verdict on the model)"),
         UNKNOWN: N_("unknown (no op list, no tool)")}
HOST_RULES = ("cpu-fallback", "host-placement")  # node rules that place a node on the host, not refuse it


@dataclass
class HostNode:
    """A node that runs on the host instead of the accelerator, with why (the rule's or the tool's words)."""

    node: str
    op_type: str
    reason: str = ""
    flops: int = 0


@dataclass
class Blocker:
    """What stops the build: a node (or the model: node None), the rule, and the words of the profile or tool."""

    node: str | None
    op_type: str | None
    rule: str
    message: str


@dataclass
class FallbackCost:
    """The price of host fallback: tensors crossing host <-> device (and their bytes), the host's FLOPs."""

    transfers: int = 0
    transfer_bytes: int = 0
    host_flops: int = 0
    total_flops: int = 0
    host_flops_share: float = 0.0
    note: str = ""  # e.g. "dynamic dims counted as 1: pass --shape"


@dataclass
class ModelVerdict:
    """One target's verdict on the whole model, from a profile ("static") or a tool run ("verified")."""

    target: str
    verdict: str  # MODEL_VERDICTS
    source: str  # "static" | "verified"
    by: str  # "profile NAME: SOURCE" or the tool and version ("rknn-toolkit2 2.5.0")
    host_nodes: list[HostNode] = field(default_factory=list)
    cost: FallbackCost | None = None
    blockers: list[Blocker] = field(default_factory=list)
    crash: str = ""  # the tool's own trace when it crashed
    notes: list[str] = field(default_factory=list)

    @property
    def builds(self) -> bool | None:
        """True/False: the model builds or not; None: nobody can say (crash, unknown)."""
        return {RUNS: True, FALLBACK: True, FAILS: False}.get(self.verdict)

    def headline(self) -> str:
        """One line: the verdict in words with its numbers, and who said it."""
        return f"{self.summary()} [{self.source}: {self.by}]"

    def summary(self) -> str:
        """The verdict in words, in the user's language (studio.core.catalogue); the names and numbers kept."""
        from studio.core.catalogue import _, tr

        if self.verdict == FALLBACK:
            c = self.cost or FallbackCost()
            share = (tr("{share}% of the FLOPs", share=f"{100 * c.host_flops_share:.1f}") if c.total_flops
                     else _("FLOPs not estimated"))
            return tr("runs, with {count} node(s) on the host ({share}, {transfers} host<->device transfer(s), "
                      "{size})", count=len(self.host_nodes), share=share, transfers=c.transfers,
                      size=_bytes(c.transfer_bytes))
        if self.verdict == FAILS:
            b = self.blockers[0] if self.blockers else None
            first = "" if b is None else (f": {b.node} ({b.op_type}), {b.rule}: {_blocker(b)}" if b.node
                                          else f": {b.rule}: {_blocker(b)}")
            more = tr(" (+{count} more)", count=len(self.blockers) - 1) if len(self.blockers) > 1 else ""
            return _("does not build") + first + more
        if self.verdict == CRASHED:
            last = self.crash.strip().splitlines()[-1][:240] if self.crash else "?"
            return tr("the tool crashed ({by}): {last} - a fault of the tool, not a verdict on the model",
                      by=self.by, last=last)
        return _(WORDS[self.verdict])

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ModelVerdict:
        d = dict(d)
        d["host_nodes"] = [HostNode(**h) for h in d.get("host_nodes", [])]
        d["blockers"] = [Blocker(**b) for b in d.get("blockers", [])]
        d["cost"] = FallbackCost(**d["cost"]) if d.get("cost") else None
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})


def _blocker(b: Blocker) -> str:
    """A blocker's words (at most 200 characters) in the user's language: a node's ``"{op}: {reason}"`` reason
    translated on its own, its entry or template in the catalogue."""
    from studio.core.catalogue import _

    op = f"{b.op_type}: " if b.op_type else ""
    text = op + _(b.message[len(op):]) if op and b.message.startswith(op) else _(b.message)
    return text[:200]


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def fallback_cost(lm: Any, host: set[str], placed: set[str], shapes_note: str = "") -> FallbackCost:
    """What host fallback costs in ``lm`` (an inspector LoadedModel): ``host`` node keys run on the host,
    ``placed`` the node keys that run at all (folded and removed nodes excluded). A transfer is a tensor made
    on one side and read on the other (graph inputs and outputs are not counted: every model moves those)."""
    from studio.inspect.flops import numel_of, safe_flops
    from studio.inspect.model import dtype_bytes

    cost = FallbackCost(note=shapes_note)
    side: dict[str, bool] = {}  # tensor -> made on the host
    assumed: list[bool] = []
    flops = lm.cache.get("node-flops")
    if flops is None:  # every target prices its fallback on the same nodes
        flops = lm.cache["node-flops"] = {r.key: safe_flops(lm, r, assumed) for r in lm.nodes if not r.graph}
        lm.cache["node-flops-assumed"] = bool(assumed)
    assumed = [True] if lm.cache.get("node-flops-assumed") else []
    for ref in lm.nodes:
        if ref.graph or ref.key not in placed:
            continue
        f = flops.get(ref.key, 0)
        cost.total_flops += f
        on_host = ref.key in host
        if on_host:
            cost.host_flops += f
        for o in ref.outputs:
            if o:
                side[o] = on_host
    crossed: set[str] = set()
    for ref in lm.nodes:
        if ref.graph or ref.key not in placed:
            continue
        on_host = ref.key in host
        for i in ref.inputs:
            made = side.get(i)
            if made is None or made == on_host or i in crossed:
                continue
            crossed.add(i)
            t = lm.tensors.get(i)
            if t is not None and t.shape is not None:
                n, dyn = numel_of(tuple(t.shape))
                cost.transfer_bytes += int(n * dtype_bytes(t.elem_type))
                if dyn:
                    assumed.append(True)
    cost.transfers = len(crossed)
    cost.host_flops_share = round(cost.host_flops / cost.total_flops, 4) if cost.total_flops else 0.0
    if assumed and not cost.note:
        cost.note = N_("dynamic or unknown dims counted as 1: pass --shape NAME=DIMS for exact figures")
    return cost


def static_model_verdict(prof: Any, findings: list[Any], host: list[HostNode], unknown_nodes: int = 0,
                         graph_source: str = "") -> ModelVerdict:
    """The profile's verdict on the whole model: unsupported findings stop the build; host-placed nodes make it
    a fallback; a profile without a list (kind none) or nodes nobody lists leave it unknown. Other risky
    findings (dynamic inputs, INT64 at the boundary, ops the list marks risky) are kept as notes."""
    by = f"profile {prof.name}: {prof.source}" + (f"; whole-graph rules: {graph_source}" if graph_source else "")
    mine = [f for f in findings if f.target == prof.id]
    blockers = [Blocker(f.node, f.op_type, f.rule, f.message) for f in mine if f.verdict == "unsupported"]
    notes = [f"{f.rule}: {f.message}"[:300] for f in mine
             if f.verdict == "risky" and f.rule not in HOST_RULES][:8]
    if prof.kind == "none":
        return ModelVerdict(prof.id, UNKNOWN, "static", by, notes=notes)
    if blockers:
        return ModelVerdict(prof.id, FAILS, "static", by, blockers=blockers, notes=notes)
    if host:
        return ModelVerdict(prof.id, FALLBACK, "static", by, host_nodes=host, notes=notes)
    if unknown_nodes:
        notes.insert(0, f"{unknown_nodes} node(s) of ops the list does not cover")
        return ModelVerdict(prof.id, UNKNOWN, "static", by, notes=notes)
    return ModelVerdict(prof.id, RUNS, "static", by, notes=notes)
