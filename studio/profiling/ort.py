"""ONNX Runtime's profiler, per node of the model as the user wrote it.

ORT profiles the graph it *optimized* (fused MatMul+Mul into FusedMatMul, Sigmoid+Mul+Mul into QuickGelu,
folded shape arithmetic into constants). ``profile_model`` also asks ORT for that optimized graph and maps it
back, so every source node gets an entry: its own kernel time, or 0 with where the time went
("fused into X", "constant-folded at load", "removed by the optimizer").

    rep = profile_model("model.onnx", shapes={"input_ids": [1, 16]}, runs=20)
    rep.top(10); rep.node_times(); rep.save(ws.reports_dir / "model.profile.json")
"""

from __future__ import annotations

import bisect
import datetime as _dt
import json
import shutil
import tempfile
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.catalogue import N_
from studio.core.errors import InputError, ModelError
from studio.core.jobs import JobState
from studio.core.runner import OPT_LEVELS
from studio.core.shapes import check_against
from studio.profiling.report import FOLDED, FUSED, MEASURED, NOT_RUN, REMOVED, NodeTime, ProfileReport

DEFAULT_DIM = {"batch": 1}
DEFAULT_SYMBOLIC = 8


def node_keys(graph: Any) -> list[tuple[str, Any]]:
    """(key, node) for the main graph, keyed exactly as studio.inspect keys them (name, or op_index; #i on repeats)."""
    seen: set[str] = set()
    out = []
    for i, node in enumerate(graph.node):
        key = node.name or f"{node.op_type}_{i}"
        if key in seen:
            key = f"{key}#{i}"
        seen.add(key)
        out.append((key, node))
    return out


def make_feed(sess: Any, shapes: dict[str, list[int]] | None, seed: int = 0) -> dict[str, np.ndarray]:
    """Inputs for a profile (``studio.core.parity.random_inputs``): given shapes, else symbolic dims = 1 for
    batch, 8 otherwise. Ids are small and valid for any vocabulary, masks are ones."""
    from studio.core.parity import random_inputs
    from studio.core.runner import OnnxRuntimeRunner

    specs = OnnxRuntimeRunner.wrap(sess).input_metadata()
    check_against(dict(shapes or {}), {n: shape for n, (_t, shape) in specs.items()})
    return random_inputs(specs, shapes=shapes, dims=DEFAULT_DIM, default_dim=DEFAULT_SYMBOLIC, rng=seed)


def _percentile(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs, dtype=np.float64), q)) if xs else 0.0


def parse_trace(events: list[dict[str, Any]], warmup: int) -> tuple[list[float], dict[str, list[float]],
                                                                      dict[str, str], dict[str, int]]:
    """ORT's Chrome-trace JSON -> (run wall ms per measured run, ORT node -> per-run ms, ORT node -> op,
    ORT node -> kernel events per run). Node events are assigned to runs by their timestamps."""
    runs = sorted((e for e in events if e.get("cat") == "Session" and e.get("name") == "model_run"),
                  key=lambda e: e["ts"])
    measured = runs[warmup:]
    per_node: dict[str, list[float]] = {}
    ops: dict[str, str] = {}
    calls: dict[str, int] = {}
    starts = [e["ts"] for e in measured]
    ends = [e["ts"] + e["dur"] for e in measured]
    node_events = [e for e in events if e.get("cat") == "Node" and str(e.get("name", "")).endswith("_kernel_time")]
    for e in node_events:
        name = e["name"][: -len("_kernel_time")]
        ops.setdefault(name, e.get("args", {}).get("op_name", ""))
    acc = [dict.fromkeys(ops, 0.0) for _ in measured]
    for e in node_events:
        ts = e["ts"]
        r = bisect.bisect_right(starts, ts) - 1  # the run that started last before this event
        if r >= 0 and ts <= ends[r]:
            name = e["name"][: -len("_kernel_time")]
            acc[r][name] += e["dur"] / 1000.0
            if r == 0:
                calls[name] = calls.get(name, 0) + 1
    for name in ops:
        per_node[name] = [acc[r][name] for r in range(len(measured))]
    return [e["dur"] / 1000.0 for e in measured], per_node, ops, calls


