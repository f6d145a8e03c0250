"""`studio compile --json` end to end, and the signature check before a compiled artifact is loaded."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import needs_tvm

from studio.cli.main import main
from studio.core.errors import BundleError

pytestmark = needs_tvm


@pytest.fixture(scope="module")
def cli_run(cnn_onnx: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    out = tmp_path_factory.mktemp("cli") / "cnn-llvm"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["compile", str(cnn_onnx), "--target", "llvm", "--out", str(out), "--shape", "x=2,3,16,16",
                   "--json", "--runs", "3"])
    return rc, json.loads(buf.getvalue()), out


def test_cli_json_lists_artifacts_parity_and_target(cli_run) -> None:  # type: ignore[no-untyped-def]
    rc, rep, out = cli_run
    assert rc == 0
    assert rep["status"] == "succeeded" and rep["target"] == "llvm" and rep["target_json"] == {"kind": "llvm"}
    assert rep["input_shapes"] == {"x": [2, 3, 16, 16]}
    assert {a["path"] for a in rep["artifacts"]} >= {"model.so", "params.bin", "compiled.json"}
    assert rep["parity"]["status"] == "passed" and rep["parity"]["outputs"][0]["shape"] == [2, 10]
    assert rep["latency"]["runs"] == 3 and rep["diagnosis"] is None
    assert (out / "model.so").is_file()


def test_cli_refuses_existing_output_without_force(cli_run, cnn_onnx: Path,  # type: ignore[no-untyped-def]
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    _, _, out = cli_run
    rc = main(["compile", str(cnn_onnx), "--target", "llvm", "--out", str(out)])
    assert rc == 2 and "--force" in capsys.readouterr().err


def test_signed_artifact_is_verified_before_load(cli_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("nacl")
    import shutil

    from nacl.signing import SigningKey

    from studio.compile.runner import TVMRunner
    from studio.package.bundle import sign_directory

    _, _, out = cli_run
    signed = tmp_path / "signed"
    shutil.copytree(out, signed)
    key, other = SigningKey.generate(), SigningKey.generate()
    sign_directory(signed, key, name="cnn", version="1", target="llvm")
    x = np.zeros((2, 3, 16, 16), np.float32)
    with TVMRunner(signed, trusted_keys=[bytes(key.verify_key)]) as r:
        assert r.signature_state.startswith("verified")
        assert r.infer({"x": x})["logits"].shape == (2, 10)
    with pytest.raises(BundleError):  # signed by a key we do not trust
        TVMRunner(signed, trusted_keys=[bytes(other.verify_key)]).activate()
    with pytest.raises(BundleError):  # signed, but the caller gave no keys
        TVMRunner(signed).activate()
    (signed / "params.bin").write_bytes((signed / "params.bin").read_bytes()[:-4] + b"\0\0\0\0")
    with pytest.raises(BundleError):  # tampered after signing: the library is never loaded
        TVMRunner(signed, trusted_keys=[bytes(key.verify_key)]).activate()
