"""Where compiled modules go (studio.compile.outputs): never into an export folder, whose next bundle would carry
them. The refusal comes before TVM is needed, so these run without apache-tvm."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from studio.cli.main import main
from studio.compile.api import CompileOptions, compile_model, default_out
from studio.compile.outputs import check_out, compiled_name, export_folder_of
from studio.core.errors import InputError
from studio.core.workspace import Workspace


def _export(folder: Path, cnn_onnx: Path, companions: bool = True) -> Path:
    """An export folder as `studio export` leaves it: model.onnx beside its config / tokenizer files."""
    folder.mkdir(parents=True)
    shutil.copy(cnn_onnx, folder / "model.onnx")
    if companions:
        (folder / "config.json").write_text('{"model_type": "cnn"}')
        (folder / "tokenizer.json").write_text("{}")
    return folder


def _snapshot(folder: Path) -> dict[str, int]:
    return {p.relative_to(folder).as_posix(): p.stat().st_size for p in sorted(folder.rglob("*"))}


def test_compiled_name() -> None:
    assert compiled_name(Path("/x/cnn.onnx")) == "cnn"
    assert compiled_name(Path("/ws/models/tiny-clip-onnx/model.onnx")) == "tiny-clip"
    assert compiled_name(Path("/exports/tiny/model.onnx")) == "tiny"
    assert compiled_name(Path("/exports/tiny/vision_encoder.onnx")) == "vision_encoder"


def test_default_out_is_never_in_the_model_folder(tmp_path: Path, cnn_onnx: Path) -> None:
    exp = _export(tmp_path / "proj" / "exports" / "tiny", cnn_onnx)
    model = exp / "model.onnx"
    proj = tmp_path / "proj"
    assert default_out(model, "aarch64", cwd=proj) == proj / "compiled" / "tiny-aarch64"
    # run from inside the export folder (or a folder in it): beside the export folder, not in it
    assert default_out(model, "aarch64", cwd=exp) == proj / "exports" / "compiled" / "tiny-aarch64"
    (exp / "sub").mkdir()
    assert default_out(model, "llvm", cwd=exp / "sub") == proj / "exports" / "compiled" / "tiny-llvm"
    # a lone model (not an export folder) compiled from its own folder: still not inside that folder
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy(cnn_onnx, lone / "cnn.onnx")
    assert default_out(lone / "cnn.onnx", "llvm", cwd=lone) == tmp_path / "compiled" / "cnn-llvm"
    for m, cwd in ((model, exp), (model, proj), (lone / "cnn.onnx", lone)):
        out = default_out(m, "rk3588", cwd=cwd)
        assert m.parent not in out.parents and export_folder_of(out) is None


def test_default_out_in_a_workspace(tmp_path: Path, cnn_onnx: Path) -> None:
    ws = Workspace.create(tmp_path / "ws")
    exp = _export(ws.models_dir / "tiny-onnx", cnn_onnx)
    ws.add_model(exp, name="tiny", kind="onnx")
    assert default_out(exp / "model.onnx", "rk3588", cwd=exp) == ws.root / "compiled" / "tiny-rk3588"


def test_explicit_out_inside_an_export_folder_is_refused(tmp_path: Path, cnn_onnx: Path) -> None:
    exp = _export(tmp_path / "tiny", cnn_onnx)
    for out in (exp / "x", exp, exp / "a" / "b"):
        with pytest.raises(InputError) as exc:
            check_out(out, exp / "model.onnx", "aarch64")
        assert str(exp) in exc.value.message and "--out" in exc.value.hint
        assert str(tmp_path / "compiled" / "tiny-aarch64") in exc.value.hint or "compiled" in exc.value.hint
    check_out(tmp_path / "elsewhere" / "x", exp / "model.onnx", "aarch64")  # outside: fine
    # a lone model file's folder without an export's companions is not an export folder (`--out DIR/tvm`)
    lone = _export(tmp_path / "lone", cnn_onnx, companions=False)
    check_out(lone / "tvm", lone / "model.onnx", "llvm")
    # ... unless a workspace lists it as a model
    ws = Workspace.create(tmp_path / "ws")
    bare = _export(ws.models_dir / "bare", cnn_onnx, companions=False)
    ws.add_model(bare, name="bare", kind="onnx")
    with pytest.raises(InputError, match="inside the export folder"):
        check_out(bare / "compiled", bare / "model.onnx", "llvm")
    check_out(ws.root / "compiled" / "bare-llvm", bare / "model.onnx", "llvm")


def test_cli_out_in_the_export_folder_exits_2_and_writes_nothing(tmp_path: Path, cnn_onnx: Path,  # type: ignore[no-untyped-def]
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    exp = _export(tmp_path / "tiny", cnn_onnx)
    before = _snapshot(exp)
    report = tmp_path / "report.json"
    for args in (["--out", str(exp / "x")], ["--out", str(exp), "--force"]):
        rc = main(["compile", str(exp / "model.onnx"), "--target", "aarch64", "--shape", "x=1,3,16,16",
                   "--report", str(report), *args])
        err = capsys.readouterr().err
        assert rc == 2, err
        assert f"inside the export folder {exp}" in err and "--out" in err and "Traceback" not in err
        assert _snapshot(exp) == before and not report.exists()
    # the API refuses the same (the GUI's explicit Output field)
    with pytest.raises(InputError, match="inside the export folder"):
        compile_model(CompileOptions(model=exp / "model.onnx", target="llvm", out=exp / "tvm"))
    assert _snapshot(exp) == before and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert json.loads((exp / "config.json").read_text()) == {"model_type": "cnn"}
