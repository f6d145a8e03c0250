"""Target profiles: the shipped data matches the reference lists; user profiles load or fail clearly."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.core.errors import TargetError
from studio.inspect.api import BUILTIN_IDS, list_targets, load_target
from studio.inspect.profiles import resolve_targets


def test_every_builtin_target_loads_with_source_and_date() -> None:
    profs = {p.id: p for p in list_targets()}
    assert set(BUILTIN_IDS) <= set(profs)
    for p in profs.values():
        assert p.source and p.date_read and p.name


def test_counts_match_the_vendor_lists() -> None:
    trt = load_target("tensorrt")
    assert trt.op_count("unsupported") == 42
    assert trt.op_count("supported") + trt.op_count("risky") == 158  # Loop is listed but risky
    assert trt.rules.opset_min == 9 and trt.rules.opset_max == 24
    ov = load_target("openvino")
    # the published list (173 supported + 27 unsupported) plus 4 ops the real tool converts (issue 13's verifier)
    assert len(ov.ops["com.microsoft"]) == 33 and len(ov.ops["ai.onnx"]) == 173 + 27 + 4
    assert ov.lookup("", "SoftmaxCrossEntropyLoss").status == "supported"
    rk = load_target("rk3588")
    # toolkit 2.3.2's list (89 ops) widened by what rknn-toolkit2 2.5.0 really builds (bench_rknn_agreement on
    # the node tests: 143; bench_model_agreement on whole models: ReduceL2 on the NPU, CumSum on the CPU)
    assert sum(1 for r in rk.ops["ai.onnx"].values() if r.status in ("supported", "cpu")) == 145
    assert rk.graph is not None and rk.graph.fold == "build_shapes" and "rknn-toolkit2 2.5.0" in rk.graph.source
    assert rk.lookup("", "Erf").status == "cpu"
    assert load_target("ascend-310p").lookup("", "Gelu").status == "unsupported"
    assert load_target("qnn-htp").rules.dynamic_shapes == "unsupported"
    tvm = load_target("tvm-relax")
    assert tvm.lookup("", "Loop").status == "unsupported" and tvm.lookup("", "Equal").since == 13


def test_no_public_list_means_no_ops_at_all() -> None:
    for tid in ("hailo-8", "mlu370"):
        p = load_target(tid)
        assert p.kind == "none" and p.unlisted == "unknown" and p.op_count() == 0


def test_ort_profile_is_computed_from_the_registry() -> None:
    from onnxruntime.capi import _pybind_state as C

    p = load_target("ort-cpu")
    assert p.kind == "runtime"
    names = {k.op_name for k in C.get_all_opkernel_def()
             if k.provider == "CPUExecutionProvider" and k.domain == ""}
    assert names <= set(p.ops["ai.onnx"])
    relu = p.lookup("", "Relu")
    assert relu.ranges and (6, 12) in relu.ranges and "tensor(float)" in relu.dtypes["6-12:T"]


def test_user_profile_dir_adds_and_overrides(tmp_path: Path) -> None:
    (tmp_path / "mynpu.yaml").write_text(
        "id: mynpu\nname: My NPU\nsource: datasheet rev 3\ndate_read: 2026-01-01\n"
        "rules: {dynamic_shapes: unsupported, opset: [11, 17]}\n"
        "supported: {ai.onnx: [Relu, Add, NonZero]}\nopsets: {NonZero: [13, 15]}\n"
        "constraints:\n  Add:\n    - {kind: dtype, inputs: [0, 1], allowed: [float16], reason: fp16 only}\n")
    ids = [p.id for p in list_targets([tmp_path])]
    assert ids[-1] == "mynpu" and ids[: len(BUILTIN_IDS)] == list(BUILTIN_IDS)
    p = load_target("mynpu", [tmp_path])
    assert p.lookup("ai.onnx", "NonZero").until == 15
    assert [t.id for t in resolve_targets(["mynpu", "rk3588"], [tmp_path])] == ["mynpu", "rk3588"]


@pytest.mark.parametrize("text,field", [
    ("id: x\nname: X\nsource: s\n", "date_read"),
    ("id: x\nname: X\nsource: s\ndate_read: d\nsupported: {ai.onnx: Relu}\n", "supported.ai.onnx"),
    ("id: x\nname: X\nsource: s\ndate_read: d\nrules: {dynamic_shapes: maybe}\n", "rules.dynamic_shapes"),
    ("id: x\nname: X\nsource: s\ndate_read: d\nsupported: {ai.onnx: [TopK]}\n"
     "constraints: {TopK: [{kind: attr, name: sorted, reason: r}]}\n", "constraints.TopK[0]"),
    ("id: x\nname: X\nsource: s\ndate_read: d\nconstraints: {TopK: []}\n", "constraints.TopK"),
    ("id: x\nname: X\nsource: s\ndate_read: d\nsuported: {}\n", "(top)"),
    ("id: [unclosed\n", None),
])
def test_malformed_profiles_raise_target_error(tmp_path: Path, text: str, field: str | None) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(TargetError) as ei:
        list_targets([tmp_path])
    assert str(f) in (ei.value.offending or "")
    if field:
        assert ei.value.offending.endswith(field)
    assert ei.value.hint


HEAD = "id: x\nname: X\nsource: s\ndate_read: d\n"  # lines 1-4


@pytest.mark.parametrize("text,line,field,says", [
    (HEAD + "rules:\n  opset: [11, 17]\n  dynamic_shapes: maybe\n", 7, "rules.dynamic_shapes", "'allowed'"),
    (HEAD + "supported:\n  ai.onnx: [TopK]\nconstraints:\n  TopK:\n    - {kind: max_rank, reason: r}\n", 9,
     "constraints.TopK[0].value", "'value' is required"),
    (HEAD + "supported:\n  ai.onnx: [TopK]\nconstraints:\n  TopK:\n    - kind: attr\n      reason: r\n"
     "      name: sorted\n", 9, "constraints.TopK[0]", "allowed, forbidden or max_value"),
    (HEAD + "supported: {ai.onnx: [A]}\nconstraints:\n  A:\n  - {kind: nope, reason: r}\n", 8,
     "constraints.A[0].kind", "'nope'"),
    (HEAD + "opsets:\n  NonZero: [13, 15]\n", 6, "opsets.NonZero", "no list mentions"),
    (HEAD + "risky:\n  Relu: ''\n", 6, "risky.Relu", "at least 1 character"),
    (HEAD + "notes: n\nsuported: {}\n", 6, "(top)", "unknown keys ['suported']"),
    ("id: x\nname: [unclosed\n", 3, None, "not valid YAML"),
])
def test_errors_name_the_line(tmp_path: Path, text: str, line: int, field: str | None, says: str) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(TargetError) as ei:
        list_targets([f])
    assert ei.value.offending == (f"{f}:{line}: {field}" if field else f"{f}:{line}"), ei.value.offending
    assert says in ei.value.message and ei.value.hint


def test_schema_literals_match_the_analysis_constants() -> None:
    import typing

    from studio.inspect import profile_schema as ps
    from studio.inspect.profiles import CONSTRAINT_KINDS, OP_STATUSES, RULE_LEVELS

    kinds = [typing.get_args(m.model_fields["kind"].annotation)[0]
             for m in typing.get_args(typing.get_args(ps.ConstraintSpec)[0])]
    assert tuple(kinds) == CONSTRAINT_KINDS
    assert typing.get_args(ps.Level) == RULE_LEVELS
    assert set(typing.get_args(typing.get_args(ps.TargetFile.model_fields["unlisted"].annotation)[0])) <= set(
        OP_STATUSES)


def test_unknown_target_and_missing_dir() -> None:
    with pytest.raises(TargetError, match="unknown target"):
        load_target("nope")
    with pytest.raises(TargetError, match="does not exist"):
        list_targets([Path("/no/such/dir")])


def test_workspace_targets_folder_is_used(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from studio.cli.main import main
    from studio.core.workspace import Workspace

    ws = Workspace.create(tmp_path / "ws")
    (ws.targets_dir / "board.yaml").write_text("id: board-x\nname: Board X\nsource: s\ndate_read: d\n"
                                               "supported: {ai.onnx: [Relu]}\n")
    assert main(["targets", "--workspace", str(ws.root), "--json"]) == 0
    assert "board-x" in {d["id"] for d in __import__("json").loads(capsys.readouterr().out)}
