"""A tool's answer as a whole-model verdict (studio.verify.model_level), its comparison with the profile's, the
per-node merged view, what folding learns from host placement, and a verifier that crashes or needs input."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import onnx.helper as h
import pytest
import verify_models as vm
from onnx import TensorProto as T

from studio.core.errors import InputError
from studio.inspect.api import inspect_model, load_structure
from studio.verify.api import NodeCheck, VerifyResult
from studio.verify.compare import compare
from studio.verify.fold import plan
from studio.verify.model_level import verified_verdict
from studio.verify.registry import VerifierEntry
from studio.verify.render import text
from studio.verify.run import verify_report


def _chain(tmp_path: Path) -> Path:
    """x -> MatMul -> ArgMax (int64) -> Cast -> Add: a host island in the middle of device work."""
    import numpy as np
    from onnx import numpy_helper as nh

    w = nh.from_array(np.ones((4, 4), np.float32), "w")
    nodes = [h.make_node("MatMul", ["x", "w"], ["a"], name="mm"),
             h.make_node("ArgMax", ["a"], ["i"], name="argmax", axis=1, keepdims=1),
             h.make_node("Cast", ["i"], ["f"], name="cast", to=T.FLOAT),
             h.make_node("Add", ["a", "f"], ["y"], name="add")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [2, 4])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 4])], [w])
    return vm.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), tmp_path / "chain.onnx")


def _result(**kw: object) -> VerifyResult:
    base = dict(verifier="rknn-rk3588", target="rk3588", tool="rknn-toolkit2 2.5.0", ran=True)
    return VerifyResult(**{**base, **kw})  # type: ignore[arg-type]


def _nodes(host: set[str]) -> list[NodeCheck]:
    return [NodeCheck(n, op, "risky" if n in host else "supported", "cpu" if n in host else "accelerator",
                      f"{n} placed") for n, op in (("mm", "MatMul"), ("argmax", "ArgMax"), ("cast", "Cast"),
                                                   ("add", "Add"))]


def test_a_tools_answer_in_the_shared_vocabulary(tmp_path: Path) -> None:
    lm = load_structure(_chain(tmp_path))
    mv = verified_verdict(_result(nodes=_nodes({"argmax", "cast"})), lm)
    assert mv.verdict == "host-fallback" and mv.source == "verified" and mv.by == "rknn-toolkit2 2.5.0"
    assert [x.node for x in mv.host_nodes] == ["argmax", "cast"]
    assert mv.cost is not None and mv.cost.transfers == 2  # the matmul's output goes out, the cast's comes back
    assert mv.cost.transfer_bytes == 2 * 4 * 4 + 2 * 1 * 4 and 0 < mv.cost.host_flops_share < 1
    assert verified_verdict(_result(nodes=_nodes(set()))).verdict == "runs"
    refused = verified_verdict(_result(error="build: The input 1 of Tile need to be constant!"))
    assert refused.verdict == "does-not-build" and refused.blockers[0].rule == "tool-error"
    crashed = verified_verdict(_result(error="build: TypeError: x", crash="Traceback ...\nTypeError: x"))
    assert crashed.verdict == "tool-crashed" and crashed.builds is None and "TypeError: x" in crashed.summary()


def test_comparison_model_level_placement_and_crash(tmp_path: Path) -> None:
    model = _chain(tmp_path)
    rep = inspect_model(model, ["rk3588"])
    static = rep.targets["rk3588"].model
    assert static is not None and {x.node for x in static.host_nodes} == {"argmax", "cast"}
    c = compare(rep, _result(nodes=_nodes({"argmax"})), load_structure(model))
    assert c.model_agrees is True  # both: host-fallback
    [d] = c.placement_disagreements
    assert (d.node, d.static_verdict, d.tool_verdict) == ("cast", "host", "accelerator")
    crash = compare(rep, _result(error="build: TypeError: x", crash="trace"))
    assert crash.tool_crashed and crash.model_agrees is None and crash.agrees and not crash.tool_fails


def test_fold_learns_host_placement() -> None:
    comp = {"disagreements": [], "placement_disagreements": [
        {"node": "g", "op_type": "GatherND", "domain": "ai.onnx", "static_verdict": "device", "static_reason": "",
         "tool_verdict": "host", "tool_message": "placed GatherND on the CPU"},
        {"node": "e", "op_type": "Expand", "domain": "ai.onnx", "static_verdict": "host",
         "static_reason": "runs on the host: computes bool values: ...", "tool_verdict": "accelerator",
         "tool_message": ""},
        {"node": "t", "op_type": "Gather", "domain": "ai.onnx", "static_verdict": "host",
         "static_reason": "runs on the host: Gather by an index computed at run time: ...",
         "tool_verdict": "accelerator", "tool_message": ""}]}
    res = {"nodes": [{"node": "g", "op_type": "GatherND", "domain": "ai.onnx", "verdict": "risky", "placement": "cpu",
                      "message": "m"},
                     {"node": "e", "op_type": "Expand", "domain": "ai.onnx", "verdict": "supported",
                      "placement": "accelerator", "message": ""},
                     {"node": "t", "op_type": "Gather", "domain": "ai.onnx", "verdict": "supported",
                      "placement": "accelerator", "message": ""}]}
    p = plan(comp, res)
    assert p[("ai.onnx", "GatherND")][0] == "cpu" and p[("ai.onnx", "Expand")][0] == "moves_data"
    assert p[("ai.onnx", "Gather")][0] == "device_index"


@dataclass
class _Fake:
    """A verifier whose tool raises, or that needs static shapes it was not given."""

    name: str = "fake-rk"
    target: str = "rk3588"
    needs: bool = False

    def available(self) -> tuple[bool, str]:
        return True, "faketool 1.0"

    def check_inputs(self, model: Path, shapes: dict[str, list[int]] | None = None) -> None:
        if self.needs and not shapes:
            raise InputError("faketool builds at static input shapes", offending="x")

    def verify(self, model: Path, shapes: dict[str, list[int]] | None = None) -> VerifyResult:
        raise RuntimeError("segfault-ish inside the vendor SDK")


def test_a_verifier_that_raises_is_the_tools_crash_and_the_static_verdict_holds(tmp_path: Path) -> None:
    model = _chain(tmp_path)
    rep = inspect_model(model, ["rk3588", "tensorrt"])
    entry = VerifierEntry("fake-rk", "fake", "rk3588", True, "faketool 1.0", _Fake())
    v = verify_report(rep, model, entries=[entry])
    [res] = v.results
    assert res.crash and "RuntimeError: segfault-ish" in res.crash and res.tool == "faketool 1.0"
    held = rep.verification["targets"]["rk3588"]
    assert held["holds"] == "static" and held["verified"]["verdict"] == "tool-crashed"
    assert held["nodes"]["argmax"] == {"verdict": "risky", "placement": "host", "source": "static",
                                       "by": held["static"]["by"]}
    assert rep.verification["targets"]["tensorrt"]["note"].startswith("no verifier")
    out = text(rep)
    assert "fake-rk (faketool 1.0) CRASHED: a fault of the tool, not a verdict on the model" in out
    assert "static verdict kept: runs, with 2 node(s) on the host" in out


def test_input_needs_are_checked_before_any_tool_runs(tmp_path: Path) -> None:
    model = _chain(tmp_path)
    rep = inspect_model(model, ["rk3588"])
    entry = VerifierEntry("fake-rk", "fake", "rk3588", True, "faketool 1.0", _Fake(needs=True))
    with pytest.raises(InputError, match="static input shapes"):
        verify_report(rep, model, entries=[entry])
    assert not rep.verification  # nothing attached, nothing half-done
