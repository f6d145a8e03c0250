"""`studio targets [--json] [--profile-dir DIR]`: the target profiles the inspector knows."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from studio.core.catalogue import N_, _, tr
from studio.core.columns import cell

# the listing's words for a profile's kind (where its op list comes from) and its dynamic-shape rule
KIND_WORDS = {"list": N_("list"), "runtime": N_("runtime"), "none": N_("none")}
DYNAMIC_WORDS = {"allowed": N_("allowed"), "risky": N_("risky"), "unsupported": N_("unsupported"),
                 "unknown": N_("unknown")}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable list")
    p.add_argument("--profile-dir", action="append", type=Path, default=None, metavar="DIR",
                   help="extra folder (or file) of target profiles (repeatable)")
    p.add_argument("--workspace", type=Path, default=None, help="also list the workspace's targets/ profiles")


def run(args: argparse.Namespace) -> int:
    from studio.cli.inspect_cmd import profile_dirs_from
    from studio.inspect.api import list_targets

    profs = list_targets(profile_dirs_from(args) or None)
    if args.json:
        print(json.dumps([p.summary() for p in profs], indent=2))
        return 0
    print(f"{cell(_('id'), 14)} {cell(_('kind'), 8)} {cell(_('ops'), 5, True)}  {cell(_('dynamic'), 11)} "
          f"{cell(_('opset'), 9)} " + _("name"))
    for p in profs:
        s = p.summary()
        ops = sum(v for k, v in s["op_counts"].items() if k != "unsupported")
        lo, hi = s["opset"]
        opset = f"{lo or ''}-{hi or ''}" if (lo or hi) else "-"
        dyn = p.rules.dynamic_shapes if p.kind != "none" else "unknown"
        kind, dynamic = _(KIND_WORDS.get(p.kind, p.kind)), _(DYNAMIC_WORDS.get(dyn, dyn))
        print(f"{p.id:14} {cell(kind, 8)} {ops if p.kind != 'none' else '-':>5}  {cell(dynamic, 11)} {opset:9} {p.name}")
        print(f"{'':14} " + tr("source: {source} (read {date})", source=p.source, date=p.date_read)
              + (f"  [{p.path}]" if p.path and not str(p.path).startswith(str(_builtin())) else ""))
        if p.graph is not None:
            print(f"{'':14} " + tr("whole-graph rules ({fold}): {source}", fold=p.graph.fold,
                                   source=" ".join(p.graph.source.split())))
    return 0


def _builtin() -> Path:
    from studio.inspect.profiles import builtin_dir

    return builtin_dir()
