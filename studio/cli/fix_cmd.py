"""`studio fix MODEL.onnx --out OUT.onnx [--static batch=1,sequence=64] [--simplify] [--fp16 [PART ...]]
[--int8 [PART ...]] [--int8-static [PART ...] --calibration DIR] [--keep-fp32 NODE,...] [--drop-nan-guards]
[--unfuse-attention] [--host-split TARGET]`: each fix with a parity report and the before/after inspection per
target. The order is fixed: static, simplify, unfuse, NaN guards, host split, precision.

Exit codes: 0 = written and parity passed; 1 = written but parity failed; 2 = bad input / nothing written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from studio.core.catalogue import tr


def add_arguments(p: argparse.ArgumentParser) -> None:
    from studio.cli import completers
    from studio.cli.completers import complete_with

    p.add_argument("model", type=Path, metavar="MODEL.onnx")
    p.add_argument("--out", "-o", type=Path, required=True, help="output .onnx path (parts go beside it)")
    p.add_argument("--static", metavar="DIM=N,...", help="make dims static: symbol or INPUT:AXIS, e.g. batch=1,sequence=64")
    p.add_argument("--simplify", action="store_true", help="fold constants and simplify with onnxslim")
    p.add_argument("--fp16", nargs="*", metavar="PART", default=None,
                   help="convert to FP16: no PART = the model itself, else those parts of a split export")
    p.add_argument("--int8", nargs="*", metavar="PART", default=None,
                   help="dynamic INT8 quantization: no PART = the model itself, else those parts")
    p.add_argument("--int8-static", nargs="*", metavar="PART", default=None,
                   help="static INT8 (QDQ) calibrated on --calibration: no PART = the model itself, else those parts")
    p.add_argument("--calibration", type=Path, metavar="DIR",
                   help="calibration samples: images, texts (.txt, one per line), .wav or .npz; also written as the "
                        "output's inputs to OUT_STEM.calibration/ (for studio compile --calibration)")
    p.add_argument("--keep-fp32", metavar="NODE,...", default="",
                   help="nodes kept in float32 by --fp16 / --int8-static (a block list, e.g. from studio optimize)")
    p.add_argument("--drop-nan-guards", action="store_true",
                   help="remove Where(IsNaN(x), C, x) guards (fully masked attention rows give NaN instead of C)")
    p.add_argument("--unfuse-attention", action="store_true",
                   help="studio.fused::FusedAttention back to MatMul / Softmax / MatMul")
    p.add_argument("--host-split", metavar="TARGET", default=None,
                   help="move the input preparation TARGET places on its host (integer / boolean work, runtime-index "
                        "lookups at the inputs) into OUT_STEM.host.onnx; the output keeps the device's work")
    p.add_argument("--fuse-attention", action="store_true",
                   help="rewrite attention subgraphs into studio.fused::FusedAttention (parity vs unfused)")
    p.add_argument("--custom-op-lib", type=Path, default=None, metavar="LIB.so",
                   help="native library implementing studio.fused ops for the parity run (default: the "
                        "onnxruntime-extensions Python op)")
    complete_with(p.add_argument("--target", "-t", action="append", default=None,
                                 help="targets for the before/after analysis"), completers.targets)
    p.add_argument("--profile-dir", action="append", type=Path, default=None, metavar="DIR")
    p.add_argument("--cases", type=int, default=2, help="random parity cases per file (default 2)")
    p.add_argument("--report", type=Path, help="also write the fix report as JSON here")
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def _flag(v: list[str] | None) -> bool | list[str]:
    if v is None:
        return False
    return True if not v else [x for item in v for x in item.split(",") if x]


def run(args: argparse.Namespace) -> int:
    from studio.optimize.api import fix_model, parse_static
    from studio.optimize.render import render_fix_text

    if getattr(args, "fuse_attention", False):
        from studio.optimize.fusion import run_fuse_cli

        return run_fuse_cli(args, _flag)
    rep = fix_model(args.model, args.out, static=parse_static(args.static) or None, simplify=args.simplify,
                    fp16=_flag(args.fp16), int8=_flag(args.int8), int8_static=_flag(args.int8_static),
                    calibration=args.calibration, keep_fp32=[n for n in args.keep_fp32.split(",") if n],
                    drop_nan_guards=args.drop_nan_guards, unfuse=args.unfuse_attention, host_split=args.host_split,
                    targets=args.target, parity_cases=args.cases, profile_dirs=args.profile_dir)
    if args.report:
        rep.save(args.report)
    sys.stdout.write(rep.to_json() + "\n" if args.json else render_fix_text(rep))
    if not rep.passed:
        print(tr("fix: parity check failed (outputs written; see the report)"), file=sys.stderr)
        return 1
    return 0
