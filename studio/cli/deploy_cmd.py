"""`studio deploy bundle.tar --agent URL --token-file FILE`: upload to an edge agent, which verifies and activates."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_tls_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ca", type=Path, default=None, help="CA certificate to check an HTTPS agent with")
    parser.add_argument("--insecure", action="store_true", help="do not check the agent's TLS certificate")


def tls_verify(args: argparse.Namespace) -> bool | str:
    return False if args.insecure else (str(args.ca) if args.ca else True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--agent", required=True, help="agent URL, e.g. http://board.local:8765")
    parser.add_argument("--token-file", required=True, type=Path, help="file holding the agent's token")
    add_tls_arguments(parser)
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from studio.cli.progress import job_progress
    from studio.package.client import deploy_bundle, read_token_file

    with job_progress("deploy", enabled=not args.json) as job:
        rep = deploy_bundle(args.bundle, args.agent, read_token_file(args.token_file), job, verify=tls_verify(args))
    print(rep.to_json() if args.json else rep.render())
    return 0
