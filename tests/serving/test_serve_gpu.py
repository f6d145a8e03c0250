"""`multimodal-serve --device cuda:N [--enable-trt]` and `build-repo --device`: the GPU repository, checked
field by field through Triton's own protobuf, and the ways it refuses bad input without writing anything.

This machine has no GPU and no GPU tritonserver: `nvidia-smi` is a fake on a private PATH (0 or N GPUs), and
one test serves through a fake `tritonserver` (a tiny HTTP health endpoint) to check the launch wiring. The
CPU path (`--device cpu` on the real bundled server) is covered in test_server_integration.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path

import pytest
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from studio.cli.main import main as studio_main
from studio.core.errors import InputError
from studio.triton import gpu
from studio.triton.repo_builder import BuildOptions, build_repo
from studio.triton.repo_check import check_repo
from tests.serving import tiny_models as tm

pytestmark = pytest.mark.timeout(300)

FAKE_SERVER = textwrap.dedent("""\
    #!{python}
    import http.server, json, os, signal, sys
    args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
    with open(os.environ["FAKE_TRITON_ARGV"], "w") as f:
        json.dump(sys.argv[1:], f)
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/v2/health/ready" else 404)
            self.send_header("Content-Length", "0")
            self.end_headers()
        def log_message(self, *a):
            pass
    srv = http.server.HTTPServer((args["http-address"], int(args["http-port"])), H)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    srv.serve_forever()
