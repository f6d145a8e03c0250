"""Benchmark: `studio diff` on a 100,000-node model with no node names, against itself and against a copy with
one node changed (Relu -> Sigmoid in the middle), beside the floor every diff of two files pays: reading both
with `onnx.load(load_external_data=False)` + `onnx.shape_inference.infer_shapes`. Each measurement runs in its
own process (wall time, peak RSS), alternating, median of N rounds; the diff's own split (load / match /
compare) comes from its JSON report.

    .venv/bin/python -m bench.bench_diff [--nodes 100000] [--rounds 3] [--append BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FLOOR = """
import json, resource, sys, time
t0 = time.perf_counter()
import onnx
for p in sys.argv[1:3]:
    onnx.shape_inference.infer_shapes(onnx.load(p, load_external_data=False), data_prop=True)
print(json.dumps({"seconds": time.perf_counter() - t0,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

DIFF = """
import json, resource, sys, time
t0 = time.perf_counter()
from studio.cli.main import main
rc = main(["diff", sys.argv[1], sys.argv[2], "--format", "json", "--output", sys.argv[3], "--quiet"])
t = time.perf_counter() - t0
rep = json.load(open(sys.argv[3]))
print(json.dumps({"seconds": t, "rc": rc, "timings": rep["timings"], "message": rep["summary"]["message"],
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _run(code: str, *argv: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1], env={**os.environ, "STUDIO_NO_PROGRESS": "1"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--append", type=Path, default=None, help="append the section to this markdown file")
    args = ap.parse_args(argv)
    import onnx

    from tests.diff.diff_samples import chain  # the diff tests' chain: n unnamed Add / Relu nodes

    with tempfile.TemporaryDirectory() as tmp:
        a, b, rep = Path(tmp) / "a.onnx", Path(tmp) / "b.onnx", Path(tmp) / "diff.json"
        onnx.save(chain(args.nodes), str(a))
        onnx.save(chain(args.nodes, changed=args.nodes // 2 + 1), str(b))
        runs: dict[str, list[dict]] = {"floor": [], "self": [], "one": []}
        for _ in range(args.rounds):
            runs["floor"].append(_run(FLOOR, str(a), str(b)))
            runs["self"].append(_run(DIFF, str(a), str(a), str(rep)))
            runs["one"].append(_run(DIFF, str(a), str(b), str(rep)))
    med = {k: statistics.median(r["seconds"] for r in v) for k, v in runs.items()}
    rss = {k: max(r["peak_rss_mb"] for r in v) for k, v in runs.items()}

    def split(k: str) -> str:
        t = runs[k][-1]["timings"]
        return f"load {t['load']:.1f} s, match {t['match']:.1f} s, compare {t['compare']:.1f} s"

    load = os.getloadavg()[0]
    lines = [f"## Model diff: `studio diff` on {args.nodes:,} unnamed nodes (`bench/bench_diff.py`, "
             f"{time.strftime('%Y-%m-%d')})", "",
             f"Command: `.venv/bin/python -m bench.bench_diff --rounds {args.rounds} --append BENCHMARKS.md` "
             f"({platform.machine()}, Python {platform.python_version()}, load average {load:.1f}). A chain of "
             f"alternating Add(x, bias) / Relu with empty node names (`x` [batch, 8]); the copy has node "
             f"{args.nodes // 2 + 1} as a Sigmoid. Median of {args.rounds} rounds, each in its own process.", "",
             "| run | wall s | vs floor | peak RSS MB | inside the diff | result |", "|---|---|---|---|---|---|",
             f"| floor: 2 x (onnx.load + infer_shapes) | {med['floor']:.1f} | 1x | {rss['floor']:.0f} | - | - |",
             f"| `studio diff A A` | {med['self']:.1f} | {med['self'] / med['floor']:.1f}x | {rss['self']:.0f} | "
             f"{split('self')} | {runs['self'][-1]['message']} |",
             f"| `studio diff A B` | {med['one']:.1f} | {med['one'] / med['floor']:.1f}x | {rss['one']:.0f} | "
             f"{split('one')} | {runs['one'][-1]['message']} |", ""]
    text = "\n".join(lines)
    print(text)
    if args.append:
        with args.append.open("a", encoding="utf-8") as f:
            f.write("\n" + text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
