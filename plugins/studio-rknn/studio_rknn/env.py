"""The toolkit's own environment: a venv outside the clone, created on first use, never the studio's venv.

rknn-toolkit2 pins torch<=2.4 / onnx<=1.18 / numpy<=1.26 / protobuf 4, which clash with the studio's pins, and a
plain install pulls torch's CUDA wheels (5.6 GB). So the plugin installs a pinned list with ``--no-deps``
(``requirements-rknn-2.5.0.txt``) into ``~/.cache/deployment-studio/rknn-2.5.0/venv`` (``STUDIO_RKNN_ENV``
overrides it) and only ever runs that python in a subprocess (``worker.py``).

The cheap check (``check_env``) reads files only: a stamp written after a successful creation, the pinned
distributions' metadata folders and the toolkit's package; ``deep=True`` also imports the toolkit there.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from studio.core.catalogue import N_
from studio.core.jobs import ToolLine

TOOLKIT_VERSION = "2.5.0"
ENV_VAR = "STUDIO_RKNN_ENV"
REQUIREMENTS = f"requirements-rknn-{TOOLKIT_VERSION}.txt"
STAMP = "studio-rknn-env.json"
FIX_COMMAND = "studio-rknn-env create"
PYTHON_TAG = (3, 11)  # the toolkit's wheel is cp311 only


def env_dir() -> Path:
    """Where the environment lives: STUDIO_RKNN_ENV, else the studio's cache folder (outside any clone)."""
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override).expanduser()
    from studio.core.paths import cache_dir

    return cache_dir() / f"rknn-{TOOLKIT_VERSION}" / "venv"


def env_python(env: Path | None = None) -> Path:
    return (env or env_dir()) / "bin" / "python"


def requirements_text() -> str:
    return resources.files("studio_rknn").joinpath(REQUIREMENTS).read_text(encoding="utf-8")


def requirements() -> list[tuple[str, str]]:
    """(distribution, version) pairs of the pinned list."""
    out = []
    for line in requirements_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, ver = line.partition("==")
            out.append((name.strip(), ver.strip()))
    return out


def requirements_hash() -> str:
    return hashlib.sha256(requirements_text().encode()).hexdigest()[:16]


def worker_path() -> Path:
    return Path(str(resources.files("studio_rknn").joinpath("worker.py")))


@dataclass
class EnvStatus:
    """What ``check_env`` found; ``reason`` is written for a person and names the command that fixes it."""

    ok: bool
    path: Path
    reason: str
    versions: dict[str, str] = field(default_factory=dict)
    size_bytes: int = 0
    created_seconds: float = 0.0


def _norm(dist: str) -> str:
    return re.sub(r"[-_.]+", "_", dist).lower()


def _site_packages(env: Path) -> Path | None:
    found = sorted((env / "lib").glob("python3*/site-packages"))
    return found[0] if found else None


def _broken(env: Path, reason: str) -> EnvStatus:
    """Not usable, for ``reason``: a whole sentence naming the fix, marked (``N_``) for the plugin's catalogue,
    translated where it is shown (it is also the --json ``reason``, which stays English)."""
    return EnvStatus(False, env, reason)


