"""Text views of a fleet and a rollout (the CLI's; the GUI renders the same state objects its own way), in the
user's language (studio.core.catalogue): headings and state words translated; names, versions, numbers kept."""

from __future__ import annotations

import time

from studio.core.catalogue import N_, _, tr
from studio.core.columns import cell
from studio.fleet.fleet_file import Fleet
from studio.fleet.rollout_state import FleetEvent, RolloutState

# an agent's state in a rollout (studio.fleet.engine), as the status table says it
STATE_WORDS = {"pending": N_("pending"), "skipped": N_("skipped"), "down": N_("down"), "deploying": N_("deploying"),
               "failed": N_("failed"), "updated": N_("updated"), "watching": N_("watching"), "passed": N_("passed"),
               "rollback_failed": N_("rollback_failed"), "rolled_back": N_("rolled_back")}
GATE_WORDS = {"pass": N_("pass"), "fail": N_("fail"), "not available": N_("not available")}


def fleet_text(fleet: Fleet) -> str:
    lines = [tr("fleet {name} ({path}): {count} agents", name=fleet.name, path=fleet.path, count=len(fleet.agents))]
    for a in fleet.agents:
        labels = " ".join(f"{k}={v}" for k, v in sorted(a.labels.items()))
        lines.append(f"  {a.name:24} {a.url:30} {labels}")
    return "\n".join(lines)


def event_line(ev: FleetEvent) -> str:
    return f"{time.strftime('%H:%M:%S', time.localtime(ev.t))}  {_(ev.message)}"


def _gate(g: dict | None) -> str:
    if not g:
        return "-"
    p95 = "-" if g.get("p95_ms") is None else f"{g['p95_ms']:.1f}"
    err = "-" if g.get("error_pct") is None else f"{g['error_pct']:.2f}%"
    verdict = g.get("verdict", "-")
    return tr("{verdict}: {requests} req, err {err}, p95 {p95} ms", verdict=_(GATE_WORDS.get(verdict, verdict)),
              requests=g.get("requests", 0), err=err, p95=p95)


def status_text(st: RolloutState, events: int = 12, where: str = "") -> str:
    ring = st.rings[st.ring].name if st.ring < len(st.rings) else _("done")
    head = tr("rollout of {bundle} {version} to fleet {fleet}: {status}{where} (ring {n}/{total}: {ring}; plan "
              "{plan}, gate {tier}, watch {watch} s, on down {on_down})", bundle=st.bundle_name,
              version=st.bundle_version, fleet=st.fleet, status=_(st.status), where=_(where),
              n=min(st.ring + 1, len(st.rings)), total=len(st.rings), ring=ring, plan=st.plan, tier=st.tier,
              watch=f"{st.watch_s:g}", on_down=st.on_down)
    lines = [head, "  " + " ".join((cell(_("agent"), 20), cell(_("ring"), 10), cell(_("state"), 16),
                                     cell(_("version"), 10), cell(_("was"), 8), _("gate")))]
    for a in st.agents.values():
        rname = st.rings[a.ring].name if a.ring is not None and a.ring < len(st.rings) else "-"
        lines.append(f"  {a.name:20} {rname:10} {cell(_(STATE_WORDS.get(a.state, a.state)), 16)} "
                     f"{a.version or '-':10} {a.previous or '-':8} "
                     f"{_gate(a.gate)}" + (f"  ({_(a.reason)[:80]})" if a.reason else ""))
    lines += [tr("  note: {note}", note=_(n)) for n in st.notes]
    if st.events:
        lines.append(_("timeline:"))
        lines += ["  " + event_line(e) for e in st.events[-events:]]
    return "\n".join(lines)
