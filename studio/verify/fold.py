"""Folding a tool's answer into a workspace profile: WORKSPACE/targets/<id>.yaml overrides the built-in one.

Only the ops where the tool and the profile disagreed on this model change, at op level: an op the tool refused
on every node becomes unsupported (on some nodes only: risky, with the tool's words); an op the profile
refused but the tool took on every node becomes supported and loses the opset range and constraints that
refused it; an op the tool ran on the host on every node it placed becomes a cpu_fallback, and one the profile
put on the host but the tool ran on the device leaves the host (its list entry, or the whole-graph rule that
placed it: ``graph.moves_data`` / ``graph.runtime_index``). The file keeps the built-in profile's provenance and adds a line per folded op saying which tool,
at which version, on which model, so the profile still says where each verdict came from.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import InputError
from studio.inspect.profiles import DEFAULT_DOMAIN, norm_domain

LIST_SECTIONS = ("supported", "unsupported", "unknown")


@dataclass
class FoldResult:
    """What one fold wrote: the file, and the ops it changed (op key -> new status + why)."""

    target: str
    path: Path | None
    changed: dict[str, str] = field(default_factory=dict)
    skipped: str = ""  # why nothing was written


def targets_folder(dest: Path) -> Path:
    """A workspace folder means its targets/ folder; any other path is the folder of profiles itself."""
    from studio.core.workspace import WORKSPACE_FILE, Workspace

    if (dest / WORKSPACE_FILE).is_file():
        return Workspace.open(dest).targets_dir
    return dest


def _op_key(domain: str, op: str) -> str:
    return op if norm_domain(domain) == DEFAULT_DOMAIN else f"{domain}:{op}"


def _drop(data: dict[str, Any], domain: str, op: str) -> None:
    """Remove ``op`` from every listing section, risky/cpu_fallback, opsets and constraints."""
    dom = norm_domain(domain)
    for section in LIST_SECTIONS:
        lists = data.get(section) or {}
        for d in list(lists):
            if norm_domain(d) == dom and op in (lists[d] or []):
                lists[d] = [o for o in lists[d] if o != op]
    key = _op_key(domain, op)
    for section in ("risky", "cpu_fallback", "opsets", "constraints"):
        (data.get(section) or {}).pop(key, None)


def _add(data: dict[str, Any], section: str, domain: str, op: str) -> None:
    lists = data.setdefault(section, {}) or {}
    data[section] = lists
    d = next((k for k in lists if norm_domain(k) == norm_domain(domain)), norm_domain(domain))
    lists.setdefault(d, [])
    if op not in lists[d]:
        lists[d].append(op)


def _graph_fold(data: dict[str, Any], op: str, status: str) -> None:
    """The whole-graph rules learn what the tool did: ``op`` moves data only, or looks up on the device."""
    graph = data.get("graph")
    if not isinstance(graph, dict):
        return
    if status == "moves_data":
        graph.setdefault("moves_data", [])
        if op not in graph["moves_data"]:
            graph["moves_data"].append(op)
    else:
        (graph.get("runtime_index") or {}).pop(op, None)


def plan(comparison: dict[str, Any], result: dict[str, Any]) -> dict[tuple[str, str], tuple[str, str]]:
    """(domain, op) -> (new status, why) from one comparison and the tool's per-node answers.

    Statuses: supported / unsupported / risky (the op lists), ``cpu`` (the tool runs the op on the host, on
    every node it placed), ``moves_data`` (the tool ran the op's integer or boolean work on the device: exempt
    from the profile's ``graph.host_dtypes``), ``device_index`` (the tool looked up by a runtime index on the
    device: the op leaves ``graph.runtime_index``)."""
    per_op: dict[tuple[str, str], list[str]] = {}
    placed: dict[tuple[str, str], list[bool]] = {}  # op -> for each node the tool placed: on the host?
    msgs: dict[tuple[str, str], str] = {}
    for n in result["nodes"]:
        k = (n["domain"] or DEFAULT_DOMAIN, n["op_type"])
        per_op.setdefault(k, []).append(n["verdict"])
        if n["verdict"] == "unsupported" and k not in msgs:
            msgs[k] = n["message"]
        if n.get("placement") in ("accelerator", "cpu") and n["verdict"] != "unsupported":
            placed.setdefault(k, []).append(n["verdict"] == "risky" and n["placement"] == "cpu")
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for d in comparison["disagreements"]:
        k = (d["domain"] or DEFAULT_DOMAIN, d["op_type"])
        tool = per_op.get(k, [])
        if d["tool_verdict"] == "unsupported":
            every = all(v == "unsupported" for v in tool)
            out[k] = ("unsupported" if every else "risky", msgs.get(k, d["tool_message"]) or "refused by the tool")
        elif all(v == "supported" for v in tool) and k not in out:
            out[k] = ("supported", f"taken by the tool; the profile said: {d['static_reason']}")
    for d in comparison.get("placement_disagreements", []):
        k = (d["domain"] or DEFAULT_DOMAIN, d["op_type"])
        on_host = placed.get(k, [])
        if k in out or not on_host:
            continue
        if d["tool_verdict"] == "host" and all(on_host):
            out[k] = ("cpu", f"the tool runs it on the host: {d['tool_message']}")
        elif d["static_verdict"] == "host" and not any(on_host):
            why = d["static_reason"]
            status = ("device_index" if "index computed at run time" in why else
                      "moves_data" if "computes " in why and " values" in why else "supported")
            out[k] = (status, f"the tool runs it on the device; the profile said: {why}")
    return out


def fold(report: Any, target: str, dest: Path) -> FoldResult:
    """Write ``dest``/<target>.yaml (starting from an earlier fold there, else the built-in profile)."""
    import yaml

    from studio.core import yamlio
    from studio.core.atomic import write_text_atomic
    from studio.inspect.profiles import load_target

    v = report.verification or {}
    comp = next((c for c in v.get("comparisons", []) if c["target"] == target and c["ran"]), None)
    res = next((r for r in v.get("results", []) if r["target"] == target and r["ran"]), None)
    if comp is None or res is None:
        return FoldResult(target, None, skipped="no verifier ran for this target")
    changes = plan(comp, res)
    if not changes:
        if comp.get("model_agrees") is False:  # the whole-model verdicts differ, no op-level rule says why
            return FoldResult(target, None, skipped=(
                f"the tool says {comp['tool_model'].get('verdict')} and the profile "
                f"{comp['static_model'].get('verdict')}, but no op of the model is judged differently: nothing "
                f"to fold at op level ({(comp.get('error') or '')[:160]})"))
        return FoldResult(target, None, skipped="the tool and the profile agree on every node")
    prof = load_target(target)
    if prof.kind == "runtime":
        return FoldResult(target, None, skipped=f"{target} is computed from the installed runtime's own registry "
                                                "at every run; there is no list to fold into")
    folder = targets_folder(Path(dest))
    out = folder / f"{target}.yaml"
    src = out if out.is_file() else Path(prof.path or "")
    try:
        data = yamlio.safe_load(src.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise InputError(f"cannot read the profile to fold into: {exc}", offending=str(src),
                         hint="pass a workspace or a writable targets folder to --fold-into-profile") from None
    day = _dt.date.today().isoformat()
    result = FoldResult(target, out)
    for (domain, op), (status, why) in sorted(changes.items()):
        if status in ("moves_data", "device_index"):
            _graph_fold(data, op, status)
        else:
            _drop(data, domain, op)
        if status == "risky":
            data.setdefault("risky", {})[_op_key(domain, op)] = f"{res['tool']}: {why}"[:400]
        elif status == "cpu":
            _add(data, "supported", domain, op)
            data.setdefault("cpu_fallback", {})[_op_key(domain, op)] = f"{res['tool']}: {why}"[:400]
        elif status not in ("moves_data", "device_index"):
            _add(data, status, domain, op)
        result.changed[_op_key(domain, op)] = f"{status}: {why}"[:300]
    note = str(data.get("notes", "")).strip()
    stamp = f"Folded from {res['tool']} ({res['verifier']}) on {Path(report.model).name}, {day}: " + "; ".join(
        f"{k} -> {s.split(':')[0]}" for k, s in result.changed.items())
    data["notes"] = f"{note}\n{stamp}".strip()
    data["date_read"] = str(data.get("date_read", day))
    header = (f"# Workspace override of the built-in '{target}' profile, folded from the real tool's answer.\n"
              f"# Base: {prof.path}\n")
    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110))
    return result
