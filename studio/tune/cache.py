"""The search's results in the user cache, keyed by what they depend on: the model files (and the processor
files beside them), the calibration samples, the options and the versions of every tool that judged. A re-run with
the same inputs copies the cached variant into --out and answers at once; a new toolkit or model is a new key.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from studio.core.processor_files import PROCESSOR_FILES

KEY_VERSION = 1
SIDE_FILES = ("tokenizer.json", "tokenizer_config.json", *PROCESSOR_FILES)
VERSIONED = ("onnx", "onnxruntime", "onnxslim", "onnxconverter-common", "deployment-studio")


def cache_root() -> Path:
    from studio.core.paths import cache_dir

    return cache_dir() / "optimize"


def _hash_file(h: Any, path: Path) -> None:
    h.update(path.name.encode())
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)


def tool_versions(tool: str) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"evaluator": tool}
    for dist in VERSIONED:
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = ""
    return out


def cache_key(parts: list[Any], calibration: Path | None, options: dict[str, Any], tools: dict[str, str]) -> str:
    h = hashlib.sha256()
    h.update(json.dumps({"v": KEY_VERSION, "options": options, "tools": tools}, sort_keys=True).encode())
    for p in parts:
        h.update(p.name.encode())
        _hash_file(h, p.path)
        data = p.path.parent / f"{p.path.name}.data"
        if data.is_file():
            _hash_file(h, data)
        for side in SIDE_FILES:
            f = p.processor_dir / side
            if f.is_file():
                _hash_file(h, f)
    if calibration is not None:
        for f in sorted(Path(calibration).iterdir()):
            if f.is_file():
                _hash_file(h, f)
    else:
        h.update(b"synthetic-calibration")
    return h.hexdigest()[:40]


def lookup(key: str) -> Path | None:
    """The cached result folder (its report and the variant files), or None."""
    d = cache_root() / key
    return d if (d / "result" / "optimize_report.json").is_file() else None


def store(key: str, out: Path) -> None:
    """Copy the written --out folder into the cache (best effort: a full disk only loses the shortcut)."""
    root = cache_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=root))
        shutil.copytree(out, tmp / "result", symlinks=False)
        dest = root / key
        if dest.exists():
            shutil.rmtree(dest, ignore_errors=True)
        os.replace(tmp, dest)
    except OSError:
        shutil.rmtree(root / f".{key}", ignore_errors=True)
