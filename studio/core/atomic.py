"""Write outputs to a temporary sibling and rename, so nothing half-written is ever left at the target."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def atomic_path(target: Path | str, *, is_dir: bool = False) -> Iterator[Path]:
    """Yield a temp path beside ``target``; on success it replaces ``target``, on error it is removed."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    work = tmp if is_dir else tmp / target.name
    try:
        yield work
        if is_dir:
            if target.exists():
                old = target.with_name(f".{target.name}.old")
                shutil.rmtree(old, ignore_errors=True)
                os.replace(target, old)
                os.replace(work, target)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(work, target)
        else:
            os.replace(work, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_text_atomic(target: Path | str, text: str) -> Path:
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(target)


def write_json_atomic(target: Path | str, data: Any) -> Path:
    return write_text_atomic(target, json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")
