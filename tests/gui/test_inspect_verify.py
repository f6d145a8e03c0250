"""Inspect page, "Verify with the real toolchain" (real Qt offscreen, real ONNX Runtime): the Verify tab lists each
tool with its version beside the profile's source, the node where they disagree (a click selects it in the graph),
an unavailable verifier with its reason, and folding a tool's answer into a workspace profile re-inspects."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import yaml

from studio.core.workspace import Workspace
from studio.gui.pages.inspect_page import InspectPage
from studio.verify import registry
from studio.verify.registry import VerifierEntry
from tests.gui.gui_helpers import shown

pytestmark = pytest.mark.gui

_spec = importlib.util.spec_from_file_location("verify_models", Path(__file__).parents[1] / "verify" /
                                               "verify_models.py")
assert _spec is not None and _spec.loader is not None
vm: Any = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(vm)


@pytest.fixture
def page(qtbot):  # type: ignore[no-untyped-def]
    p = shown(qtbot, InspectPage(), 1500, 960)
    yield p
    p.jobs.shutdown()


def _drawn(page: InspectPage, node: str) -> str:
    """The verdict colour the graph paints ``node`` with."""
    from studio.gui.graph import palette

    return palette.VERDICTS[int(page.view.gscene.verdict_index[page.graph.index_of(node)])]


def _load(qtbot, page: InspectPage, path: Path) -> None:  # type: ignore[no-untyped-def]
    page.open_model(path)
    qtbot.waitUntil(lambda: page.report is not None and page.view.ready, timeout=60_000)


def _verify(qtbot, page: InspectPage) -> None:  # type: ignore[no-untyped-def]
    assert page.verifier.button.isEnabled()
    page.verifier.button.click()
    qtbot.waitUntil(lambda: page.verifier.report is not None and page.verifier.button.isEnabled(),
                    timeout=240_000)


def _with_missing_verifier(monkeypatch: pytest.MonkeyPatch) -> None:
    """Add a verifier whose tool is not installed, as a plugin on a machine without its SDK would be."""
    real = registry.all_verifiers

    def entries(refresh: bool = False) -> list[VerifierEntry]:
        return [*real(refresh), VerifierEntry(name="rknn-rk3588", plugin="studio-rknn", target="rk3588", ok=False,
                                              reason="missing rknn-toolkit2; pip install -e plugins/studio-rknn")]

    monkeypatch.setattr(registry, "all_verifiers", entries)


def test_verify_shows_tool_profile_and_disagreeing_node(qtbot, page: InspectPage, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch, artifacts_dir: Path) -> None:
    _with_missing_verifier(monkeypatch)
    model = vm.save(vm.range_bf16_model(), tmp_path / "range.onnx")
    _load(qtbot, page, model)
    assert page.report.node_verdicts["ort-cpu"]["range"] == "unsupported"  # the static profile's answer
    page.set_target("ort-cpu")
    chip = page.chips["ort-cpu"]
    assert "FAIL" in chip.text() and _drawn(page, "range") == "unsupported"
    assert page.findings_model.rowCount() >= 1 and "overridden" not in page.findings_label.text()
    # before it runs, the tab says which tools would answer (from the manifests, off the GUI thread)
    qtbot.waitUntil(lambda: page.side.verify_panel.status_label.text().startswith("Ready to verify"), timeout=30_000)
    assert "ort-cpu: onnxruntime " in page.side.verify_panel.status_label.text()
    _verify(qtbot, page)
    # the tool wins: the chip, the graph's colour and the findings follow its answer, each with its source
    assert chip.text().endswith("RUNS ✓") and "verified by onnxruntime" in chip.toolTip()
    assert "the profile" in chip.toolTip() and "does not build" in chip.toolTip()
    assert _drawn(page, "range") == "supported"
    rows = [page.findings_model.finding(r) for r in range(page.findings_model.rowCount())]
    over = [f for f in rows if page.findings_model.overridden.get(id(f))]
    assert over and all("onnxruntime" in page.findings_model.overridden[id(f)] for f in over)
    assert "overridden by the tool" in page.findings_label.text() and "(verified: onnxruntime" in \
        page.findings_label.text()
    panel = page.side.verify_panel
    assert page.side.currentWidget() is panel
    [c] = [c for c in page.verifier.report.verification["comparisons"] if c["target"] == "ort-cpu"]
    tops = [panel.tree.topLevelItem(i) for i in range(panel.tree.topLevelItemCount())]
    [ort] = [t for t in tops if t.text(0) == "ort-cpu · ort-cpu"]
    assert ort.text(2).startswith("onnxruntime ") and "accepts the model" in ort.text(2)  # tool + version
    assert ort.text(1) == "DISAGREES" and ort.text(3) == "fail"
    assert ort.child(0).text(2) == c["tool"] and "get_all_opkernel_def" in ort.child(0).text(3)  # both sources
    rows = [r for r in panel.node_rows() if r.parent() is ort]
    assert [r.text(0) for r in rows] == ["range (Range)"] and c["disagreements"][0]["node"] == "range"
    assert rows[0].text(2) == "supported" and rows[0].text(3).startswith("unsupported")
    sources = panel.sources_label.text()
    assert "rknn-rk3588</b> for rk3588: <i>unavailable</i>: missing rknn-toolkit2; pip install" in sources
    assert "ort-cpu</b> for ort-cpu: onnxruntime " in sources
    [trt] = [t for t in tops if t.text(0) == "tensorrt · no verifier"]  # no tool: the list and its source
    assert trt.text(1) == "list only" and trt.text(3) == page.report.targets["tensorrt"].name + ": " + \
        page.report.targets["tensorrt"].source
    # no workspace: nothing to fold into, and the button says so
    assert not panel.fold_button.isEnabled() and "open a workspace" in panel.fold_button.toolTip()
    assert "--fold-into-profile" in panel.fold_button.toolTip() and "--verify" in page.verifier.button.toolTip()

    # a node row selects that node in the graph, the Verify tab stays in front
    panel.tree.itemClicked.emit(rows[0], 0)
    assert page.selected_node == "range" and page.view.selected_name == "range"
    assert page.side.currentWidget() is panel
    page.grab().save(str(artifacts_dir / "inspect_verify.png"))


def test_fold_into_workspace_profile_rechecks(qtbot, page: InspectPage, tmp_path: Path) -> None:
    if not (importlib.util.find_spec("studio_openvino") and importlib.util.find_spec("openvino")):
        pytest.skip("folding needs a listed profile with a verifier: pip install -e plugins/studio-openvino "
                    "(ort-cpu is computed from the runtime and never folded)")
    ws = Workspace.create(tmp_path / "ws", name="verify")
    model = vm.save(vm.float_mod_model(), ws.root / "mod.onnx")
    page.set_context(ws, None, None)
    _load(qtbot, page, model)
    assert page.report.node_verdicts["openvino"]["mod"] != "unsupported"  # the published list takes Mod
    _verify(qtbot, page)
    panel = page.side.verify_panel
    assert panel.fold_target.findData("openvino") >= 0
    panel.fold_target.setCurrentIndex(panel.fold_target.findData("openvino"))
    assert panel.fold_button.isEnabled()
    old = page.report
    panel.fold_button.click()
    written = ws.targets_dir / "openvino.yaml"
    assert page.verifier.last_fold.path == written and written.is_file()
    assert str(written) in panel.fold_label.text() and "Mod (unsupported)" in panel.fold_label.text()
    assert "Mod" in yaml.safe_load(written.read_text())["unsupported"]["ai.onnx"]
    qtbot.waitUntil(lambda: page.report is not old, timeout=60_000)  # re-inspected with the workspace profile
    assert page.report.node_verdicts["openvino"]["mod"] == "unsupported"
    assert "FAIL" in page.chips["openvino"].text()


def test_static_shapes_prefilled_for_every_dynamic_input(qtbot, page: InspectPage, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Three inputs sharing dynamic dims (CLIP's ids, mask, pixels): all three are pre-filled, not the first."""
    import onnx
    from onnx import TensorProto, helper

    from studio.core.shapes import read_shapes

    ins = [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "sequence"]),
           helper.make_tensor_value_info("mask", TensorProto.INT64, ["batch", "sequence"]),
           helper.make_tensor_value_info("pixels", TensorProto.FLOAT, ["batch", 3, 8, 8])]
    nodes = [helper.make_node("Cast", ["ids"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["mask"], ["g"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["f", "g"], ["y"]),
             helper.make_node("ReduceMean", ["pixels"], ["z"], keepdims=0)]
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "sequence"]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, [])]
    m = helper.make_model(helper.make_graph(nodes, "g", ins, outs), opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "three.onnx"
    onnx.save(m, path)
    _load(qtbot, page, path)
    shapes = read_shapes(page.verifier.panel.shapes_edit.text(), field="Static shapes").shapes
    assert set(shapes) == {"ids", "mask", "pixels"}, shapes
    assert shapes["ids"] == shapes["mask"] and shapes["pixels"][1:] == [3, 8, 8] and shapes["pixels"][0] == 1


def test_a_verifier_that_crashes_is_shown_and_changes_no_verdict(qtbot, page: InspectPage, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The tool's driver raises: its error is in the Verify tab as the tool's, the profile's verdicts stay."""
    class Crashing:
        name, target = "crashy-ort", "ort-cpu"

        def available(self) -> tuple[bool, str]:
            return True, "crashy 0.1"

        def verify(self, model: Path, shapes: Any = None) -> Any:
            raise RuntimeError("segfault in the vendor's converter (simulated driver crash)")

    monkeypatch.setattr(registry, "all_verifiers", lambda refresh=False: [
        VerifierEntry(name="crashy-ort", plugin="test", target="ort-cpu", ok=True, reason="crashy 0.1",
                      verifier=Crashing())])
    model = vm.save(vm.range_bf16_model(), tmp_path / "range.onnx")
    _load(qtbot, page, model)
    page.set_target("ort-cpu")
    before = page.chips["ort-cpu"].text()
    _verify(qtbot, page)
    assert page.chips["ort-cpu"].text() == before and "FAIL" in before
    assert _drawn(page, "range") == "unsupported"
    tree = page.side.verify_panel.tree
    texts = [tree.topLevelItem(i).text(2) + tree.topLevelItem(i).toolTip(2) for i in range(tree.topLevelItemCount())]
    assert any("segfault in the vendor's converter" in t for t in texts), texts
    assert "overridden" not in page.findings_label.text()
