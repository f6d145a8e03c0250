"""`studio inspect MODEL.onnx [PART.onnx ...] --target NAME|all --format text|json|html|sarif --fail-on LEVEL
[--verify [--fold-into-profile WORKSPACE|DIR]] [--node-data OUT.json [--node-data-heat PROFILE.json]]`.

``--node-data`` writes the verdicts (and a saved profile's heat, a compile report's per-layer error) as
Google Model Explorer node data files (studio.inspect.node_data), keyed the way its ONNX adapter names nodes.

``--verify`` runs every usable verifier of the chosen targets (a real ORT session, TVM import, OpenVINO query,
plugins' tools) and shows per node where the tool and the static profile disagree; the answers go into the
report's ``verification`` field, and with --fail-on the tool's answer replaces the profile's for its target.
Exit codes: 0 = inspected and nothing at the --fail-on level; 1 = findings at the --fail-on level (the CI gate);
2 = bad input (missing/corrupt model, unknown target, malformed profile, bad flag); 130 = interrupted.
A verifier that is missing or broken is shown with its reason and never changes the exit code.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from studio.core.catalogue import tr

EXIT_OK = 0
EXIT_GATE = 1
EXIT_ERROR = 2
FAIL_LEVELS = ("unsupported", "risky", "unknown", "dynamic")


def add_arguments(p: argparse.ArgumentParser) -> None:
    from studio.cli import completers
    from studio.cli.completers import complete_with

    p.add_argument("models", nargs="+", metavar="MODEL.onnx",
                   help="model to inspect; several files = parts of a split export (boundaries are checked)")
    complete_with(p.add_argument("--target", "-t", action="append", default=None, metavar="NAME",
                                 help="target id (repeatable) or 'all' (default: all); see `studio targets`"),
                  completers.targets_or_all)
    p.add_argument("--format", "-f", choices=("text", "json", "html", "sarif"), default="text")
    p.add_argument("--output", "-o", type=Path, help="write the report here (atomically) instead of stdout")
    p.add_argument("--fail-on", choices=FAIL_LEVELS, default=None,
                   help="exit 1 when a finding reaches this level: unsupported, risky (or worse), unknown "
                        "(or worse) or dynamic (any dynamic dim)")
    p.add_argument("--shape", action="append", default=None, metavar="NAME=DIMS",
                   help="input shape for FLOPs/memory estimates, NAME=D,D,..., e.g. input_ids=1,64 (repeatable)")
    p.add_argument("--profile-dir", action="append", type=Path, default=None, metavar="DIR",
                   help="extra folder (or file) of target profiles (repeatable)")
    p.add_argument("--workspace", type=Path, default=None, help="also use the workspace's targets/ profiles")
    p.add_argument("--custom-domain", action="append", default=None, metavar="DOMAIN",
                   help="op domain allowed besides ai.onnx (repeatable), e.g. com.microsoft")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    p.add_argument("--verify", action="store_true",
                   help="also ask the real toolchains (ORT session, TVM import, OpenVINO query, plugins) and "
                        "show where they disagree with the static profiles")
    p.add_argument("--fold-into-profile", type=Path, default=None, metavar="WORKSPACE|DIR",
                   help="with --verify: write the tool's answer for the disagreeing ops as <target>.yaml in the "
                        "workspace's targets/ (or this folder); later runs with --workspace use it")
    p.add_argument("--node-data", type=Path, default=None, metavar="OUT.json",
                   help="also write each target's verdicts as Model Explorer node data (one target: OUT.json; "
                        "several: OUT.<target>.json beside it)")
    p.add_argument("--node-data-heat", type=Path, default=None, metavar="PROFILE.json",
                   help="with --node-data: also the per-node heat of a `studio profile --save` report")
    p.add_argument("--node-data-divergence", type=Path, default=None, metavar="REPORT.json",
                   help="with --node-data: also the per-node error of a compile_report.json (layer_errors)")


def profile_dirs_from(args: argparse.Namespace) -> list[Path]:
    dirs = list(args.profile_dir or [])
    if getattr(args, "workspace", None):
        from studio.core.workspace import Workspace

        ws = Workspace.open(args.workspace)
        if ws.targets_dir.is_dir():
            dirs.append(ws.targets_dir)
    return dirs


def run(args: argparse.Namespace) -> int:
    from studio.inspect import shape_fork

    if len(args.models) == 1:  # before the imports below: onnx's shape inference runs beside them
        shape_fork.prefetch(args.models[0])
    try:
        return _run(args)
    finally:
        shape_fork.cancel_prefetched()  # a bad option failed before the inspector took the child


def _run(args: argparse.Namespace) -> int:
    from studio.cli.progress import ProgressBar
    from studio.core.atomic import write_text_atomic
    from studio.core.jobs import JobState
    from studio.inspect.api import inspect_model, inspect_parts
    from studio.inspect.render import render

    shapes: dict[str, list[int]] = {}
    if args.shape is not None:  # studio.core.shapes only when there are specs to read (3 ms of import)
        from studio.core.shapes import parse_shapes

        shapes = parse_shapes(args.shape)
    dirs = profile_dirs_from(args)
    job = JobState(name="inspect")
    ProgressBar(job, enabled=not args.quiet and args.output is not None)
    kw = {"shapes": shapes or None, "profile_dirs": dirs or None, "custom_domains": args.custom_domain}
    if len(args.models) == 1:
        reports = [inspect_model(args.models[0], args.target, job=job, **kw)]
    else:
        reports = inspect_parts(args.models, args.target, **kw)
    if args.format != "sarif":
        from studio.verify.registry import offers  # manifests only: no verifier module is imported

        for r in reports:
            r.verifiers = offers(list(r.targets))
    if args.verify:
        _verify(args, reports, shapes or None)
    elif args.fold_into_profile is not None:
        from studio.core.errors import InputError

        raise InputError("--fold-into-profile needs --verify", offending="--fold-into-profile",
                         hint="add --verify so there is a tool's answer to fold")
    if len(reports) == 1:
        text = render(reports[0], args.format)
    elif args.format == "json":
        from studio.core.reports import dumps

        text = dumps(reports)
    elif args.format == "sarif":
        import json

        from studio.inspect.render import to_sarif

        runs = [to_sarif(r)["runs"][0] for r in reports]
        text = json.dumps({**to_sarif(reports[0]), "runs": runs}, indent=2)
    else:
        text = "\n".join(render(r, args.format) for r in reports)
    if args.verify and args.format == "text":
        from studio.verify.render import text as verify_text

        text = text + "".join(verify_text(r) for r in reports)
    if args.node_data is not None or args.node_data_heat or args.node_data_divergence:
        _node_data(args, reports)
    if args.output:
        write_text_atomic(args.output, text)
        print(tr("wrote {format} report to {path}", format=args.format, path=args.output), file=sys.stderr)
    else:
        sys.stdout.write(text)
    if not args.fail_on:
        return EXIT_OK
    from studio.verify.run import fails_on  # 5-8 ms of imports, only for the gate

    if any(fails_on(r, args.fail_on) for r in reports):
        worst = {r.model: r.worst_verdict() for r in reports}
        print(tr("inspect: findings at or above '{level}' ({worst}); exit {code}", level=args.fail_on, worst=worst,
                 code=EXIT_GATE), file=sys.stderr)
        return EXIT_GATE
    return EXIT_OK


def _verify(args: argparse.Namespace, reports: list, shapes: dict[str, list[int]] | None) -> None:
    """Run the verifiers on each model and attach their answers (before anything is rendered); fold if asked.
    Every verifier's input needs (static shapes) are checked before any tool runs: InputError, exit 2."""
    from studio.verify.registry import all_verifiers
    from studio.verify.run import check_inputs, verify_report

    entries = all_verifiers()
    for r in reports:
        mine = [e for e in entries if e.ok and e.verifier is not None and e.target in r.targets]
        check_inputs(mine, Path(r.model), shapes)
    for r in reports:
        if not args.quiet:
            print(tr("verifying {model} with the real toolchains ...", model=r.model), file=sys.stderr)
        verify_report(r, r.model, shapes=shapes, entries=entries)
    if args.fold_into_profile is not None:
        from studio.verify.fold import fold

        for r in reports:
            for target in r.targets:
                res = fold(r, target, args.fold_into_profile)
                if res.path is not None:
                    print(tr("folded {count} op(s) of {target} into {path}: ", count=len(res.changed), target=target,
                             path=res.path)
                          + ", ".join(f"{k} ({v.split(':')[0]})" for k, v in res.changed.items()), file=sys.stderr)
                elif any(c["target"] == target for c in r.verification.get("comparisons", [])):
                    print(tr("{target}: nothing folded: {reason}", target=target, reason=res.skipped), file=sys.stderr)


def _node_data(args: argparse.Namespace, reports: list) -> None:
    """`--node-data`: the overlays as Model Explorer node data (studio.inspect.node_data)."""
    from studio.core.errors import InputError
    from studio.inspect.node_data import export_overlays

    if args.node_data is None:
        raise InputError("--node-data-heat / --node-data-divergence need --node-data OUT.json",
                         offending="--node-data", hint="add --node-data OUT.json")
    if len(reports) != 1:
        raise InputError("--node-data takes one model at a time", offending="--node-data",
                         hint="inspect each part on its own")
    heat = None
    if args.node_data_heat:
        from studio.profiling.report import ProfileReport

        heat = ProfileReport.load(args.node_data_heat)
    for path in export_overlays(reports[0], args.models[0], args.node_data, heat=heat,
                                divergence=args.node_data_divergence):
        print(tr("wrote Model Explorer node data {path}", path=path), file=sys.stderr)
