"""Fleet files in the workspace (WORKSPACE/fleets/NAME.yaml): read with FILE:LINE: FIELD errors, written atomically,
agents resolved to a URL and a token (by reference: the workspace device's token file, the agent's, the fleet's)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from studio.core.atomic import write_text_atomic
from studio.core.errors import InputError
from studio.core.workspace import DeviceEntry, Workspace
from studio.fleet.schema import HINT, WHAT, AgentSpec, FleetFile

FLEETS_DIR = "fleets"


def fleets_dir(ws: Workspace) -> Path:
    return ws.root / FLEETS_DIR


def fleet_path(ws: Workspace, fleet: str | Path) -> Path:
    """``--fleet F``: a fleet name in WORKSPACE/fleets/ or the path of a .yaml file."""
    p = Path(fleet)
    if p.suffix in (".yaml", ".yml") or p.is_file() or len(p.parts) > 1:
        return p if p.is_absolute() else (Path.cwd() / p)
    return fleets_dir(ws) / f"{fleet}.yaml"


def url_key(url: str) -> str:
    """The same agent written two ways (case, trailing slash, default port) compares equal."""
    parts = urlsplit(url if "://" in url else "http://" + url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{port}"


def agent_name(name: str) -> str:
    """A device or mDNS instance name as a fleet agent name ([A-Za-z0-9._:-], starting with a letter or digit)."""
    import re

    return re.sub(r"[^A-Za-z0-9._:-]+", "-", name).strip("-._:") or "agent"


def default_name(url: str) -> str:
    parts = urlsplit(url if "://" in url else "http://" + url)
    return f"{parts.hostname}-{parts.port}" if parts.port else str(parts.hostname)


@dataclass
class Fleet:
    """A validated fleet file and where it lives."""

    spec: FleetFile
    path: Path

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def agents(self) -> list[AgentSpec]:
        return self.spec.agents

    def agent(self, name: str) -> AgentSpec | None:
        return next((a for a in self.spec.agents if a.name == name), None)

    def to_yaml(self) -> str:
        import yaml

        data: dict[str, Any] = self.spec.model_dump(exclude_none=True)
        for a in data["agents"]:
            if not a.get("labels"):
                a.pop("labels", None)
        return yaml.safe_dump(data, sort_keys=False)

    def save(self) -> Path:
        check_unique(self.spec, self.path)
        write_text_atomic(self.path, self.to_yaml())
        return self.path


def check_unique(spec: FleetFile, path: Path | str, text: str | None = None) -> None:
    """Two entries with one name or one URL would deploy twice to the same board: refused, naming both."""
    from studio.core.resource_schema import resource_error

    seen_names: dict[str, int] = {}
    seen_urls: dict[str, int] = {}
    for i, a in enumerate(spec.agents):
        for seen, key, what in ((seen_names, a.name, "name"), (seen_urls, url_key(a.url), "url")):
            if key in seen:
                raise resource_error(InputError, WHAT, path, ("agents", i, what),
                                     f"agents[{i}] has the same {what} as agents[{seen[key]}] ({key})", text=text,
                                     hint="each agent once: remove the duplicate (`studio fleet remove NAME`)")
            seen[key] = i


def load_fleet(path: Path | str) -> Fleet:
    """Read and validate a fleet file; an InputError names the file, line and field of what is wrong."""
    import yaml

    from studio.core import yamlio
    from studio.core.resource_schema import validate

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"fleet file {p} does not exist", offending=str(p),
                         hint="create it with `studio fleet init NAME`, then `studio fleet add URL ...`") from None
    try:
        data = yamlio.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError(f"fleet file {p} is not valid YAML: {exc}", offending=str(p), hint=HINT) from None
    spec = validate(FleetFile, data if data is not None else {}, path=p, text=text, error_cls=InputError,
                    what=WHAT, hint=HINT)
    check_unique(spec, p, text)
    return Fleet(spec, p)


def new_fleet(path: Path, name: str, token_file: str | None = None) -> Fleet:
    if path.exists():
        raise InputError(f"fleet file {path} already exists", offending=str(path),
                         hint="add agents with `studio fleet add`, or choose another name")
    fleet = Fleet(FleetFile(name=name, token_file=token_file), path)
    fleet.save()
    return fleet


def require_agents(fleet: Fleet) -> None:
    if not fleet.agents:
        raise InputError(f"fleet {fleet.name} has no agents", offending=f"{fleet.path}: agents",
                         hint="add some with `studio fleet add URL --token-file FILE` (or --discover)")


@dataclass(frozen=True)
class ResolvedAgent:
    """What the engine needs to talk to one agent: URL, token file (a path), TLS check, labels."""

    name: str
    url: str
    token_file: Path | None
    verify: bool | str
    labels: dict[str, str]
    infer_token_file: Path | None = None

    def token(self) -> str | None:
        from studio.package.client import read_token_file

        return read_token_file(self.token_file) if self.token_file else None

    def infer_token(self) -> str | None:
        from studio.package.client import read_token_file

        return read_token_file(self.infer_token_file) if self.infer_token_file else None


def resolve_agents(fleet: Fleet, ws: Workspace | None) -> list[ResolvedAgent]:
    """Each agent's token file: its own, else the workspace device's with that URL, else the fleet's default."""
    devices = {url_key(d.url): d for d in (ws.devices if ws else []) if d.kind == "agent"}
    out = []
    for i, a in enumerate(fleet.agents):
        dev = devices.get(url_key(a.url))
        ref = a.token_file or (str(dev.extra.get("token_file") or "") if dev else "") or fleet.spec.token_file
        token = _abs(ref, ws) if ref else None
        if token is None or not token.is_file():
            raise InputError(f"agent {a.name} ({a.url}) has no readable token file"
                             + (f": {token}" if token else ""), offending=f"{fleet.path}: agents[{i}].token_file",
                             hint="give it with `studio fleet add URL --token-file FILE`, or set the fleet's "
                                  "token_file")
        out.append(ResolvedAgent(a.name, a.url, token, _abs(a.ca, ws).as_posix() if a.ca else True,
                                 dict(a.labels), _abs(a.infer_token_file, ws) if a.infer_token_file else None))
    return out


def _abs(ref: str, ws: Workspace | None) -> Path:
    p = Path(ref)
    return p if p.is_absolute() or ws is None else ws.root / p


def register_device(ws: Workspace, agent: AgentSpec, token_file: str | None) -> None:
    """The agent joins the workspace's devices too (kind "agent", its token file by reference), so the Devices
    page polls what the fleet holds; an existing device of that URL keeps its name."""
    known = next((d for d in ws.devices if d.kind == "agent" and url_key(d.url) == url_key(agent.url)), None)
    extra = dict(known.extra) if known else {}
    if token_file:
        extra["token_file"] = token_file
    if agent.labels.get("board"):
        extra.setdefault("board", agent.labels["board"])
    ws.add_device(DeviceEntry(name=known.name if known else agent.name, url=agent.url, kind="agent", extra=extra))
