"""Run the real ``tritonserver`` shipped in the nvidia-pytriton wheel on CPU (Python backend only).

What it needs, set up here so a clean clone works: the Python backend's stub copied next to the backend
library (in a studio-owned cache folder, the wheel stays untouched), the wheel's bundled libraries on
LD_LIBRARY_PATH, free loopback ports, a unique shared-memory prefix so several servers can run at once.
``STUDIO_TRITONSERVER`` (and ``STUDIO_TRITON_BACKENDS``) point at another tritonserver install instead.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studio.core.errors import DependencyMissing, InputError, StudioError
from studio.core.paths import cache_dir
from studio.core.ports import free_ports

CONTROL_MODES = ("explicit", "poll", "none")


@dataclass
class TritonInstall:
    binary: Path
    backends: Path  # folder holding python/ (with the stub in place)
    lib_dirs: list[Path]
    version: str = ""


def _pytriton_root() -> Path:
    spec = importlib.util.find_spec("pytriton")
    if spec is None or not spec.submodule_search_locations:
        raise DependencyMissing.for_module("nvidia-pytriton", "triton", "the local Triton server")
    return Path(list(spec.submodule_search_locations)[0])


def prepare_backends(src_backends: Path, stubs: Path, py: str | None = None) -> Path:
    """A backends folder whose python/ holds the stub for this interpreter's version (made once, atomically)."""
    py = py or f"{sys.version_info.major}.{sys.version_info.minor}"
    stub = stubs / py / "triton_python_backend_stub"
    if not stub.is_file():
        have = ", ".join(sorted(p.name for p in stubs.iterdir())) if stubs.is_dir() else "none"
        raise DependencyMissing(f"the Triton Python backend has no stub for Python {py} (has: {have})",
                                offending=str(stubs), hint="run the studio with one of those Python versions")
    key = f"{stub.stat().st_size}-{int(stub.stat().st_mtime)}"
    root = cache_dir() / "tritonserver" / f"backends-py{py}-{key}"
    pydir = root / "python"
    if (pydir / "triton_python_backend_stub").is_file():
        return root
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".backends.", dir=root.parent))
    try:
        (tmp / "python").mkdir()
        for f in (src_backends / "python").iterdir():
            if f.is_file():
                os.symlink(f.resolve(), tmp / "python" / f.name)
        shutil.copy2(stub, tmp / "python" / "triton_python_backend_stub")
        try:
            os.replace(tmp, root)
        except OSError:  # another process made it first
            if not (pydir / "triton_python_backend_stub").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return root


def find_tritonserver() -> TritonInstall:
    """The tritonserver binary, a ready backends folder and the library dirs it needs."""
    env = os.environ.get("STUDIO_TRITONSERVER")
    if env:
        b = Path(env)
        backends = Path(os.environ.get("STUDIO_TRITON_BACKENDS", str(b.parent.parent / "backends")))
        if not b.is_file():
            raise InputError(f"STUDIO_TRITONSERVER points at {b}, which does not exist", offending="STUDIO_TRITONSERVER")
        return TritonInstall(b, backends, [])
    root = _pytriton_root() / "tritonserver"
    binary = root / "bin" / "tritonserver"
    if not binary.is_file():
        raise DependencyMissing("the nvidia-pytriton wheel holds no tritonserver binary", offending=str(binary),
                                hint="reinstall it: python3 -m pip install 'deployment-studio[triton]'")
    libs = root.parent.parent / "nvidia_pytriton.libs"
    backends = prepare_backends(root / "backends", root / "python_backend_stubs")
    return TritonInstall(binary, backends, [libs] if libs.is_dir() else [])


