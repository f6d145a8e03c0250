"""Bundle files read for loading, checked against the signed manifest on the very bytes that get used.

``verify_directory`` checked the whole version folder before any runtime starts; a runtime that loads code or
weights (TVM's library, a .rknn) checks again here, while it reads or copies, so a file swapped on disk between
the check and the load is never used. Shared by every agent runtime (tvm_backend, the rknn plugin's).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from studio.core.errors import BundleError
from studio.edge.manifest import HASH_CHUNK, Manifest


def manifest_entry(manifest: Manifest, rel: str) -> Any:
    entry = manifest.file_map().get(rel)
    if entry is None:
        raise BundleError(f"{rel} is not listed in the signed manifest; refusing to load it", offending=rel,
                          hint="rebuild the bundle with `studio package`")
    return entry


def read_verified(directory: Path, manifest: Manifest, rel: str) -> bytes:
    """The bytes of a small bundle file, checked against the signed manifest."""
    entry = manifest_entry(manifest, rel)
    with open_regular(directory / rel) as fh:
        data = fh.read()
    if len(data) != entry.size or hashlib.sha256(data).hexdigest() != entry.sha256:
        raise BundleError(f"SHA-256 of {rel} does not match the signed manifest (file was modified)", offending=rel,
                          hint="do not use this version; redeploy the bundle")
    return data


def open_regular(path: Path) -> Any:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    return os.fdopen(fd, "rb")


def copy_verified(directory: Path, manifest: Manifest, rel: str, dest: Path) -> Path:
    """Copy a bundle file into ``dest`` while hashing it; the copy is what gets loaded."""
    entry = manifest_entry(manifest, rel)
    target = dest / Path(rel).name
    h, size = hashlib.sha256(), 0
    with open_regular(directory / rel) as src, open(target, "wb") as out:
        while chunk := src.read(HASH_CHUNK):
            h.update(chunk)
            out.write(chunk)
            size += len(chunk)
    if size != entry.size or h.hexdigest() != entry.sha256:
        raise BundleError(f"SHA-256 of {rel} does not match the signed manifest (file was modified)", offending=rel,
                          hint="a compiled library is executable code and is never loaded unverified; "
                               "redeploy the bundle")
    return target


def read_compiled_meta(directory: Path, manifest: Manifest, spec: dict[str, Any], hint: str) -> tuple[str, dict]:
    """(folder, compiled.json) of a runtime.json model entry, the JSON checked against the manifest first."""
    folder = str(spec.get("path") or "compiled").rstrip("/")
    meta_rel = f"{folder}/compiled.json"
    try:
        return folder, json.loads(read_verified(directory, manifest, meta_rel))
    except ValueError as exc:
        raise BundleError(f"{meta_rel} is unreadable: {exc}", offending=meta_rel, hint=hint) from exc
