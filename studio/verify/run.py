"""`inspect --verify`: run every usable verifier for the report's targets and put the answers beside the profile's.

The result lands in ``InspectionReport.verification`` (plain JSON data) so every renderer and the GUI read one
object: per target the static and the verified whole-model verdict (``targets[t]["static"|"verified"]``, the
vocabulary of studio.inspect.model_verdict) and, per node, which verdict holds and who said it
(``targets[t]["nodes"][key] = {verdict, placement, source: "verified"|"static", by}``): a tool's answer
overrides the profile's for the nodes it covers. ``studio.verify.render.text`` renders the CLI section.

Bad input stops before any tool runs: a verifier that builds at static shapes and is given a model with dynamic
inputs and no ``--shape`` raises InputError naming each input with the dims the model declares.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import StudioError
from studio.verify.api import VerifyResult
from studio.verify.compare import Comparison, compare
from studio.verify.registry import VerifierEntry, all_verifiers, broken_plugins

STATIC_KEPT = "no verifier for this target: the static verdict is kept"


@dataclass
class Verification:
    """All verifier runs on one model: which verifiers exist for its targets, what each said, the comparisons."""

    entries: list[VerifierEntry] = field(default_factory=list)
    results: list[VerifyResult] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    broken: list[tuple[str, str]] = field(default_factory=list)  # (plugin, error) whose manifest failed
    unverified: list[str] = field(default_factory=list)  # targets no verifier covers
    targets: dict[str, dict[str, Any]] = field(default_factory=dict)  # target -> merged view (see module doc)

    def to_dict(self) -> dict[str, Any]:
        return {"verifiers": [e.to_dict() for e in self.entries],
                "results": [r.to_dict() for r in self.results],
                "comparisons": [c.to_dict() for c in self.comparisons],
                "broken_plugins": [{"plugin": p, "error": e} for p, e in self.broken],
                "unverified_targets": list(self.unverified),
                "targets": self.targets}


def check_inputs(usable: list[VerifierEntry], model: Path, shapes: dict[str, list[int]] | None) -> None:
    """Every verifier that needs something of the input (static shapes) says so before any tool runs."""
    for e in usable:
        check = getattr(e.verifier, "check_inputs", None)
        if check is not None:
            check(model, shapes)


def verify_report(report: Any, model: Path | str, *, shapes: dict[str, list[int]] | None = None,
                  job: Any = None, entries: list[VerifierEntry] | None = None) -> Verification:
    """Run the usable verifiers of ``report``'s targets on ``model``; attach and return the result."""
    from studio.verify.model_level import crashed_result

    entries = all_verifiers() if entries is None else entries
    targets = list(report.targets)
    mine = [e for e in entries if e.target in targets or not e.target]
    out = Verification(entries=mine, broken=broken_plugins())
    out.unverified = [t for t in targets if not any(e.target == t for e in mine)]
    usable = [e for e in mine if e.ok and e.verifier is not None]
    check_inputs(usable, Path(model), shapes)
    structures: dict[str, Any] = {}
    for i, e in enumerate(usable):
        if job is not None:
            job.check_cancelled()
            job.set_status(f"verifying with {e.name} ({e.reason})")
            job.set_progress(100 * i / max(len(usable), 1))
        try:
            res = e.verifier.verify(Path(model), shapes)
        except StudioError:  # bad input or a cancel: the user's to fix, not the tool's crash
            raise
        except Exception as exc:  # the tool or its driver broke: its crash, never the model's failure
            res = crashed_result(e.name, e.target, e.reason, exc)
        out.results.append(res)
        out.comparisons.append(compare(report, res, _structure(structures, model, res.shapes or shapes)))
    for t in targets:
        out.targets[t] = merged(report, t, out)
    report.verification = out.to_dict()
    return out


def _structure(cache: dict[str, Any], model: Path | str, shapes: dict[str, list[int]] | None) -> Any:
    """The inspector's graph at the shapes a tool built at (FLOPs and transfer sizes of its fallback)."""
    key = repr(sorted((shapes or {}).items()))
    if key not in cache:
        from studio.inspect.api import load_structure

        try:
            cache[key] = load_structure(model, shapes=shapes or None)
        except Exception:  # shapes the model refuses: priced without them
            cache[key] = load_structure(model)
    return cache[key]


def merged(report: Any, target: str, v: Verification) -> dict[str, Any]:
    """One target's verdicts with their sources: the static one, the verified one where a tool ran (it wins),
    and per node which of the two holds."""
    summary = report.targets.get(target)
    static = summary.model.to_dict() if summary is not None and summary.model is not None else {}
    static_by = static.get("by", "")
    comp = next((c for c in v.comparisons if c.target == target), None)
    res = next((r for r in v.results if r.target == target), None)
    out: dict[str, Any] = {"static": static, "verified": None, "holds": "static", "note": STATIC_KEPT}
    nodes = {k: {"verdict": vd, "placement": "", "source": "static", "by": static_by}
             for k, vd in report.node_verdicts.get(target, {}).items()}
    host = {h["node"] for h in static.get("host_nodes", [])}
    for k in host & set(nodes):
        nodes[k]["placement"] = "host"
    if comp is not None and res is not None:
        out["verified"], out["agrees"] = comp.tool_model, comp.model_agrees
        if res.crash:
            out["note"] = (f"{res.tool} crashed (its fault, not the model's): the static verdict is kept; "
                           "see verified.crash for its trace")
        elif not res.ran and not res.nodes:
            out["note"] = f"{res.tool} could not run: the static verdict is kept ({res.error[:200]})"
        else:
            out["holds"], out["note"] = "verified", f"{res.tool} ran: its verdict overrides the profile's"
            for n in res.nodes:
                if n.verdict == "unknown" or n.node not in nodes:
                    continue
                nodes[n.node] = {"verdict": n.verdict, "placement": n.placement, "source": "verified",
                                 "by": res.tool}
    out["nodes"] = nodes
    return out


def gate_verdicts(report: Any) -> set[str]:
    """Finding verdicts for the --fail-on gate, where a tool that ran replaces its target's unsupported-ness."""
    comps = [c for c in report.verification.get("comparisons", []) if c.get("ran") and not c.get("tool_crashed")]
    verified = {c["target"] for c in comps}
    verdicts = {f.verdict for f in report.findings
                if f.target not in verified or f.verdict != "unsupported"}
    if any(c["tool_fails"] for c in comps):
        verdicts.add("unsupported")
    return verdicts


def fails_on(report: Any, level: str) -> bool:
    """``InspectionReport.fails_on`` with the tools' answers winning where they ran."""
    if level == "dynamic" or not report.verification:
        return bool(report.fails_on(level))
    v = gate_verdicts(report)
    wanted = {"unsupported": {"unsupported"}, "risky": {"unsupported", "risky"},
              "unknown": {"unsupported", "risky", "unknown"}}[level]
    return bool(v & wanted)


def text(report: Any, max_nodes: int = 25) -> str:
    """The CLI section (kept here for callers of the old name; the renderer is studio.verify.render)."""
    from studio.verify.render import text as _text

    return _text(report, max_nodes)
