"""Where the studio keeps its own files: resources shipped with the app and the user's config folder."""

from __future__ import annotations

import importlib.resources
import os
from pathlib import Path

from studio.core.errors import InstallError

# Folders of ``studio/resources`` the code reads (shipped as package data in the wheel).
RESOURCE_FOLDERS = ("targets", "boards", "sla", "themes")


def resources_dir() -> Path:
    """``studio/resources`` (targets, boards, SLA tiers, themes) as package data; STUDIO_RESOURCES overrides it."""
    env = os.environ.get("STUDIO_RESOURCES")
    if env:
        return Path(env)
    res = importlib.resources.files("studio") / "resources"
    if not isinstance(res, Path):  # a zip import: the readers need real files
        raise InstallError("the studio package is not installed as plain files (zip import?)",
                           offending=str(res), hint=_reinstall_hint())
    return res


def resource_folder(name: str, pattern: str = "*") -> Path:
    """``resources/<name>``, which must exist and hold at least one ``pattern`` file: else InstallError."""
    folder = resources_dir() / name
    if not folder.is_dir() or not any(folder.glob(pattern)):
        what = "is missing" if not folder.is_dir() else f"holds no {pattern} files"
        raise InstallError(f"the studio's resources folder '{name}/' {what}", offending=str(folder),
                           hint=_reinstall_hint())
    return folder


def resource_file(folder: str, name: str) -> Path:
    """``resources/<folder>/<name>``, which must exist: else InstallError naming it and the fix."""
    path = resource_folder(folder) / name
    if not path.is_file():
        raise InstallError(f"the studio's resource file '{folder}/{name}' is missing", offending=str(path),
                           hint=_reinstall_hint())
    return path


def _reinstall_hint() -> str:
    env = os.environ.get("STUDIO_RESOURCES")
    if env:
        return (f"STUDIO_RESOURCES={env} overrides the shipped resources: point it at a folder holding "
                f"{', '.join(f + '/' for f in RESOURCE_FOLDERS)} or unset it")
    from studio import __version__

    return (f"this deployment-studio install is incomplete (package data missing); reinstall the wheel: "
            f"python3 -m pip install --force-reinstall --no-deps deployment_studio-{__version__}-py3-none-any.whl "
            f"(from a checkout: python3 -m pip install -e .)")


def config_dir() -> Path:
    """Per-user config (settings, recent workspaces, keys); STUDIO_CONFIG_DIR overrides it (tests use it)."""
    return _user_dir("STUDIO_CONFIG_DIR", "XDG_CONFIG_HOME", ".config")


def cache_dir() -> Path:
    """Per-user cache (prepared Triton backends, test venvs, ...); STUDIO_CACHE_DIR overrides it."""
    return _user_dir("STUDIO_CACHE_DIR", "XDG_CACHE_HOME", ".cache")


def _user_dir(override: str, xdg: str, default: str) -> Path:
    env = os.environ.get(override)
    if env:
        return Path(env)
    base = os.environ.get(xdg) or str(Path.home() / default)
    return Path(base) / "deployment-studio"
