"""The plugin's code, imported by the studio only when one of its contributions is first used."""

from __future__ import annotations

from typing import Any

from studio_example.verifier import ExampleVerifier


def verifier(name: str) -> ExampleVerifier:
    """``provides.verifiers``: the studio calls this with each name the manifest lists."""
    if name != "example-npu":
        raise LookupError(f"studio-example has no verifier '{name}'")
    return ExampleVerifier()


def page(name: str) -> tuple[str, Any]:
    """``provides.pages``: (sidebar title, Page subclass); Qt is imported only here, in the GUI."""
    if name != "example":
        raise LookupError(f"studio-example has no page '{name}'")
    from studio_example.page import ExamplePage

    return "Example NPU", ExamplePage
