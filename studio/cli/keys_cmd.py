"""`studio keys generate|list|export-public`: Ed25519 signing keys, encrypted at rest."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from studio.core.catalogue import N_, _, tr
from studio.core.columns import cell


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--keys-dir", type=Path, default=None, help="key folder (default: CONFIG/keys)")
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    g = sub.add_parser("generate", help="create a key pair (passphrase from STUDIO_KEY_PASSPHRASE or prompted)")
    g.add_argument("name")
    g.add_argument("--keys-dir", type=Path, default=argparse.SUPPRESS)
    ls = sub.add_parser("list", help="list keys (ids and public keys only)")
    ls.add_argument("--json", action="store_true")
    ls.add_argument("--keys-dir", type=Path, default=argparse.SUPPRESS)
    ex = sub.add_parser("export-public", help="print or write the public key line (for --trust)")
    ex.add_argument("name")
    ex.add_argument("--out", type=Path, default=None, help="write to this file instead of stdout")
    ex.add_argument("--keys-dir", type=Path, default=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    from studio.core.atomic import write_text_atomic
    from studio.package.keys import KeyStore, get_passphrase

    store = KeyStore(args.keys_dir)
    if args.action == "generate":
        name = args.name
        info = store.generate(name, get_passphrase(confirm=True, prompt=N_(f"New passphrase for {name}: ")))
        print(tr("created key {name} (id {key_id})", name=info.name, key_id=info.key_id) + "\n"
              + tr("  private: {path} (encrypted, mode 0600)", path=info.private_path) + "\n"
              + tr("  public:  {path}", path=info.public_path))
        return 0
    if args.action == "list":
        infos = store.list()
        if args.json:
            print(json.dumps([i.to_dict() for i in infos], indent=2))
        elif not infos:
            print(tr("no keys in {folder} (create one with `studio keys generate NAME`)", folder=store.root))
        for i in infos if not args.json else []:
            kind = _("private+public") if i.private_path else _("public only")
            print(f"{i.name:20s} {i.key_id}  {cell(kind, 15)} {i.created}")
        return 0
    line = store.export_public(args.name)
    if args.out:
        write_text_atomic(args.out, line + "\n")
        print(tr("wrote {path}", path=args.out))
    else:
        print(line)
    return 0
