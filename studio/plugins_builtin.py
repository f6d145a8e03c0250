"""Manifests of the built-in plugins; registered through entry points exactly like outside plugins."""

from __future__ import annotations


def targets_manifest() -> dict:
    """The shipped target profiles, one contribution per YAML (listing the folder reads no YAML)."""
    from studio.core.paths import resource_folder

    folder = resource_folder("targets", "*.yaml")  # a broken install: InstallError, kept as this plugin's error
    return {"name": "builtin-targets", "description": "Target profiles shipped in studio/resources/targets",
            "provides": {"targets": {f.stem: {"path": str(f)} for f in sorted(folder.glob("*.yaml"))}},
            "module": None}
