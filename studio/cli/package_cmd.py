"""`studio package MODEL_OR_EXPORT_DIR|COMPILED_DIR --board NAME --key KEY --out bundle.tar [--compiled DIR]`:
a signed edge bundle (ONNX Runtime, or a TVM-compiled module with runtime "tvm")."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from studio.cli import completers
    from studio.cli.completers import complete_with

    parser.add_argument("source", metavar="MODEL_OR_EXPORT_DIR", type=Path,
                        help=".onnx file, export folder, or a `studio compile` output folder (runtime tvm)")
    complete_with(parser.add_argument("--board", required=True,
                                      help="board id (studio/resources/boards/*.yaml), e.g. rk3588, rpi5"),
                  completers.boards)
    parser.add_argument("--key", required=True, help="signing key name (or path to a .key file)")
    parser.add_argument("--out", required=True, type=Path, help="bundle file to write (.tar)")
    parser.add_argument("--name", default=None, help="served model name (default: the model file's stem)")
    parser.add_argument("--version", default=None, help="bundle version (default: a UTC timestamp)")
    parser.add_argument("--force", action="store_true",
                        help="package even if the model fails the board's target, or the compiled module's CPU "
                             "architecture is not the board's")
    parser.add_argument("--compiled", type=Path, default=None, metavar="DIR",
                        help="also pack this `studio compile` folder: the compiled module is served (runtime tvm) "
                             "under the name, the ONNX model as NAME.onnx")
    parser.add_argument("--keys-dir", type=Path, default=None, help="key folder (default: CONFIG/keys)")
    parser.add_argument("--json", action="store_true", help="print the package report as JSON")
    parser.add_argument("--openssf-key", type=Path, default=None, metavar="KEY.pem",
                        help="also sign the bundle's model/ folder with this ECDSA private key (OpenSSF model "
                             "signing: model.sig, checked by `model_signing verify key`; an encrypted key reads "
                             "its password from STUDIO_OPENSSF_KEY_PASSWORD)")
    add_openssf_trust_arguments(parser, "check the OpenSSF signature the source folder arrived with against")


def add_openssf_trust_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """--openssf-trust / --openssf-identity / --openssf-issuer (studio package and studio verify)."""
    parser.add_argument("--openssf-trust", action="append", type=Path, default=None, metavar="PEM",
                        help=f"{what} this publisher's public key (key method) or CA certificate (certificate "
                             "method), PEM; repeatable")
    parser.add_argument("--openssf-identity", default=None, metavar="ID",
                        help="Sigstore signatures: the signer identity to require (e-mail or URI), with "
                             "--openssf-issuer; checked offline against the trust root the sigstore package embeds")
    parser.add_argument("--openssf-issuer", default=None, metavar="URL",
                        help="Sigstore signatures: the OIDC issuer of --openssf-identity")


def openssf_trust_from(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from studio.edge.openssf import OpenSSFTrust

    return OpenSSFTrust.from_files(args.openssf_trust, args.openssf_identity, args.openssf_issuer)


def run(args: argparse.Namespace) -> int:
    from studio.cli.progress import job_progress
    from studio.package.bundle import build_bundle

    with job_progress("package", enabled=not args.json) as job:
        rep = build_bundle(args.source, args.board, args.key, args.out, name=args.name, version=args.version,
                           force=args.force, job=job, keys_dir=args.keys_dir,
                           compiled=args.compiled, openssf_key=args.openssf_key, openssf_trust=openssf_trust_from(args))
    print(rep.to_json() if args.json else rep.render())
    return 0
