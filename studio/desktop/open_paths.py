"""What `studio gui PATH...` (and a double-clicked file) opens: each path to the page that takes it, decided
from what the path holds, before any window exists (so a bad path is an error with exit 2, and a second launch
hands only good paths to the running studio). Qt-free.

* an ``.onnx`` file, or a folder holding one (an export folder: ``model.onnx`` first) -> Inspect
* a folder with a HuggingFace ``config.json`` and no ONNX model -> the export wizard, on its source step
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from studio.core.errors import InputError


@dataclass
class OpenRequest:
    path: str  # absolute
    page: str  # the page id that opens it
    what: str  # what the path was taken for, in words

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _onnx_in(folder: Path) -> Path | None:
    """The ONNX model the Inspector opens from a folder (its resolve order), or None."""
    for cand in [folder / "model.onnx", *sorted(folder.glob("*.onnx")), *sorted(folder.glob("onnx/*.onnx"))]:
        if cand.is_file():
            return cand
    return None


def _hf_config(folder: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and ("model_type" in data or "architectures" in data) else None


def classify(path: str | Path, cwd: Path | None = None) -> OpenRequest:
    p = Path(path).expanduser()
    if not p.is_absolute():
        p = (cwd or Path.cwd()) / p
    p = Path(str(p.resolve()))
    if not p.exists():
        raise InputError(f"cannot open {p}: it does not exist", offending=str(path), hint="check the path")
    if p.is_file():
        if p.suffix.lower() == ".onnx":
            return OpenRequest(str(p), "inspect", "ONNX model")
        raise InputError(f"cannot open {p}: the studio opens .onnx models and model folders", offending=str(path),
                         hint="pass an .onnx file, an export folder or a HuggingFace model folder")
    if _onnx_in(p) is not None:
        return OpenRequest(str(p), "inspect", "export folder")
    if _hf_config(p) is not None:
        return OpenRequest(str(p), "export", "HuggingFace model folder")
    raise InputError(f"cannot open the folder {p}: it holds no .onnx model and no HuggingFace config.json",
                     offending=str(path), hint="pass an export folder, a HuggingFace model folder or an .onnx file")


def classify_all(paths: list[str] | None, cwd: Path | None = None) -> list[OpenRequest]:
    """Every path checked up front: the first bad one is the error, nothing is opened."""
    return [classify(p, cwd) for p in paths or []]
