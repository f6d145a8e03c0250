"""`studio verify bundle.tar --trust PUBKEY`: offline signature and digest check of an edge bundle."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--trust", required=True, action="append",
                        help="trusted public key: a .pub file, folder of .pub files or the key itself (repeatable)")
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from studio.edge.trust import load_trusted_keys
    from studio.edge.verify import verify_bundle

    rep = verify_bundle(args.bundle, load_trusted_keys(*args.trust))
    print(rep.to_json() if args.json else rep.render())
    return 0