""")


def _script(name: str) -> str:
    path = Path(sys.executable).with_name(name)
    if not path.is_file():
        pytest.skip(f"console script {name} is not installed next to {sys.executable}")
    return str(path)


def _fake_bin(folder: Path, gpus: int) -> Path:
    """A PATH folder whose nvidia-smi lists ``gpus`` GPUs (0: fails like a machine without a driver)."""
    folder.mkdir(parents=True, exist_ok=True)
    smi = folder / "nvidia-smi"
    if gpus:
        lines = "".join(f"echo 'GPU {i}: Fake GPU (UUID: GPU-{i:08d})'\n" for i in range(gpus))
        smi.write_text("#!/bin/sh\n" + lines, encoding="utf-8")
    else:
        smi.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed'\nexit 9\n", encoding="utf-8")
    smi.chmod(0o755)
    return folder


def _env(tmp_path: Path, gpus: int = 0) -> dict[str, str]:
    return {**os.environ, "PATH": f"{_fake_bin(tmp_path / f'bin{gpus}', gpus)}:/usr/bin:/bin", "PYTHONUNBUFFERED": "1"}


def _serve(args: list[str], tmp_path: Path, gpus: int = 0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_script("multimodal-serve"), *args], capture_output=True, text=True, timeout=120,
                          env=_env(tmp_path, gpus), cwd=tmp_path)


def _config(path: Path) -> model_config_pb2.ModelConfig:
    cfg = model_config_pb2.ModelConfig()
    text_format.Parse(path.read_text(encoding="utf-8"), cfg)
    return cfg


@pytest.fixture(scope="module")
def onnx_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tm.mlp(tmp_path_factory.mktemp("model") / "X.onnx")


# ----------------------------------------------------------------------------------------- the alias

def test_gpu_repository_with_tensorrt_and_no_gpu_server(onnx_model: Path, tmp_path: Path) -> None:
    proc = _serve(["--model", str(onnx_model), "--device", "cuda:0", "--enable-trt", "--max-batch-size", "8"],
                  tmp_path)
    repo = tmp_path / gpu.DEFAULT_REPO  # persistent, in the working folder
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr
    assert "no GPU tritonserver" in err and f"at: {repo}" in err and "Traceback" not in err
    assert (f"docker run --gpus all --rm -p8000:8000 -p8001:8001 -p8002:8002 -v {repo}:/models "
            f"{gpu.TRITON_IMAGE} tritonserver --model-repository=/models") in err
    assert str(repo) in proc.stdout

    cfg = _config(repo / "X" / "config.pbtxt")
    assert cfg.name == "X" and cfg.platform == "onnxruntime_onnx" and cfg.backend == ""
    assert cfg.max_batch_size == 8
    assert cfg.HasField("dynamic_batching")
    assert len(cfg.instance_group) == 1
    group = cfg.instance_group[0]
    assert group.kind == model_config_pb2.ModelInstanceGroup.KIND_GPU and list(group.gpus) == [0]
    accs = cfg.optimization.execution_accelerators.gpu_execution_accelerator
    assert [a.name for a in accs] == ["tensorrt"]
    assert dict(accs[0].parameters) == {"precision_mode": "FP16", "max_workspace_size_bytes": str(1 << 30)}
    assert not cfg.optimization.execution_accelerators.cpu_execution_accelerator
    assert [t.name for t in cfg.input] == ["x"] and list(cfg.input[0].dims) == [16]
    assert (repo / "X" / "1" / "model.onnx").is_file() and not (repo / "X" / "1" / "model.py").exists()
    report = check_repo(repo)
    assert report.ok, [f.render() for f in report.findings]


def test_gpu_repository_without_tensorrt_on_the_second_gpu(onnx_model: Path, tmp_path: Path) -> None:
    repo = tmp_path / "gpu-repo"
    proc = _serve(["--model", str(onnx_model), "--device", "cuda:1", "--repo", str(repo), "--name", "mlp",
                   "--trt-precision", "FP32"], tmp_path, gpus=2)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    cfg = _config(repo / "mlp" / "config.pbtxt")
    group = cfg.instance_group[0]
    assert list(group.gpus) == [1] and group.kind == model_config_pb2.ModelInstanceGroup.KIND_GPU
    assert cfg.max_batch_size == 8 and cfg.HasField("dynamic_batching")  # batching on by default for cuda
    assert not cfg.HasField("optimization")
    assert not (tmp_path / gpu.DEFAULT_REPO).exists()


@pytest.mark.parametrize("args, gpus, needle", [
    (["--device", "cpu", "--enable-trt"], 0, "--enable-trt needs a GPU"),
    (["--enable-trt"], 0, "--enable-trt needs a GPU"),
    (["--device", "cuda:7"], 0, "only cuda:0 is accepted"),
    (["--device", "cuda:2"], 2, "this machine has 2 GPU(s)"),
    (["--device", "gpu0"], 0, "--device 'gpu0' is not a device"),
    (["--device", "cuda:x"], 0, "'cuda:x' is not a device"),
    (["--device", "cuda:0", "--server", "{tmp}/no-such-tritonserver"], 0, "no-such-tritonserver: no such executable"),
    (["--device", "cpu", "--server", "{tmp}/no-such-tritonserver"], 0, "--server is for --device cuda:N"),
])
def test_bad_device_input_exits_2_and_writes_nothing(args: list[str], gpus: int, needle: str, onnx_model: Path,
                                                      tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    proc = _serve(["--model", str(onnx_model), "--repo", str(repo), "--max-batch-size", "8", *args], tmp_path, gpus)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert needle in proc.stderr and "Traceback" not in proc.stderr
    assert not repo.exists() and not (tmp_path / gpu.DEFAULT_REPO).exists()
    if "cuda:7" in args:
        assert "meant for another host" in proc.stderr


def test_the_bundled_cpu_server_is_refused_as_gpu_server(onnx_model: Path, tmp_path: Path) -> None:
    from studio.triton.server import find_tritonserver

    bundled = find_tritonserver().binary
    if not gpu.is_bundled_cpu_server(bundled):
        pytest.skip("STUDIO_TRITONSERVER points at another server")
    proc = _serve(["--model", str(onnx_model), "--device", "cuda:0", "--server", str(bundled), "--repo",
                   str(tmp_path / "repo")], tmp_path)
    assert proc.returncode == 2 and "CPU-only tritonserver bundled in nvidia-pytriton" in proc.stderr
    assert not (tmp_path / "repo").exists()


def test_gpu_path_serves_on_the_given_tritonserver(onnx_model: Path, tmp_path: Path) -> None:
    fake = tmp_path / "opt" / "bin" / "tritonserver"
    fake.parent.mkdir(parents=True)
    fake.write_text(FAKE_SERVER.replace("{python}", sys.executable), encoding="utf-8")
    fake.chmod(0o755)
    repo = tmp_path / "repo"
    env = {**_env(tmp_path), "FAKE_TRITON_ARGV": str(tmp_path / "argv.json")}
    proc = subprocess.Popen([_script("multimodal-serve"), "--model", str(onnx_model), "--device", "cuda:0",
                             "--enable-trt", "--server", str(fake), "--repo", str(repo)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp_path)
    lines, http = [], None
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if line.strip().startswith("HTTP"):
                http = line.split()[1]
            if "press Ctrl+C" in line:
                break
        assert http, "".join(lines)
        with urllib.request.urlopen(f"{http}/v2/health/ready", timeout=5) as r:
            assert r.status == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, "".join(lines) + out
    import json

    argv = json.loads((tmp_path / "argv.json").read_text(encoding="utf-8"))
    assert f"--model-repository={repo}" in argv and "--load-model=X" in argv
    assert not any(a.startswith("--backend-directory") for a in argv)  # no <prefix>/backends beside the fake
    assert not any("python,shm-region" in a for a in argv)  # nothing of the CPU server's set-up
    assert "on cuda:0" in "".join(lines) and "stopped" in out


# ----------------------------------------------------------------------------------------- core + build-repo

def test_parse_device_and_gpu_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert gpu.parse_device("cpu") == gpu.Device("cpu") and str(gpu.parse_device("CUDA:3")) == "cuda:3"
    assert gpu.parse_device("cuda") == gpu.Device("cuda", 0)
    for bad in ("gpu0", "cuda:", "cpu:0", "cuda:-1", "0"):
        with pytest.raises(InputError):
            gpu.parse_device(bad)
    monkeypatch.setenv("PATH", str(_fake_bin(tmp_path / "b3", 3)))
    assert gpu.gpu_count() == 3
    monkeypatch.setenv("PATH", str(_fake_bin(tmp_path / "b0", 0)))
    assert gpu.gpu_count() == 0
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert gpu.gpu_count() == 0
    assert gpu.check_device(gpu.parse_device("cuda:0"), count=0).index == 0
    with pytest.raises(InputError, match="has 1 GPU"):
        gpu.check_device(gpu.parse_device("cuda:1"), count=1)


def test_build_options_refuse_tensorrt_off_gpu_or_on_python(onnx_model: Path, tmp_path: Path) -> None:
    for kw in ({"instance_kind": "cpu"}, {"instance_kind": "gpu", "flavor": "python"}):
        with pytest.raises(InputError, match="TensorRT needs the onnxruntime flavour on a GPU"):
            build_repo(BuildOptions(onnx_model, tmp_path / "r", "m", tensorrt=True, **kw))
    with pytest.raises(InputError, match="unknown TensorRT precision"):
        build_repo(BuildOptions(onnx_model, tmp_path / "r", "m", instance_kind="gpu", tensorrt=True,
                                trt_precision="INT4"))
    assert not (tmp_path / "r" / "m").exists()
    report = build_repo(BuildOptions(onnx_model, tmp_path / "r", "m", instance_kind="gpu", gpus=[0], tensorrt=True,
                                     trt_precision="fp32", trt_workspace_bytes=4096))
    acc = report.models[0].config["optimization"]["execution_accelerators"]["gpu_execution_accelerator"][0]
    assert acc == {"name": "tensorrt", "parameters": {"precision_mode": "FP32", "max_workspace_size_bytes": "4096"}}


def test_build_repo_cli_device_and_enable_trt(onnx_model: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    base = ["triton", "build-repo", str(onnx_model), "--repo", str(repo), "--name", "m"]
    assert studio_main([*base, "--device", "cuda:3", "--enable-trt", "--dynamic-batching"]) == 0
    cfg = _config(repo / "m" / "config.pbtxt")
    assert cfg.instance_group[0].kind == model_config_pb2.ModelInstanceGroup.KIND_GPU
    assert list(cfg.instance_group[0].gpus) == [3]  # build-repo writes for any host: no local GPU check
    assert cfg.optimization.execution_accelerators.gpu_execution_accelerator[0].name == "tensorrt"
    capsys.readouterr()
    for extra, needle in ((["--enable-trt"], "--enable-trt needs a GPU"),
                          (["--device", "cuda:0", "--instance-kind", "cpu"], "conflicts with --instance-kind"),
                          (["--device", "cpu", "--gpus", "1"], "conflicts with"),
                          (["--device", "tpu"], "is not a device")):
        assert studio_main([*base[:-1], "other", *extra]) == 2, extra
        assert needle in capsys.readouterr().err
    assert not (repo / "other").exists()
    assert studio_main([*base, "--device", "cpu"]) == 0  # a second version, on CPU
    cfg = _config(repo / "m" / "config.pbtxt")
    assert cfg.instance_group[0].kind == model_config_pb2.ModelInstanceGroup.KIND_CPU and not cfg.HasField(
        "optimization")
