"""The studio-openvino plugin against the real OpenVINO (skipped with the reason when it is not installed)."""

from __future__ import annotations

from pathlib import Path

import pytest
import verify_models as vm

pytest.importorskip("openvino", reason="openvino not installed (pip install -e plugins/studio-openvino)")
ov_verifier = pytest.importorskip("studio_openvino.verifier",
                                  reason="studio-openvino plugin not installed (pip install -e plugins/studio-openvino)")

from studio.inspect.api import inspect_model  # noqa: E402
from studio.verify.compare import compare  # noqa: E402


def test_unconvertible_op_gets_openvinos_verdict_on_its_node(tmp_path: Path) -> None:
    res = ov_verifier.verifier().verify(vm.save(vm.custom_op_model(), tmp_path / "m.onnx"))
    v = {n.node: n for n in res.nodes}
    assert res.ran and res.tool.startswith("openvino 2026") and "OpConversionFailure" in res.error
    assert v["foo"].verdict == "unsupported" and "no conversion rule for Foo" in v["foo"].message
    # the rest converted partially and was queried on the CPU
    assert v["relu"].verdict == "supported" and v["relu"].placement == "cpu"
    assert v["neg"].verdict == "supported"
    assert any("NPU" in n and "published list" in n for n in res.notes)


def test_conversion_failure_names_the_node_and_the_profile_agrees(tmp_path: Path) -> None:
    p = vm.save(vm.float_mod_model(), tmp_path / "m.onnx")
    res = ov_verifier.verifier().verify(p)
    v = {n.node: n for n in res.nodes}
    assert v["mod"].verdict == "unsupported" and "conversion failed" in v["mod"].message
    assert v["relu"].verdict == "supported"
    c = compare(inspect_model(p, ["openvino"]), res)
    assert c.tool_fails and not c.static_fails  # Mod is in the published list: the tool knows better
    assert [(d.node, d.tool_verdict) for d in c.disagreements] == [("mod", "unsupported")]


def test_clean_model_runs_on_cpu(tmp_path: Path) -> None:
    res = ov_verifier.verifier().verify(vm.save(vm.relu_model(), tmp_path / "m.onnx"))
    assert not res.error and [(n.node, n.verdict, n.placement) for n in res.nodes] == [("relu", "supported", "cpu")]


def test_registered_as_a_plugin() -> None:
    from studio.verify.registry import verifiers_for

    [e] = verifiers_for("openvino")
    assert e.name == "openvino-cpu" and e.plugin == "studio-openvino" and e.ok and e.reason.startswith("openvino")
