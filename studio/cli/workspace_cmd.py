"""`studio workspace init|show DIR`."""

from __future__ import annotations

import argparse
import json


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", required=True)
    i = sub.add_parser("init", help="create a workspace folder")
    i.add_argument("dir")
    i.add_argument("--demo", action="store_true", help="fill it with the built-in tiny sample models")
    s = sub.add_parser("show", help="print a workspace's models and devices")
    s.add_argument("dir")
    s.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from studio.core.workspace import Workspace

    if args.action == "init":
        if args.demo:
            from studio.export.demo import create_demo_workspace

            ws = create_demo_workspace(args.dir)
        else:
            ws = Workspace.create(args.dir)
        print(f"workspace ready: {ws.root}")
        return 0
    ws = Workspace.open(args.dir)
    if args.json:
        from dataclasses import asdict

        print(json.dumps({"name": ws.name, "root": str(ws.root), "current_model": ws.current_model,
                          "current_target": ws.current_target, "models": [asdict(m) for m in ws.models],
                          "devices": [asdict(d) for d in ws.devices]}, indent=2))
    else:
        print(f"{ws.name}  ({ws.root})")
        for m in ws.models:
            mark = "*" if m.name == ws.current_model else " "
            print(f" {mark} {m.name:24} {m.kind:5} {m.path}")
    return 0
