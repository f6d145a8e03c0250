"""`studio verify bundle.tar --trust PUBKEY [--openssf-trust PEM]`: offline signature and digest check of an edge
bundle, and of the OpenSSF signature of its model/ folder when it carries one.

`studio verify MODEL_DIR --openssf-trust PEM` checks the OpenSSF signature a model folder arrived with
(``model.sig`` inside it or ``MODEL_DIR.sig`` beside it; key, certificate or Sigstore bundle, offline) and says
who signed it."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from studio.cli.package_cmd import add_openssf_trust_arguments

    parser.add_argument("bundle", type=Path, metavar="BUNDLE.tar|MODEL_DIR")
    parser.add_argument("--trust", action="append",
                        help="trusted public key: a .pub file, folder of .pub files or the key itself (repeatable; "
                             "required for a bundle)")
    parser.add_argument("--json", action="store_true")
    add_openssf_trust_arguments(parser, "check the OpenSSF signature of the bundle's model/ (or of MODEL_DIR) against")
    parser.add_argument("--openssf-signature", type=Path, default=None, metavar="SIG",
                        help="with MODEL_DIR: the signature file (default: MODEL_DIR/model.sig or MODEL_DIR.sig)")


def run(args: argparse.Namespace) -> int:
    from studio.cli.package_cmd import openssf_trust_from
    from studio.core.errors import InputError

    trust = openssf_trust_from(args)
    if args.bundle.is_dir():
        from studio.edge.openssf import verify_folder

        if not trust:
            raise InputError(f"{args.bundle} is a model folder: its OpenSSF signature is checked against "
                             "--openssf-trust", offending=str(args.bundle),
                             hint="pass the publisher's public key: --openssf-trust KEY.pub (or --openssf-identity "
                                  "and --openssf-issuer for a Sigstore signature)")
        check = verify_folder(args.bundle, trust, args.openssf_signature)
        print(check.to_json() if args.json else check.render())
        return 0
    if not args.trust:
        raise InputError(f"verifying the bundle {args.bundle} needs the studio's signing key: --trust PUBKEY",
                         offending="--trust", hint="`studio keys export-public NAME > studio.pub`, then --trust "
                                                   "studio.pub")
    if args.openssf_signature is not None:
        raise InputError("--openssf-signature goes with a model folder; a bundle carries its own model.sig",
                         offending="--openssf-signature", hint="drop it, or verify the extracted model/ folder")
    from studio.edge.openssf import check_bundle
    from studio.edge.trust import load_trusted_keys

    rep = check_bundle(args.bundle, load_trusted_keys(*args.trust), trust)
    print(rep.to_json() if args.json else rep.render())
    return 0