def check_env(env: Path | None = None, *, deep: bool = False) -> EnvStatus:
    """Is the toolkit environment there and whole? Files only, unless ``deep`` (then it imports rknn there)."""
    env = env or env_dir()
    if not env_python(env).exists():
        return _broken(env, N_(f"rknn-toolkit2 environment at {env} is missing (it is created on first use, about "
                                f"1.4 GB); run: {FIX_COMMAND}"))
    try:
        stamp = json.loads((env / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return _broken(env, N_(f"rknn-toolkit2 environment at {env} is incomplete (no creation stamp: a creation "
                                f"was interrupted); run: {FIX_COMMAND}"))
    if stamp.get("requirements") != requirements_hash():
        return _broken(env, N_(f"rknn-toolkit2 environment at {env} was made from another package list; run: "
                                f"{FIX_COMMAND}"))
    site = _site_packages(env)
    if site is None or not (site / "rknn" / "api" / "__init__.py").exists():
        return _broken(env, N_(f"rknn-toolkit2 environment at {env} is broken (the rknn package is gone); run: "
                                f"{FIX_COMMAND}"))
    stems = [p.name.removesuffix(".dist-info").rsplit("-", 1) for p in site.glob("*.dist-info")]
    present = {_norm(s[0]) + "==" + s[1] for s in stems if len(s) == 2}
    missing = [f"{d}=={v}" for d, v in requirements()
               if not any(x.startswith(_norm(d) + "==" + v) for x in present)]
    if missing:
        return _broken(env, N_(f"rknn-toolkit2 environment at {env} is broken (missing {', '.join(missing)}); run: "
                                f"{FIX_COMMAND}"))
    status = EnvStatus(True, env, N_(f"rknn-toolkit2 {TOOLKIT_VERSION} at {env}"), dict(stamp.get("versions", {})),
                       int(stamp.get("size_bytes", 0)), float(stamp.get("seconds", 0.0)))
    if deep:
        try:
            resp = run_worker({"action": "version"}, env=env, timeout=120)
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            return _broken(env, N_(f"rknn-toolkit2 environment at {env} does not run ({exc}); run: {FIX_COMMAND}"))
        if not resp.get("ok"):
            return _broken(env, N_(f"rknn-toolkit2 environment at {env} does not import the toolkit "
                                f"({resp.get('error')}); run: {FIX_COMMAND}"))
        status.versions = resp["result"]["versions"]
    return status


def verifier_status() -> tuple[bool, str]:
    """(usable, the toolkit and version / why not, with the command that fixes it): the manifest's cheap
    ``status`` hook (files only)."""
    status = check_env()
    if not status.ok:
        return False, status.reason
    return True, f"rknn-toolkit2 {status.versions.get('rknn-toolkit2') or TOOLKIT_VERSION}"


def clean_env() -> dict[str, str]:
    """The environment for the toolkit's processes: nothing of the studio's venv leaks in."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "PYTHONSAFEPATH")}
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def run_worker(request: dict[str, Any], *, env: Path | None = None, timeout: float = 600) -> dict[str, Any]:
    """One request to ``worker.py`` under the environment's python; its JSON answer."""
    proc = subprocess.run([str(env_python(env)), "-I", str(worker_path())], input=json.dumps(request),
                          capture_output=True, text=True, timeout=timeout, env=clean_env())
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        said = (proc.stderr or proc.stdout).strip()[-400:]
        raise ValueError(N_(f"the rknn worker answered nothing (exit {proc.returncode}): {said}"))
    return json.loads(lines[-1])


def _base_python() -> str:
    """A CPython 3.11 to build the venv from: this one if it is 3.11 (its base, not a venv), else python3.11."""
    if sys.version_info[:2] == PYTHON_TAG:
        return getattr(sys, "_base_executable", None) or sys.executable
    found = shutil.which("python3.11")
    if not found:
        raise RuntimeError(N_(f"rknn-toolkit2 {TOOLKIT_VERSION} ships a CPython 3.11 wheel only and no python3.11 "
                              f"was found; install python3.11 (apt-get install python3.11-venv) and run: "
                              f"{FIX_COMMAND}"))
    return found


@contextlib.contextmanager
def _lock(env: Path) -> Iterator[None]:
    """One creation at a time (two studio processes may ask on first use together)."""
    import fcntl

    env.parent.mkdir(parents=True, exist_ok=True)
    with open(env.parent / (env.name + ".lock"), "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def ensure_env(job: Any = None, *, env: Path | None = None, force: bool = False) -> Path:
    """The environment's folder, creating it first when missing or broken; ``job`` (a JobState) gets progress.

    Creation: venv, then ``pip install --no-deps -r requirements`` (pinned), then the worker's ``version``
    action as the proof; the stamp is written last, so an interrupted creation is redone next time.
    """
    env = env or env_dir()
    status = check_env(env)
    if status.ok and not force:
        return env
    with _lock(env):
        status = check_env(env)
        if status.ok and not force:
            return env
        t0 = time.perf_counter()
        say = _reporter(job)
        if env.exists():
            say(f"removing the old environment at {env}", 1)
            shutil.rmtree(env)
        say(f"creating a venv at {env}", 2)
        subprocess.run([_base_python(), "-m", "venv", str(env)], check=True, capture_output=True, env=clean_env())
        reqs = requirements()
        req_file = env / REQUIREMENTS
        req_file.write_text(requirements_text(), encoding="utf-8")
        cmd = [str(env_python(env)), "-m", "pip", "install", "--no-deps", "--no-input", "--progress-bar", "off",
               "-r", str(req_file)]
        say(f"installing {len(reqs)} pinned packages (--no-deps)", 5)
        _pip(cmd, len(reqs), say)
        say("importing the toolkit in its environment", 96)
        resp = run_worker({"action": "version"}, env=env, timeout=300)
        if not resp.get("ok"):
            raise RuntimeError(N_(f"the new rknn environment does not import the toolkit: {resp.get('error')}"))
        stamp = {"requirements": requirements_hash(), "versions": resp["result"]["versions"],
                 "seconds": round(time.perf_counter() - t0, 1), "size_bytes": _dir_size(env),
                 "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
        (env / STAMP).write_text(json.dumps(stamp, indent=1), encoding="utf-8")
        say(f"rknn-toolkit2 environment ready in {stamp['seconds']} s, {stamp['size_bytes'] / 2**30:.2f} GiB", 100)
    return env


def _reporter(job: Any) -> Any:
    def say(text: str, percent: float) -> None:
        if job is None:
            return
        if hasattr(job, "check_cancelled"):
            job.check_cancelled()
        job.set_status(text)
        job.set_progress(percent)
        if hasattr(job, "log"):
            job.log(text)
    return say


def _pip(cmd: list[str], total: int, say: Any) -> None:
    """Run pip, turning its 'Collecting'/'Processing' lines into progress; its tail is the error on failure."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=clean_env())
    seen, tail = 0, []
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            tail = (tail + [line.rstrip()])[-30:]
            if line.startswith(("Collecting", "Processing")):
                seen += 1
                say(ToolLine(line.strip()), 5 + 80 * min(seen, total) / max(total, 1))
            elif line.startswith("Installing collected packages"):
                say("installing the downloaded wheels", 88)
    except BaseException:  # a cancelled job stops pip too; the missing stamp makes the next use start over
        proc.kill()
        proc.wait()
        raise
    if proc.wait() != 0:
        pip_tail = "\n".join(tail[-12:])  # pip's own lines: kept as they came
        raise RuntimeError(N_(f"pip could not install the rknn-toolkit2 environment:\n{pip_tail}"))
