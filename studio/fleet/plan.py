"""Rollout plans (``canary:1,25%,100%``: cumulative rings by count or share of the fleet; ``rings:canary,beta,prod``:
rings by the agents' ``ring`` label) and watch durations (``60s``, ``2m``, ``500ms``)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from studio.core.catalogue import N_
from studio.core.errors import InputError

PLAN_HINT = ("write the rings in rising order: `canary:1,25%,100%` (1 agent, then 25% of the fleet, then all) or "
             "`rings:canary,beta,prod` (by the agents' ring label)")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_duration(text: str, what: str = "--watch") -> float:
    """``60s`` / ``2m`` / ``500ms`` / ``1.5`` (seconds) -> seconds; zero or malformed is an InputError."""
    m = _DURATION.match(str(text))
    if not m or float(m.group(1)) * _UNITS[m.group(2)] <= 0:
        raise InputError(f"{what} {text!r} is not a duration", offending=what,
                         hint="a positive number with ms, s, m or h, e.g. 60s, 2m, 500ms")
    return float(m.group(1)) * _UNITS[m.group(2)]


@dataclass(frozen=True)
class Step:
    """One ring of a plan as written: a cumulative count of agents, a cumulative percentage, or a ring label."""

    text: str
    count: int | None = None
    percent: float | None = None
    label: str | None = None


@dataclass
class Plan:
    text: str
    kind: str  # "canary" (counts / percentages) | "rings" (labels)
    steps: list[Step] = field(default_factory=list)


@dataclass
class Ring:
    """A resolved ring: its position, a name, and the agents it adds (by fleet name)."""

    index: int
    name: str
    agents: list[str]


def parse_plan(text: str) -> Plan:
    """``[canary:]1,25%,100%`` or ``rings:LABEL,...``; percentages and counts must rise, each in (0, 100]."""
    raw = str(text).strip()
    kind, _, body = raw.partition(":") if ":" in raw else ("canary", "", raw)
    kind = kind.strip().lower()
    if kind not in ("canary", "rings"):
        raise InputError(f"--plan {text!r}: unknown plan kind {kind!r}", offending="--plan", hint=PLAN_HINT)
    parts = [p.strip() for p in body.split(",")]
    if not body.strip() or any(not p for p in parts):
        raise InputError(f"--plan {text!r} has an empty ring", offending="--plan", hint=PLAN_HINT)
    if kind == "rings":
        if len(set(parts)) != len(parts):
            raise InputError(f"--plan {text!r} names a ring twice", offending="--plan", hint=PLAN_HINT)
        return Plan(raw, kind, [Step(p, label=p) for p in parts])
    steps: list[Step] = []
    for p in parts:
        try:
            step = Step(p, percent=float(p[:-1])) if p.endswith("%") else Step(p, count=int(p))
        except ValueError:
            raise InputError(f"--plan {text!r}: ring {p!r} is neither a count nor a percentage",
                             offending=f"--plan: {p}", hint=PLAN_HINT) from None
        value = step.percent if step.percent is not None else step.count
        if value is None or value <= 0 or (step.percent is not None and step.percent > 100):
            raise InputError(f"--plan {text!r}: ring {p!r} is out of range", offending=f"--plan: {p}",
                             hint="counts are 1 or more, percentages in (0, 100]")
        steps.append(step)
    for kind_of in ("count", "percent"):
        vals = [(s.text, getattr(s, kind_of)) for s in steps if getattr(s, kind_of) is not None]
        for (a_text, a), (b_text, b) in zip(vals, vals[1:], strict=False):
            if b <= a:
                what = "percentages" if kind_of == "percent" else "counts"
                raise InputError(f"--plan {text!r}: the {what} do not increase ({a_text} then {b_text})",
                                 offending=f"--plan: {b_text}", hint=PLAN_HINT)
    return Plan(raw, kind, steps)


def resolve_rings(plan: Plan, agents: list[str], ring_labels: dict[str, str]) -> tuple[list[Ring], list[str]]:
    """The rings of ``plan`` over the fleet's agents (in file order) and notes on what was merged or left out.

    A count or percentage is cumulative (``25%`` of 8 agents is agents 2..2 after a canary of 1: ceil(2) = 2);
    a step that adds nobody is dropped with a note; one that goes backwards is an InputError."""
    notes: list[str] = []
    rings: list[Ring] = []
    if plan.kind == "rings":
        placed: set[str] = set()
        for step in plan.steps:
            members = [a for a in agents if ring_labels.get(a) == step.label]
            if not members:
                have = sorted({v for v in ring_labels.values() if v}) or ["none"]
                raise InputError(f"--plan {plan.text!r}: no agent has ring label {step.label!r}",
                                 offending=f"--plan: {step.label}", hint=f"ring labels in the fleet: {', '.join(have)}")
            rings.append(Ring(len(rings), step.label, members))
            placed.update(members)
        left = [a for a in agents if a not in placed]
        if left:
            notes.append(N_(f"not in the plan (ring label not listed): {', '.join(left)}"))
        return rings, notes
    done = 0
    n = len(agents)
    for i, step in enumerate(plan.steps):
        target = min(n, step.count) if step.count is not None else math.ceil(n * (step.percent or 0) / 100 - 1e-9)
        if step.count is not None and step.count > n:
            notes.append(N_(f"ring {step.text}: the fleet has only {n} agents"))
        if target < done:
            raise InputError(f"--plan {plan.text!r}: ring {step.text} is {target} agents, fewer than the "
                             f"{done} before it", offending=f"--plan: {step.text}", hint=PLAN_HINT)
        if target == done:
            notes.append(N_(f"ring {step.text} adds no agent to the {done} before it (fleet of {n}): merged"))
            continue
        name = "canary" if i == 0 and plan.text.lower().startswith("canary") else step.text
        rings.append(Ring(len(rings), name, agents[done:target]))
        done = target
    if done < n:
        notes.append(N_(f"the plan stops at {done} of {n} agents"))
    return rings, notes
