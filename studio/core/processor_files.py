"""Where a model's image / audio processor settings are: ``preprocessor_config.json`` (transformers 4) or the
``image_processor`` / ``feature_extractor`` section of ``processor_config.json`` (transformers 5).

One reader for every client (the agent's preprocessing, Triton test inference, the GUI's pre-fill), so a folder
written by either transformers version works everywhere.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PROCESSOR_FILES = ("preprocessor_config.json", "processor_config.json")


def find_processor_file(path: Path | str) -> Path | None:
    """The processor file itself, or the first of PROCESSOR_FILES in a folder; None when there is none."""
    p = Path(path)
    if p.is_file():
        return p
    return next((p / n for n in PROCESSOR_FILES if (p / n).is_file()), None) if p.is_dir() else None


def processor_section(data: dict[str, Any], section: str, file_name: str) -> dict[str, Any]:
    """``section`` ("image_processor" / "feature_extractor") of a processor file's JSON: nested in
    processor_config.json, the whole object in the older preprocessor_config.json."""
    if isinstance(data.get(section), dict):
        return data[section]
    return data if file_name == "preprocessor_config.json" else {}


def read_processor(path: Path | str, section: str = "image_processor") -> dict[str, Any]:
    """The settings of ``section`` from a processor file or folder ({} when there is none); raises OSError /
    ValueError for an unreadable file (callers say which file)."""
    f = find_processor_file(path)
    if f is None:
        return {}
    return processor_section(json.loads(f.read_text(encoding="utf-8")), section, f.name)
