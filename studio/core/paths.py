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
    return _user_dir("STUDIO_CONFIG_DIR", "XDG_CONFIG_HOME", ".config")


def cache_dir() -> Path:
    """Per-user cache (prepared Triton backends, ...); STUDIO_CACHE_DIR overrides it."""
    return _user_dir("STUDIO_CACHE_DIR", "XDG_CACHE_HOME", ".cache")


def _user_dir(override: str, xdg: str, default: str) -> Path:
    env = os.environ.get(override)
    if env:
        return Path(env)
    base = os.environ.get(xdg) or str(Path.home() / default)
    return Path(base) / "deployment-studio"
