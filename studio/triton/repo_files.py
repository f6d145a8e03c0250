"""The file side of a Triton repository: version folders written atomically, ONNX copies with their
external data, and the ``studio_env.json`` that tells a Python-backend model where its packages live."""

from __future__ import annotations

import shutil
import sys
import sysconfig
from pathlib import Path
from typing import Any

from studio.core.atomic import atomic_path, write_json_atomic, write_text_atomic
from studio.core.errors import InputError

ENV_FILE = "studio_env.json"
TRUST_DIR = "trusted_keys"  # public keys a signed model version is verified against


def default_site_packages() -> list[str]:
    """Where this interpreter's numpy / onnxruntime / tokenizers live (the stub's python lacks them)."""
    paths = []
    for key in ("purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p and p not in paths:
            paths.append(p)
    for p in sys.path:
        if p.endswith("site-packages") and p not in paths and Path(p).is_dir():
            paths.append(p)
    return paths


def next_version(model_dir: Path) -> int:
    versions = [int(p.name) for p in model_dir.iterdir() if p.is_dir() and p.name.isdigit()] \
        if model_dir.is_dir() else []
    return max(versions, default=0) + 1


def copy_onnx(src: Path, dest_dir: Path, dest_name: str = "model.onnx") -> None:
    """Copy the model and the external-data files it references (each under the location the graph records); a
    missing or truncated data file is a ModelError naming it (studio.core.external_data)."""
    from studio.core.external_data import check_model_files

    files = check_model_files(src)
    shutil.copy2(src, dest_dir / dest_name)  # copy_file_range underneath: a 3 GB data file stays in the kernel
    for df in files:
        target = dest_dir / df.location
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(df.path, target)


def write_version(model_dir: Path, version: int, fill: Any) -> Path:
    """Build version folder N in a temp dir and rename it in (a polling server never sees it half-made)."""
    model_dir.mkdir(parents=True, exist_ok=True)
    target = model_dir / str(version)
    if target.exists():
        raise InputError(f"version {version} of {model_dir.name} already exists at {target}", offending=str(target),
                         hint="omit --version to add the next one, or pick an unused number")
    with atomic_path(target, is_dir=True) as tmp:
        fill(tmp)
    return target


def studio_path() -> str:
    """The folder holding the ``studio`` package: model.py imports the manifest verifier from it."""
    import studio

    return str(Path(studio.__file__).resolve().parents[1])


def write_env(model_dir: Path, site_packages: list[str]) -> None:
    write_json_atomic(model_dir / ENV_FILE, {"site_packages": site_packages, "studio_path": studio_path(),
                                             "why": "Triton's Python stub runs the system interpreter; "
                                                    "model.py appends these paths to sys.path"})


def repo_models(repo: Path | str) -> list[str]:
    repo = Path(repo)
    return sorted(p.name for p in repo.iterdir() if p.is_dir() and not p.name.startswith(".")) \
        if repo.is_dir() else []


__all__ = ["ENV_FILE", "TRUST_DIR", "copy_onnx", "default_site_packages", "next_version", "repo_models",
           "studio_path", "write_env", "write_version"]


def sign_version(tmp: Path, name: str, version: int, sign_key: Any) -> None:
    """Sign a version folder (model files and model.py) with the edge bundle's manifest format."""
    from studio.package.bundle import sign_directory

    sign_directory(tmp, sign_key, name=name, version=str(version), exclude=("__pycache__/*",))


def install_trust(model_dir: Path, cfg: Any, trust: Any) -> None:
    """Copy the trusted public keys (``trust``: the key files / folders) beside the versions and tell model.py
    to verify before loading.

    The default ``trusted_keys/`` sits in the repository; a server operator can point the
    ``studio_trusted_keys`` parameter at a folder outside the repository instead.
    """
    from studio.edge.trust import load_trusted_keys, public_key_line
    from studio.triton import config as tc

    trusted = load_trusted_keys(*trust)
    folder = model_dir / TRUST_DIR
    folder.mkdir(parents=True, exist_ok=True)
    for kid, key in trusted.keys.items():
        write_text_atomic(folder / f"{kid}.pub", public_key_line(key, kid) + "\n")
    tc.set_parameter(cfg, "studio_verify", "manifest")
    tc.set_parameter(cfg, "studio_trusted_keys", TRUST_DIR)
