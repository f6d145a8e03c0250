"""Benchmark: the static rk3588 profile against a real rknn-toolkit2 build, on ONNX's backend node-test corpus.

Every case of ``onnx.backend.test.case.node.collect_testcases("")`` with a model and plain tensor inputs is
saved and given to the toolkit (studio-rknn plugin, its own environment): config(rk3588) -> load_onnx at the
shapes of the case's own inputs -> build (fp16) -> init_runtime (x86 simulator) -> one inference. The toolkit
accepts a model when that inference ran. The profile refuses a model when ``studio inspect --target rk3588``
says "fail". Agreement is counted on every model the toolkit loads (load_onnx passed); models it refuses to
load (opset > 19 above all) are counted in their own row. CPU-heavy: run it niced.

    nice -n 10 .venv/bin/python -m bench.bench_rknn_agreement [--profile FILE] [--work DIR] [--limit N]
        [--json out.json] [--markdown]

``--work`` keeps the saved models and the toolkit's answers (JSONL + one log per model): a re-run after a
profile edit only re-inspects. ``--profile`` inspects with another rk3588 profile file (e.g. the 2.3.2 one
from git) instead of the shipped one.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _plugin() -> Any:
    """The plugin installed in this venv, else the checkout's copy (the bench runs from a clone)."""
    try:
        import studio_rknn  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(ROOT / "plugins" / "studio-rknn"))
    from studio_rknn import client, env, logparse, verifier

    return client, env, logparse, verifier


def _at_opset(model: Any, opset: int) -> Any | None:
    """The case converted down to ``opset`` by onnx's version converter (None when it cannot be)."""
    import onnx
    from onnx import version_converter

    try:
        conv = version_converter.convert_version(model, opset)
        conv.ir_version = min(conv.ir_version, 9)
        onnx.checker.check_model(conv)
        return conv
    except Exception:
        return None


