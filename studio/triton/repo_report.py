"""What a repository build reports: one row per model written (``BuiltModel``) and the ``BuildReport``. Apart
from the builder (``repo_builder``) so that the model writers it calls (``generate_repo``) record their models
without importing the builder that imports them: no import circle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from studio.core.reports import Report

SCHEMA_VERSION = 1


@dataclass
class BuiltModel:
    name: str
    kind: str  # "onnx" | "tokenizer" | "pipeline" | "router" | "generate" (studio.triton.generate_repo)
    flavor: str
    version: int
    path: str
    config: dict[str, Any] = field(default_factory=dict)


@dataclass
class BuildReport(Report):
    schema_version: int = SCHEMA_VERSION
    repo: str = ""
    name: str = ""
    models: list[BuiltModel] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    entry_model: str = ""  # the model a client should call
