"""Compiled (TVM) modules in signed edge bundles: package, verify, deploy to a real agent, and the load checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import needs_tvm

from studio.cli.main import main
from studio.core.errors import BundleError, StudioError, TargetError
from studio.edge.trust import load_trusted_keys
from studio.edge.verify import extract_verified, verify_bundle
from studio.package.bundle import build_bundle
from tests.edge.helpers import (
    PASSPHRASE,
    AgentProcess,
    dev_keys,
    read_members,
    reg,
    tree_snapshot,
    write_members,
)

pytestmark = needs_tvm


@pytest.fixture(scope="module")
def env(cnn_onnx: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """One llvm compile of the CNN (the only TVM build here), a key store, a trust file and a token."""
    from studio.compile.api import CompileOptions, compile_model

    root = tmp_path_factory.mktemp("bundles")
    rep = compile_model(CompileOptions(model=cnn_onnx, target="llvm", out=root / "cnn-llvm",
                                       shapes={"x": [2, 3, 16, 16]}, latency_runs=2))
    assert rep.ok, rep.summary()
    dev = dev_keys(root)
    return {"root": root, "compiled": root / "cnn-llvm", "onnx": cnn_onnx, "key": dev.signing_key,
            "keys_dir": root / "keys", "trust": dev.trust, "token": dev.token}


@pytest.fixture(scope="module")
def tvm_bundles(env):  # type: ignore[no-untyped-def]
    """Version 1 (compiled module alone) and version 2 (ONNX model + compiled module) of the name 'cnn'."""
    r1 = build_bundle(env["compiled"], "generic-x86_64", env["key"], env["root"] / "cnn-1.tar", version="1")
    r2 = build_bundle(env["onnx"], "generic-x86_64", env["key"], env["root"] / "cnn-2.tar", version="2",
                      compiled=env["compiled"])
    return {"1": Path(r1.bundle), "2": Path(r2.bundle), "r1": r1, "r2": r2}


def _ort(onnx_path: Path, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    return ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def _infer(port: int, name: str, x: np.ndarray, binary: bool = True) -> np.ndarray:
    import tritonclient.http as th

    c = th.InferenceServerClient(f"127.0.0.1:{port}")
    i = th.InferInput("x", list(x.shape), "FP32")
    i.set_data_from_numpy(x, binary_data=binary)
    return c.infer(name, [i], outputs=[th.InferRequestedOutput("logits", binary_data=binary)]).as_numpy("logits")


def test_bundle_carries_module_runtime_config_and_parity(env, tvm_bundles) -> None:  # type: ignore[no-untyped-def]
    r1, r2 = tvm_bundles["r1"], tvm_bundles["r2"]
    assert r1.runtime == "tvm" and r1.served_models == ["cnn"] and r1.warnings == []
    assert r2.served_models == ["cnn", "cnn.onnx"]
    assert r1.compiled["library_kind"] == "shared-library" and r1.compiled["arch"] == "x86_64"
    assert r1.compiled["parity"]["status"] == "passed" and "runtime: tvm" in r1.render()
    names = {m.name: data for m, data in read_members(tvm_bundles["1"])}
    assert {"compiled/model.so", "compiled/params.bin", "compiled/compiled.json", "compiled/compile_report.json",
            "runtime.json", "compat-report.json", "manifest.json", "manifest.sig"} == set(names)
    manifest = json.loads(names["manifest.json"])
    assert {f["path"] for f in manifest["files"]} == set(names) - {"manifest.json", "manifest.sig"}
    rt = json.loads(names["runtime.json"])
    assert rt["runtime"] == "tvm" and rt["tvm"]["version"] == json.loads(names["compiled/compiled.json"])["tvm_version"]
    assert rt["tvm"]["target"] == {"kind": "llvm"} and rt["tvm"]["library"] == "compiled/model.so"
    assert rt["models"][0] == {"name": "cnn", "runtime": "tvm", "path": "compiled", "primary": True,
                               "inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 3, 16, 16]}],
                               "outputs": [{"name": "logits", "datatype": "FP32", "shape": [2, 10]}]}
    assert rt["parity"]["max_abs"] < 1e-4
    both = {m.name for m, _ in read_members(tvm_bundles["2"])}
    assert {"model/cnn.onnx", "compiled/model.so"} <= both
    rep = verify_bundle(tvm_bundles["2"], load_trusted_keys(env["trust"]))
    assert rep.ok and rep.files == len(both) - 2


def test_arch_mismatch_is_refused_unless_forced(env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TargetError) as exc:  # an llvm x86_64 .so cannot run on an RK3588
        build_bundle(env["compiled"], "rk3588", env["key"], tmp_path / "rk.tar", version="1")
    assert "x86_64" in exc.value.message and "aarch64" in exc.value.message
    assert "--target rk3588" in exc.value.hint and "--force" in exc.value.hint
    assert not (tmp_path / "rk.tar").exists()
    rep = build_bundle(env["compiled"], "rk3588", env["key"], tmp_path / "rk.tar", version="1", force=True)
    assert rep.forced and rep.warnings and "--force" in rep.warnings[0]
    # the CLI says the same, without a traceback, and exits non-zero
    rc = main(["package", str(env["compiled"]), "--board", "rpi5", "--key", "dev", "--keys-dir",
               str(env["keys_dir"]), "--out", str(tmp_path / "cli.tar")])
    assert rc != 0 and not (tmp_path / "cli.tar").exists()


def test_cli_packages_compiled_folder(env, tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("STUDIO_KEY_PASSPHRASE", PASSPHRASE)
    out = tmp_path / "cli.tar"
    rc = main(["package", str(env["onnx"]), "--compiled", str(env["compiled"]), "--board", "generic-x86_64",
               "--key", "dev", "--keys-dir", str(env["keys_dir"]), "--out", str(out), "--version", "7", "--json"])
    rep = json.loads(capsys.readouterr().out)
    assert rc == 0 and rep["runtime"] == "tvm" and rep["served_models"] == ["cnn", "cnn.onnx"]
    assert verify_bundle(out, load_trusted_keys(env["trust"])).version == "7"


def test_tvm_runner_refuses_a_flipped_byte_in_the_module(env, tvm_bundles, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from studio.compile.runner import TVMRunner

    dest = tmp_path / "x"
    extract_verified(tvm_bundles["1"], dest, load_trusted_keys(env["trust"]))
    x = np.random.default_rng(1).random((2, 3, 16, 16), dtype=np.float32)
    with TVMRunner(dest / "compiled", trusted_keys=env["trust"]) as r:  # the bundle's manifest one level up
        assert r.signature_state.startswith("verified")
        np.testing.assert_allclose(r.infer({"x": x})["logits"], _ort(env["onnx"], x), atol=1e-4)
    lib = dest / "compiled" / "model.so"
    data = bytearray(lib.read_bytes())
    data[len(data) // 2] ^= 0x01
    # replace the file (new inode) as an attacker would: rewriting the pages of a library this process has
    # dlopen'ed in place corrupts its code and crashes the interpreter at exit
    tampered = lib.with_name("model.so.new")
    tampered.write_bytes(bytes(data))
    os.replace(tampered, lib)
    with pytest.raises(BundleError, match="model.so"):
        TVMRunner(dest / "compiled", trusted_keys=env["trust"]).activate()


def test_agent_backend_checks_the_bytes_it_loads(env, tvm_bundles, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Swapped after verify_directory, before load: load_tvm_model hashes the copy it loads and refuses."""
    from studio.agent.runtime import load_deployment
    from studio.agent.tvm_backend import load_tvm_model
    from studio.edge.verify import verify_directory

    dest = tmp_path / "x"
    trusted = load_trusted_keys(env["trust"])
    extract_verified(tvm_bundles["2"], dest, trusted)
    dep = load_deployment(dest, trusted)
    m = dep.models["cnn"]
    md = m.metadata()
    assert md["platform"] == "tvm_relax" and md["outputs"] == [{"name": "logits", "datatype": "FP32",
                                                                "shape": [2, 10]}]
    assert dep.models["cnn.onnx"].metadata()["platform"] == "onnxruntime_onnx"
    m.warmup()
    manifest = verify_directory(dest, trusted)
    runtime = json.loads((dest / "runtime.json").read_text())
    (dest / "compiled" / "params.bin").write_bytes(b"\0" * 16)
    with pytest.raises(BundleError, match="params.bin"):
        load_tvm_model(dest, runtime["models"][0], manifest, runtime)


