"""The agent's data folder: installed bundle versions, the active-version state, and the upload scratch area.

Layout::

    DATA/state.json               per bundle name: active version, rollback stack, event history
    DATA/bundles/NAME/VERSION/    verified, extracted bundle versions (read-only after install)
    DATA/incoming/                uploads in progress and staging folders; wiped at every start, so a
                                  kill during an upload leaves nothing behind
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

from studio.core.atomic import write_json_atomic

STATE_SCHEMA = 1
HISTORY_LIMIT = 200


class BundleStore:
    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.bundles = self.root / "bundles"
        self.incoming = self.root / "incoming"
        self.state_file = self.root / "state.json"
        for d in (self.root, self.bundles, self.incoming):
            d.mkdir(parents=True, exist_ok=True)
        self.state = self._load_state()

    # -- scratch ---------------------------------------------------------------------------------------
    def clean_incoming(self) -> list[str]:
        """Remove leftovers of interrupted uploads (a kill -9 mid-upload)."""
        removed = []
        for p in self.incoming.iterdir():
            removed.append(p.name)
            shutil.rmtree(p, ignore_errors=True) if p.is_dir() and not p.is_symlink() else p.unlink(missing_ok=True)
        return removed

    def new_upload_path(self) -> Path:
        return self.incoming / f"upload-{uuid.uuid4().hex}.part"

    def new_staging_dir(self) -> Path:
        return self.incoming / f"stage-{uuid.uuid4().hex}"

    # -- versions --------------------------------------------------------------------------------------
    def version_dir(self, name: str, version: str) -> Path:
        return self.bundles / name / version

    def has_version(self, name: str, version: str) -> bool:
        return self.version_dir(name, version).is_dir()

    def install(self, staging: Path, name: str, version: str) -> Path:
        """Move a verified staging folder into place (a rename on the same filesystem)."""
        target = self.version_dir(name, version)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging, target)
        return target

    def remove_version(self, name: str, version: str) -> None:
        shutil.rmtree(self.version_dir(name, version), ignore_errors=True)
        parent = self.bundles / name
        if parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()

    def versions(self, name: str) -> list[str]:
        d = self.bundles / name
        if not d.is_dir():
            return []
        return sorted((p.name for p in d.iterdir() if p.is_dir()),
                      key=lambda v: (self.version_dir(name, v) / "manifest.json").stat().st_mtime
                      if (self.version_dir(name, v) / "manifest.json").exists() else 0.0)

    def names(self) -> list[str]:
        return sorted(set(self.state["models"]) | {p.name for p in self.bundles.iterdir() if p.is_dir()})

    # -- state -----------------------------------------------------------------------------------------
    def _load_state(self) -> dict[str, Any]:
        try:
            data = json.loads(self.state_file.read_text(encoding="utf-8"))
            if isinstance(data, dict) and isinstance(data.get("models"), dict):
                return data
        except (OSError, ValueError):
            pass
        return {"schema_version": STATE_SCHEMA, "models": {}}

    def save_state(self) -> None:
        write_json_atomic(self.state_file, self.state)

    def model_state(self, name: str) -> dict[str, Any]:
        return self.state["models"].setdefault(name, {"active": None, "stack": [], "history": []})

    def record(self, name: str, event: str, version: str, **extra: Any) -> None:
        st = self.model_state(name)
        st["history"].append({"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "event": event,
                              "version": version, **extra})
        del st["history"][:-HISTORY_LIMIT]

    def prune(self, name: str, keep: int) -> list[str]:
        """Delete the oldest versions beyond ``keep``, never the active one or the rollback candidates."""
        st = self.model_state(name)
        protected = {st.get("active")} | set(st.get("stack", [])[-keep:])
        vs = [v for v in self.versions(name) if v not in protected]
        excess = len(self.versions(name)) - keep
        removed = []
        for v in vs[:max(0, excess)]:
            self.remove_version(name, v)
            removed.append(v)
        st["stack"] = [v for v in st.get("stack", []) if self.has_version(name, v)]
        return removed
