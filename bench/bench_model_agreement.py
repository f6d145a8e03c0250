"""Benchmark: the static whole-model verdict against the vendor's tool, model by model (not op by op).

Every model of the whole-model corpus (bench/model_corpus.py: the studio's samples and tiny transformers models
exported by the studio, with their static / fp16 / int8 variants) is inspected for each target and given to
that target's verifier at the same static shapes: rk3588 (rknn-toolkit2 2.5.0 build + simulator), openvino
(read_model + query_model + compile_model on CPU), tvm-relax (from_onnx), ort-cpu (an InferenceSession). Both
answers are whole-model verdicts in one vocabulary (studio.inspect.model_verdict: runs / host-fallback /
does-not-build / tool-crashed); a tool that crashed is listed and left out of the agreement (its fault, not the
model's). For rk3588 the host-placed nodes each side names are compared too. CPU-heavy: run it niced, locked.

    flock /tmp/cpuheavy.lock nice -n 5 .venv/bin/python -m bench.bench_model_agreement [--corpus DIR]
        [--target T ...] [--tool-cache DIR] [--fold-into-profile DIR] [--json OUT] [--markdown]

``--tool-cache`` keeps each tool's answer (keyed by the tool, the model file's hash and the shapes): a re-run
after a profile edit only re-inspects. ``--fold-into-profile DIR`` folds the tools' answers where they disagree
into DIR/<target>.yaml (studio.verify.fold, as `studio inspect --verify --fold-into-profile` does), then measures
again with DIR as an extra profile folder.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

TARGETS = {"rk3588": "rknn-rk3588", "openvino": "openvino-cpu", "tvm-relax": "tvm-relax", "ort-cpu": "ort-cpu"}
TOOL_TIMEOUT = 240.0  # seconds; the corpus' models build in under 40 s on this machine, loaded
GOALS = {"rk3588": 95.0, "openvino": 95.0, "tvm-relax": 98.0, "ort-cpu": 98.0}


def _plugin_path() -> None:
    """The plugins of this checkout when they are not installed (the bench runs from a clone)."""
    root = Path(__file__).resolve().parents[1]
    for p in ("studio-rknn", "studio-openvino"):
        if str(root / "plugins" / p) not in sys.path:
            sys.path.append(str(root / "plugins" / p))


def tool_answer(entry: Any, path: Path, shapes: dict[str, list[int]], cache: Path | None) -> Any:
    """The verifier's answer, from ``cache`` when this tool already answered for these bytes at these shapes."""
    from studio.verify.api import VerifyResult
    from studio.verify.model_level import crashed_result

    key = hashlib.sha256(path.read_bytes() + json.dumps(shapes, sort_keys=True).encode()).hexdigest()[:24]
    f = None
    if cache is not None:
        safe = "".join(ch if ch.isalnum() or ch in "-._" else "_" for ch in f"{entry.name}-{entry.reason}")
        f = cache / safe[:120] / f"{key}.json"
        if f.exists():
            return VerifyResult.from_dict(json.loads(f.read_text()))
    try:
        res = entry.verifier.verify(path, shapes)
    except Exception as exc:  # the bench goes on; a verifier that raises is the tool's crash
        res = crashed_result(entry.name, entry.target, entry.reason, exc)
    if f is not None:
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(res.to_dict()))
    return res


def _rules(mv: dict[str, Any]) -> list[str]:
    """What decided a whole-model verdict: the blockers' rules, else the host nodes' rules."""
    if mv.get("blockers"):
        return sorted({f"{b['rule']}" + (f" {b['op_type']}" if b.get("op_type") else "") for b in mv["blockers"]})
    return sorted({h["reason"].split(":")[0][:60] + f" ({h['op_type']})" for h in mv.get("host_nodes", [])})


