"""`studio diff A.onnx B.onnx [--format text|json|html] [--output FILE] [--target ID] [--fail-on-change]`.

Nodes are matched by name, then by structure (neighbours, then op + shapes); the report lists added, removed
and changed nodes (op, domain, attributes, wiring, output shapes and dtypes, and the target's verdict with
--target) and the changed graph inputs, outputs and initializers.
Exit codes: 0 = compared (no change, or changes without --fail-on-change); 1 = changes and --fail-on-change
(the CI gate); 2 = bad input (missing or unreadable model, unknown target); 130 = interrupted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from studio.core.catalogue import tr

EXIT_OK = 0
EXIT_CHANGED = 1


def add_arguments(p: argparse.ArgumentParser) -> None:
    from studio.cli import completers
    from studio.cli.completers import complete_with

    p.add_argument("model_a", type=Path, metavar="A.onnx", help="the model before")
    p.add_argument("model_b", type=Path, metavar="B.onnx", help="the model after")
    p.add_argument("--format", "-f", choices=("text", "json", "html"), default="text")
    p.add_argument("--output", "-o", type=Path, help="write the report here (atomically) instead of stdout")
    complete_with(p.add_argument("--target", "-t", default=None, metavar="ID",
                                 help="also compare each node's verdict for this target (see `studio targets`)"),
                  completers.targets)
    p.add_argument("--fail-on-change", action="store_true", help="exit 1 when the models differ")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")


def run(args: argparse.Namespace) -> int:
    from studio.cli.progress import ProgressBar
    from studio.core.atomic import write_text_atomic
    from studio.core.jobs import JobState
    from studio.diff.api import diff_models
    from studio.diff.render import render
    from studio.diff.report import summary_message

    job = JobState(name="diff")
    ProgressBar(job, enabled=not args.quiet and args.output is not None)
    rep = diff_models(args.model_a, args.model_b, target=args.target, job=job)
    text = render(rep, args.format)
    if args.output:
        write_text_atomic(args.output, text)
        print(tr("wrote {format} diff to {output}: {message}", format=args.format, output=args.output,
                 message=summary_message(rep.summary, rep.has_changes, tr)), file=sys.stderr)
    else:
        sys.stdout.write(text)
    if args.fail_on_change and rep.has_changes:
        print(tr("diff: the models differ; exit {code}", code=EXIT_CHANGED), file=sys.stderr)
        return EXIT_CHANGED
    return EXIT_OK
