"""The Extras table (docs/install.md), row by row: each row's commands run in a venv holding only that extra.

One cached deps-only venv per extra (tests/install/venvs.py), the session's fresh wheel installed into it with
--no-deps; commands run with cwd outside the checkout. Each row also checks the table's "pulls torch" and
"pulls Qt" columns by whether torch / PySide6 can be imported there. The `agent` row is tests/install/test_wheel.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.edge.helpers import make_mlp
from tests.install.helpers import KEY_ENV, signed_bundle, wheel_agent
from tests.install.venvs import WheelVenv

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

# extra -> (pulls torch, pulls Qt), as the Extras table in docs/install.md says
TABLE = {"core": (False, False), "export": (True, False), "optimize": (False, False), "gui": (False, True),
         "triton": (False, False), "agent": (False, False), "telemetry": (False, False), "compile": (False, False),
         "gpu": (False, False), "cluster": (False, False), "locust": (False, False), "openssf": (False, False)}


def _pulls(venv: WheelVenv) -> tuple[bool, bool]:
    return venv.importable("torch"), venv.importable("PySide6")


@pytest.mark.parametrize("extra", list(TABLE))
def test_pulls_torch_and_qt_as_the_table_says(venv_for, extra: str) -> None:  # type: ignore[no-untyped-def]
    venv = venv_for(extra)
    torch, qt = _pulls(venv)
    assert (torch, qt) == TABLE[extra], f"{extra}: pulls torch={torch}, Qt={qt}; the table says {TABLE[extra]}"


def test_core_inspect_triton_repo_keys_package_verify(venv_for, outside: Path) -> None:  # type: ignore[no-untyped-def]
    core = venv_for("core")
    model = make_mlp(outside / "mlp.onnx")
    rep = core.run("studio", "inspect", model, "--target", "all", "--format", "json", cwd=outside)
    assert "rk3588" in rep.stdout
    core.run("studio", "triton", "build-repo", model, "--repo", outside / "repo", "--name", "mlp", cwd=outside)
    assert (outside / "repo" / "mlp" / "config.pbtxt").is_file()
    check = core.run("studio", "triton", "check", "--repo", outside / "repo", cwd=outside)
    assert "Traceback" not in check.stderr
    bundle, _ = signed_bundle(core, outside)
    assert bundle.stat().st_size > 0


def test_export_sample_model_and_export(venv_for, outside: Path) -> None:  # type: ignore[no-untyped-def]
    export = venv_for("export")
    export.run("studio", "sample-model", "tiny-clip", "--out", outside / "clip", cwd=outside, timeout=600)
    out = export.run("studio", "export", outside / "clip", "--output", outside / "out" / "clip.onnx", "--json",
                     cwd=outside, timeout=900)
    rep = json.loads(out.stdout)
    assert rep["status"] == "succeeded" and (outside / "out" / "clip.onnx").is_file()
    assert rep["validation"]["cases"] and all(c["passed"] for c in rep["validation"]["cases"])


def test_optimize_fix(venv_for, outside: Path) -> None:  # type: ignore[no-untyped-def]
    opt = venv_for("optimize")
    model = make_mlp(outside / "mlp.onnx")
    out = opt.run("studio", "fix", model, "--static", "batch=2", "--simplify", "--fp16", "--out",
                  outside / "fixed.onnx", "--json", cwd=outside, timeout=600)
    (part,) = json.loads(out.stdout)["files"]
    assert any("onnxslim" in step for step in part["steps"]) and part["precision"] == "fp16"
    assert all(case["passed"] for case in part["parity"]["cases"]) and (outside / "fixed.onnx").is_file()
    fuse = opt.run("studio", "fix", model, "--fuse-attention", "--out", outside / "fused.onnx", cwd=outside,
                   check=False)
    # an MLP has no attention to fuse: a clean input error, not a missing onnxscript
    assert fuse.returncode == 2 and "Traceback" not in fuse.stderr and "error:" in fuse.stderr, fuse.stderr


def test_gui_help_and_window_modules(venv_for, outside: Path) -> None:  # type: ignore[no-untyped-def]
    gui = venv_for("gui")
    assert "--workspace" in gui.run("studio", "gui", "--help", cwd=outside).stdout
    code = ("import json, importlib, sys\n"
            "import studio.gui.main_window\n"
            "from studio.gui.pages import PAGE_SPECS, module_exists\n"
            "bad = {}\n"
            "for mod, _ in PAGE_SPECS:\n"
            "    if module_exists(mod):\n"
            "        try:\n"
            "            importlib.import_module(mod)\n"
            "        except Exception as exc:\n"
            "            bad[mod] = repr(exc)\n"
            "print(json.dumps({'bad': bad, 'torch': 'torch' in sys.modules}))\n")
    res = json.loads(gui.run_python(code, cwd=outside, env={"QT_QPA_PLATFORM": "offscreen"}).stdout)
    assert res == {"bad": {}, "torch": False}, res


def test_triton_serve_local_help_and_client_facade(venv_for, outside: Path) -> None:  # type: ignore[no-untyped-def]
    triton = venv_for("triton")
    assert "--repo" in triton.run("studio", "triton", "serve-local", "--help", cwd=outside).stdout
    triton.run_python("from studio.triton.client import TritonClient; from studio.triton.server import "
                      "LocalTritonServer; import tritonclient.http, tritonclient.grpc", cwd=outside)


def test_telemetry_bench_against_the_wheel_agent(venv_for, outside: Path) -> None:  # type: ignore[no-untyped-def]
    tele, agent_venv = venv_for("telemetry"), venv_for("agent")
    assert "--concurrency" in tele.run("studio", "bench", "--help", cwd=outside).stdout
    assert "--html" in tele.run("studio", "report", "--help", cwd=outside).stdout
    bundle, trust = signed_bundle(agent_venv, outside)
    agent = wheel_agent(agent_venv, outside, trust).start()
    try:
        agent_venv.run("studio", "deploy", bundle, "--agent", agent.url, "--token-file", agent.token_file,
                       cwd=outside)
        out = tele.run("studio", "bench", "--url", agent.url, "--model", "tiny", "--shape", "x:1,16",
                       "--concurrency", "1", "--duration", "1", "--warmup", "0.3", "--window", "0.5",
                       "--no-stability", "--quiet", "--sla", "L3", "--json", "--record", outside / "run.sqlite",
                       cwd=outside, check=False)
    finally:
        agent.stop()
    assert out.returncode in (0, 1), out.stderr  # 1: the SLA judged the run and failed it
    rep = json.loads(out.stdout)
    level = rep["levels"][0]
    assert level["label"] == "concurrency=1" and level["successes"] > 10, level
    assert level["successes"] == level["requests_sent"] and not level.get("errors"), level
    tele.run("studio", "report", outside / "run.sqlite", "--html", "--output", outside / "run.html", cwd=outside)
    assert "<svg" in (outside / "run.html").read_text()


def test_compile_a_tiny_model(venv_for, outside: Path) -> None:  # type: ignore[no-untyped-def]
    comp = venv_for("compile")
    model = make_mlp(outside / "mlp.onnx")
    out = comp.run("studio", "compile", model, "--target", "llvm", "--shape", "x=2,16", "--out", outside / "tvm",
                   "--json", "--runs", "2", cwd=outside, timeout=900)
    rep = json.loads(out.stdout)
    assert rep["status"] == "succeeded" and rep["parity"]["status"] == "passed", rep.get("diagnosis")
    assert (outside / "tvm" / "compiled.json").is_file()


def test_gpu_nvml_says_why_it_is_not_available(venv_for, outside: Path) -> None:  # type: ignore[no-untyped-def]
    gpu, core = venv_for("gpu"), venv_for("core")
    code = "from studio.telemetry.collectors import NvmlCollector as N; c = N(); print(c.available, c.reason)"
    assert core.run_python(code, cwd=outside).stdout.strip() == \
        "False nvidia-ml-py not installed (pip install 'deployment-studio[gpu]')"
    got = gpu.run_python(code, cwd=outside).stdout.strip()
    # nvidia-ml-py loads; without a GPU and driver NVML's own error is the reason (with one: available)
    assert got.startswith("True") or got.startswith("False no NVIDIA GPU"), got


def test_all_and_dev_are_the_project_venv() -> None:
    import importlib.util

    assert importlib.util.find_spec("torch") and importlib.util.find_spec("PySide6"), sys.prefix
    assert importlib.util.find_spec("tvm") and importlib.util.find_spec("tritonclient.grpc")


def test_openssf_signs_and_verifies_with_only_its_extra(venv_for, outside: Path) -> None:  # type: ignore[no-untyped-def]
    """model_signing imports OpenSSL without declaring it: the extra must bring it, and the studio's signature
    must pass that venv's own `model_signing verify key`."""
    ssf = venv_for("openssf")
    ssf.run_python("from cryptography.hazmat.primitives import serialization as s\n"
                   "from cryptography.hazmat.primitives.asymmetric import ec\n"
                   "k = ec.generate_private_key(ec.SECP256R1())\n"
                   "open('k.pem', 'wb').write(k.private_bytes(s.Encoding.PEM, s.PrivateFormat.PKCS8, "
                   "s.NoEncryption()))\n"
                   "open('k.pub', 'wb').write(k.public_key().public_bytes(s.Encoding.PEM, "
                   "s.PublicFormat.SubjectPublicKeyInfo))\n", cwd=outside)
    ssf.run("studio", "keys", "generate", "release", cwd=outside, env=KEY_ENV)
    trust = outside / "release.pub"
    ssf.run("studio", "keys", "export-public", "release", "--out", trust, cwd=outside)
    make_mlp(outside / "src" / "model.onnx")
    bundle = outside / "b.tar"
    ssf.run("studio", "package", outside / "src", "--board", "generic-x86_64", "--key", "release", "--out", bundle,
            "--openssf-key", outside / "k.pem", cwd=outside, env=KEY_ENV)
    out = ssf.run("studio", "verify", bundle, "--trust", trust, "--openssf-trust", outside / "k.pub", cwd=outside)
    assert "OK  OpenSSF signature" in out.stdout, out.stdout
    import tarfile

    with tarfile.open(bundle) as tf:
        tf.extractall(outside / "x", filter="data")
    ok = ssf.run("model_signing", "verify", "key", "--signature", outside / "x" / "model.sig", "--public_key",
                 outside / "k.pub", outside / "x" / "model", cwd=outside)
    assert "Verification succeeded" in ok.stdout