def measure(corpus: dict[str, dict[str, Any]], targets: list[str], cache: Path | None,
            profile_dirs: list[Path] | None = None, log: Any = sys.stderr) -> dict[str, Any]:
    """Per target: counts, agreement, host-node agreement, crashes, every disagreement with both sides."""
    from studio.inspect.api import inspect_model, load_structure
    from studio.verify.compare import compare
    from studio.verify.registry import all_verifiers

    entries = {e.name: e for e in all_verifiers()}
    for e in entries.values():  # a tiny model builds in seconds: a toolkit silent for minutes has hung
        if hasattr(e.verifier, "timeout"):
            e.verifier.timeout = TOOL_TIMEOUT
    out: dict[str, Any] = {"targets": {}, "skipped": {}, "models": len(corpus), "rows": []}
    usable = []
    for t in targets:
        e = entries.get(TARGETS[t])
        if e is None or not e.ok:
            out["skipped"][t] = e.reason if e else f"no verifier '{TARGETS[t]}' registered"
            continue
        usable.append((t, e))
        out["targets"][t] = {"verifier": e.name, "tool": e.reason, "compared": 0, "agree": 0, "builds_agree": 0,
                             "crashed": [], "by_verdict": collections.Counter(), "host_exact": 0,
                             "host_models": 0, "host_static": 0, "host_tool": 0, "host_both": 0,
                             "disagreements": []}
    t0 = time.perf_counter()
    for i, (mid, m) in enumerate(sorted(corpus.items())):
        path, shapes = Path(m["path"]), m["shapes"]
        try:
            rep = inspect_model(path, [t for t, _ in usable], shapes=shapes, profile_dirs=profile_dirs)
            lm = load_structure(path, shapes=shapes)
        except Exception as exc:  # the inspector refusing a corpus model is itself a finding
            print(f"{mid}: inspect failed: {exc}", file=log)
            continue
        for t, e in usable:
            row = out["targets"][t]
            res = tool_answer(e, path, shapes, cache)
            if not res.crash and res.tool:
                row["tool"] = res.tool  # the version that answered (the registry's line names its folder too)
            c = compare(rep, res, lm)
            tool_v, static_v = c.tool_model, c.static_model
            rec = {"model": mid, "family": m["family"], "variant": m["variant"], "target": t,
                   "static": static_v["verdict"], "tool": tool_v["verdict"], "agree": c.model_agrees}
            out["rows"].append(rec)
            if c.tool_crashed:
                row["crashed"].append({"model": mid, "error": res.error[:300], "tool": res.tool})
                continue
            row["compared"] += 1
            row["agree"] += bool(c.model_agrees)
            row["by_verdict"][f"{static_v['verdict']} / {tool_v['verdict']}"] += 1
            sb = {True: True, False: False}.get(static_v["verdict"] in ("runs", "host-fallback"))
            tb = tool_v["verdict"] in ("runs", "host-fallback")
            row["builds_agree"] += sb == tb
            if tool_v["verdict"] == "host-fallback" or static_v["verdict"] == "host-fallback":
                s = {h["node"] for h in static_v.get("host_nodes", [])}
                tt = {h["node"] for h in tool_v.get("host_nodes", [])}
                row["host_models"] += 1
                row["host_exact"] += s == tt
                row["host_static"] += len(s)
                row["host_tool"] += len(tt)
                row["host_both"] += len(s & tt)
                rec["host_static_only"], rec["host_tool_only"] = sorted(s - tt), sorted(tt - s)
            if not c.model_agrees:
                row["disagreements"].append({
                    "model": mid, "static": static_v["verdict"], "tool": tool_v["verdict"],
                    "static_rules": _rules(static_v)[:4], "tool_said": _rules(tool_v)[:4],
                    "tool_error": (res.error or "")[:300],
                    "static_first": (static_v.get("blockers") or [{}])[0].get("message", "")[:300]})
        if (i + 1) % 10 == 0:
            print(f"{i + 1}/{len(corpus)} models, {time.perf_counter() - t0:.0f} s", file=log, flush=True)
    out["seconds"] = round(time.perf_counter() - t0, 1)
    for row in out["targets"].values():
        row["agreement"] = round(100.0 * row["agree"] / row["compared"], 2) if row["compared"] else 0.0
        row["builds_agreement"] = round(100.0 * row["builds_agree"] / row["compared"], 2) if row["compared"] else 0.0
        both, st, tl = row["host_both"], row["host_static"], row["host_tool"]
        row["host_f1"] = round(2 * both / (st + tl), 4) if st + tl else 1.0
        row["by_verdict"] = dict(row["by_verdict"])
        row["by_rule"] = dict(collections.Counter(
            f"static {d['static']} [{', '.join(d['static_rules'][:2])}] / tool {d['tool']}"
            for d in row["disagreements"]).most_common())
    return out


