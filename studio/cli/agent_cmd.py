"""`studio agent status|rollback|trust|discover`: look at and steer an edge agent."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from studio.cli.deploy_cmd import add_tls_arguments, tls_verify

if TYPE_CHECKING:
    from studio.package.client import AgentClient


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
    t = sub.add_parser("trust", help="list the signing keys an agent trusts, or push one (--key) to its trust "
                                     "store (the agent must run with --allow-trust-push)")
    t.add_argument("--agent", required=True, help="agent URL, e.g. http://board.local:8765")
    t.add_argument("--token-file", required=True, type=Path)
    t.add_argument("--key", default=None,
                   help="key to push: a key name in the studio's key store, a .pub file, or the key line itself")
    t.add_argument("--keys-dir", type=Path, default=None, help="key folder (default: CONFIG/keys)")
    add_tls_arguments(t)
    t.add_argument("--json", action="store_true")
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
    if args.action == "trust":
        return _trust(client, args)
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


def key_line_for(spec: str, keys_dir: Path | None = None) -> str:
    """A key name in the key store, a .pub file, or a key line itself -> one ``ed25519 <base64> NAME`` line."""
    from studio.core.errors import InputError
    from studio.edge.trust import encode_public, parse_public_keys
    from studio.package.keys import KeyStore

    store = KeyStore(keys_dir)
    if store.public_path(spec).is_file():
        return store.export_public(spec)
    p = Path(spec)
    text = p.read_text(encoding="utf-8") if p.is_file() else spec
    try:
        keys = parse_public_keys(text, str(p) if p.is_file() else "--key")
    except InputError:
        keys = []
    if len(keys) != 1:
        names = ", ".join(i.name for i in store.list()) or "none"
        raise InputError(f"--key '{spec}' is not a key name, a .pub file with one key, or a key line",
                         offending="--key", hint=f"keys in {store.root}: {names}")
    label = p.stem if p.is_file() else "pushed"
    return f"ed25519 {encode_public(keys[0])} {label}" if p.is_file() or len(text.split()) < 3 else text.strip()


def _trust(client: AgentClient, args: argparse.Namespace) -> int:
    if args.key is None:
        res = client.trust()
        if args.json:
            print(json.dumps(res, indent=2))
        else:
            pushed = set(res.get("pushed_keys") or [])
            for kid in res["trusted_keys"]:
                print(f"{kid}  {'pushed' if kid in pushed else 'from --trust'}")
            print(f"pushing keys: {'allowed' if res.get('trust_push') else 'not allowed (--allow-trust-push)'}")
        return 0
    res = client.push_trust(key_line_for(args.key, args.keys_dir))
    print(json.dumps(res, indent=2) if args.json else
          f"{client.url} now trusts {res['key_id']} ({res['label']})"
          + ("" if res.get("new") else " (it already did)"))
    return 0
