"""GPU serving for `multimodal-serve --device cuda:N [--enable-trt]` and `build-repo --device`.

Device strings (``cpu`` | ``cuda:N``), the local GPU count (``nvidia-smi -L``), a real GPU ``tritonserver``
(``--server PATH`` or on PATH; never the CPU-only one bundled in nvidia-pytriton, which has no ONNX Runtime
backend) and the ``docker run`` line that serves a repository on a GPU host. No torch, no tritonclient.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studio.core.errors import InputError
from studio.triton.server import LocalTritonServer, expand_dependencies

# Triton 2.51 (the release of the bundled CPU server and the pinned tritonclient); any recent -py3 image works.
TRITON_IMAGE = "nvcr.io/nvidia/tritonserver:24.10-py3"
DEFAULT_REPO = "multimodal-serve-repo"
_DEVICE = re.compile(r"^(cpu|cuda)(?::(\d+))?$")


@dataclass(frozen=True)
class Device:
    kind: str  # "cpu" | "cuda"
    index: int = 0

    @property
    def is_gpu(self) -> bool:
        return self.kind == "cuda"

    def __str__(self) -> str:
        return f"cuda:{self.index}" if self.is_gpu else "cpu"


def parse_device(text: str, flag: str = "--device") -> Device:
    """``cpu``, ``cuda`` (= cuda:0) or ``cuda:N``; anything else is an InputError naming it."""
    m = _DEVICE.match(text.strip().lower())
    if m is None or (m.group(1) == "cpu" and m.group(2) is not None):
        raise InputError(f"{flag} {text!r} is not a device", offending=f"{flag} {text}",
                         hint="use cpu or cuda:N, where N is the GPU index (e.g. cuda:0)")
    return Device(m.group(1), int(m.group(2) or 0))


def gpu_count() -> int:
    """GPUs listed by ``nvidia-smi -L``; 0 when it is missing or fails (no driver)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return 0
    try:
        out = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return 0
    if out.returncode != 0:
        return 0
    return sum(1 for line in out.stdout.splitlines() if line.startswith("GPU "))


def check_device(device: Device, count: int | None = None, flag: str = "--device") -> Device:
    """cuda:N must exist here; with no GPU at all only cuda:0 passes (the repository is for another host)."""
    if not device.is_gpu:
        return device
    count = gpu_count() if count is None else count
    if count == 0 and device.index != 0:
        raise InputError(f"{flag} {device}: this machine has no GPU (nvidia-smi lists none), so only cuda:0 is "
                         "accepted", offending=f"{flag} {device}",
                         hint="with no local GPU the repository is meant for another host: write it for cuda:0 "
                              "(Triton's gpus [0]) and pick the GPU there, e.g. with docker run --gpus "
                              "'\"device=N\"'")
    if count and device.index >= count:
        raise InputError(f"{flag} {device}: this machine has {count} GPU(s) (cuda:0..cuda:{count - 1})",
                         offending=f"{flag} {device}", hint=f"use a GPU index below {count} (see `nvidia-smi -L`)")
    return device


def _bundled_root() -> Path | None:
    spec = importlib.util.find_spec("pytriton")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]).resolve()


def is_bundled_cpu_server(binary: Path) -> bool:
    root = _bundled_root()
    return root is not None and binary.resolve().is_relative_to(root)


def backends_of(binary: Path) -> Path | None:
    """``<prefix>/backends`` beside ``<prefix>/bin/tritonserver`` (the NGC layout), when it exists."""
    b = binary.resolve().parent.parent / "backends"
    return b if b.is_dir() else None