def _http_ok(url: str, timeout: float = 1.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 - loopback URL we built
            return 200 <= r.status < 300
    except (urllib.error.URLError, OSError, ValueError):
        return False


def expand_dependencies(repo: Path, names: list[str]) -> list[str]:
    """Add the part models a BLS router calls (Triton loads an ensemble's steps itself, not a router's)."""
    import json

    from studio.triton import config as tc

    out: list[str] = []
    todo = list(names)
    while todo:
        n = todo.pop(0)
        if n in out:
            continue
        out.append(n)
        f = Path(repo) / n / "config.pbtxt"
        try:
            routes = tc.get_parameter(tc.load_config(f), "routes") if f.is_file() else None
            deps = [r["model"] for r in json.loads(routes).values()] if routes else []
        except (StudioError, ValueError, KeyError, TypeError):
            deps = []
        todo += [d for d in deps if d not in out]
    # parts first, so the router finds them when it starts serving
    return [n for n in out if n not in names] + [n for n in out if n in names]


class LocalTritonServer:
    """Start / wait-ready / stop a local tritonserver; usable as a context manager.

    ``onnxruntime_onnx`` models are served through a Python-backend mirror (``converted`` names them).
    Logs go to ``log_path``; ``log_tail()`` returns the end for error messages.
    """

    def __init__(self, repo: Path | str, *, http_port: int | None = None, grpc_port: int | None = None,
                 metrics_port: int | None = None, host: str = "127.0.0.1", model_control_mode: str = "explicit",
                 load_models: list[str] | tuple[str, ...] = (), repository_poll_secs: int = 2,
                 startup_timeout: float = 90.0, log_verbose: int = 0, exit_timeout_secs: int = 10,
                 extra_args: list[str] | None = None) -> None:
        self.source_repo = Path(repo).resolve()
        if not self.source_repo.is_dir():
            raise InputError(f"repository {repo} does not exist", offending=str(repo),
                             hint="build one with `studio triton build-repo`")
        if model_control_mode not in CONTROL_MODES:
            raise InputError(f"unknown model control mode {model_control_mode!r}", offending="--model-control-mode",
                             hint="use explicit or poll")
        self.host = host
        fresh = iter(free_ports(3, host))  # taken together: never the same port twice
        self.http_port = http_port or next(fresh)
        self.grpc_port = grpc_port or next(fresh)
        self.metrics_port = metrics_port or next(fresh)
        self.mode = model_control_mode
        self.load_models = list(load_models)
        self.poll_secs = max(1, int(repository_poll_secs))
        self.startup_timeout = startup_timeout
        self.log_verbose = log_verbose
        self.exit_timeout_secs = exit_timeout_secs
        self.extra_args = extra_args or []
        self.proc: subprocess.Popen[bytes] | None = None
        self.workdir: Path | None = None
        self.log_path: Path | None = None
        self.serving = None  # ServingRepo when a mirror is needed
        self.converted: list[str] = []
        self._sync_stop = threading.Event()
        self._sync_thread: threading.Thread | None = None
        self._log_file: Any = None

    # -- URLs ------------------------------------------------------------------------------------------
    @property
    def http_url(self) -> str:
        return f"http://{self.host}:{self.http_port}"

    @property
    def grpc_url(self) -> str:
        return f"grpc://{self.host}:{self.grpc_port}"

    @property
    def metrics_url(self) -> str:
        return f"http://{self.host}:{self.metrics_port}/metrics"

    @property
    def repo(self) -> Path:
        return self.serving.root if self.serving is not None else self.source_repo

    # -- life cycle ------------------------------------------------------------------------------------
    def command(self, install: TritonInstall) -> list[str]:
        cmd = [str(install.binary), f"--model-repository={self.repo}", f"--backend-directory={install.backends}",
               f"--http-address={self.host}", f"--http-port={self.http_port}",
               f"--grpc-address={self.host}", f"--grpc-port={self.grpc_port}",
               f"--metrics-address={self.host}", f"--metrics-port={self.metrics_port}",
               f"--model-control-mode={self.mode}", f"--exit-timeout-secs={self.exit_timeout_secs}",
               f"--log-verbose={self.log_verbose}", "--allow-gpu-metrics=false",
               f"--backend-config=python,shm-region-prefix-name=studio_{os.getpid()}_{uuid.uuid4().hex[:8]}_"]
        if self.mode == "poll":
            cmd.append(f"--repository-poll-secs={self.poll_secs}")
        for m in expand_dependencies(self.repo, self.load_models):
            cmd.append(f"--load-model={m}")
        return cmd + self.extra_args

    def start(self) -> LocalTritonServer:
        from studio.triton.serving_repo import ServingRepo, repo_needs_mirror

        install = find_tritonserver()
        self.workdir = Path(tempfile.mkdtemp(prefix="studio-triton-"))
        if repo_needs_mirror(self.source_repo):
            self.serving = ServingRepo(self.source_repo, self.workdir / "repo")
            self.serving.sync()
            self.converted = list(self.serving.converted)
        self.log_path = self.workdir / "tritonserver.log"
        env = dict(os.environ)
        if install.lib_dirs:
            env["LD_LIBRARY_PATH"] = os.pathsep.join([str(p) for p in install.lib_dirs]
                                                     + [p for p in env.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p])
        self._log_file = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(self.command(install), stdout=self._log_file, stderr=subprocess.STDOUT,
                                     env=env, cwd=self.workdir, start_new_session=True)
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        if self.serving is not None and self.mode == "poll":
            self._sync_thread = threading.Thread(target=self._sync_loop, name="triton-repo-sync", daemon=True)
            self._sync_thread.start()
        return self

    def _sync_loop(self) -> None:
        while not self._sync_stop.wait(max(0.5, self.poll_secs / 2)):
            with contextlib.suppress(Exception):  # the source may be mid-write; next round picks it up
                self.serving.sync()  # type: ignore[union-attr]

    def sync(self) -> None:
        """Re-mirror the source repository now (explicit mode: before a load of a new version)."""
        if self.serving is not None:
            self.serving.sync()
            self.converted = list(self.serving.converted)

    def wait_ready(self, timeout: float | None = None) -> None:
        """Until /v2/health/ready answers 200; a server that exits or stalls raises with its log's end."""
        deadline = time.monotonic() + (timeout or self.startup_timeout)
        url = f"{self.http_url}/v2/health/ready"
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise StudioError(f"tritonserver exited with code {self.proc.returncode} during start-up",
                                  offending=str(self.source_repo),
                                  hint="check the repository with `studio triton check`; server log:\n"
                                       + self.log_tail(25))
            if _http_ok(url):
                return
            time.sleep(0.2)
        raise StudioError(f"tritonserver was not ready within {timeout or self.startup_timeout:.0f} s",
                          offending=str(self.source_repo), hint="server log:\n" + self.log_tail(25))

    def is_running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 20.0) -> int | None:
        """SIGTERM, wait, then SIGKILL the whole process group (the Python stubs with it)."""
        self._sync_stop.set()
        rc = None
        if self.proc is not None:
            if self.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(self.proc.pid, signal.SIGKILL)
                    self.proc.wait(5)
            rc = self.proc.returncode
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)  # stray stubs of the group
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        return rc

    def cleanup(self) -> None:
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def log_text(self) -> str:
        if self.log_path is None or not self.log_path.is_file():
            return ""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def __enter__(self) -> LocalTritonServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
        self.cleanup()
