"""Installs outside the checkout: build the wheel once, and cached per-extra venvs that get only that wheel.

A venv per extra holds the extra's dependencies (resolved from the wheel's own metadata with
packaging/constraints.txt) and lives under ``studio.core.paths.cache_dir() / "test-venvs"``, keyed by a hash of
pyproject.toml's dependency lists for that extra, the constraints file, the extra's name and the Python version.
Creating one costs minutes (torch, PySide6, apache-tvm); every test run then only installs the freshly built
wheel into it with ``--no-deps --force-reinstall`` (seconds).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from studio.core.paths import cache_dir

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = ROOT / "pyproject.toml"
CONSTRAINTS = ROOT / "packaging" / "constraints.txt"
PROJECT = "deployment-studio"
CORE = "core"  # the venv with no extra


def _pyproject() -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))


def extra_requirements(extra: str) -> list[str]:
    """The requirement strings an extra adds (its self-references such as ``deployment-studio[a,b]`` expanded)."""
    project = _pyproject()["project"]
    optional: dict[str, list[str]] = project.get("optional-dependencies", {})
    out: list[str] = list(project.get("dependencies", []))
    seen: set[str] = set()

    def add(name: str) -> None:
        if name == CORE or name in seen:
            return
        seen.add(name)
        for req in optional[name]:
            if req.replace("_", "-").startswith(PROJECT + "["):
                for sub in req.split("[", 1)[1].split("]", 1)[0].split(","):
                    add(sub.strip())
            else:
                out.append(req)

    add(extra)
    return out


def deps_key(extra: str) -> str:
    """Hash of what a deps-only venv for ``extra`` depends on."""
    blob = json.dumps({"extra": extra, "requirements": extra_requirements(extra),
                       "constraints": CONSTRAINTS.read_text(encoding="utf-8"),
                       "python": list(sys.version_info[:2])}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def venvs_root() -> Path:
    return cache_dir() / "test-venvs"


def clean_env(venv: Path | None = None, **extra: str) -> dict[str, str]:
    """The environment of a process that must see the installed wheel only (no checkout on any path)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "STUDIO_RESOURCES", "VIRTUAL_ENV", "PYTHONSTARTUP")}
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONNOUSERSITE"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env.update(extra)
    return env


def _run(cmd: list[str | Path], timeout: float, cwd: Path | None = None,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env=env or clean_env())
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n"
                           f"{proc.stderr[-5000:]}")
    return proc


def build_wheel(out_dir: Path) -> Path:
    """The project's wheel, built from a copy of the sources (nothing is written into the checkout).

    Built with the running interpreter's setuptools and ``--no-build-isolation`` (offline, about 3 s).
    """
    src = out_dir / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(ROOT / "studio", src / "studio", ignore=ignore)
    if (ROOT / "plugins").is_dir():
        shutil.copytree(ROOT / "plugins", src / "plugins", ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    dist = out_dir / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(src), "-w",
          str(dist)], timeout=300, cwd=out_dir)
    wheels = sorted(dist.glob("deployment_studio-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@dataclass
class WheelVenv:
    """A cached deps-only venv for one extra with the fresh wheel installed into it."""

    extra: str
    path: Path
    created_s: float  # seconds spent creating it this run (0.0 on a warm cache)
    install_s: float  # seconds spent installing the fresh wheel

    @property
    def bin(self) -> Path:
        return self.path / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python"

    def site_packages(self) -> Path:
        out = self.run_python("import sysconfig; print(sysconfig.get_paths()['purelib'])")
        return Path(out.stdout.strip())

    def run(self, *argv: str | Path, cwd: Path, timeout: float = 300, check: bool = True,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Run a console script of this venv (``studio``, ``studio-agent``) or an absolute command."""
        cmd = [str(self.bin / str(argv[0])) if not os.path.isabs(str(argv[0])) else str(argv[0]),
               *map(str, argv[1:])]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                              env=clean_env(self.path, **(env or {})))
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} exited {proc.returncode}\nstdout:\n{proc.stdout[-4000:]}\n"
                                 f"stderr:\n{proc.stderr[-6000:]}")
        return proc

    def run_python(self, code: str, cwd: Path | None = None, check: bool = True,
                   env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return self.run(self.python, "-c", code, cwd=cwd or self.path, check=check, env=env)

    def importable(self, module: str) -> bool:
        code = f"import importlib.util, sys; sys.exit(0 if importlib.util.find_spec({module!r}) else 3)"
        return self.run_python(code, check=False).returncode == 0


def _create(extra: str, path: Path, wheel: Path) -> None:
    if path.exists():
        shutil.rmtree(path)
    _run([sys.executable, "-m", "venv", str(path)], timeout=300)
    spec = f"{wheel}[{extra}]" if extra != CORE else str(wheel)
    # Resolve from the wheel's own metadata (what a user gets), then drop the wheel: the venv keeps deps only.
    _run([path / "bin" / "python", "-m", "pip", "install", "-q", "-c", CONSTRAINTS, spec], timeout=3000)
    _run([path / "bin" / "python", "-m", "pip", "uninstall", "-q", "-y", PROJECT], timeout=300)
    (path / ".deps-ready").write_text(json.dumps({"extra": extra, "key": path.name, "created": time.time(),
                                                  "requirements": extra_requirements(extra)}, indent=1))


def wheel_venv(extra: str, wheel: Path) -> WheelVenv:
    """The cached deps-only venv of ``extra`` (created on a cold cache), with ``wheel`` installed --no-deps."""
    root = venvs_root()
    key = deps_key(extra)
    path = root / f"{extra}-{key}"
    created = 0.0
    with _locked(root / f"{extra}.lock"):
        if not (path / ".deps-ready").is_file() or not (path / "bin" / "python").exists():
            t0 = time.monotonic()
            _create(extra, path, wheel)
            created = time.monotonic() - t0
            for old in root.glob(f"{extra}-*"):  # venvs of older dependency sets
                if old != path and old.is_dir():
                    shutil.rmtree(old, ignore_errors=True)
        t0 = time.monotonic()
        _run([path / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
              str(wheel)], timeout=600)
    return WheelVenv(extra, path, created, time.monotonic() - t0)
