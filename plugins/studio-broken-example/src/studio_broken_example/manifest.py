"""A valid manifest whose module fails on first use: the studio must list it and carry on."""

from __future__ import annotations


def manifest() -> dict:
    return {"name": "broken-example",
            "description": "Declares a target, a verifier, a command and a page; its module raises on import",
            "module": "studio_broken_example.plugin",
            "provides": {"targets": ["broken-npu"], "verifiers": ["broken-npu"],
                         "cli": {"broken-hello": "a command whose plugin cannot be imported"},
                         "pages": {"broken": "Broken NPU"}}}
