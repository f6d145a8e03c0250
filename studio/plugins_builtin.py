"""Manifests of the built-in plugins; registered through entry points exactly like outside plugins."""

from __future__ import annotations


def targets_manifest() -> dict:
    return {"name": "builtin-targets", "description": "Target profiles shipped in studio/resources/targets",
            "provides": {"targets": ["studio/resources/targets/*.yaml"]}, "module": None}