def _session_options(level: str, prof_dir: Path, opt_path: Path | None, threads: int | None = None) -> Any:
    """``studio.core.runner.session_options`` with ORT's profiler on (and the optimized graph dumped)."""
    from studio.core.runner import session_options

    config = {}
    if opt_path is not None:
        # the optimized graph is read for its lineage only: its weights go to a data file beside it (in the
        # profile's temp folder), so a model past 2 GB can be dumped at all and the graph parses small
        config = {"session.optimized_model_external_initializers_file_name": f"{opt_path.name}.data",
                  "session.optimized_model_external_initializers_min_size_in_bytes": "1024"}
    so = session_options(threads=threads, optimization=level, config=config)
    so.enable_profiling = True
    so.profile_file_prefix = str(prof_dir / "ort")
    if opt_path is not None:
        so.optimized_model_filepath = str(opt_path)
    return so


def profile_model(model: Path | str, *, shapes: dict[str, list[int]] | None = None, runs: int = 20,
                  warmup: int = 3, optimization: str = "all", custom_op_lib: Path | str | None = None,
                  providers: list[str] | None = None, threads: int | None = None,
                  job: JobState | None = None) -> ProfileReport:
    """Profile ``model`` with ONNX Runtime: ``warmup`` runs, then ``runs`` measured runs, per node.

    Models using the studio.fused domain run with its runtime registered (see studio.optimize.custom_ops).
    Raises InputError for bad arguments, ModelError when ORT cannot load or run the model.
    """
    import onnx
    import onnxruntime as ort

    from studio.optimize.custom_ops import make_session, uses_domain

    job = job or JobState(name="profile")
    path = Path(model)
    if threads is not None and threads < 1:
        raise InputError("--threads must be >= 1", offending=str(threads))
    if runs < 1 or warmup < 0:
        raise InputError("--runs must be >= 1 and --warmup >= 0", offending=f"runs={runs} warmup={warmup}")
    if optimization not in OPT_LEVELS:
        raise InputError(f"unknown optimization level '{optimization}'", offending=optimization,
                         hint=f"one of {', '.join(OPT_LEVELS)}")
    if not path.is_file():
        raise InputError(f"model file not found: {path}", offending=str(path), hint="check the path")
    try:
        proto = onnx.load(str(path), load_external_data=False)
    except Exception as exc:
        raise ModelError(f"not a readable ONNX model: {str(exc)[:200]}", offending=str(path),
                         hint="re-export it, or check it with `studio inspect`") from None
    from studio.core.external_data import check_data_files

    check_data_files(proto, path)  # a missing or truncated data file: a ModelError naming it, not ORT's words
    fused = uses_domain(proto)
    tmp = Path(tempfile.mkdtemp(prefix="studio-profile-"))
    try:
        opt_path = tmp / "optimized.onnx"
        so = _session_options(optimization, tmp, opt_path if optimization != "disable" else None, threads)
        job.set_status(f"loading {path.name} with profiling on")
        try:
            sess = make_session(path, custom_op_lib=custom_op_lib, sess_options=so, providers=providers)
        except ModelError as exc:
            if opt_path.exists() or "optimized" not in str(exc).lower():
                raise
            # saving the optimized graph can fail (very large models); profile without the lineage
            so = _session_options(optimization, tmp, None, threads)
            sess = make_session(path, custom_op_lib=custom_op_lib, sess_options=so, providers=providers)
        feed = make_feed(sess, shapes)
        total = warmup + runs
        for i in range(total):
            job.check_cancelled()
            try:
                sess.run(None, feed)
            except Exception as exc:
                sess.end_profiling()
                raise ModelError(f"ONNX Runtime failed running {path.name}: {str(exc)[:300]}", offending=str(path),
                                 hint="check the --shape values against the model's inputs") from None
            job.step(i + 1, total, f"run {i + 1}/{total}")
        trace = Path(sess.end_profiling())
        events = json.loads(trace.read_text(encoding="utf-8"))
        optimized = onnx.load(str(opt_path), load_external_data=False) if opt_path.exists() else None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    run_ms, per_node, ops, calls = parse_trace(events, warmup)
    rep = ProfileReport(model=str(path), created=_dt.datetime.now().isoformat(timespec="seconds"),
                        runtime=f"onnxruntime {ort.__version__} {','.join(sess.get_providers())}"
                                + (f" ({threads} intra-op threads)" if threads else ""),
                        optimization=optimization, runs=runs, warmup=warmup,
                        custom_ops=(N_(f"custom-op library {custom_op_lib}") if custom_op_lib else
                                    N_("studio.fused via onnxruntime-extensions Python op")) if fused else "",
                        input_shapes={k: list(v.shape) for k, v in feed.items()},
                        run_mean_ms=float(np.mean(run_ms)) if run_ms else 0.0, run_p95_ms=_percentile(run_ms, 95))
    if optimized is None and optimization != "disable":
        rep.warnings.append(N_("ORT's optimized graph was not available: nodes it rewrote are reported without "
                               "lineage"))
    rep._feed = feed
    attribute_nodes(rep, proto, optimized, per_node, ops, calls)
    job.set_status(f"profiled {len(rep.nodes)} nodes over {runs} runs")
    return rep


