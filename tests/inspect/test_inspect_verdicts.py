"""Per node per target verdicts match the profile data (hand-built models)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx.defs
import onnx.helper as h
import pytest
from inspect_models import make, nested_model, nonzero_model, save, single_op_model, vi
from onnx import TensorProto as T
from onnx import numpy_helper

from studio.inspect.api import inspect_model, list_targets, load_target

LIST_TARGETS = ["tensorrt", "openvino", "qnn-htp", "ascend-310p", "rk3588", "tvm-relax"]


def _all_ops_model() -> tuple[object, list[str]]:
    """One node per ai.onnx op type (not valid to run; the verdicts only read op types and tensors)."""
    names = sorted({s.name for s in onnx.defs.get_all_schemas() if s.domain == ""})
    nodes = [h.make_node(op, ["x"], [f"y_{op}"], name=f"n_{op}") for op in names]
    m = make(nodes, [vi("x", T.FLOAT, [1, 4])], [vi(f"y_{op}", T.FLOAT, None) for op in names], opset=21)
    return m, names


@pytest.fixture(scope="module")
def all_ops_report(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    m, names = _all_ops_model()
    p = save(m, tmp_path_factory.mktemp("allops") / "all_ops.onnx")
    return inspect_model(p, LIST_TARGETS + ["hailo-8", "mlu370"]), names


@pytest.mark.parametrize("target", LIST_TARGETS)
def test_every_op_verdict_matches_the_profile_lists(all_ops_report, target: str) -> None:  # type: ignore[no-untyped-def]
    rep, names = all_ops_report
    prof = load_target(target)
    verdicts = rep.node_verdicts[target]
    for op in names:
        v = verdicts[f"n_{op}"]
        rule = prof.lookup("", op)
        if rule is None:
            assert v == "unsupported", (op, v)
        elif rule.status == "unsupported":
            assert v == "unsupported", (op, v)
        elif rule.status in ("risky", "cpu"):
            assert v in ("risky", "unsupported"), (op, v)  # unsupported only through a constraint/opset
        elif rule.constraints or rule.since or rule.until:
            assert v in ("supported", "risky", "unsupported"), (op, v)
        elif f"n_{op}" in rep.dynamic.data_dependent_nodes and prof.rules.data_dependent != "allowed":
            assert v == prof.rules.data_dependent, (op, v)  # data-dependent shapes on a static-only target
        else:
            assert v == "supported", (op, v)


def test_spot_checks_from_the_reference(all_ops_report) -> None:  # type: ignore[no-untyped-def]
    rep, _ = all_ops_report
    v = rep.node_verdicts
    assert v["tensorrt"]["n_Unique"] == "unsupported" and v["tensorrt"]["n_Einsum"] == "supported"
    assert v["rk3588"]["n_Einsum"] == "unsupported" and v["rk3588"]["n_Erf"] == "risky"
    assert v["ascend-310p"]["n_Gelu"] == "unsupported" and v["openvino"]["n_Gelu"] == "supported"
    assert v["tvm-relax"]["n_Loop"] == "unsupported" and v["tensorrt"]["n_Loop"] == "risky"
    assert v["qnn-htp"]["n_IsInf"] == "risky" and v["qnn-htp"]["n_If"] == "risky"
    assert v["openvino"]["n_DeformConv"] == "unsupported"  # listed-not-implemented


def test_no_public_list_gives_unknown_for_every_node(all_ops_report) -> None:  # type: ignore[no-untyped-def]
    rep, names = all_ops_report
    for tid in ("hailo-8", "mlu370"):
        assert set(rep.node_verdicts[tid].values()) == {"unknown"}
        assert rep.targets[tid].verdict == "unknown"
        assert rep.targets[tid].counts["unknown"] == len(names)


def test_nested_subgraphs_are_checked_with_their_path(tmp_path: Path) -> None:
    rep = inspect_model(save(nested_model(), tmp_path / "nested.onnx"), ["rk3588", "tvm-relax", "openvino"])
    keys = set(rep.node_verdicts["rk3588"])
    assert "the_if/then_branch/the_loop/body/body_nonzero" in keys
    assert "the_if/else_branch/else_relu" in keys
    rk = rep.node_verdicts["rk3588"]
    assert rk["the_if/then_branch/the_loop/body/body_nonzero"] == "unsupported"
    assert rk["the_if/then_branch/the_loop"] == "unsupported"
    assert rk["the_if"] == "unsupported"  # RKNN needs the If condition constant; here it is computed
    assert rep.node_verdicts["tvm-relax"]["the_if/then_branch/the_loop"] == "unsupported"
    assert rep.node_verdicts["openvino"]["the_if/then_branch/the_loop/body/body_nonzero"] == "supported"
    f = next(f for f in rep.findings if f.target == "rk3588" and f.op_type == "NonZero")
    assert f.subgraph == "the_if/then_branch/the_loop/body" and f.severity == "error"
    assert rep.stats.subgraphs == 3 and rep.stats.nodes == 8


def test_custom_domain_policy_and_per_target(tmp_path: Path) -> None:
    p = save(single_op_model("MyOp", domain="com.example"), tmp_path / "custom.onnx")
    rep = inspect_model(p, ["openvino", "ort-cpu", "hailo-8"])
    pol = [f for f in rep.findings if f.rule == "domain-policy"]
    assert len(pol) == 1 and pol[0].target == "*" and pol[0].domain == "com.example"
    assert rep.node_verdicts["openvino"]["the_MyOp"] == "unsupported"
    assert rep.node_verdicts["ort-cpu"]["the_MyOp"] == "unsupported"
    assert rep.node_verdicts["hailo-8"]["the_MyOp"] == "unknown"
    declared = inspect_model(p, ["openvino"], custom_domains=["com.example"])
    assert not [f for f in declared.findings if f.rule == "domain-policy"]
    assert declared.allowed_domains == ["ai.onnx", "com.example"]
    ms = inspect_model(save(single_op_model("FastGelu", domain="com.microsoft"), tmp_path / "ms.onnx"),
                       ["openvino", "tensorrt", "ort-cpu"], custom_domains=["com.microsoft"])
    assert ms.node_verdicts["openvino"]["the_FastGelu"] == "supported"
    assert ms.node_verdicts["ort-cpu"]["the_FastGelu"] == "supported"
    assert ms.node_verdicts["tensorrt"]["the_FastGelu"] == "unsupported"


def test_op_below_and_above_target_opset_range(tmp_path: Path) -> None:
    # TVM implements Equal from opset 13: an opset-11 model is refused, opset 13 passes
    old = inspect_model(save(single_op_model("Equal", 2, opset=11), tmp_path / "eq11.onnx"), ["tvm-relax"])
    assert old.node_verdicts["tvm-relax"]["the_Equal"] == "unsupported"
    f = next(f for f in old.findings if f.rule == "op-version")
    assert "from opset 13" in f.message and "opset >= 13" in f.hint
    new = inspect_model(save(single_op_model("Equal", 2, opset=13), tmp_path / "eq13.onnx"), ["tvm-relax"])
    assert new.node_verdicts["tvm-relax"]["the_Equal"] == "supported"
    # Ascend ATC covers opsets 9-18: an opset-20 model gets a model-level opset finding
    a = inspect_model(save(single_op_model("Relu", opset=20), tmp_path / "r20.onnx"), ["ascend-310p", "tensorrt"])
    opf = [f for f in a.findings if f.rule == "opset"]
    assert [f.target for f in opf] == ["ascend-310p"] and opf[0].verdict == "unsupported"
    assert a.targets["ascend-310p"].verdict == "fail" and a.targets["tensorrt"].verdict == "pass"


def test_user_profile_op_above_its_range(tmp_path: Path) -> None:
    d = tmp_path / "profiles"
    d.mkdir()
    (d / "mynpu.yaml").write_text("id: mynpu\nname: My NPU\nsource: s\ndate_read: '2026-01-01'\n"
                                  "supported: {ai.onnx: [Relu]}\nopsets: {Relu: [6, 13]}\n")
    r14 = inspect_model(save(single_op_model("Relu", opset=14), tmp_path / "r14.onnx"), ["mynpu"], profile_dirs=[d])
    assert r14.node_verdicts["mynpu"]["the_Relu"] == "unsupported"
    assert "up to opset 13" in r14.findings[0].message
    r13 = inspect_model(save(single_op_model("Relu", opset=13), tmp_path / "r13.onnx"), ["mynpu"], profile_dirs=[d])
    assert r13.targets["mynpu"].verdict == "pass"


def _onehot(depth_const: bool) -> object:
    inits = [numpy_helper.from_array(np.array([0.0, 1.0], dtype=np.float32), "values")]
    nodes = []
    if depth_const:
        inits.append(numpy_helper.from_array(np.array(5, dtype=np.int64), "depth"))
    else:
        nodes.append(h.make_node("ReduceMax", ["d_in"], ["depth"], name="depth_from_data", keepdims=0))
    nodes.append(h.make_node("OneHot", ["idx", "depth", "values"], ["y"], name="onehot"))
    ins = [vi("idx", T.INT64, [1, 3])] + ([] if depth_const else [vi("d_in", T.INT64, [4])])
    return make(nodes, ins, [vi("y", T.FLOAT, None)], inits)


def test_constant_input_constraint(tmp_path: Path) -> None:
    ok = inspect_model(save(_onehot(True), tmp_path / "oh_const.onnx"), ["qnn-htp"])
    assert ok.node_verdicts["qnn-htp"]["onehot"] == "supported"
    bad = inspect_model(save(_onehot(False), tmp_path / "oh_data.onnx"), ["qnn-htp"])
    assert bad.node_verdicts["qnn-htp"]["onehot"] == "unsupported"
    f = next(f for f in bad.findings if f.node == "onehot")
    assert f.rule == "constraint-const-input" and f.tensor == "depth" and "constant" in f.message


def test_attribute_and_batch_constraints(tmp_path: Path) -> None:
    k = numpy_helper.from_array(np.array([2], dtype=np.int64), "k")
    for sorted_, expect in ((1, "supported"), (0, "unsupported")):
        m = make([h.make_node("TopK", ["x", "k"], ["v", "i"], name="topk", sorted=sorted_)],
                 [vi("x", T.FLOAT, [1, 8])], [vi("v", T.FLOAT, None), vi("i", T.INT64, None)], [k])
        rep = inspect_model(save(m, tmp_path / f"topk{sorted_}.onnx"), ["tensorrt"])
        assert rep.node_verdicts["tensorrt"]["topk"] == expect
    for b, expect in ((1, "supported"), (2, "unsupported"), ("batch", "risky")):
        # Tile keeps its batch-1 rule after the profile's re-check with rknn-toolkit2 2.5.0 (Softmax lost it)
        m = single_op_model("Tile", shape=[b, 4])
        assert inspect_model(save(m, tmp_path / f"tile{b}.onnx"), ["rk3588"]).node_verdicts["rk3588"]["the_Tile"] \
            == expect
    roi = numpy_helper.from_array(np.zeros(0, dtype=np.float32), "roi")
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], dtype=np.float32), "scales")
    for mode, expect in (("nearest", "supported"), ("cubic", "unsupported")):
        m = make([h.make_node("Resize", ["x", "roi", "scales"], ["y"], name="resize", mode=mode)],
                 [vi("x", T.FLOAT, [1, 3, 4, 4])], [vi("y", T.FLOAT, None)], [roi, scales])
        assert inspect_model(save(m, tmp_path / f"rs_{mode}.onnx"), ["rk3588"]).node_verdicts["rk3588"]["resize"] \
            == expect


def test_data_dependent_op_downgraded_on_static_only_targets(tmp_path: Path) -> None:
    rep = inspect_model(save(nonzero_model(), tmp_path / "nz.onnx"), ["qnn-htp", "tensorrt", "ascend-310p"])
    assert rep.node_verdicts["qnn-htp"]["nonzero"] == "unsupported"
    assert rep.node_verdicts["tensorrt"]["nonzero"] == "supported"
    assert rep.node_verdicts["ascend-310p"]["nonzero"] == "risky"


def test_every_builtin_target_runs_on_one_model(tmp_path: Path) -> None:
    rep = inspect_model(save(nonzero_model(), tmp_path / "nz.onnx"), ["all"])
    assert list(rep.targets) == [p.id for p in list_targets()]
    for t in rep.targets.values():
        assert t.verdict in ("pass", "risky", "fail", "unknown")
        assert sum(t.counts.values()) == 3
