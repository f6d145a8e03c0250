"""`studio plugins`: every registered plugin, what it provides, and its error if it is broken."""

from __future__ import annotations

import argparse
import json


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from studio.core.plugins import discover

    plugins = discover()
    if args.json:
        print(json.dumps([{"name": pl.name, "entry_point": pl.entry_point, "provides": pl.provides,
                           "available": pl.available()[0], "state": pl.available()[1], "error": pl.error}
                          for pl in plugins], indent=2))
        return 0
    for pl in plugins:
        ok, state = pl.available()
        provides = "; ".join(f"{k}: {', '.join(v)}" for k, v in pl.provides.items())
        print(f"{'ok ' if ok else 'ERR'} {pl.name:20} {state if not ok else provides}")
    return 0