def fold_disagreements(corpus: dict[str, dict[str, Any]], res: dict[str, Any], dest: Path, cache: Path | None,
                       log: Any = sys.stderr) -> list[str]:
    """Fold each disagreeing tool answer into ``dest``/<target>.yaml (studio.verify.fold); the lines it wrote."""
    from studio.inspect.api import inspect_model, load_structure
    from studio.verify.compare import compare
    from studio.verify.fold import fold
    from studio.verify.registry import all_verifiers

    entries = {e.name: e for e in all_verifiers()}
    dest.mkdir(parents=True, exist_ok=True)
    said: list[str] = []
    for t, row in res["targets"].items():
        e = entries[TARGETS[t]]
        for d in row["disagreements"]:
            m = corpus[d["model"]]
            path, shapes = Path(m["path"]), m["shapes"]
            dirs = [dest] if (dest / f"{t}.yaml").exists() else None
            rep = inspect_model(path, [t], shapes=shapes, profile_dirs=dirs)
            tool = tool_answer(e, path, shapes, cache)
            c = compare(rep, tool, load_structure(path, shapes=shapes))
            rep.verification = {"comparisons": [c.to_dict()], "results": [tool.to_dict()]}
            out = fold(rep, t, dest)
            what = ", ".join(f"{k} ({v.split(':')[0]})" for k, v in out.changed.items())
            line = (f"{t} {d['model']}: folded {what}" if out.path is not None
                    else f"{t} {d['model']}: nothing folded ({out.skipped})")
            said.append(line)
            print(line, file=log)
    return said


def markdown(res: dict[str, Any]) -> str:
    lines = ["| target | tool | models compared | agree | model-level agreement | goal | builds / not agreement | "
             "host nodes F1 (exact sets) | tool crashed (left out) |", "|---|---|---|---|---|---|---|---|---|"]
    for t, r in res["targets"].items():
        goal = GOALS.get(t, 0.0)
        met = "met" if r["agreement"] >= goal else "NOT met"
        host = f"{r['host_f1']:.3f} ({r['host_exact']}/{r['host_models']})" if r["host_models"] else "-"
        lines.append(f"| {t} | {r['tool']} | {r['compared']} | {r['agree']} | **{r['agreement']:.2f}%** | "
                     f">= {goal:.0f}% {met} | {r['builds_agreement']:.2f}% | {host} | {len(r['crashed'])} |")
    for t, why in res["skipped"].items():
        lines.append(f"| {t} | skipped: {why} | | | | | | | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    _plugin_path()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=None, help="corpus folder (default: built in the cache)")
    ap.add_argument("--target", action="append", choices=list(TARGETS), default=None)
    ap.add_argument("--tool-cache", type=Path, default=None, help="reuse the tools' answers from this folder")
    ap.add_argument("--fold-into-profile", type=Path, default=None, metavar="DIR",
                    help="fold the disagreeing answers into DIR/<target>.yaml, then measure again with DIR")
    ap.add_argument("--json", type=Path, default=None, help="every count, row and disagreement")
    ap.add_argument("--markdown", action="store_true", help="print the BENCHMARKS.md table")
    args = ap.parse_args(argv)
    from bench import model_corpus
    from studio.core.paths import cache_dir

    work = args.corpus or cache_dir() / "bench-model-corpus"
    corpus_obj = model_corpus.Corpus(work)
    if not corpus_obj.models():
        corpus_obj = model_corpus.build(work)
    corpus = dict(corpus_obj.models())
    targets = args.target or list(TARGETS)
    res = measure(corpus, targets, args.tool_cache)
    res["corpus"] = {"folder": str(work), "models": len(corpus),
                     "left_out": {k: v["error"][:200] for k, v in corpus_obj.entries.items() if "error" in v}}
    if args.fold_into_profile is not None:
        res["folded"] = fold_disagreements(corpus, res, args.fold_into_profile, args.tool_cache)
        res["after_fold"] = measure(corpus, targets, args.tool_cache, [args.fold_into_profile])
    if args.json:
        args.json.write_text(json.dumps(res, indent=1, default=str))
    print(markdown(res))
    if "after_fold" in res:
        print("\nafter --fold-into-profile:\n" + markdown(res["after_fold"]))
    if not args.markdown:
        for t, r in res["targets"].items():
            for rule, n in r["by_rule"].items():
                print(f"{t} x{n}: {rule}")
            for d in r["disagreements"]:
                print(f"  {t} {d['model']}: static {d['static']} {d['static_rules'][:2]} / tool {d['tool']} "
                      f"{d['tool_said'][:2]} {d['tool_error'][:120]}")
            for c in r["crashed"]:
                print(f"  {t} {c['model']}: tool crashed: {c['error'][:160]}")
    print(f"{len(corpus)} models in {res['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
