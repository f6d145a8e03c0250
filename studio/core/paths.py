"""Where the studio keeps its own files: resources shipped with the app and the user's config folder."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]
REPO_DIR = PACKAGE_DIR.parent


def resources_dir() -> Path:
    """The ``resources/`` folder (targets, boards, SLA tiers, themes); STUDIO_RESOURCES overrides it."""
    env = os.environ.get("STUDIO_RESOURCES")
    if env:
        return Path(env)
    for cand in (REPO_DIR / "resources", PACKAGE_DIR / "resources"):
        if cand.is_dir():
            return cand
    return REPO_DIR / "resources"


def config_dir() -> Path:
    """Per-user config (settings, recent workspaces, keys); STUDIO_CONFIG_DIR overrides it (tests use it)."""
    env = os.environ.get("STUDIO_CONFIG_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "deployment-studio"
