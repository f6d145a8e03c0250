"""`studio fleet init|add|list|remove|rollout|status|resume|pause|abort`: fleets of edge agents and staged rollouts.

    studio fleet rollout BUNDLE --fleet F --plan canary:1,25%,100% --gate L1 --watch 60s
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

EXIT_CODES = {"succeeded": 0, "paused": 0, "running": 0, "blocked": 3, "rolled_back": 1, "aborted": 1,
              "rollback_incomplete": 1}


def _common(p: argparse.ArgumentParser, fleet: bool = True, json_out: bool = True) -> None:
    p.add_argument("--workspace", type=Path, default=None,
                   help="workspace folder (default: this folder when it is one, else the last one opened)")
    if fleet:
        p.add_argument("--fleet", required=True, help="fleet name in WORKSPACE/fleets/, or a fleet .yaml file")
    if json_out:
        p.add_argument("--json", action="store_true")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    p = sub.add_parser("init", help="create an empty fleet file in the workspace")
    p.add_argument("name")
    p.add_argument("--token-file", default=None, help="default token file for agents that name none")
    _common(p, fleet=False, json_out=False)
    p = sub.add_parser("add", help="add agents by URL (or every agent mDNS finds, --discover)")
    p.add_argument("url", nargs="?", default=None, help="agent URL, e.g. http://board.local:8765")
    p.add_argument("--name", default=None, help="agent name in the fleet (default: HOST-PORT)")
    p.add_argument("--label", action="append", default=[], metavar="K=V", help="board=..., site=..., ring=...")
    p.add_argument("--token-file", default=None, help="the agent's token file (kept as a path, never the token)")
    p.add_argument("--ca", default=None, help="CA certificate to check an HTTPS agent with")
    p.add_argument("--infer-token-file", default=None,
                   help="inference token file of an agent started with --infer-token-file (for the probe)")
    p.add_argument("--discover", action="store_true", help="add the agents found by mDNS")
    p.add_argument("--timeout", type=float, default=3.0, help="mDNS browse time (--discover)")
    p.add_argument("--loopback", action="store_true", help="browse 127.0.0.1 only (--discover)")
    _common(p)
    p = sub.add_parser("list", help="the workspace's fleets, or one fleet's agents")
    _common(p, fleet=False)
    p.add_argument("--fleet", default=None)
    p = sub.add_parser("remove", help="remove an agent from a fleet")
    p.add_argument("name")
    _common(p, json_out=False)
    p = sub.add_parser("rollout", help="deploy a bundle ring by ring, gated by an SLA tier")
    p.add_argument("bundle", type=Path)
    _common(p)
    p.add_argument("--plan", required=True, help="rings: canary:1,25%%,100%% (count or share of the fleet, "
                                                 "cumulative) or rings:LABEL,... (the agents' ring label)")
    p.add_argument("--gate", required=True, help="SLA tier id (L1, L2, L3 or one of --tiers)")
    p.add_argument("--watch", default="60s", help="watch window per ring: 60s, 2m, 500ms (default 60s)")
    p.add_argument("--on-down", choices=("skip", "block"), default="skip",
                   help="an agent that does not answer: skip it, or block the rollout until it is back")
    p.add_argument("--probe-rps", type=float, default=5.0,
                   help="probe inference requests per second per agent during the watch (0: none; default 5)")
    p.add_argument("--p95-ms", type=float, default=None, help="latency budget: p95 in ms (server side)")
    p.add_argument("--p99-ms", type=float, default=None, help="latency budget: p99 in ms (server side)")
    p.add_argument("--tiers", default=None, help="SLA tier file (default: the shipped tiers)")
    p.add_argument("--replace", action="store_true", help="start over a rollout that is paused or blocked")
    for name, help_ in (("status", "where the fleet's rollout is: rows per agent and the timeline"),
                        ("resume", "go on with a paused, blocked or interrupted rollout"),
                        ("pause", "pause the rollout at its next safe point"),
                        ("abort", "stop the rollout and roll back every updated agent")):
        p = sub.add_parser(name, help=help_)
        _common(p, json_out=name != "pause")


def workspace_for(arg: Path | None) -> Any:
    from studio.core.errors import InputError
    from studio.core.settings import Settings
    from studio.core.workspace import WORKSPACE_FILE, Workspace

    if arg is not None:
        return Workspace.open(arg)
    if (Path.cwd() / WORKSPACE_FILE).is_file():
        return Workspace.open(Path.cwd())
    last = Settings.load().last_workspace
    if last and (Path(last) / WORKSPACE_FILE).is_file():
        return Workspace.open(last)
    raise InputError("no workspace: fleets live in one", offending="--workspace",
                     hint="pass --workspace DIR (create one with `studio workspace init DIR`)")


def run(args: argparse.Namespace) -> int:
    ws = workspace_for(args.workspace)
    if args.action in ("init", "add", "list", "remove"):
        return _manage(ws, args)
    return _rollout(ws, args)


def _labels(items: list[str]) -> dict[str, str]:
    from studio.core.errors import InputError

    out = {}
    for item in items:
        k, sep, v = item.partition("=")
        if not sep or not k.strip():
            raise InputError(f"--label {item!r} is not KEY=VALUE", offending="--label", hint="e.g. --label ring=canary")
        out[k.strip()] = v.strip()
    return out


def _manage(ws: Any, args: argparse.Namespace) -> int:
    from studio.core.errors import InputError
    from studio.fleet import fleet_file as ff
    from studio.fleet.render import fleet_text
    from studio.fleet.schema import AgentSpec

    if args.action == "init":
        f = ff.new_fleet(ff.fleet_path(ws, args.name), args.name, _ws_ref(ws, args.token_file))
        print(f"fleet {f.name}: {f.path}")
        return 0
    if args.action == "list" and args.fleet is None:
        fleets = [ff.load_fleet(p) for p in sorted(ff.fleets_dir(ws).glob("*.yaml"))]
        if args.json:
            print(json.dumps([{"name": f.name, "path": str(f.path), "agents": len(f.agents)} for f in fleets]))
        else:
            print("\n".join(f"{f.name:20} {len(f.agents):3} agents  {f.path}" for f in fleets) or "no fleets")
        return 0
    f = ff.load_fleet(ff.fleet_path(ws, args.fleet))
    if args.action == "list":
        print(json.dumps(f.spec.model_dump(), indent=2) if args.json else fleet_text(f))
        return 0
    if args.action == "remove":
        if f.agent(args.name) is None:
            raise InputError(f"fleet {f.name} has no agent {args.name!r}", offending=args.name,
                             hint=f"agents: {', '.join(a.name for a in f.agents) or 'none'}")
        f.spec.agents = [a for a in f.agents if a.name != args.name]
        f.save()
        print(f"removed {args.name} from fleet {f.name}")
        return 0
    labels, token = _labels(args.label), _ws_ref(ws, args.token_file)
    if args.discover:
        from studio.package.discovery import discover_agents

        found = [(ff.agent_name(d.name), d.url, {**({"board": d.board} if d.board else {}), **labels})
                 for d in discover_agents(args.timeout, loopback=args.loopback)]
    elif args.url:
        url = args.url if "://" in args.url else "http://" + args.url
        found = [(args.name or ff.default_name(url), url, labels)]
    else:
        raise InputError("add what? give an agent URL or --discover", offending="url",
                         hint="studio fleet add http://board.local:8765 --fleet F --token-file TOKEN")
    known = {ff.url_key(a.url) for a in f.agents}
    added = []
    for name, url, lab in found:
        if ff.url_key(url) in known and args.discover:
            continue  # discovery again finds the ones already there
        spec = AgentSpec(name=name, url=url, labels=lab, token_file=token, ca=args.ca,
                         infer_token_file=_ws_ref(ws, args.infer_token_file))
        f.spec.agents.append(spec)
        added.append(spec)
    f.save()  # a duplicate name or URL is refused here, naming both entries; nothing is written then
    for spec in added:
        ff.register_device(ws, spec, token)
    if args.json:
        print(json.dumps([a.model_dump() for a in added]))
    else:
        print("\n".join(f"added {a.name} ({a.url}) to fleet {f.name}" for a in added) or "no new agents found")
    return 0


def _ws_ref(ws: Any, token_file: str | None) -> str | None:
    """A token file path as the workspace keeps it: relative when inside the workspace (it can move)."""
    if not token_file:
        return None
    from studio.core.errors import InputError

    p = Path(token_file)
    if not p.is_file():
        raise InputError(f"token file {p} does not exist", offending="--token-file",
                         hint="copy /etc/studio-agent/token from the board")
    return ws.relative(p)


def _printer(as_json: bool) -> Any:
    from studio.fleet.render import event_line

    def show(ev: Any, _state: Any) -> None:
        if as_json:
            from dataclasses import asdict

            print(json.dumps({"event": asdict(ev)}), flush=True)
        else:
            print(event_line(ev), flush=True)

    return show


def _rollout(ws: Any, args: argparse.Namespace) -> int:
    from studio.core.catalogue import N_
    from studio.fleet import api
    from studio.fleet.render import status_text

    if args.action == "status":
        state, _ = api.load_rollout(ws, args.fleet)
        where = N_(" (interrupted: the studio running it is gone; `studio fleet resume`)") if api.interrupted(state) else ""
        if args.json:
            print(json.dumps({**state.to_dict(), "interrupted": api.interrupted(state)}, indent=2))
        else:
            print(status_text(state, where=where))
        return 0  # a question answered; the rollout's own exit code is rollout's and resume's
    if args.action == "pause":
        print(api.pause_rollout(ws, args.fleet))
        return 0
    if args.action == "abort":
        msg, state = api.abort_rollout(ws, args.fleet)
        print(json.dumps(state.to_dict(), indent=2) if args.json else (msg if msg != "aborted" else status_text(state)))
        return 0 if state.status == "aborted" or msg != "aborted" else 1
    if args.action == "rollout":
        engine = api.start_rollout(ws, args.fleet, args.bundle, plan=args.plan, gate=args.gate, watch=args.watch,
                                   on_down=args.on_down, probe_rps=args.probe_rps, p95_ms=args.p95_ms,
                                   p99_ms=args.p99_ms, tiers_file=args.tiers, replace=args.replace)
    else:
        engine = api.resume_rollout(ws, args.fleet)
    engine.subscribe(_printer(args.json))
    try:
        state = engine.run()
    except KeyboardInterrupt:
        engine.pause()
        print("interrupted: the rollout is left where it stopped; `studio fleet resume` goes on", file=sys.stderr)
        return 130
    if args.json:
        print(json.dumps({"result": state.to_dict()}))
    else:
        print(status_text(state, events=0))
    return EXIT_CODES.get(state.status, 1)
