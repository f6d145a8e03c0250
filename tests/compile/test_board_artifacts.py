"""Issue 12 end to end with a real aarch64 build: `studio compile` run in an export folder writes beside it, a
generic-aarch64 bundle of the compiled folder keeps the module, and an x86_64 bundle of an export folder that
holds the aarch64 module leaves it out (named in the report) instead of carrying it silently."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import needs_tvm

from studio.cli.main import main
from studio.core.errors import TargetError
from studio.edge.manifest import Manifest
from studio.package.bundle import build_bundle
from studio.package.keys import KeyStore
from tests.edge.helpers import PASSPHRASE, read_members

pytestmark = needs_tvm


def test_default_compile_output_and_per_board_bundles(cnn_onnx: Path, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                      monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    exp = tmp_path / "exports" / "tiny"
    exp.mkdir(parents=True)
    shutil.copy(cnn_onnx, exp / "model.onnx")
    (exp / "config.json").write_text('{"model_type": "cnn"}')
    before = sorted(p.name for p in exp.iterdir())
    monkeypatch.chdir(exp)  # the user walked into the export folder and compiled without --out
    rc = main(["compile", "model.onnx", "--target", "aarch64", "--shape", "x=1,3,16,16", "--no-verify",
               "--runs", "0", "--json"])
    rep = json.loads(capsys.readouterr().out)
    assert rc == 0, rep.get("diagnosis")
    out = Path(rep["out_dir"])
    assert out == tmp_path / "exports" / "compiled" / "tiny-aarch64" and (out / "compiled.json").is_file()
    assert sorted(p.name for p in exp.iterdir()) == before  # nothing written into the export folder
    library = "compiled/model.so" if (out / "model.so").is_file() else "compiled/model.tar"

    keys = KeyStore(tmp_path / "keys")
    keys.generate("dev", PASSPHRASE)
    key = keys.load_signing_key("dev", PASSPHRASE)
    # the board's CPU: the compiled folder is packaged with its module
    a64 = build_bundle(out, "generic-aarch64", key, tmp_path / "a64.tar", version="1")
    names = {m.name for m, _ in read_members(Path(a64.bundle))}
    assert library in names and a64.runtime == "tvm" and a64.compiled["arch"] == "aarch64" and not a64.forced
    with pytest.raises(TargetError, match="aarch64"):
        build_bundle(out, "generic-x86_64", key, tmp_path / "x.tar", version="1")

    # the layout the old default left behind: the module inside the export folder
    shutil.copytree(out, exp / "model-aarch64")
    x86 = build_bundle(exp, "generic-x86_64", key, tmp_path / "x86.tar", version="1")
    members = {m.name: data for m, data in read_members(Path(x86.bundle))}
    manifest = Manifest.parse(members["manifest.json"])
    paths = {f.path for f in manifest.files}
    assert "model/model.onnx" in paths and not [p for p in paths if p.startswith("model/model-aarch64/")]
    assert not [p for p in paths if p.endswith(("model.so", "model.tar", "params.bin"))]
    note = next(e for e in x86.left_out if e["path"] == "model/model-aarch64/")
    assert note["arch"] == "aarch64" and "ELF header" in note["reason"] and "generic-x86_64" in note["reason"]
    assert any(w.startswith("left out model/model-aarch64/") for w in x86.warnings)
