"""`studio plugins [--check] [--json]`: every registered plugin, what it contributes, and each one's state.

Listing reads manifests only; ``--check`` imports every contribution now, so a plugin whose module fails to
import shows its error here instead of at first use (and the exit code says so).
"""

from __future__ import annotations

import argparse
import json

_MARK = {"ok": "ok ", "unavailable": "ERR", "error": "ERR"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable list")
    p.add_argument("--check", action="store_true",
                   help="import every contribution now; exit 1 if any fails")
    p.add_argument("--kind", action="append", default=None, metavar="KIND",
                   help="only these kinds of contribution (targets, verifiers, runtimes, cli, pages; repeatable)")


def run(args: argparse.Namespace) -> int:
    from studio.cli.main import plugin_commands
    from studio.core.plugins import check_all, discover

    plugins = discover()
    plugin_commands()  # marks plugin commands that shadow built-in ones
    failed = check_all(tuple(args.kind) if args.kind else None) if args.check else []
    kinds = set(args.kind or [])
    if args.json:
        rows = [pl.to_dict() for pl in plugins]
        if kinds:
            for r in rows:
                r["contributions"] = [c for c in r["contributions"] if c["kind"] in kinds]
        print(json.dumps(rows, indent=2))
        return 1 if failed else 0
    for pl in plugins:
        state, reason = pl.state()
        where = f"{pl.distribution} {pl.version}".strip() + (" (built-in)" if pl.builtin else "")
        head = f"{_MARK[state]} {pl.name:20} {where}"
        print(head + (f"  {state}: {reason}" if state != "ok" else ""))
        if pl.description and state == "ok":
            print(f"      {pl.description}")
        declared: dict[str, list[str]] = {}
        for c in pl.contributions:
            if kinds and c.kind not in kinds:
                continue
            cstate, why = c.state()
            if cstate == "declared":  # kinds the registry only lists: one line each
                declared.setdefault(c.kind, []).append(c.name)
                continue
            text = cstate + (f": {why}" if why and cstate != state else "")
            print(f"      {c.kind:15} {c.name:22} {text}")
        for kind, names in declared.items():
            print(f"      {kind:15} {', '.join(names)} (declared)")
    total = sum(len(p.contributions) for p in plugins)
    errors = sum(1 for p in plugins if p.error) + sum(1 for p in plugins if p.ok for c in p.contributions
                                                      if c.state()[0] == "error")
    print(f"{len(plugins)} plugins, {total} contributions, {errors} errors"
          + ("" if args.check else " (run with --check to import every contribution)"))
    return 1 if failed else 0
