"""Pre-check catches ops TVM lacks; an import failure is bisected down to the failing node."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from conftest import needs_tvm

from studio.cli.main import main
from studio.compile.api import CompileOptions, compile_model

pytestmark = needs_tvm


def test_loop_is_caught_by_the_precheck(loop_onnx: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    rep = compile_model(CompileOptions(model=loop_onnx, target="llvm", out=out))
    assert rep.status == "failed"
    d = rep.diagnosis
    assert d is not None and d.stage == "precheck" and d.error_class == "unsupported_op"
    assert d.nodes == ["add_three_times"] and d.op_types == ["Loop"]
    assert "Loop" in d.message and d.hint
    assert rep.precheck["inspector"] in ("ran", "not installed")
    assert "import" not in rep.timings  # failed fast, TVM import never ran
    assert not out.exists()


def test_loop_cli_names_the_node_and_exits_nonzero(loop_onnx: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["compile", str(loop_onnx), "--target", "llvm", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 1
    assert "add_three_times (Loop)" in err and "hint:" in err


@pytest.fixture(scope="module")
def failed_import(import_failure_onnx: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    d = tmp_path_factory.mktemp("bisect")
    # the tvm-relax profile now predicts this failure (ConstantOfShape of an empty shape, its `nonempty` rule):
    # with the pre-check off, TVM's own import meets it and the bisection localises it
    rep = compile_model(CompileOptions(model=import_failure_onnx, target="llvm", out=d / "out", precheck=False,
                                       save_failing_subgraph=d / "failing.onnx"))
    return rep, d


def test_the_precheck_predicts_the_import_failure(import_failure_onnx: Path, tmp_path: Path) -> None:
    """Every op is on TVM's converter list, but the profile knows the empty-shape fill fails: caught before TVM
    runs, the node named with a fix."""
    rep = compile_model(CompileOptions(model=import_failure_onnx, target="llvm", out=tmp_path / "out"))
    d = rep.diagnosis
    assert rep.status == "failed" and d is not None and d.stage == "precheck"
    assert d.culprit == "bias_fill" and d.culprit_op == "ConstantOfShape" and d.hint
    assert "import" not in rep.timings and not (tmp_path / "out").exists()


def test_import_failure_is_localised_by_bisection(failed_import) -> None:  # type: ignore[no-untyped-def]
    rep, d = failed_import
    assert rep.status == "failed"
    diag = rep.diagnosis
    assert diag.stage == "import"
    assert rep.precheck["inspector"] == "skipped"
    assert diag.culprit == "bias_fill" and diag.culprit_op == "ConstantOfShape"
    assert diag.nodes[-1] == "bias_fill" and len(diag.nodes) <= 2, diag.nodes
    assert "broadcast_to" in diag.tvm_error
    assert diag.error_class == "shape_arithmetic" and "onnxslim" in diag.hint
    assert diag.localisation["trials"] >= 2
    assert not (d / "out").exists()


def test_saved_failing_subgraph_reproduces_the_error(failed_import) -> None:  # type: ignore[no-untyped-def]
    from studio.compile.graph import graph_inputs
    from studio.compile.tvm_backend import trial

    rep, d = failed_import
    sub = onnx.load(str(d / "failing.onnx"))
    assert [n.name for n in sub.graph.node] == rep.diagnosis.nodes
    ins = graph_inputs(sub)
    f = trial(sub, {i.name: [int(x) for x in i.dims] for i in ins}, {i.name: i.dtype for i in ins})
    assert f is not None and "broadcast_to" in f.message


def test_simplify_folds_the_failing_shape_arithmetic(import_failure_onnx: Path, tmp_path: Path) -> None:
    pytest.importorskip("onnxslim")
    rep = compile_model(CompileOptions(model=import_failure_onnx, target="llvm", out=tmp_path / "o",
                                       simplify=True, latency_runs=0))
    assert rep.ok, rep.summary()
    assert rep.parity.status == "passed"  # against the original, unsimplified model in ORT


def test_diagnosis_and_hints_in_chinese(loop_onnx: Path, import_failure_onnx: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """With STUDIO_LANGUAGE=zh_CN the compile summary's diagnosis and hint are Chinese: the pre-check's (the real
    `studio compile` on a Loop) and TVM's own import failure with its known-failure hint (TVM's words, node and op
    names, flags and commands kept); English as before."""
    from studio.core import catalogue

    monkeypatch.setenv("STUDIO_LANGUAGE", "zh_CN")
    try:
        rc = main(["compile", str(loop_onnx), "--target", "llvm", "--out", str(tmp_path / "o")])
        err = capsys.readouterr().err
        rep = compile_model(CompileOptions(model=import_failure_onnx, target="llvm", out=tmp_path / "o2",
                                           precheck=False, localise=False))
        zh = rep.summary()
    finally:
        monkeypatch.delenv("STUDIO_LANGUAGE")
        catalogue.use("en")
    assert rc == 1
    assert "在 precheck 阶段失败：1 个节点使用了 TVM Relax 无法导入的算子：Loop" in err
    assert "失败的节点（1 个）：add_three_times (Loop)" in err and "\n  提示：" in err and "hint:" not in err
    assert "在 import 阶段失败：TVM import 失败：broadcast_to expects" in zh  # TVM's own words kept
    assert "提示：TVM 0.27 的转换器以空（0 维）目标形状调用 broadcast_to" in zh and "--simplify" in zh
    assert "`onnxslim IN.onnx OUT.onnx --input-shapes NAME:DIMS ...`" in zh and "hint:" not in zh
    english = rep.summary()
    assert "failed at import: TVM import failed: broadcast_to" in english and "hint: TVM 0.27's converter" in english
