"""A bundle carries only what the board's runtime uses: compiled modules for another CPU (or any compiled module
left in an export folder), loose native code, other runtimes' models and framework weights are left out, each
named with the reason in the package report; a folder holding only a foreign module is refused unless --force.

No TVM here: the compiled folders are written by hand (compiled.json + params.bin + an ELF header with the
machine), which is all packaging reads. tests/compile/test_board_artifacts.py does the same with real builds."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from studio.cli.main import main
from studio.core.errors import InputError, TargetError
from studio.edge.manifest import Manifest
from studio.package.bundle import build_bundle
from tests.edge.helpers import make_mlp, read_members

EM = {"x86_64": 62, "aarch64": 183}


def elf(machine: str, size: int = 256) -> bytes:
    """An ELF64 little-endian header for ``machine`` (what studio.edge.elf reads), padded to ``size``."""
    head = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9) + struct.pack("<HH", 3, EM[machine])
    return head + bytes(size - len(head))


def fake_compiled(folder: Path, machine: str, target_id: str) -> Path:
    """A `studio compile` output folder for ``machine`` (model.so, params.bin, compiled.json, report)."""
    folder.mkdir(parents=True)
    (folder / "model.so").write_bytes(elf(machine))
    (folder / "params.bin").write_bytes(b"\0" * 64)
    triple = "aarch64-linux-gnu" if machine == "aarch64" else ""
    target = {"kind": "llvm", **({"mtriple": triple} if triple else {})}
    (folder / "compiled.json").write_text(json.dumps({
        "libraries": ["model.so", "model.tar"], "params": "params.bin", "target_id": target_id, "target": target,
        "tvm_version": "0.27.0", "inputs": [{"name": "x", "shape": [1, 16], "dtype": "float32"}],
        "outputs": ["y"], "output_specs": [{"name": "y", "shape": [1, 8], "dtype": "float32"}]}))
    (folder / "compile_report.json").write_text(json.dumps({
        "status": "succeeded", "model": "model.onnx", "host": "Linux-x86_64",
        "parity": {"status": "skipped: cross target", "outputs": []}}))
    return folder


def export_with_foreign_files(root: Path) -> Path:
    """An export folder as a user left it: model + companions, an aarch64 compile inside, and other debris."""
    exp = root / "tiny-onnx"
    make_mlp(exp / "model.onnx")
    (exp / "config.json").write_text('{"model_type": "mlp"}')
    (exp / "tokenizer.json").write_text('{"version": "1.0"}')
    fake_compiled(exp / "model-aarch64", "aarch64", "aarch64")
    (exp / "libextra.so").write_bytes(elf("aarch64"))
    (exp / "model.rknn").write_bytes(b"RKNN" + bytes(60))
    (exp / "pytorch_model.bin").write_bytes(b"PK" + bytes(62))
    return exp


def _members(bundle: str) -> dict[str, bytes | None]:
    return {m.name: data for m, data in read_members(Path(bundle))}


def test_x86_bundle_leaves_out_an_aarch64_model_so(tmp_path: Path, signing_key) -> None:  # type: ignore[no-untyped-def]
    exp = export_with_foreign_files(tmp_path)
    rep = build_bundle(exp, "generic-x86_64", signing_key, tmp_path / "x86.tar", version="1")
    members = _members(rep.bundle)
    assert set(members) == {"runtime.json", "compat-report.json", "model/model.onnx", "model/config.json",
                            "model/tokenizer.json", "manifest.json", "manifest.sig"}
    manifest = Manifest.parse(members["manifest.json"])
    assert not [f.path for f in manifest.files if f.path.endswith((".so", ".tar", "compiled.json", "params.bin"))]
    assert not rep.forced and rep.runtime == "onnxruntime" and rep.served_models == ["tiny-onnx"]
    left = {e["path"]: e for e in rep.left_out}
    assert set(left) == {"model/model-aarch64/", "model/libextra.so", "model/model.rknn",
                         "model/pytorch_model.bin"}
    module = left["model/model-aarch64/"]
    assert module["kind"] == "compiled-module" and module["arch"] == "aarch64" and module["files"] == 4
    assert "aarch64" in module["reason"] and "generic-x86_64" in module["reason"] and "x86_64" in module["reason"]
    assert left["model/libextra.so"]["kind"] == "native-code" and "aarch64" in left["model/libextra.so"]["reason"]
    assert left["model/model.rknn"]["kind"] == "other-runtime" and "RKNN" in left["model/model.rknn"]["reason"]
    assert left["model/pytorch_model.bin"]["kind"] == "framework-weights"
    # said, not silent: the report's warnings and render, and the signed compat report in the bundle
    assert any(w.startswith("left out model/model-aarch64/") and "aarch64" in w for w in rep.warnings)
    assert "left out model/model-aarch64/" in rep.render()
    compat = json.loads(members["compat-report.json"])
    assert {e["path"] for e in compat["left_out"]} == set(left)


def test_aarch64_bundle_of_the_export_still_needs_compiled(tmp_path: Path, signing_key) -> None:  # type: ignore[no-untyped-def]
    """The board's own CPU, but runtime onnxruntime: the module is not served from model/, so it stays out and
    the note says how to serve it."""
    exp = export_with_foreign_files(tmp_path)
    rep = build_bundle(exp, "generic-aarch64", signing_key, tmp_path / "a64.tar", version="1")
    assert not [n for n in _members(rep.bundle) if n.endswith(".so")]
    module = next(e for e in rep.left_out if e["path"] == "model/model-aarch64/")
    assert f"--compiled {exp / 'model-aarch64'}" in module["reason"]
    assert next(e for e in rep.left_out if e["path"] == "model/libextra.so")["kind"] == "native-code"
    # passed with --compiled it is served (runtime tvm) and not noted as left out
    rep = build_bundle(exp, "generic-aarch64", signing_key, tmp_path / "a64c.tar", version="2",
                       compiled=exp / "model-aarch64")
    assert rep.runtime == "tvm" and rep.compiled["arch"] == "aarch64"
    assert "compiled/model.so" in _members(rep.bundle)
    assert "model/model-aarch64/" not in {e["path"] for e in rep.left_out}


def test_aarch64_bundle_from_a_compiled_aarch64_folder_keeps_it(tmp_path: Path, signing_key) -> None:  # type: ignore[no-untyped-def]
    comp = fake_compiled(tmp_path / "tiny-aarch64", "aarch64", "aarch64")
    rep = build_bundle(comp, "generic-aarch64", signing_key, tmp_path / "b.tar", version="1")
    members = _members(rep.bundle)
    assert {"compiled/model.so", "compiled/params.bin", "compiled/compiled.json"} <= set(members)
    assert rep.runtime == "tvm" and rep.compiled["arch"] == "aarch64" and rep.left_out == [] and not rep.forced
    assert json.loads(members["runtime.json"])["tvm"]["library"] == "compiled/model.so"


def test_folder_with_only_a_foreign_module_is_refused_unless_forced(tmp_path: Path, signing_key) -> None:  # type: ignore[no-untyped-def]
    holder = tmp_path / "holder"
    fake_compiled(holder / "tiny-aarch64", "aarch64", "aarch64")
    out = tmp_path / "x.tar"
    with pytest.raises(TargetError) as exc:
        build_bundle(holder, "generic-x86_64", signing_key, out, version="1")
    assert "aarch64" in exc.value.message and "x86_64" in exc.value.message and "--force" in exc.value.hint
    assert not out.exists()
    rep = build_bundle(holder, "generic-x86_64", signing_key, out, version="1", force=True)
    assert rep.forced and rep.runtime == "tvm" and any("--force" in w for w in rep.warnings)
    assert any("holds no ONNX model" in w for w in rep.warnings)
    # the board's own CPU: that module is the model
    rep = build_bundle(holder, "generic-aarch64", signing_key, tmp_path / "y.tar", version="1")
    assert rep.runtime == "tvm" and not rep.forced and "compiled/model.so" in _members(rep.bundle)
    # two modules and no ONNX model: the user picks one
    fake_compiled(holder / "tiny-x86_64", "x86_64", "llvm")
    with pytest.raises(InputError, match="2 compiled modules") as exc2:
        build_bundle(holder, "generic-aarch64", signing_key, tmp_path / "z.tar", version="1")
    assert str(holder / "tiny-aarch64") in exc2.value.hint


def test_external_data_and_plain_files_are_kept(tmp_path: Path, signing_key) -> None:  # type: ignore[no-untyped-def]
    """A weights file the ONNX model references is kept whatever its name; plain data files stay too."""
    import onnx

    m = onnx.load(str(make_mlp(tmp_path / "a" / "tmp.onnx", pad_bytes=4096)))
    exp = tmp_path / "exp"
    exp.mkdir()
    onnx.save(m, str(exp / "model.onnx"), save_as_external_data=True, location="pytorch_model.bin",
              size_threshold=0)
    (exp / "labels.txt").write_text("cat\ndog\n")
    (exp / "data.tar").write_bytes(b"")  # not an object archive
    rep = build_bundle(exp, "generic-x86_64", signing_key, tmp_path / "b.tar", version="1")
    assert {"model/model.onnx", "model/pytorch_model.bin", "model/labels.txt", "model/data.tar"} <= set(
        _members(rep.bundle))
    assert rep.left_out == [] and rep.warnings == []


def test_cli_json_names_what_was_left_out(tmp_path: Path, keys, capsys) -> None:  # type: ignore[no-untyped-def]
    exp = export_with_foreign_files(tmp_path)
    rc = main(["package", str(exp), "--board", "generic-x86_64", "--key", "dev", "--keys-dir",
               str(tmp_path / "keys"), "--out", str(tmp_path / "cli.tar"), "--version", "3", "--json"])
    rep = json.loads(capsys.readouterr().out)
    assert rc == 0 and "model/model-aarch64/" in {e["path"] for e in rep["left_out"]}
    rc = main(["package", str(exp), "--board", "generic-x86_64", "--key", "dev", "--keys-dir",
               str(tmp_path / "keys"), "--out", str(tmp_path / "cli2.tar"), "--version", "4"])
    assert rc == 0 and "warning: left out model/model-aarch64/" in capsys.readouterr().out
