"""User settings (theme, recent workspaces, last workspace) as a small JSON file in the config folder."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from studio.core.atomic import write_json_atomic
from studio.core.paths import config_dir

MAX_RECENT = 10


@dataclass
class Settings:
    theme: str = "light"  # "light" | "dark"
    recent_workspaces: list[str] = field(default_factory=list)
    last_workspace: str | None = None
    default_opset: int = 17
    default_exporter: str = "torchscript"
    extra: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def path() -> Path:
        return config_dir() / "settings.json"

    @classmethod
    def load(cls) -> Settings:
        """Read settings; a missing or unreadable file gives defaults (a broken file never blocks start-up)."""
        p = cls.path()
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        try:
            return cls(**known)
        except TypeError:
            return cls()

    def save(self) -> None:
        write_json_atomic(self.path(), asdict(self))

    def remember_workspace(self, path: Path | str) -> None:
        p = str(Path(path).resolve())
        self.recent_workspaces = [p] + [r for r in self.recent_workspaces if r != p]
        del self.recent_workspaces[MAX_RECENT:]
        self.last_workspace = p
