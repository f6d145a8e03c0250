"""`studio compile`: ONNX -> TVM Relax library for a board, verified against ONNX Runtime.

    studio compile MODEL.onnx --target llvm|aarch64|aarch64-neon|opencl|vulkan|BOARD [--out DIR]
                   [--shape name=dims ...] [--json] [--no-verify] [--force]
    studio compile MODEL.onnx --target rk3588 --backend rknn [--quantize int8 [--calibration DIR]] [--shape ...]
    studio compile --list-targets | --status
    studio compile [MODEL.onnx] --mlc-llm HF_DIR --target opencl --out DIR   (language model via mlc_llm)

Output folder (default): WORKSPACE/compiled/NAME-TARGET when the model is in a studio workspace, else
./compiled/NAME-TARGET, or compiled/NAME-TARGET beside the model's (export) folder when the current folder is
inside it. A compiled module never goes into an export folder: a bundle made from that folder would carry it,
so an --out inside one is refused (exit 2).

Exit codes: 0 compiled (and verified), 1 the compile failed (the diagnosis names the failing nodes),
2 bad input (including an --out inside an export folder) or a missing dependency (apache-tvm, mlc_llm) with
the hint to install it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from studio.core.catalogue import tr


def add_arguments(p: argparse.ArgumentParser) -> None:
    from studio.cli import completers
    from studio.cli.completers import complete_with

    p.add_argument("model", nargs="?", type=Path, help="the ONNX model (or part) to compile")
    complete_with(p.add_argument("--target", default="llvm",
                                 help="llvm (this host), aarch64, aarch64-neon, opencl, vulkan, or a board id "
                                      "(rk3588, jetson-orin-nano, rpi5, atlas-310p, generic-x86_64, generic-aarch64)"),
                  completers.compile_targets)
    p.add_argument("--out", type=Path,
                   help="output folder, never inside an export folder (default: WORKSPACE/compiled/NAME-TARGET "
                        "for a model in a workspace, else ./compiled/NAME-TARGET, moved beside the model's folder "
                        "when the current folder is inside it)")
    p.add_argument("--shape", action="append", default=[], metavar="NAME=DIMS",
                   help="static shape for an input with dynamic dims, NAME=D,D,... with sizes >= 1, "
                        "e.g. pixel_values=1,3,224,224 (repeatable)")
    p.add_argument("--json", action="store_true", help="print the compile report as JSON on stdout")
    p.add_argument("--no-verify", action="store_true", help="skip parity and latency against ONNX Runtime")
    p.add_argument("--force", action="store_true", help="replace a non-empty output folder")
    p.add_argument("--skip-precheck", action="store_true", help="import even if the pre-check flags ops")
    p.add_argument("--no-localise", action="store_true", help="do not bisect the graph when TVM fails")
    p.add_argument("--simplify", action="store_true",
                   help="fold shape arithmetic with onnxslim at the static shapes before importing")
    p.add_argument("--save-failing", type=Path, metavar="PATH",
                   help="on a localised failure, write the smallest failing sub-graph to PATH (.onnx)")
    p.add_argument("--report", type=Path, metavar="PATH", help="also write the report here (also on failure)")
    p.add_argument("--backend", default="tvm",
                   help="tvm (TVM Relax, built in) or a plugin's compiler: rknn (plugins/studio-rknn: a .rknn for "
                        "--target rk3588 | rk3576 | rk3566, checked in rknn-toolkit2's simulator)")
    p.add_argument("--quantize", default="", choices=["", "fp16", "int8"],
                   help="rknn: fp16 (default) or int8 (w8a8, calibrated on --calibration)")
    p.add_argument("--calibration", type=Path, metavar="DIR_OR_TXT",
                   help="int8 calibration samples: a folder of .npz (arrays named like the inputs) or the "
                        "toolkit's dataset .txt (default: 8 seeded samples)")
    p.add_argument("--auto-hybrid", type=float, default=None, metavar="COS",
                   help="rknn int8: keep the layers whose per-layer cosine falls below COS in float16 "
                        "(rknn-toolkit2's auto_hybrid), e.g. 0.999")
    p.add_argument("--atol", type=float, default=None, help="parity tolerance (default: tvm 1e-4, rknn fp16 5e-2)")
    p.add_argument("--rtol", type=float, default=None, help="parity tolerance (default: tvm 1e-3, rknn fp16 5e-2)")
    p.add_argument("--runs", type=int, default=20, help="latency runs per runtime (0: no latency)")
    p.add_argument("--list-targets", action="store_true", help="list compile targets and exit")
    p.add_argument("--status", action="store_true", help="show TVM, cross compiler and mlc_llm availability")
    p.add_argument("--mlc-llm", type=Path, metavar="HF_DIR",
                   help="also compile the language model of this HF folder with mlc_llm (needs mlc_llm)")
    p.add_argument("--quantization", default="q4f16_1", help="mlc_llm quantization (with --mlc-llm)")
    p.add_argument("--conv-template", default="chatml", help="mlc_llm conversation template (with --mlc-llm)")


def run(args: argparse.Namespace) -> int:
    from studio.compile.api import availability, list_targets
    from studio.core.errors import InputError

    if args.list_targets:
        rows = list_targets()
        if args.json:
            print(json.dumps(rows, indent=2))
        else:
            for r in rows:
                print(f"{r['id']:18} {r['device']:7} {r['description']}")
        return 0
    if args.status:
        st = availability()
        if args.json:
            print(json.dumps(st, indent=2))
        else:
            tvm = st["tvm"]
            print(f"apache-tvm : {tvm.get('version') if tvm['available'] else tvm.get('message')}")
            print(f"aarch64 cc : {st['aarch64_cc'] or tr('not installed (board .so not linked; `make cross-toolchain`)')}")
            print(f"mlc_llm    : {st['mlc_llm']['version'] or 'installed' if st['mlc_llm']['available'] else st['mlc_llm']['message']}")
        return 0
    if args.model is None and args.mlc_llm is None:
        raise InputError("no model given", hint="usage: studio compile MODEL.onnx --target llvm --out DIR "
                         "(or --list-targets, --status, --mlc-llm HF_DIR)")
    rc = 0
    if args.model is not None:
        rc = _compile_onnx(args)
    if args.mlc_llm is not None:
        rc = max(rc, _compile_mlc(args))
    return rc


def _compile_onnx(args: argparse.Namespace) -> int:
    from studio.cli.progress import job_progress
    from studio.compile.api import CompileOptions, compile_model
    from studio.core.shapes import parse_shapes

    opts = CompileOptions(model=args.model, target=args.target, out=args.out,
                          shapes=parse_shapes(args.shape, min_size=1),
                          verify=not args.no_verify, force=args.force, precheck=not args.skip_precheck,
                          localise=not args.no_localise, simplify=args.simplify, atol=args.atol, rtol=args.rtol,
                          latency_runs=max(0, args.runs), save_failing_subgraph=args.save_failing,
                          backend=args.backend, quantize=args.quantize,
                          calibration=args.calibration, auto_hybrid=args.auto_hybrid)
    with job_progress("compile", enabled=not args.json) as job:
        rep = compile_model(opts, job)
    if args.report:
        rep.save(args.report)
    if args.json:
        print(rep.to_json())
    else:
        print(rep.summary(), file=sys.stdout if rep.ok else sys.stderr)
    return 0 if rep.ok else 1


def _compile_mlc(args: argparse.Namespace) -> int:
    from studio.compile.mlc import mlc_status, plan_llm, run_llm
    from studio.compile.targets import resolve_target

    target = resolve_target(args.target)
    out = args.out or args.mlc_llm.with_name(args.mlc_llm.name + "-mlc")
    if args.out is not None:
        from studio.compile.outputs import check_out

        check_out(args.out, args.mlc_llm, target.id)
    plan = plan_llm(args.mlc_llm, out, target_kind=target.kind, quantization=args.quantization,
                    conv_template=args.conv_template)
    st = mlc_status()
    if not st.available:
        print(tr("mlc_llm: not installed, the language model was not compiled.") + "\n"
              + tr("  hint: {hint}", hint=st.message) + "\n" + tr("  commands the studio would run:"), file=sys.stderr)
        for cmd in plan.commands:
            print("    " + " ".join(cmd[2:]), file=sys.stderr)
        return 2
    record = run_llm(plan)
    print(json.dumps(record, indent=2) if args.json else
          tr("mlc_llm: compiled") + "\n" + "\n".join(f"  {a['path']} ({a['size_bytes']} B)" for a in record["artifacts"]))
    return 0
