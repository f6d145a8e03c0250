"""`studio schema targets|boards|sla [--output FILE]`: the JSON Schema of a resource file kind, so a profile
can be checked in an editor (yaml-language-server's ``# yaml-language-server: $schema=FILE``) or in CI."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

KINDS = ("targets", "boards", "sla")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("kind", metavar="KIND", help=f"which files: {', '.join(KINDS)}")
    p.add_argument("--output", "-o", type=Path, default=None, metavar="FILE",
                   help="write the schema here instead of stdout")


def run(args: argparse.Namespace) -> int:
    from studio.core.errors import InputError
    from studio.core.resource_schema import SCHEMAS, json_schema

    if args.kind not in SCHEMAS:
        raise InputError(f"unknown resource kind '{args.kind}'", offending=args.kind,
                         hint=f"choose one of: {', '.join(SCHEMAS)}")
    text = json.dumps(json_schema(args.kind), indent=2) + "\n"
    if args.output is None:
        sys.stdout.write(text)
        return 0
    from studio.core.atomic import atomic_path

    with atomic_path(args.output) as tmp:
        tmp.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0
