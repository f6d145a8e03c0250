"""Text views of a fleet and a rollout (the CLI's; the GUI renders the same state objects its own way)."""

from __future__ import annotations

import time

from studio.fleet.fleet_file import Fleet
from studio.fleet.rollout_state import FleetEvent, RolloutState


def fleet_text(fleet: Fleet) -> str:
    lines = [f"fleet {fleet.name} ({fleet.path}): {len(fleet.agents)} agents"]
    for a in fleet.agents:
        labels = " ".join(f"{k}={v}" for k, v in sorted(a.labels.items()))
        lines.append(f"  {a.name:24} {a.url:30} {labels}")
    return "\n".join(lines)


def event_line(ev: FleetEvent) -> str:
    return f"{time.strftime('%H:%M:%S', time.localtime(ev.t))}  {ev.message}"


def _gate(g: dict | None) -> str:
    if not g:
        return "-"
    p95 = "-" if g.get("p95_ms") is None else f"{g['p95_ms']:.1f}"
    err = "-" if g.get("error_pct") is None else f"{g['error_pct']:.2f}%"
    return f"{g.get('verdict', '-')}: {g.get('requests', 0)} req, err {err}, p95 {p95} ms"


def status_text(st: RolloutState, events: int = 12, where: str = "") -> str:
    ring = st.rings[st.ring].name if st.ring < len(st.rings) else "done"
    head = (f"rollout of {st.bundle_name} {st.bundle_version} to fleet {st.fleet}: {st.status}"
            f"{where} (ring {min(st.ring + 1, len(st.rings))}/{len(st.rings)}: {ring}; plan {st.plan}, gate "
            f"{st.tier}, watch {st.watch_s:g} s, on down {st.on_down})")
    lines = [head, f"  {'agent':20} {'ring':10} {'state':16} {'version':10} {'was':8} gate"]
    for a in st.agents.values():
        rname = st.rings[a.ring].name if a.ring is not None and a.ring < len(st.rings) else "-"
        lines.append(f"  {a.name:20} {rname:10} {a.state:16} {a.version or '-':10} {a.previous or '-':8} "
                     f"{_gate(a.gate)}" + (f"  ({a.reason[:80]})" if a.reason else ""))
    lines += [f"  note: {n}" for n in st.notes]
    if st.events:
        lines.append("timeline:")
        lines += ["  " + event_line(e) for e in st.events[-events:]]
    return "\n".join(lines)
