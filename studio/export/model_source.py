"""Where `--model` points: a local HuggingFace folder, or a hub id resolved from the local HF cache only.

The studio never downloads: a hub id (``Qwen/Qwen2-VL-2B-Instruct``) is looked up in the cache that
huggingface_hub itself uses (``HF_HUB_CACHE``, else ``HF_HOME/hub``, else ``~/.cache/huggingface/hub``),
as ``models--ORG--NAME/snapshots/<commit>`` with the commit named by ``refs/main``. No torch here.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from studio.core.errors import InputError

# huggingface_hub's rule: [org/]name, letters, digits, '-', '_', '.'; no '--' or '..'; at most 96 characters.
_SEGMENT = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
MAX_ID_LENGTH = 96


def is_hub_id(text: str) -> bool:
    """True when ``text`` is a syntactically valid hub model id (``name`` or ``org/name``)."""
    if not text or len(text) > MAX_ID_LENGTH or "--" in text or ".." in text:
        return False
    parts = text.split("/")
    return len(parts) <= 2 and all(_SEGMENT.match(p) for p in parts)


def hf_hub_cache() -> Path:
    """The hub cache folder, read from the environment now (same precedence as huggingface_hub)."""
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(var):
            return Path(os.environ[var]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg).expanduser() / "huggingface" / "hub"


def cache_folder(repo_id: str, cache: Path | None = None) -> Path:
    """``CACHE/models--ORG--NAME``: where huggingface_hub keeps the model ``repo_id``."""
    return (cache or hf_hub_cache()) / ("models--" + repo_id.replace("/", "--"))


def _fill_hint(repo_id: str, cache: Path) -> str:
    return (f"fill the cache on a machine with network: `hf download {repo_id}` (older huggingface_hub: "
            f"`huggingface-cli download {repo_id}`), then copy {cache_folder(repo_id, cache).name} into {cache} "
            "here (or point HF_HUB_CACHE / HF_HOME at a cache that has it); or pass a local folder saved with "
            "save_pretrained. The studio never downloads")


def _snapshot(repo_id: str, folder: Path, revision: str) -> Path | None:
    """The snapshot folder for ``revision`` (a ref such as main, or a commit hash), else None."""
    ref = folder / "refs" / revision
    commit = ref.read_text(encoding="utf-8").strip() if ref.is_file() else revision
    snap = folder / "snapshots" / commit
    if snap.is_dir():
        return snap
    snaps = [p for p in (folder / "snapshots").iterdir() if p.is_dir()] if (folder / "snapshots").is_dir() else []
    if revision == "main" and not ref.is_file() and len(snaps) == 1:  # copied without refs/: the one snapshot
        return snaps[0]
    return None


def resolve_hub_id(repo_id: str, revision: str = "main", cache: Path | None = None) -> Path:
    """The local snapshot folder of ``repo_id``; InputError naming the cache folder when it is not there."""
    cache = cache or hf_hub_cache()
    folder = cache_folder(repo_id, cache)
    snap = _snapshot(repo_id, folder, revision) if folder.is_dir() else None
    if snap is None:
        where = "has no snapshot for revision " + revision if folder.is_dir() else "does not hold it"
        raise InputError(f"hub model '{repo_id}' is not in the local HuggingFace cache {cache} ({folder.name} "
                         f"{where}); the studio works offline and never downloads", offending=str(folder),
                         hint=_fill_hint(repo_id, cache))
    if not (snap / "config.json").is_file():
        raise InputError(f"the cached snapshot of '{repo_id}' has no config.json (an incomplete download?)",
                         offending=str(snap), hint=_fill_hint(repo_id, cache))
    return snap


def resolve_model(text: str, revision: str = "main") -> Path:
    """``--model``: an existing folder as is, else a hub id from the local cache; anything else is exit 2."""
    path = Path(text).expanduser()
    if path.is_dir():
        return path
    if path.exists():
        raise InputError(f"--model {text} is a file, not a model folder", offending=text,
                         hint="pass a HuggingFace model folder (config.json + weights) or a hub id such as "
                              "Qwen/Qwen2-VL-2B-Instruct")
    if not is_hub_id(text):
        raise InputError(f"--model {text!r} is neither an existing folder nor a hub model id", offending=text,
                         hint="pass a local HuggingFace model folder, or a hub id ORG/NAME (letters, digits, "
                              "'-', '_', '.') that is in the local HF cache")
    try:
        return resolve_hub_id(text, revision)
    except InputError as exc:
        raise InputError(f"--model {text}: no such folder, and {exc.message}", offending=exc.offending,
                         hint=exc.hint) from None


__all__ = ["cache_folder", "hf_hub_cache", "is_hub_id", "resolve_hub_id", "resolve_model"]