def find_gpu_server(explicit: str | None = None) -> Path | None:
    """``--server PATH`` (checked; InputError when unusable) or ``tritonserver`` on PATH; None when none."""
    if explicit:
        p = Path(explicit).expanduser()
        if not p.is_file() or not os.access(p, os.X_OK):
            raise InputError(f"--server {explicit}: no such executable", offending=explicit,
                             hint="point --server at a GPU build's tritonserver (in NVIDIA's container: "
                                  "/opt/tritonserver/bin/tritonserver), or leave it out to use the one on PATH")
        if is_bundled_cpu_server(p):
            raise InputError(f"--server {explicit} is the CPU-only tritonserver bundled in nvidia-pytriton "
                             "(no GPU, no ONNX Runtime backend)", offending=explicit,
                             hint="use --device cpu for it, or a GPU build of tritonserver")
        backends = backends_of(p)
        if backends is not None and not (backends / "onnxruntime").is_dir():
            raise InputError(f"--server {explicit} has no onnxruntime backend in {backends}", offending=str(backends),
                             hint="use a tritonserver build with the ONNX Runtime backend (NVIDIA's -py3 images)")
        return p
    found = shutil.which("tritonserver")
    if found is None or is_bundled_cpu_server(Path(found)):
        return None
    return Path(found)


def docker_command(repo: Path | str, image: str = TRITON_IMAGE) -> str:
    """The line that serves ``repo`` on a GPU host with NVIDIA's Triton container."""
    return (f"docker run --gpus all --rm -p8000:8000 -p8001:8001 -p8002:8002 -v {Path(repo).resolve()}:/models "
            f"{image} tritonserver --model-repository=/models")


def planned_max_batch(model: Path, requested: int | None) -> int:
    """The max_batch_size build_repo will pick (so dynamic batching is only asked for when it can be on)."""
    from studio.triton.onnx_io import read_signature
    from studio.triton.repo_builder import decide_batching, find_parts

    if model.is_file():
        files = [model]
    elif (model / "model.onnx").is_file():
        files = [model / "model.onnx"]
    elif model.is_dir():
        parts = find_parts(model)
        files = [p.path for p in parts] if len(parts) >= 2 else sorted(model.glob("*.onnx"))[:1]
    else:
        files = []
    if not files:  # build_repo reports what is wrong with it
        return requested or 0
    return decide_batching([read_signature(f) for f in files], requested)[0]


class GpuTritonServer(LocalTritonServer):
    """A real (GPU) tritonserver on the repository as written: no backend copy, no Python-backend mirror."""

    def __init__(self, repo: Path | str, binary: Path, **kw: Any) -> None:
        super().__init__(repo, **kw)
        self.binary = Path(binary)
        self.backends = backends_of(self.binary)

    def command(self, install: Any = None) -> list[str]:
        cmd = [str(self.binary), f"--model-repository={self.source_repo}",
               f"--http-address={self.host}", f"--http-port={self.http_port}",
               f"--grpc-address={self.host}", f"--grpc-port={self.grpc_port}",
               f"--metrics-address={self.host}", f"--metrics-port={self.metrics_port}",
               f"--model-control-mode={self.mode}", f"--exit-timeout-secs={self.exit_timeout_secs}",
               f"--log-verbose={self.log_verbose}"]
        if self.backends is not None:
            cmd.append(f"--backend-directory={self.backends}")
        if self.mode == "poll":
            cmd.append(f"--repository-poll-secs={self.poll_secs}")
        cmd += [f"--load-model={m}" for m in expand_dependencies(self.source_repo, self.load_models)]
        return cmd + self.extra_args

    def start(self) -> GpuTritonServer:
        self.workdir = Path(tempfile.mkdtemp(prefix="studio-triton-gpu-"))
        self.log_path = self.workdir / "tritonserver.log"
        self._log_file = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(self.command(), stdout=self._log_file, stderr=subprocess.STDOUT,
                                     cwd=self.workdir, start_new_session=True)
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self


__all__ = ["DEFAULT_REPO", "TRITON_IMAGE", "Device", "GpuTritonServer", "check_device", "docker_command",
           "find_gpu_server", "gpu_count", "parse_device", "planned_max_batch"]