def test_deploy_infer_tamper_and_rollback_on_a_real_agent(env, tvm_bundles, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import httpx

    from studio.package.client import AgentClient, deploy_bundle

    token = env["token"].read_text().strip()
    agent = AgentProcess(tmp_path / "data", env["trust"], env["token"]).start()
    try:
        rep = deploy_bundle(tvm_bundles["1"], agent.url, token)
        assert rep.version == "1" and rep.served_models == ["cnn"]
        x = np.random.default_rng(0).random((2, 3, 16, 16), dtype=np.float32)
        ref = _ort(env["onnx"], x)
        for binary in (True, False):  # binary tensor extension and JSON, through tritonclient unchanged
            np.testing.assert_allclose(_infer(agent.port, "cnn", x, binary), ref, atol=1e-4, rtol=1e-4)
        import tritonclient.http as th

        meta = th.InferenceServerClient(f"127.0.0.1:{agent.port}").get_model_metadata("cnn")
        assert meta["platform"] == "tvm_relax" and meta["inputs"][0]["shape"] == [2, 3, 16, 16]
        assert meta["outputs"][0] == {"name": "logits", "datatype": "FP32", "shape": [2, 10]}
        cfg = th.InferenceServerClient(f"127.0.0.1:{agent.port}").get_model_config("cnn")
        assert cfg["platform"] == "tvm_relax" and cfg["backend"] == "tvm"
        metrics = httpx.get(agent.url + "/metrics").text
        assert 'studio_agent_request_duration_seconds_count{model="cnn"} 2.0' in metrics
        assert 'studio_agent_model_info{model="cnn",version="1"} 1.0' in metrics

        # a bundle whose module has one flipped byte: refused before anything is installed
        members = read_members(tvm_bundles["2"])
        bad = []
        for ti, data in members:
            if ti.name == "compiled/model.so":
                b = bytearray(data)
                b[len(b) // 2] ^= 0x01
                ti, data = reg(ti.name, bytes(b))
            bad.append((ti, data))
        snap = tree_snapshot(agent.data / "bundles")
        with pytest.raises(BundleError, match="model.so"):
            deploy_bundle(write_members(tmp_path / "bad.tar", bad), agent.url, token)
        assert tree_snapshot(agent.data / "bundles") == snap
        np.testing.assert_allclose(_infer(agent.port, "cnn", x), ref, atol=1e-4, rtol=1e-4)

        # version 2 (ONNX + compiled): both served; the compiled one under the name
        deploy_bundle(tvm_bundles["2"], agent.url, token)
        np.testing.assert_allclose(_infer(agent.port, "cnn", x), ref, atol=1e-4, rtol=1e-4)
        np.testing.assert_allclose(_infer(agent.port, "cnn.onnx", x), ref, atol=1e-5)

        # the installed version 1's module altered on the board's disk: the load-time check refuses it
        lib = agent.data / "bundles" / "cnn" / "1" / "compiled" / "model.so"
        data = bytearray(lib.read_bytes())
        data[len(data) // 2] ^= 0x01
        lib.write_bytes(bytes(data))
        client = AgentClient(agent.url, token)
        with pytest.raises(StudioError, match="model.so"):
            client.rollback("cnn", "1")
        st = client.status()["models"]["cnn"]
        assert st["active"] == "2"
        np.testing.assert_allclose(_infer(agent.port, "cnn", x), ref, atol=1e-4, rtol=1e-4)
    finally:
        agent.stop()


BLOCKER = textwrap.dedent("""
    import sys
    class _NoTVM:
        def find_spec(self, name, path=None, target=None):
            if name == "tvm" or name.startswith("tvm."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None
    sys.meta_path.insert(0, _NoTVM())
""")


def test_agent_without_tvm_refuses_the_bundle_and_keeps_serving(env, tvm_bundles, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                  monkeypatch) -> None:
    from studio.package.client import AgentClient, deploy_bundle
    from tests.edge.helpers import make_mlp, mlp_ref

    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER)
    probe = subprocess.run([sys.executable, "-c", "import tvm"], env={"PYTHONPATH": str(site)},
                           capture_output=True, text=True)
    assert probe.returncode != 0 and "No module named 'tvm'" in probe.stderr  # the blocker works
    monkeypatch.setenv("PYTHONPATH", str(site))
    agent = AgentProcess(tmp_path / "data", env["trust"], env["token"]).start()
    monkeypatch.delenv("PYTHONPATH")
    token = env["token"].read_text().strip()
    try:
        onnx_bundle = build_bundle(make_mlp(tmp_path / "src" / "cnn.onnx"), "generic-x86_64", env["key"],
                                   tmp_path / "ort.tar", name="cnn", version="0").bundle
        deploy_bundle(onnx_bundle, agent.url, token)
        with pytest.raises(StudioError) as exc:
            deploy_bundle(tvm_bundles["1"], agent.url, token)
        assert "TVM runtime" in exc.value.message and "apache-tvm" in exc.value.message
        assert "pip install" in (exc.value.hint or "") and "0 is still serving" in (exc.value.hint or "")
        st = AgentClient(agent.url, token).status()["models"]["cnn"]
        assert st["active"] == "0" and [v["version"] for v in st["versions"]] == ["0"]
        import tritonclient.http as th

        c = th.InferenceServerClient(f"127.0.0.1:{agent.port}")
        xi = np.ones((1, 16), np.float32)
        i = th.InferInput("x", [1, 16], "FP32")
        i.set_data_from_numpy(xi)
        np.testing.assert_allclose(c.infer("cnn", [i]).as_numpy("out"), mlp_ref(xi), rtol=1e-6)
    finally:
        agent.stop()
