"""A workspace: one folder holding models, reports, user target profiles and devices; reopened on start.

Layout::

    WS/workspace.json   name, current model and target, model and device lists
    WS/models/          HF model folders and exported ONNX folders
    WS/reports/         export / inspection / benchmark reports (JSON)
    WS/targets/         user target profiles (added to the built-in ones)
    WS/recordings/      telemetry recordings
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from studio.core.atomic import write_json_atomic
from studio.core.errors import InputError

WORKSPACE_FILE = "workspace.json"
SCHEMA_VERSION = 1
SUBDIRS = ("models", "reports", "targets", "recordings")


class WorkspaceCorrupt(InputError):
    """workspace.json exists but cannot be read (invalid JSON, wrong shape): Workspace.recover keeps a backup."""


@dataclass
class ModelEntry:
    """A model the workspace knows: an HF folder (kind "hf") or an ONNX file / export folder (kind "onnx")."""

    name: str
    path: str  # relative to the workspace when inside it, else absolute
    kind: str  # "hf" | "onnx"
    source: str = ""  # e.g. "sample:tiny-clip", "export of tiny-clip"
    report: str | None = None
    # what later steps made from it (studio.core.state.ARTIFACT_KINDS): parts, tokenizer, bundles, ...
    artifacts: dict[str, Any] = field(default_factory=dict)


@dataclass
class DeviceEntry:
    """A Triton server or edge agent the user added; headers never hold secrets written by us."""

    name: str
    url: str
    kind: str  # "triton" | "agent"
    protocol: str = "http"
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Workspace:
    root: Path
    name: str = "workspace"
    current_model: str | None = None
    current_target: str | None = "ort-cpu"
    models: list[ModelEntry] = field(default_factory=list)
    devices: list[DeviceEntry] = field(default_factory=list)

    # -- files -----------------------------------------------------------------------------------------
    @property
    def models_dir(self) -> Path:
        return self.root / "models"

    @property
    def reports_dir(self) -> Path:
        return self.root / "reports"

    @property
    def targets_dir(self) -> Path:
        return self.root / "targets"

    @property
    def recordings_dir(self) -> Path:
        return self.root / "recordings"

    @classmethod
    def create(cls, root: Path | str, name: str | None = None) -> Workspace:
        root = Path(root).resolve()
        if root.exists() and not root.is_dir():
            raise InputError(f"cannot create a workspace at {root}: it is a file", offending=str(root),
                             hint="choose a folder path")
        root.mkdir(parents=True, exist_ok=True)
        ws = cls.open(root) if (root / WORKSPACE_FILE).exists() else cls(root=root, name=name or root.name)
        for sub in SUBDIRS:
            (root / sub).mkdir(exist_ok=True)
        ws.save()
        return ws

    @classmethod
    def open(cls, root: Path | str) -> Workspace:
        root = Path(root).resolve()
        f = root / WORKSPACE_FILE
        if not f.is_file():
            raise InputError(f"{root} is not a studio workspace (no {WORKSPACE_FILE})", offending=str(root),
                             hint="create one with `studio workspace init DIR` or File > New workspace")
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("the top level is not an object")
            models = [ModelEntry(**m) for m in data.get("models", [])]
            devices = [DeviceEntry(**d) for d in data.get("devices", [])]
        except (ValueError, TypeError) as exc:
            what = "is not valid JSON" if isinstance(exc, json.JSONDecodeError) else "is not a valid workspace file"
            raise WorkspaceCorrupt(f"{f} {what}: {exc}", offending=str(f),
                                   hint="fix it by hand, or let the studio keep it as a backup and start a new "
                                        "one from the models in the folder (the GUI does this itself)") from exc
        ws = cls(root=root, name=data.get("name", root.name),
                 current_model=data.get("current_model"), current_target=data.get("current_target", "ort-cpu"),
                 models=models, devices=devices)
        for sub in SUBDIRS:
            (root / sub).mkdir(exist_ok=True)
        return ws

    @classmethod
    def recover(cls, root: Path | str) -> tuple[Workspace, Path]:
        """A workspace whose workspace.json cannot be read: keep that file as a backup beside it, start a new
        one, and register again the models found in models/. Returns the workspace and the backup's path."""
        root = Path(root).resolve()
        f = root / WORKSPACE_FILE
        backup = f.with_name(f"{WORKSPACE_FILE}.bad-{time.strftime('%Y%m%d-%H%M%S')}")
        n = 1
        while backup.exists():
            n += 1
            backup = backup.with_name(f"{backup.name.split('~')[0]}~{n}")
        os.replace(f, backup)
        ws = cls.create(root)
        for child in sorted(ws.models_dir.iterdir()) if ws.models_dir.is_dir() else []:
            try:
                ws.add_model(child, make_current=False)
            except InputError:
                continue  # not a model folder: left where it is
        if ws.models:
            ws.current_model = ws.models[-1].name
        ws.save()
        return ws, backup

    def save(self) -> None:
        data = {"schema_version": SCHEMA_VERSION, "name": self.name, "current_model": self.current_model,
                "current_target": self.current_target, "models": [asdict(m) for m in self.models],
                "devices": [asdict(d) for d in self.devices]}
        write_json_atomic(self.root / WORKSPACE_FILE, data)

    # -- models ----------------------------------------------------------------------------------------
    def resolve(self, entry: ModelEntry) -> Path:
        p = Path(entry.path)
        return p if p.is_absolute() else self.root / p

    def relative(self, path: Path | str) -> str:
        """``path`` relative to the workspace when inside it (the workspace can move), else absolute."""
        return self._rel(Path(path))

    def _rel(self, path: Path) -> str:
        path = Path(path).resolve()
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)

    def add_model(self, path: Path | str, *, name: str | None = None, kind: str | None = None,
                  source: str = "", report: str | None = None, make_current: bool = True) -> ModelEntry:
        """Register a model folder or .onnx file (replacing an entry of the same name)."""
        path = Path(path)
        if not path.exists():
            raise InputError(f"model path {path} does not exist", offending=str(path),
                             hint="check the path, or export the model first")
        kind = kind or detect_model_kind(path)
        entry = ModelEntry(name=name or path.stem, path=self._rel(path), kind=kind, source=source, report=report)
        old = self.model(entry.name)
        if old is not None and old.path == entry.path:
            entry.artifacts = old.artifacts  # the same model added again keeps what was made from it
        self.models = [m for m in self.models if m.name != entry.name] + [entry]
        if make_current:
            self.current_model = entry.name
        self.save()
        return entry

    def name_for(self, path: Path | str) -> str:
        """The entry name a model at ``path`` goes by: the existing entry's for the same path, else a free name from
        the file (its folder's for a ``model.onnx``), suffixed ``-2``, ``-3``... rather than replacing another model
        of that name (add_model replaces by name: two opened ``model.onnx`` files must not become one entry)."""
        path = Path(path)
        rel = self._rel(path)
        folder = self._rel(path.parent) if path.is_file() else None  # an export folder's entry owns its model.onnx
        same = next((m for m in self.models if m.path == rel), None) or next(
            (m for m in self.models if folder is not None and m.kind == "onnx" and m.path == folder), None)
        if same is not None:
            return same.name
        base = path.parent.name if path.is_file() and path.stem == "model" and path.parent.name else path.stem
        taken = {m.name for m in self.models}
        name, i = base, 2
        while name in taken:
            name, i = f"{base}-{i}", i + 1
        return name

    def model(self, name: str | None = None) -> ModelEntry | None:
        name = name or self.current_model
        return next((m for m in self.models if m.name == name), None)

    def origin(self, name: str | None = None) -> ModelEntry | None:
        """The HF model a model was made from: itself for an HF folder, else along its ``source`` ("export of
        NAME", "<kind> fix of NAME-or-PATH") back to one; None when the trail leaves the workspace."""
        m, seen = self.model(name), set()
        while m is not None and m.kind != "hf" and m.name not in seen:
            seen.add(m.name)
            parent = m.source.rpartition(" of ")[2].strip() if " of " in m.source else ""
            m = self.model(parent) or next((x for x in self.models if parent and
                                            str(self.resolve(x)) == str(Path(parent).expanduser())), None)
        return m if m is not None and m.kind == "hf" else None

    def add_device(self, device: DeviceEntry) -> None:
        self.devices = [d for d in self.devices if d.name != device.name] + [device]
        self.save()

    def remove_device(self, name: str) -> None:
        self.devices = [d for d in self.devices if d.name != name]
        self.save()


def detect_model_kind(path: Path) -> str:
    """"onnx" for a .onnx file or a folder holding one, "hf" for a folder with config.json."""
    path = Path(path)
    if path.is_file():
        if path.suffix.lower() == ".onnx":
            return "onnx"
        raise InputError(f"{path} is neither an .onnx file nor a model folder", offending=str(path),
                         hint="drop an .onnx file or a HuggingFace model folder (with config.json)")
    if (path / "config.json").is_file() and not any(path.glob("*.onnx")):
        return "hf"
    if any(path.glob("*.onnx")):
        return "onnx"
    raise InputError(f"{path} holds neither config.json nor an .onnx file", offending=str(path),
                     hint="point at a HuggingFace model folder saved with save_pretrained, or an ONNX export")