def attribute_nodes(rep: ProfileReport, proto: Any, optimized: Any, per_node: dict[str, list[float]],
                    ops: dict[str, str], calls: dict[str, int]) -> None:
    """Fill ``rep.nodes`` (every source node) from the ORT node times and ORT's optimized graph."""
    src = node_keys(proto.graph)
    by_name = {n.name: key for key, n in src if n.name}
    producer: dict[str, str] = {}  # tensor -> source key
    consumers: dict[str, list[str]] = {}
    for key, n in src:
        for o in n.output:
            if o:
                producer[o] = key
        for i in n.input:
            if i:
                consumers.setdefault(i, []).append(key)
    nodes_by_key = {key: n for key, n in src}
    opt_producer: dict[str, str] = {}  # tensor -> ORT node name
    opt_inits: set[str] = set()
    opt_ops: dict[str, str] = dict(ops)
    if optimized is not None:
        for n in optimized.graph.node:
            opt_ops.setdefault(n.name, n.op_type)
            for o in n.output:
                if o:
                    opt_producer[o] = n.name
        opt_inits = {t.name for t in optimized.graph.initializer}
    graph_outputs = {o.name for o in proto.graph.output}

    # 1. each measured ORT node lands on one source node (its anchor)
    anchor_of: dict[str, str] = {}
    ort_outputs: dict[str, list[str]] = {}
    if optimized is not None:
        for n in optimized.graph.node:
            ort_outputs[n.name] = [o for o in n.output if o]
    names_sorted = sorted(by_name, key=len, reverse=True)
    for ort_name in (set(per_node) | set(ort_outputs)) - {""}:
        if ort_name in by_name:
            anchor_of[ort_name] = by_name[ort_name]
            continue
        if ort_name in nodes_by_key and opt_ops.get(ort_name) == nodes_by_key[ort_name].op_type:
            anchor_of[ort_name] = ort_name  # ORT names an unnamed node <op>_<index> in its events, as we key it
            continue
        hit = next((by_name[s] for s in names_sorted if s and ort_name.startswith(s) and
                    ort_name[len(s):len(s) + 1] in ("/", "_")), None)
        if hit is None:
            hit = next((producer[o] for o in ort_outputs.get(ort_name, []) if o in producer), None)
        if hit is not None:
            anchor_of[ort_name] = hit
    carried: dict[str, list[str]] = {}
    for ort_name, key in anchor_of.items():
        carried.setdefault(key, []).append(ort_name)

    # 2. per source node: time, or where it went
    runs = max((len(v) for v in per_node.values()), default=0)
    totals = [0.0] * runs
    times: dict[str, list[float]] = {}
    for key, ort_names in carried.items():
        measured = [o for o in ort_names if o in per_node]
        if measured:
            times[key] = [sum(per_node[o][r] for o in measured) for r in range(runs)]
            for r in range(runs):
                totals[r] += times[key][r]
    for ort_name in per_node:
        if ort_name not in anchor_of:
            ms = float(np.mean(per_node[ort_name])) if per_node[ort_name] else 0.0
            rep.unmapped_ort.append({"ort_node": ort_name, "op": opt_ops.get(ort_name, ""), "mean_ms": ms})
            for r in range(runs):
                totals[r] += per_node[ort_name][r]
    node_total = float(np.mean(totals)) if totals else 0.0
    rep.node_total_ms = node_total

    def downstream_ort(key: str) -> str | None:
        """First ORT node reached from ``key``'s outputs through source-graph consumers."""
        seen: set[str] = set()
        q = deque(o for o in nodes_by_key[key].output if o)
        while q:
            t = q.popleft()
            if t in seen:
                continue
            seen.add(t)
            if t in opt_producer:
                return opt_producer[t]
            for c in consumers.get(t, []):
                q.extend(o for o in nodes_by_key[c].output if o)
        return None

    for key, n in src:
        nt = NodeTime(key=key, name=n.name, op_type=n.op_type)
        mine = carried.get(key, [])
        nt.ort_nodes = sorted(mine)
        ran_as = {opt_ops.get(o, "") for o in mine} - {n.op_type, ""}
        nt.ort_op = ", ".join(sorted(ran_as))
        if key in times:
            xs = times[key]
            nt.status, nt.mean_ms, nt.p95_ms = MEASURED, float(np.mean(xs)), _percentile(xs, 95)
            nt.share = nt.mean_ms / node_total if node_total > 0 else 0.0
            nt.calls = float(sum(calls.get(o, 0) for o in mine if o in per_node))
            if nt.ort_op:
                nt.reason = f"ORT ran it as {nt.ort_op} ({', '.join(nt.ort_nodes)})"
        elif mine or (optimized is None and n.name in by_name and n.name in opt_ops):
            nt.status, nt.reason = NOT_RUN, "in ORT's graph but no kernel event was reported"
        elif n.op_type == "Constant":
            nt.status, nt.reason = FOLDED, "constant: an initializer at session load, no kernel"
        elif optimized is None:
            nt.status, nt.reason = NOT_RUN, "ORT reported no kernel event for it (optimized graph unavailable)"
        elif n.op_type in ("Identity", "Dropout") and not any(o in opt_producer for o in n.output):
            nt.status, nt.reason = REMOVED, f"{n.op_type} eliminated by ORT's graph optimizer"
        elif any(o in opt_inits for o in n.output):
            nt.status, nt.reason = FOLDED, "constant-folded by ORT at session load"
        else:
            direct = next((opt_producer[o] for o in n.output if o in opt_producer), None)
            target = direct or downstream_ort(key)
            host = anchor_of.get(target) if target else None
            new_node = target is not None and target not in by_name
            if target is not None and new_node and host is not None:
                nt.status, nt.fused_into = FUSED, host
                nt.reason = f"fused into {opt_ops.get(target, '?')} '{target}' (time on {host})"
            elif direct is None and any(o in graph_outputs for o in n.output):
                nt.status, nt.reason = REMOVED, "eliminated by ORT's graph optimizer"
            else:
                nt.status = FOLDED
                nt.reason = "folded by ORT's optimizer (static shape arithmetic / constants)" + (
                    f"; feeds {target}" if target else "")
        rep.nodes.append(nt)
