"""`studio profile MODEL.onnx [--shape NAME=DIMS ...] [--runs N] [--warmup N] [--json] [--top N] [--save FILE]
[--compare OTHER.json] [--workspace DIR] [--hf-model DIR | --no-torch] [--optimization LEVEL] [--custom-op-lib LIB]`

ONNX Runtime's profiler per node (mean / p95 / share; nodes ORT fused or folded get 0 and where their time
went), exporter scopes mapped to torch modules, and for an HF export the PyTorch per-module times.
MODEL may also be a saved profile (.json): then nothing runs and --compare compares the two files.
--compare OTHER.json: OTHER is "before", this profile is "after".

Exit codes: 0 = profiled; 2 = bad input (missing model, bad --shape, unreadable profile).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from studio.core.catalogue import tr


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=Path, metavar="MODEL.onnx", help="model to profile (or a saved profile .json)")
    p.add_argument("--shape", action="append", default=None, metavar="NAME=DIMS",
                   help="input shape, NAME=D,D,..., e.g. input_ids=1,16 (repeatable); symbolic dims default to "
                        "1 (batch) / 8")
    p.add_argument("--runs", type=int, default=20, help="measured runs (default 20)")
    p.add_argument("--warmup", type=int, default=3, help="warm-up runs, not measured (default 3)")
    p.add_argument("--top", type=int, default=15, help="rows in the top-N table (default 15)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--save", type=Path, metavar="FILE", help="save the profile report (JSON) here")
    p.add_argument("--workspace", type=Path, metavar="DIR",
                   help="also save it as DIR/reports/<model>.profile.json (the inspector overlay reads it)")
    p.add_argument("--compare", type=Path, metavar="OTHER.json", help="per-node and total deltas against this "
                   "earlier profile (OTHER = before)")
    p.add_argument("--hf-model", type=Path, metavar="DIR",
                   help="HF folder the model was exported from: PyTorch per-module times (default: the export "
                        "folder when it holds config.json)")
    p.add_argument("--no-torch", action="store_true", help="skip the PyTorch per-module times")
    p.add_argument("--optimization", choices=("disable", "basic", "extended", "all"), default="all",
                   help="ORT graph optimization level (default all, as deployed)")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="ORT intra-op threads (default: ORT's choice; 1 gives the steadiest per-op times)")
    p.add_argument("--custom-op-lib", type=Path, metavar="LIB.so",
                   help="native library for studio.fused ops (default: onnxruntime-extensions Python op)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")


def run(args: argparse.Namespace) -> int:
    import json

    from studio.cli.progress import ProgressBar
    from studio.core.errors import InputError
    from studio.core.jobs import JobState
    from studio.core.shapes import parse_shapes
    from studio.profiling.api import (
        ProfileReport,
        compare_profiles,
        profile,
        render_comparison_text,
        render_profile_text,
        save_to_workspace,
    )

    if args.hf_model and args.no_torch:
        raise InputError("--hf-model and --no-torch contradict each other", offending="--no-torch")
    if args.top < 0:
        raise InputError("--top must be >= 0", offending=str(args.top))
    before = ProfileReport.load(args.compare) if args.compare else None  # fail fast on a bad file
    if args.model.suffix == ".json":
        rep = ProfileReport.load(args.model)
    else:
        job = JobState(name="profile")
        ProgressBar(job, enabled=not args.quiet)
        rep = profile(args.model, shapes=parse_shapes(args.shape) or None, runs=args.runs, warmup=args.warmup,
                      optimization=args.optimization, custom_op_lib=args.custom_op_lib, hf_model=args.hf_model,
                      threads=args.threads,
                      torch_modules=False if args.no_torch else (True if args.hf_model else None), job=job)
    if args.save:
        rep.save(args.save)
        print(tr("saved profile to {path}", path=args.save), file=sys.stderr)
    if args.workspace:
        from studio.core.workspace import Workspace

        path = save_to_workspace(rep, Workspace.open(args.workspace))
        print(tr("saved profile to {path}", path=path), file=sys.stderr)
    comparison = compare_profiles(before, rep) if before is not None else None
    if args.json:
        doc = rep.to_dict() if comparison is None else {"profile": rep.to_dict(), "comparison": comparison.to_dict()}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        sys.stdout.write(render_profile_text(rep, top=args.top))
        if comparison is not None:
            sys.stdout.write("\n" + render_comparison_text(comparison, top=args.top))
    return 0
