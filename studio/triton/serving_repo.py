"""A servable mirror of a repository for a server without the ONNX Runtime backend (the local CPU server).

Models with ``platform: "onnxruntime_onnx"`` are mirrored as Python-backend models running the same ONNX
file with onnxruntime (the file is linked, not copied); every other model folder is linked as is.
``sync`` is idempotent, so a poll-mode server can re-run it to pick up new versions.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.atomic import atomic_path, write_json_atomic
from studio.triton import config as tc
from studio.triton.repo_builder import ENV_FILE, TRUST_DIR, default_site_packages, studio_path


def needs_conversion(cfg: Any) -> bool:
    return cfg.platform == "onnxruntime_onnx" or cfg.backend == "onnxruntime"


def repo_needs_mirror(repo: Path) -> list[str]:
    """Names of models this CPU server cannot run as they are."""
    out = []
    for d in sorted(Path(repo).iterdir()):
        f = d / "config.pbtxt"
        if d.is_dir() and f.is_file():
            try:
                if needs_conversion(tc.load_config(f)):
                    out.append(d.name)
            except Exception:  # a broken config is left for the server (and `check`) to report
                continue
    return out


def python_flavour_config(cfg: Any) -> Any:
    """The same model as a Python-backend config: backend python, CPU instances, onnx_file parameter."""
    m = tc.pb2()
    new = m.ModelConfig()
    new.CopyFrom(cfg)
    onnx_file = cfg.default_model_filename or "model.onnx"
    new.ClearField("platform")
    new.ClearField("default_model_filename")
    new.backend = "python"
    new.ClearField("optimization")
    for g in new.instance_group:
        if g.kind in (m.ModelInstanceGroup.KIND_GPU, m.ModelInstanceGroup.KIND_AUTO):
            g.kind = m.ModelInstanceGroup.KIND_CPU
            g.ClearField("gpus")
    tc.set_parameter(new, "onnx_file", onnx_file)
    tc.set_parameter(new, "studio_flavor", "python-onnxruntime (mirrored from onnxruntime_onnx)")
    return new


@dataclass
class ServingRepo:
    source: Path
    root: Path
    converted: list[str] = field(default_factory=list)
    site_packages: list[str] = field(default_factory=default_site_packages)
    _stamps: dict[str, float] = field(default_factory=dict)

    def sync(self) -> bool:
        """Bring the mirror up to date; True when anything changed."""
        from studio.triton.pymodels import ONNX_MODEL

        self.root.mkdir(parents=True, exist_ok=True)
        changed = False
        names = set()
        for d in sorted(self.source.iterdir()):
            if not d.is_dir() or d.name.startswith("."):
                continue
            names.add(d.name)
            dst = self.root / d.name
            cfg_file = d / "config.pbtxt"
            cfg = None
            if cfg_file.is_file():
                try:
                    cfg = tc.load_config(cfg_file)
                except Exception:
                    cfg = None
            if cfg is None or not needs_conversion(cfg):
                if not dst.is_symlink():
                    _remove(dst)
                    os.symlink(d.resolve(), dst, target_is_directory=True)
                    changed = True
                continue
            if d.name not in self.converted:
                self.converted.append(d.name)
            if dst.is_symlink():
                dst.unlink()
            dst.mkdir(exist_ok=True)
            stamp = cfg_file.stat().st_mtime
            if self._stamps.get(d.name) != stamp or not (dst / "config.pbtxt").exists():
                tc.write_config(dst / "config.pbtxt", python_flavour_config(cfg))
                write_json_atomic(dst / ENV_FILE, {"site_packages": self.site_packages, "studio_path": studio_path()})
                self._stamps[d.name] = stamp
                changed = True
            versions = {p.name for p in d.iterdir() if p.is_dir() and p.name.isdigit()}
            for v in sorted(versions):
                if (dst / v).exists():
                    continue
                signed = (d / v / "manifest.json").is_file()
                with atomic_path(dst / v, is_dir=True) as tmp:
                    tmp.mkdir(parents=True, exist_ok=True)
                    for f in (d / v).iterdir():
                        if signed:  # the verifier refuses links: hard-link (or copy) the real files
                            _link_or_copy(f, tmp / f.name)
                        else:
                            os.symlink(f.resolve(), tmp / f.name)
                    shutil.copy2(ONNX_MODEL, tmp / "model.py")
                changed = True
            if (d / TRUST_DIR).is_dir():
                shutil.copytree(d / TRUST_DIR, dst / TRUST_DIR, dirs_exist_ok=True)
            for p in dst.iterdir():
                if p.is_dir() and p.name.isdigit() and p.name not in versions:
                    shutil.rmtree(p)
                    changed = True
        for p in self.root.iterdir():
            if p.name not in names and not p.name.startswith("."):
                _remove(p)
                changed = True
        return changed


def _link_or_copy(src: Path, dst: Path) -> None:
    if src.is_dir():
        shutil.copytree(src, dst)
        return
    try:
        os.link(src.resolve(), dst)
    except OSError:
        shutil.copy2(src, dst)


def _remove(p: Path) -> None:
    if p.is_symlink() or p.is_file():
        p.unlink()
    elif p.is_dir():
        shutil.rmtree(p)
