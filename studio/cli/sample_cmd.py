"""`studio sample-model NAME --out DIR` writes a tiny random-weight HF model; `--list` names them."""

from __future__ import annotations

import argparse
import json


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", nargs="?", help="sample name (see --list)")
    p.add_argument("--out", help="folder to write (default: ./NAME)")
    p.add_argument("--list", action="store_true", help="list the samples")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def run(args: argparse.Namespace) -> int:
    from studio.core.errors import InputError

    if args.list or not args.name:
        if not args.list:
            raise InputError("no sample name given", offending="NAME",
                             hint="run `studio sample-model --list` to see the samples")
        from studio.export.samples import SAMPLES, sample_info  # no torch: builders import it lazily

        infos = [sample_info(n) for n in sorted(SAMPLES)]
        if args.json:
            print(json.dumps(infos, indent=2))
        else:
            for i in infos:
                print(f"{i['name']:<16} {'+'.join(i['modalities']):<12} {i['description']}")
        return 0
    from pathlib import Path

    from studio.export.samples import sample_info, write_sample

    out = write_sample(args.name, Path(args.out or args.name))
    notes = sample_info(args.name)["notes"]
    if args.json:
        print(json.dumps({"name": args.name, "path": str(out), "notes": notes}))
    else:
        print(f"wrote {args.name} to {out}")
        for note in notes:
            print(f"  note: {note}")
    return 0
