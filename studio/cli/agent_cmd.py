"""`studio agent status|rollback|discover`: look at and steer an edge agent."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from studio.cli.deploy_cmd import add_tls_arguments, tls_verify


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, help_ in (("status", "models, versions, history and sensors of an agent"),
                        ("rollback", "reactivate the previous (or a named) version of a model")):
        p = sub.add_parser(name, help=help_)
        p.add_argument("--agent", required=True, help="agent URL, e.g. http://board.local:8765")
        p.add_argument("--token-file", required=True, type=Path)
        p.add_argument("--model", default=None, help="model (bundle) name")
        add_tls_arguments(p)
        p.add_argument("--json", action="store_true")
        if name == "rollback":
            p.add_argument("--version", default=None, help="version to reactivate (default: the previous one)")
    d = sub.add_parser("discover", help="find agents on the network by mDNS")
    d.add_argument("--timeout", type=float, default=3.0)
    d.add_argument("--loopback", action="store_true", help="browse 127.0.0.1 only (agents bound to loopback)")
    d.add_argument("--json", action="store_true")


def _render_status(st: dict, model: str | None) -> str:
    lines = [f"agent {st['name']} (board {st['board']}, up {st['uptime_s']:.0f} s)"]
    sensors = st.get("sensors") or {}
    if sensors:
        lines.append(f"  temperature: {sensors.get('temperature_source')}   power: {sensors.get('power_source')}")
    models = st["models"] if model is None else {model: st["models"][model]}
    if not models:
        lines.append("  no models deployed")
    for name, m in models.items():
        lines.append(f"  {name}: active {m['active']}, rollback to {m['rollback_to'] or '-'}, "
                     f"serving {', '.join(m['served_models']) or '-'}")
        for v in m["versions"]:
            mark = "*" if v.get("active") else " "
            lines.append(f"   {mark} {v['version']:22s} {v.get('board', ''):18s} {v.get('created', '')}  "
                         f"signer {v.get('signer_key_id', '?')}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from studio.core.errors import InputError

    if args.action == "discover":
        from studio.package.discovery import discover_agents

        agents = discover_agents(args.timeout, loopback=args.loopback)
        if args.json:
            print(json.dumps([a.to_dict() for a in agents], indent=2))
        else:
            print("\n".join(f"{a.name:30s} {a.url:28s} {a.board} {a.version}" for a in agents) or "no agents found")
        return 0
    from studio.package.client import AgentClient, read_token_file

    client = AgentClient(args.agent, read_token_file(args.token_file), verify=tls_verify(args))
    if args.action == "status":
        st = client.status()
        if args.model and args.model not in st["models"]:
            raise InputError(f"no model '{args.model}' on {client.url}", offending=args.model,
                             hint=f"models there: {', '.join(st['models']) or 'none'}")
        print(json.dumps(st, indent=2) if args.json else _render_status(st, args.model))
        return 0
    model = args.model
    if model is None:
        names = list(client.status()["models"])
        if len(names) != 1:
            raise InputError("which model? the agent has " + (", ".join(names) or "none"), offending="--model",
                             hint="pass --model NAME")
        model = names[0]
    res = client.rollback(model, args.version)
    print(json.dumps(res, indent=2) if args.json else
          f"{res['name']}: rolled back to {res['version']} (was {res['previous']})")
    return 0
