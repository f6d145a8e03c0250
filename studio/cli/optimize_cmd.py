"""`studio optimize MODEL_OR_EXPORT --target ID [--budget cosine>=0.99|max-abs<=X|top1-agree>=P]
[--objective npu-coverage|size|host-latency] [--calibration DIR] [--time-limit MIN] [--out DIR]`: search the
studio's fixes and the target's build options for the variant that builds with the target's own tool (rknn-toolkit2,
OpenVINO, TVM Relax, ONNX Runtime), keeps the accuracy budget against the FP32 original on the calibration
samples and is best on the objective; the chosen variant with its recipe (`studio fix` / `studio compile`
commands) and a JSON report go to --out.

Exit codes: 0 every part met the budget; 1 some part did not (the best candidate and what stands in the way are
reported and written); 2 bad input (unknown target, malformed budget, empty calibration folder, a time limit of
0 ...), nothing written; 130 cancelled.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=Path, metavar="MODEL_OR_EXPORT", help="an .onnx file or an export folder")
    p.add_argument("--target", "-t", required=True,
                   help="a target a tool here can judge: rk3588 / rk3576 / rk3566 (rknn-toolkit2), openvino, "
                        "tvm-relax, ort-cpu")
    p.add_argument("--budget", default="cosine>=0.99",
                   help="accuracy against the FP32 original on the calibration samples: cosine>=C, max-abs<=X or "
                        "top1-agree>=P (default cosine>=0.99)")
    p.add_argument("--objective", default="npu-coverage", help="npu-coverage (default), size or host-latency")
    p.add_argument("--calibration", type=Path, metavar="DIR",
                   help="samples to calibrate and judge on: images, texts (.txt, one per line), .wav or .npz "
                        "(default: seeded synthetic samples, with a warning)")
    p.add_argument("--time-limit", type=float, default=30.0, metavar="MIN",
                   help="minutes for the search (default 30): past it, the best of the candidates judged")
    p.add_argument("--out", type=Path, metavar="DIR",
                   help="output folder (default WORKSPACE/optimized/NAME-TARGET, else ./optimized/NAME-TARGET)")
    p.add_argument("--part", action="append", default=[], metavar="PART",
                   help="only this part of a split export (repeatable; default: every part)")
    p.add_argument("--precision", action="append", default=[], metavar="PREC",
                   help="only these precisions: fp32, fp16, int8, int8-dynamic (repeatable; e.g. --precision int8 "
                        "forces int8: no layer kept float)")
    p.add_argument("--workers", type=int, default=2, help="candidates judged at once (default 2: the two cores)")
    p.add_argument("--no-cache", action="store_true", help="search again even if this exact search was cached")
    p.add_argument("--force", action="store_true", help="replace a non-empty --out that is not an earlier result")
    p.add_argument("--latency-runs", type=int, default=30, help="interleaved host-latency rounds (default 30)")
    p.add_argument("--profile-dir", action="append", type=Path, default=None, metavar="DIR")
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def _interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def run(args: argparse.Namespace) -> int:
    from studio.cli.progress import job_progress
    from studio.tune.options import TuneOptions, parse_budget
    from studio.tune.report import render_text
    from studio.tune.search import optimize_for_target

    opts = TuneOptions(model=args.model, target=args.target, budget=parse_budget(args.budget),
                       objective=args.objective, calibration=args.calibration, time_limit_min=args.time_limit,
                       out=args.out, parts=[x for v in args.part for x in v.split(",") if x],
                       precisions=[x for v in args.precision for x in v.split(",") if x], workers=args.workers,
                       use_cache=not args.no_cache, force=args.force, latency_runs=max(1, args.latency_runs),
                       profile_dirs=args.profile_dir)
    previous = signal.signal(signal.SIGTERM, _interrupt)  # a kill stops the workers and tools like Ctrl+C does
    try:
        with job_progress("optimize", enabled=not args.json) as job:
            rep = optimize_for_target(opts, job)
    finally:
        signal.signal(signal.SIGTERM, previous)
    sys.stdout.write(rep.to_json() + "\n" if args.json else render_text(rep))
    return 0 if rep.met else 1
