"""Benchmark: agreement of the static target profiles with the real tools on ONNX's backend node-test corpus.

Every case of ``onnx.backend.test.case.node.collect_testcases("")`` that has a model (1,884 with onnx 1.23) is
saved, inspected against ort-cpu / tvm-relax / openvino, and given to that target's verifier (a real ORT
session, a real TVM ``from_onnx``, OpenVINO ``read_model`` + ``query_model(CPU)``). Model level: the profile
says "fail" (some node unsupported) or not; the tool refused the model or not. Counted, not sampled; a
verifier that is not installed is skipped with its reason. CPU-heavy: run it niced.

    nice -n 10 .venv/bin/python -m bench.bench_verify_agreement [--target ort-cpu] [--json out.json]
        [--tool-cache DIR] [--limit N] [--markdown]

``--tool-cache`` keeps the tools' answers (keyed by tool version and case), so a re-run after a profile edit
only re-inspects.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

TARGETS = {"ort-cpu": "ort-cpu", "tvm-relax": "tvm-relax", "openvino": "openvino-cpu"}  # target -> verifier


def corpus(limit: int | None = None) -> list[tuple[str, Any]]:
    """(name, ModelProto) of every node test case that carries a model."""
    import numpy as np
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        cases = [(c.name, c.model) for c in collect_testcases("") if c.model is not None]
    return cases[:limit] if limit else cases


def _cached_result(cache: Path | None, tool: str, case: str, run: Any) -> Any:
    from studio.verify.api import VerifyResult

    if cache is None:
        return run()
    f = cache / "".join(ch if ch.isalnum() or ch in "-._" else "_" for ch in tool) / f"{case}.json"
    if f.exists():
        return VerifyResult.from_dict(json.loads(f.read_text()))
    res = run()
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(json.dumps(res.to_dict()))
    return res


def measure(targets: list[str], limit: int | None, cache: Path | None, log: Any = sys.stderr) -> dict[str, Any]:
    """Per target: counts, agreement and every disagreeing case with both sides' reasons."""
    import onnx

    from studio.inspect.api import inspect_model
    from studio.verify.compare import compare
    from studio.verify.registry import all_verifiers

    entries = {e.name: e for e in all_verifiers()}
    out: dict[str, Any] = {"targets": {}, "skipped": {}}
    usable = []
    for t in targets:
        e = entries.get(TARGETS[t])
        if e is None or not e.ok:
            out["skipped"][t] = e.reason if e else f"no verifier '{TARGETS[t]}' registered"
            print(f"skip {t}: {out['skipped'][t]}", file=log)
            continue
        usable.append((t, e))
        out["targets"][t] = {"verifier": e.name, "tool": e.reason, "models": 0, "agree": 0, "tool_fails": 0,
                             "static_fails": 0, "not_loaded": 0, "false_alarms": [], "misses": []}
    cases = corpus(limit)
    out["corpus"] = len(cases)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as td:
        for i, (name, model) in enumerate(cases):
            path = Path(td) / f"{name}.onnx"
            onnx.save(model, str(path))
            try:
                rep = inspect_model(path, [t for t, _ in usable])
            except Exception as exc:  # the inspector refusing a corpus model is itself a finding
                print(f"{name}: inspect failed: {exc}", file=log)
                continue
            for t, e in usable:
                row = out["targets"][t]
                res = _cached_result(cache, e.reason, name, lambda e=e, p=path: e.verifier.verify(p))
                if not res.ran:
                    row["not_loaded"] += 1
                    continue
                c = compare(rep, res)
                row["models"] += 1
                row["agree"] += c.agrees
                row["tool_fails"] += c.tool_fails
                row["static_fails"] += c.static_fails
                if not c.agrees:
                    static_why = sorted({f"{d.op_type}: {d.static_reason}" for d in c.disagreements
                                         if d.static_verdict == "unsupported"})
                    tool_why = sorted({f"{n.op_type}: {n.message}" for n in res.nodes if n.verdict == "unsupported"})
                    case = {"case": name, "ops": sorted({n.op_type for n in res.nodes}),
                            "static": static_why[:3], "tool": (tool_why or [res.error])[:3]}
                    row["false_alarms" if c.static_fails else "misses"].append(case)
            if (i + 1) % 200 == 0:
                print(f"{i + 1}/{len(cases)} cases, {time.perf_counter() - t0:.0f} s", file=log, flush=True)
    out["seconds"] = round(time.perf_counter() - t0, 1)
    for row in out["targets"].values():
        row["agreement"] = round(100.0 * row["agree"] / row["models"], 2) if row["models"] else 0.0
    return out


def markdown(res: dict[str, Any]) -> str:
    lines = ["| target | tool | models loaded | agree | agreement | tool refuses | profile refuses | "
             "false alarms | misses |", "|---|---|---|---|---|---|---|---|---|"]
    for t, r in res["targets"].items():
        lines.append(f"| {t} | {r['tool']} | {r['models']} | {r['agree']} | {r['agreement']:.2f}% | "
                     f"{r['tool_fails']} | {r['static_fails']} | {len(r['false_alarms'])} | {len(r['misses'])} |")
    for t, why in res["skipped"].items():
        lines.append(f"| {t} | skipped: {why} | | | | | | | |")
    return "\n".join(lines)


def grouped(cases: list[dict[str, Any]]) -> list[tuple[str, int, dict[str, Any]]]:
    """Disagreements grouped by op set, most frequent first: (ops, count, first case)."""
    by: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for c in cases:
        by[",".join(c["ops"])].append(c)
    return sorted(((k, len(v), v[0]) for k, v in by.items()), key=lambda x: -x[1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", action="append", choices=list(TARGETS), default=None)
    ap.add_argument("--limit", type=int, default=None, help="first N cases only (a quick look, not the figure)")
    ap.add_argument("--json", type=Path, default=None, help="write every count and disagreement here")
    ap.add_argument("--tool-cache", type=Path, default=None, help="reuse the tools' answers from this folder")
    ap.add_argument("--markdown", action="store_true", help="print the BENCHMARKS.md table")
    args = ap.parse_args(argv)
    res = measure(args.target or list(TARGETS), args.limit, args.tool_cache)
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))
    print(markdown(res))
    if not args.markdown:
        for t, r in res["targets"].items():
            for kind in ("false_alarms", "misses"):
                for ops, n, c in grouped(r[kind]):
                    print(f"{t} {kind} x{n} [{ops}] e.g. {c['case']}: static={c['static'][:1]} "
                          f"tool={[m[:160] for m in c['tool'][:1]]}")
    print(f"{res['corpus']} corpus cases in {res['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
