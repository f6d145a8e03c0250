"""Diff two ONNX models: one call in, one DiffReport out (CLI `studio diff`, the GUI's diff view, CI).

    rep = diff_models("model.onnx", "model.static.onnx")            # or target="rk3588" for verdicts too
    rep.summary.changed, rep.summary.changed_by_kind                 # {"shape": 12, ...}
    rep.nodes[0].a, rep.nodes[0].b, rep.nodes[0].changes             # node keys in A and B, what changed
    rep.pairs()                                                      # every matched (key A, key B, method)

Neither model's external weights are read (the inspector's reader); nothing here imports torch or Qt.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from studio.core.catalogue import N_
from studio.core.gc_pause import gc_paused
from studio.core.jobs import JobState
from studio.diff.compare import graph_tensor_changes, node_changes, tensor_changes, wiring_changes
from studio.diff.match import NAME, Matching, Side, match_models
from studio.diff.report import (
    ADDED,
    CHANGED,
    KINDS,
    REMOVED,
    DiffReport,
    DiffSummary,
    FieldChange,
    NodeChange,
    summary_message,
)
from studio.inspect.model import LoadedModel, NodeRef, analyse_structure, read_model_proto

__all__ = ["diff_models", "diff_loaded", "DiffReport", "UNRELATED_SHARE"]

UNRELATED_SHARE = 0.1  # below this share of matched nodes (and no name in common) the models are unrelated


def _load(path: Path) -> LoadedModel:
    return analyse_structure(path, read_model_proto(path))


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def diff_models(a: Path | str, b: Path | str, *, target: str | None = None,
                job: JobState | None = None, profile_dirs: list[Path] | None = None) -> DiffReport:
    """Match the nodes of ``a`` and ``b`` and list what was added, removed or changed.

    ``target``: also compare each matched node's verdict for that target (``studio.inspect`` on both), a
    built-in, plugin or ``profile_dirs`` (e.g. WORKSPACE/targets) profile.
    Raises InputError / ModelError for a missing or unreadable file, TargetError for an unknown target."""
    job = job or JobState(name="diff")
    pa, pb = Path(a), Path(b)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    verdicts: tuple[dict[str, str], dict[str, str]] | None = None
    if target is not None:
        from studio.inspect.api import inspect_model

        job.set_status(f"inspecting both models for {target}")
        ra = inspect_model(pa, [target], profile_dirs=profile_dirs)
        rb = inspect_model(pb, [target], profile_dirs=profile_dirs)
        verdicts = (ra.node_verdicts.get(target, {}), rb.node_verdicts.get(target, {}))
        timings["verdicts"] = time.perf_counter() - t0
    with gc_paused():
        job.set_status(f"reading {pa.name}")
        t = time.perf_counter()
        la = _load(pa)
        job.set_progress(25)
        job.set_status(f"reading {pb.name}")
        lb = la if _same_file(pa, pb) else _load(pb)
        timings["load"] = time.perf_counter() - t
        job.set_progress(50)
        rep = diff_loaded(la, lb, target=target, verdicts=verdicts, job=job)
    rep.timings = {**{k: round(v, 4) for k, v in timings.items()}, **rep.timings}
    rep.timings["total"] = round(time.perf_counter() - t0, 4)
    job.set_progress(100, force=True)
    return rep


def diff_loaded(la: LoadedModel, lb: LoadedModel, *, target: str | None = None,
                verdicts: tuple[dict[str, str], dict[str, str]] | None = None,
                job: JobState | None = None) -> DiffReport:
    """The diff of two models already read (the GUI holds them); ``verdicts``: node key -> verdict per side."""
    with gc_paused():
        return _diff_loaded(la, lb, target, verdicts, job or JobState(name="diff"))


def _diff_loaded(la: LoadedModel, lb: LoadedModel, target: str | None,
                 verdicts: tuple[dict[str, str], dict[str, str]] | None, job: JobState) -> DiffReport:
    timings: dict[str, float] = {}
    t = time.perf_counter()
    job.set_status("matching nodes")
    sa, sb = Side.of(la), Side.of(lb)
    m = match_models(sa, sb)
    timings["match"] = time.perf_counter() - t
    t = time.perf_counter()
    job.set_status("comparing matched nodes")
    rep = DiffReport(model_a=str(la.path), model_b=str(lb.path), target=target)
    for side, lm in (("A", la), ("B", lb)):
        if lm.shape_inference_error:
            name, error = lm.path.name, lm.shape_inference_error
            rep.notes.append(N_(f"shape inference failed on {side} ({name}): {error}; shapes there are the declared "
                                "ones only"))
    changed, removed, added = _node_changes(sa, sb, m, verdicts)
    rep.nodes = changed + removed + added
    rep.tensors = graph_tensor_changes(la, lb)
    rep._pairs = [(sa.refs[i].key, sb.refs[j].key, how) for i, j, how in m.pairs()]
    rep.summary = _summary(sa, sb, m, rep)
    timings["compare"] = time.perf_counter() - t
    rep.timings = {k: round(v, 4) for k, v in timings.items()}
    return rep


def _node_changes(sa: Side, sb: Side, m: Matching, verdicts: tuple[dict[str, str], dict[str, str]] | None,
                  ) -> tuple[list[NodeChange], list[NodeChange], list[NodeChange]]:
    va, vb = verdicts if verdicts is not None else ({}, {})
    changed: list[NodeChange] = []
    arefs, brefs, ta, tb = sa.refs, sb.refs, sa.tensors.get, sb.tensors.get
    aprod, bprod, a2b = sa.producer.get, sb.producer.get, m.a2b
    for i, j, how in m.pairs():
        ra, rb = arefs[i], brefs[j]
        if _same(ra, rb, ta, tb, aprod, bprod, a2b) and (
                verdicts is None or va.get(ra.key, "supported") == vb.get(rb.key, "supported")):
            continue
        fields = node_changes(sa, sb, i, j)
        fields += wiring_changes(sa, sb, i, j, m.a2b)
        fields += tensor_changes(sa, sb, i, j)
        ka, kb = sa.refs[i].key, sb.refs[j].key
        if verdicts is not None:
            xa, xb = va.get(ka, "supported"), vb.get(kb, "supported")
            if xa != xb:
                fields.append(FieldChange("verdict", "verdict", xa, xb))
        if fields:
            nc = NodeChange(CHANGED, ka, kb, sa.refs[i].op_type, sb.refs[j].op_type, how, fields)
            if verdicts is not None:
                nc.verdict_a, nc.verdict_b = va.get(ka, "supported"), vb.get(kb, "supported")
            changed.append(nc)
    removed = [NodeChange(REMOVED, ref.key, None, ref.op_type, "",
                          verdict_a=va.get(ref.key, "supported") if verdicts is not None else None)
               for i, ref in enumerate(sa.refs) if m.a2b[i] < 0]
    added = [NodeChange(ADDED, None, ref.key, "", ref.op_type,
                        verdict_b=vb.get(ref.key, "supported") if verdicts is not None else None)
             for j, ref in enumerate(sb.refs) if m.b2a[j] < 0]
    return changed, removed, added


def _same(ra: NodeRef, rb: NodeRef, ta: Any, tb: Any, aprod: Any, bprod: Any, a2b: list[int]) -> bool:
    """The fast check that a matched pair has not changed (most pairs of a diff); False = look closer."""
    if ra.op_type != rb.op_type or ra.domain != rb.domain or len(ra.inputs) != len(rb.inputs) \
            or len(ra.outputs) != len(rb.outputs):
        return False
    for x, y in zip(ra.outputs, rb.outputs, strict=True):
        if ta(x) != tb(y):
            return False
    for x, y in zip(ra.inputs, rb.inputs, strict=True):
        if x != y:
            px = aprod(x)
            if px is None or a2b[px] != bprod(y):
                return False
        elif x:
            px = aprod(x)
            if px is not None and a2b[px] != bprod(y):
                return False
    return ra.node.attribute == rb.node.attribute


def _summary(sa: Side, sb: Side, m: Matching, rep: DiffReport) -> DiffSummary:
    s = DiffSummary(nodes_a=len(sa.refs), nodes_b=len(sb.refs))
    s.matched = m.matched
    s.matched_by = {k: v for k, v in m.counts.items() if v}
    s.matched_by_name = m.counts.get(NAME, 0)
    s.matched_by_structure = s.matched - s.matched_by_name
    changed = rep.changes_of(CHANGED)
    s.changed, s.removed, s.added = len(changed), m.a2b.count(-1), m.b2a.count(-1)
    s.unchanged = s.matched - s.changed
    s.changed_shape_only = sum(1 for n in changed if n.shape_only)
    kinds: dict[str, int] = {}
    for n in changed:
        for k in n.kinds:
            kinds[k] = kinds.get(k, 0) + 1
    s.changed_by_kind = {k: kinds[k] for k in KINDS if k in kinds}
    for t in rep.tensors:
        bucket = {"input": s.inputs, "output": s.outputs, "initializer": s.initializers}[t.section]
        bucket[t.status] = bucket.get(t.status, 0) + 1
    most = max(s.nodes_a, s.nodes_b)
    s.unrelated = most > 0 and s.matched_by_name == 0 and s.matched < UNRELATED_SHARE * most
    s.message = summary_message(s, rep.has_changes)  # English: the report's data (the text report translates)
    return s
