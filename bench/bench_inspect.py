"""Benchmark: `studio inspect --target all` against the fairest floor, `onnx.load(load_external_data=False)` +
`onnx.shape_inference.infer_shapes` of the same file (the inspector never reads weights either), on a generated
transformer of >= 5,000 nodes with >= 300 MB of external weights; `onnx.load` with the weights is kept as a
second line. The inspector's shape inference runs in a forked child beside its start-up (studio.inspect.shape_fork);
the same inspection with it in process (``STUDIO_SHAPE_FORK=0``, what the GUI's threads do) runs in every round
too. Each measurement runs in its own process (wall time and peak RSS of that process), alternating,
median of N rounds. The studio's bytecode is compiled first (an installed package has it; an editable install
under PYTHONDONTWRITEBYTECODE would compile ~40 modules in every run). The inspector keeps the ONNX Runtime
kernel registry it computes in the user cache (studio.inspect.profile_cache): the warm figure is every run
after the first, the cold one a fresh cache folder each round.

    .venv/bin/python bench/bench_inspect.py [--layers 150] [--hidden 224] [--rounds 3] [--keep DIR]
        [--reference OLD_REPORT.json] [--ab-tree DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BASELINE = """
import json, sys, time
t0 = time.perf_counter()
import onnx
m = onnx.load(sys.argv[1], load_external_data=False)
onnx.shape_inference.infer_shapes(m)
t = time.perf_counter() - t0
print(json.dumps({"seconds": t, "peak_rss_mb": hwm()}))
"""

WITH_WEIGHTS = BASELINE.replace(", load_external_data=False", "")

INSPECT = """
import json, sys, time
t0 = time.perf_counter()
from studio.cli.main import main
rc = main(["inspect", sys.argv[1], "--target", "all", "--format", "json", "--output", sys.argv[2], "--quiet"])
t = time.perf_counter() - t0
import resource  # the shape-inference child's peak (a fork: its shared pages count in both)
child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"seconds": t, "rc": rc, "peak_rss_mb": hwm(), "child_peak_rss_mb": child}))
"""
# VmHWM is the peak RSS of this process image (ru_maxrss can carry over from the forking parent).
HWM = """
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
"""


def run(code: str, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> dict:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", HWM + code, *args], capture_output=True, text=True, check=True,
                          env=None if env is None else {**os.environ, **env}, cwd=cwd)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["process_seconds"] = time.perf_counter() - t
    return res


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=152)
    ap.add_argument("--hidden", type=int, default=224)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keep", type=Path, default=None, help="folder for the generated model (default: temp)")
    ap.add_argument("--reference", type=Path, default=None,
                    help="a report of the same model from earlier code: the new one must equal it field by "
                         "field, timings aside (same_as_reference in the output)")
    ap.add_argument("--ab-tree", type=Path, default=None,
                    help="a folder holding another studio/ (e.g. `git archive REV studio | tar -x -C DIR`): its "
                         "inspector also runs in every round, side by side (python -c puts the cwd first on sys.path)")
    args = ap.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-inspect-"))
    work.mkdir(parents=True, exist_ok=True)
    model = work / "big_transformer.onnx"
    t = time.perf_counter()
    if not model.exists():  # in a child process, so this process stays small
        subprocess.run([sys.executable, "-c", "import sys; from studio.inspect.synthetic import save_transformer; "
                        f"save_transformer(sys.argv[1], external_data=True, layers={args.layers}, "
                        f"hidden={args.hidden}, heads=4, vocab=1000, max_pos=128)", str(model)], check=True)
    gen = time.perf_counter() - t
    data = work / f"{model.name}.data"
    weights_mb = data.stat().st_size / 2**20
    out = work / "report.json"

    root = Path(__file__).resolve().parents[1]
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", str(root / "studio")], check=True,
                   stdout=subprocess.DEVNULL)
    run(INSPECT, str(model), str(out))  # fills the user cache, as any earlier run has
    ab_out = work / "report_ab.json"
    if args.ab_tree is not None:
        subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", str(args.ab_tree / "studio")],
                       check=True, stdout=subprocess.DEVNULL)
        run(INSPECT, str(model), str(ab_out), cwd=args.ab_tree)
    base, heavy, insp, cold, other, single = [], [], [], [], [], []
    for _ in range(args.rounds):
        base.append(run(BASELINE, str(model)))
        insp.append(run(INSPECT, str(model), str(out)))
        # shape inference in process (what a process with threads, e.g. the GUI, or STUDIO_SHAPE_FORK=0 does)
        single.append(run(INSPECT, str(model), str(work / "report_single.json"), env={"STUDIO_SHAPE_FORK": "0"}))
        if args.ab_tree is not None:
            other.append(run(INSPECT, str(model), str(ab_out), cwd=args.ab_tree))
        with tempfile.TemporaryDirectory(prefix="bench-inspect-cache-") as fresh:
            cold.append(run(INSPECT, str(model), str(work / "report_cold.json"), env={"STUDIO_CACHE_DIR": fresh}))
        heavy.append(run(WITH_WEIGHTS, str(model)))
    rep = json.loads(out.read_text())
    # The weights are never read: the same inspection over a same-size sparse file (holes, no data on disk) in
    # place of the weights gives the same verdicts. A missing data file is refused (rc 2, naming it), so it cannot
    # stand in for "not read".
    hidden = data.with_suffix(".hidden")
    os.replace(data, hidden)
    try:
        missing = run(INSPECT, str(model), str(work / "report_missing.json"))
        with open(data, "wb") as f:
            f.truncate(hidden.stat().st_size)
        without = run(INSPECT, str(model), str(work / "report_noweights.json"))
    finally:
        os.replace(hidden, data)
    same = json.loads((work / "report_noweights.json").read_text())["node_verdicts"] == rep["node_verdicts"]

    b = statistics.median(r["seconds"] for r in base)
    w = statistics.median(r["seconds"] for r in heavy)
    i = statistics.median(r["seconds"] for r in insp)
    c = statistics.median(r["seconds"] for r in cold)
    ratios = [r["seconds"] / f["seconds"] for r, f in zip(insp, base, strict=True)]
    result = {
        "nodes": rep["stats"]["nodes"], "weights_mb": round(weights_mb, 1),
        "params": rep["stats"]["parameters"], "targets": len(rep["targets"]), "generate_s": round(gen, 1),
        "floor_s": round(b, 3), "inspect_s": round(i, 3), "ratio_vs_floor": round(i / b, 3),
        "ratio_per_round": [round(x, 2) for x in ratios], "median_round_ratio": round(statistics.median(ratios), 3),
        "inspect_in_process_inference_s": round(statistics.median(r["seconds"] for r in single), 3),
        "ratio_in_process_inference_vs_floor": round(statistics.median(
            r["seconds"] / f["seconds"] for r, f in zip(single, base, strict=True)), 3),
        "inspect_cold_cache_s": round(c, 3), "ratio_cold_vs_floor": round(c / b, 3),
        "with_weights_s": round(w, 3), "ratio_vs_with_weights": round(i / w, 3),
        "floor_peak_rss_mb": round(max(r["peak_rss_mb"] for r in base), 1),
        "with_weights_peak_rss_mb": round(max(r["peak_rss_mb"] for r in heavy), 1),
        "inspect_peak_rss_mb": round(max(r["peak_rss_mb"] for r in insp), 1),
        "inspect_shape_child_peak_rss_mb": round(max(r["child_peak_rss_mb"] for r in insp), 1),
        "inspect_internal_timings": rep["timings"],
        "inspect_weights_as_sparse_file": {"rc": without["rc"], "same_verdicts": same,
                                           "peak_rss_mb": round(without["peak_rss_mb"], 1)},
        "inspect_weights_file_missing_rc": missing["rc"],
        "rounds": args.rounds, "cpus": os.cpu_count(),
    }
    if other:
        result["ab_tree_inspect_s"] = round(statistics.median(r["seconds"] for r in other), 3)
        result["ab_tree_ratio_per_round"] = [round(o["seconds"] / f["seconds"], 2) for o, f in zip(other, base,
                                                                                                   strict=True)]
        result["ab_tree_median_round_ratio"] = round(statistics.median(result["ab_tree_ratio_per_round"]), 3)
        result["median_round_this_over_ab_tree"] = round(statistics.median(
            r["seconds"] / o["seconds"] for r, o in zip(insp, other, strict=True)), 3)
        theirs = json.loads(ab_out.read_text())
        result["same_as_ab_tree"] = all(theirs.get(k) == rep.get(k) for k in set(theirs) | set(rep) if k != "timings")
    if args.reference is not None:
        ref = json.loads(args.reference.read_text())
        differ = sorted(k for k in set(ref) | set(rep) if k != "timings" and ref.get(k) != rep.get(k))
        result["same_as_reference"] = not differ
        result["fields_differing_from_reference"] = differ
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