def save_corpus(work: Path, limit: int | None, downgrade: int | None = None, only: list[str] | None = None
                ) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Jobs for the toolkit (one per case with tensor inputs) and the cases left out, with why. With
    ``downgrade``, only cases above that ai.onnx opset, converted down to it (the toolkit refuses them as
    they are): the same ops checked at an opset the toolkit loads."""
    import numpy as np
    import onnx
    from onnx.backend.test.case.node import collect_testcases

    models = work / "models"
    models.mkdir(parents=True, exist_ok=True)
    jobs, skipped = [], {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = [c for c in collect_testcases("") if c.model is not None
                 and (not only or any(o in c.name for o in only))]
    for case in cases[:limit]:
        inits = {t.name for t in case.model.graph.initializer}
        names = [i.name for i in case.model.graph.input if i.name not in inits]
        feeds = list(case.data_sets[0][0]) if case.data_sets else []
        model, name = case.model, case.name
        opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)
        if downgrade is not None and opset <= downgrade:
            continue
        if len(feeds) < len(names) or not all(isinstance(a, np.ndarray) and a.dtype != object for a in feeds):
            skipped[case.name] = "inputs are not plain tensors (sequence, optional or string)"
            continue
        if downgrade is not None:
            model, name = _at_opset(model, downgrade), f"{case.name}@{downgrade}"
            if model is None:
                skipped[name] = f"onnx's version converter cannot take it to opset {downgrade}"
                continue
        path = models / f"{name}.onnx"
        if not path.exists():
            onnx.save(model, path)
        arrays = []
        for i, a in enumerate(feeds[:len(names)]):  # the case's own inputs: valid indices, no zero divisors
            arrays.append(str(models / f"{name}.in{i}.npy"))
            np.save(arrays[-1], a)
        jobs.append({"id": name, "model": str(path), "platform": "rk3588", "arrays": arrays,
                     "log": str(work / "logs" / f"{name}.log"),
                     "inputs": [{"name": n, "shape": list(a.shape), "dtype": str(a.dtype)}
                                for n, a in zip(names, feeds[:len(names)], strict=True)]})
    (work / "logs").mkdir(exist_ok=True)
    return jobs, skipped


def static_verdict(path: Path, profile: Path | None) -> tuple[bool, str]:
    """(the profile refuses it, the reasons) from the inspector against rk3588."""
    from studio.core.errors import StudioError
    from studio.inspect.api import inspect_model

    try:
        rep = inspect_model(path, ["rk3588"], profile_dirs=[profile] if profile else None)
    except StudioError as exc:
        return True, f"inspect refused the model: {exc.message}"
    t = rep.targets["rk3588"]
    reasons = sorted({f"{f.op_type or f.rule}: {f.message}" for f in rep.findings
                      if f.target == "rk3588" and f.verdict == "unsupported"})
    return t.verdict == "fail", "; ".join(reasons)[:300]


def run(work: Path, profile: Path | None, limit: int | None, downgrade: int | None = None,
        only: list[str] | None = None) -> dict[str, Any]:
    client, envmod, logparse, verifier = _plugin()
    op_stats: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    status = envmod.check_env()
    if not status.ok:
        raise SystemExit(f"rknn toolchain not usable: {status.reason}")
    t0 = time.perf_counter()
    jobs, skipped = save_corpus(work, limit, downgrade, only)
    answers = work / (f"toolkit-opset{downgrade}.jsonl" if downgrade else "toolkit.jsonl")
    records = client.check_many(jobs, answers, timeout_per_job=60,
                                progress=lambda d, n: print(f"\rtoolkit {d}/{n}", end="", file=sys.stderr))
    print(file=sys.stderr)
    t_tool = time.perf_counter() - t0
    rows = []
    for job, rec in zip(jobs, records, strict=True):
        log = logparse.parse_log(Path(rec["log"]).read_text(encoding="utf-8", errors="replace")
                                 if Path(rec["log"]).exists() else "")
        loaded = rec["reached"] in ("load", "build", "init_runtime", "inference")
        accepted = rec["reached"] == "inference"
        refuses, why = static_verdict(Path(job["model"]), profile)
        ops = sorted({f"{n.op_type}" for n in _nodes(Path(job["model"]))})
        for check in _node_checks(verifier, Path(job["model"]), job, rec, log):
            op_stats[check.op_type][f"{check.verdict}/{check.placement or '-'}"] += 1
        rows.append({"case": job["id"], "ops": ops, "loaded": loaded, "tool_accepts": accepted,
                     "stage": rec["failed_stage"], "tool_error": (log.first_error() or rec["error"])[:300],
                     "cpu_layers": sorted({ly.op_type for ly in log.layers if ly.target != "NPU"}
                                          - {"InputOperator", "OutputOperator"}),
                     "static_refuses": refuses, "static_reason": why})
    res = summarise(rows, skipped, profile, time.perf_counter() - t0, t_tool, status)
    res["ops"] = {op: dict(c) for op, c in sorted(op_stats.items())}
    return res


def _node_checks(verifier: Any, model: Path, job: dict[str, Any], rec: dict[str, Any], log: Any) -> list[Any]:
    """The verifier's per-node answers for one corpus run (same mapping as ``studio inspect --verify``)."""
    from studio.core.errors import StudioError

    try:
        mi = verifier.static_inputs(model, {i["name"]: i["shape"] for i in job["inputs"]})
    except StudioError:
        return []
    v = verifier.RknnVerifier(name="rknn-rk3588", target="rk3588", platform="rk3588")
    return verifier.result_from_run(v, rec, log, mi, "", {}, 0.0).nodes


def _nodes(path: Path) -> list[Any]:
    import onnx

    return list(onnx.load(str(path), load_external_data=False).graph.node)


