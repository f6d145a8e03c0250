"""Real KServe v2 servers on loopback for the telemetry tests.

``triton``: the real CPU tritonserver through studio.triton.LocalTritonServer (Python backend + ONNX Runtime).
``kserve_proc``: the small stdlib KServe v2 server in kserve_server.py (ONNX Runtime), started as its own
process so a test can kill it mid-run.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


class KServeProcess:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, str(HERE / "kserve_server.py"), "--port", "0"],
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if not line.startswith("PORT "):
            self.proc.kill()
            raise RuntimeError(f"test KServe server did not start: {line!r}")
        self.port = int(line.split()[1])
        self.url = f"http://127.0.0.1:{self.port}"

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


@pytest.fixture
def kserve_proc() -> Iterator[KServeProcess]:
    srv = KServeProcess()
    yield srv
    srv.kill()


@pytest.fixture(scope="module")
def triton(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from studio.triton.repo_builder import BuildOptions, build_repo
    from studio.triton.server import LocalTritonServer
    from tests.telemetry.kserve_server import build_mlp

    d = tmp_path_factory.mktemp("telemetry-triton")
    model = build_mlp(d / "mlp.onnx")
    repo = d / "repo"
    build_repo(BuildOptions(model, repo, "mlp", flavor="python"))
    srv = LocalTritonServer(repo, model_control_mode="explicit", load_models=["mlp"])
    srv.start()
    yield srv
    srv.stop()
    srv.cleanup()
