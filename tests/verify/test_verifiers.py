"""Each verifier against its real tool on small onnx.helper models: the node the tool refuses, in its words."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import verify_models as vm

from studio.inspect.api import inspect_model
from studio.verify.api import VerifyResult
from studio.verify.compare import compare
from studio.verify.ort_cpu import OrtVerifier
from studio.verify.tvm_relax import TvmRelaxVerifier

HAS_TVM = importlib.util.find_spec("tvm") is not None
needs_tvm = pytest.mark.skipif(not HAS_TVM, reason="apache-tvm not installed (pip install 'deployment-studio[compile]')")


def _verdicts(res: VerifyResult) -> dict[str, str]:
    return {n.node: n.verdict for n in res.nodes}


def test_ort_clean_model_is_supported_everywhere(tmp_path: Path) -> None:
    res = OrtVerifier().verify(vm.save(vm.relu_model(), tmp_path / "m.onnx"))
    assert res.ran and not res.error and _verdicts(res) == {"relu": "supported"}
    assert res.tool.startswith("onnxruntime ") and "CPUExecutionProvider" in res.tool
    assert VerifyResult.from_dict(res.to_dict()) == res  # plain data: travels as JSON


def test_ort_custom_domain_op_is_refused_on_its_node(tmp_path: Path) -> None:
    res = OrtVerifier().verify(vm.save(vm.custom_op_model(), tmp_path / "m.onnx"))
    v = _verdicts(res)
    assert v["foo"] == "unsupported" and v["relu"] == "supported"
    assert "custom.x:Foo" in res.by_node()["foo"].message and "not a registered function/op" in res.error
    assert v["neg"] in ("supported", "unknown")  # its input's type comes from the unknown op


def test_ort_unimplemented_versioned_kernel(tmp_path: Path) -> None:
    """RoiAlign-22: the kernel registry lists RoiAlign-16 open-ended, ORT's lookup does not stretch it."""
    p = vm.save(vm.roialign_22_model(), tmp_path / "m.onnx")
    res = OrtVerifier().verify(p)
    assert _verdicts(res) == {"relu": "supported", "roi": "unsupported"}
    assert "Could not find an implementation for RoiAlign(22)" in res.by_node()["roi"].message
    rep = inspect_model(p, ["ort-cpu"])  # the computed profile now says so too
    assert rep.node_verdicts["ort-cpu"]["roi"] == "unsupported"
    assert compare(rep, res).agrees and not compare(rep, res).disagreements


def test_ort_disagreement_the_tool_wins(tmp_path: Path) -> None:
    """Range on bfloat16 has no kernel, but ORT runs its function body: the profile is wrong, and says where from."""
    p = vm.save(vm.range_bf16_model(), tmp_path / "m.onnx")
    res = OrtVerifier().verify(p)
    rep = inspect_model(p, ["ort-cpu"])
    c = compare(rep, res)
    assert not c.agrees and c.static_fails and not c.tool_fails
    d = c.disagreements[0]
    assert (d.node, d.static_verdict, d.tool_verdict) == ("range", "unsupported", "supported")
    assert "get_all_opkernel_def" in c.profile_source and c.tool.startswith("onnxruntime")


@needs_tvm
def test_tvm_runtime_k_is_refused_on_its_node(tmp_path: Path) -> None:
    p = vm.save(vm.runtime_k_topk_model(), tmp_path / "m.onnx")
    res = TvmRelaxVerifier().verify(p)
    assert res.ran and res.tool.startswith("apache-tvm ")
    assert _verdicts(res) == {"topk": "unsupported"}
    assert "TopK k must be a constant" in res.by_node()["topk"].message
    assert inspect_model(p, ["tvm-relax"]).node_verdicts["tvm-relax"]["topk"] == "unsupported"


@needs_tvm
def test_tvm_custom_op_and_constant_inputs_checked_alone(tmp_path: Path) -> None:
    res = TvmRelaxVerifier().verify(vm.save(vm.custom_op_model(), tmp_path / "m.onnx"))
    assert _verdicts(res)["foo"] == "unsupported" and _verdicts(res)["relu"] == "supported"
    assert "not supported for frontend ONNX: Foo" in res.error
    ok = TvmRelaxVerifier().verify(vm.save(vm.const_axes_model(), tmp_path / "c.onnx"))
    assert not ok.error and set(_verdicts(ok).values()) == {"supported"}


def test_one_node_models_keep_constant_node_inputs_constant() -> None:
    from studio.verify.single_node import iter_node_models

    nm = {n.key: n for n in iter_node_models(vm.const_axes_model())}["sum"]
    assert nm.model is not None and [t.name for t in nm.model.graph.initializer] == ["axes"]
    assert [i.name for i in nm.model.graph.input] == ["x"]


def test_tvm_missing_is_unavailable_with_the_hint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "tvm" else real(name, *a))
    ok, why = TvmRelaxVerifier().available()
    assert not ok and "apache-tvm is not installed" in why and "pip install" in why
    res = TvmRelaxVerifier().verify(vm.save(vm.relu_model(), tmp_path / "m.onnx"))
    assert not res.ran and "not installed" in res.error