def summarise(rows: list[dict[str, Any]], skipped: dict[str, str], profile: Path | None, seconds: float,
              tool_seconds: float, status: Any) -> dict[str, Any]:
    loaded = [r for r in rows if r["loaded"]]
    agree = [r for r in loaded if r["static_refuses"] == (not r["tool_accepts"])]
    refused_load = [r for r in rows if not r["loaded"]]
    load_agree = [r for r in refused_load if r["static_refuses"]]
    why_load = collections.Counter(_shorten(r["tool_error"]) for r in refused_load)
    dis = [r for r in loaded if r["static_refuses"] == r["tool_accepts"]]
    return {"tool": f"rknn-toolkit2 {status.versions.get('rknn-toolkit2', '?')}",
            "profile": str(profile) if profile else "studio/resources/targets/rk3588.yaml",
            "cases": len(rows) + len(skipped), "skipped": len(skipped), "given": len(rows),
            "loaded": len(loaded), "agree": len(agree),
            "agreement": round(len(agree) / max(len(loaded), 1), 4),
            "tool_accepts": sum(r["tool_accepts"] for r in loaded),
            "static_refuses_loaded": sum(r["static_refuses"] for r in loaded),
            "false_alarms": sum(1 for r in dis if r["static_refuses"]),
            "misses": sum(1 for r in dis if not r["static_refuses"]),
            "not_loaded": len(refused_load), "not_loaded_static_refuses": len(load_agree),
            "not_loaded_reasons": dict(why_load.most_common(12)),
            "seconds": round(seconds, 1), "toolkit_seconds": round(tool_seconds, 1),
            "disagreements": [{k: r[k] for k in ("case", "ops", "tool_accepts", "stage", "tool_error",
                                                 "static_refuses", "static_reason", "cpu_layers")} for r in dis]}


def _shorten(msg: str) -> str:
    import re

    return re.sub(r"\d+", "N", msg.split("\n")[0])[:90]


def markdown(res: dict[str, Any]) -> str:
    lines = [f"rk3588 profile ({res['profile']}) vs {res['tool']} build + simulator, onnx backend node tests",
             "", "| cases | given to the toolkit | loaded (load_onnx ok) | agree | agreement | false alarms | "
             "misses | not loaded (static also refuses) |", "|---|---|---|---|---|---|---|---|",
             f"| {res['cases']} | {res['given']} | {res['loaded']} | {res['agree']} | {res['agreement']:.1%} | "
             f"{res['false_alarms']} | {res['misses']} | {res['not_loaded']} ({res['not_loaded_static_refuses']}) |",
             "", "Disagreements:", ""]
    for d in res["disagreements"]:
        side = "profile refuses, toolkit runs it" if d["static_refuses"] else "profile passes, toolkit refuses"
        lines.append(f"- {d['case']} ({', '.join(d['ops'])}): {side}; toolkit: "
                     f"{d['stage'] or 'ok'} {d['tool_error'][:140]}; profile: {d['static_reason'][:140]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", type=Path, help="an rk3588 profile file to inspect with (default: the shipped one)")
    ap.add_argument("--work", type=Path, help="keep models and toolkit answers here (default: a cache folder)")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--downgrade", type=int, metavar="OPSET",
                    help="instead: the cases above OPSET converted down to it (onnx version converter)")
    ap.add_argument("--only", action="append", default=None, metavar="SUBSTR",
                    help="only the cases whose name holds SUBSTR (repeatable): a re-check of the ops a profile edit "
                         "touched")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--op-table", action="store_true", help="print the toolkit's per-op answers (verdict/placement)")
    args = ap.parse_args(argv)
    from studio.core.paths import cache_dir

    work = args.work or cache_dir() / "bench-rknn-agreement"
    res = run(work, args.profile, args.limit, args.downgrade, args.only)
    if args.json:
        args.json.write_text(json.dumps(res, indent=1), encoding="utf-8")
    if args.op_table:
        for op, c in res["ops"].items():
            print(f"{op:28s} " + ", ".join(f"{k}: {n}" for k, n in sorted(c.items())))
    print(markdown(res) if args.markdown else json.dumps({k: v for k, v in res.items()
                                                         if k not in ("disagreements", "ops")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
