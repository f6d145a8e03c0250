"""One current target and one current model, owned by the workspace state: chosen once (on any page or the
toolbar) and seen on every page; each page's defaults come from it (real Qt offscreen, the real pages)."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.core.workspace import Workspace
from tests.edge.helpers import make_mlp
from tests.gui.gui_helpers import main_window

pytestmark = [pytest.mark.gui, pytest.mark.timeout(240)]


@pytest.fixture
def window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    ws = Workspace.create(tmp_path / "ws", name="one-target")
    for name in ("tiny-clip", "tiny-whisper"):  # two HF sources and an export of the second
        d = tmp_path / "ws" / "models" / name
        d.mkdir(parents=True)
        (d / "config.json").write_text('{"model_type": "clip"}')
        ws.add_model(d, name=name, kind="hf", source=f"sample:{name}", make_current=False)
    onnx = make_mlp(tmp_path / "ws" / "models" / "tiny-whisper-onnx" / "model.onnx")
    ws.add_model(onnx, name="tiny-whisper-onnx", kind="onnx", source="export of tiny-whisper")
    w = main_window(qtbot, ws, None, 1366, 768)
    yield w
    w.close()


def test_a_target_chosen_on_inspect_is_every_pages_target(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    inspect, compile_, package = window.page("inspect"), window.page("compile"), window.page("package")
    assert window.target_combo.currentData() == "ort-cpu" and inspect.current_target == "ort-cpu"
    window.go_to_page("inspect")
    inspect.chips["rk3588"].click()
    # the toolbar, the workspace and every page follow
    assert window.target_combo.currentData() == "rk3588"
    assert window.state.target == "rk3588" == Workspace.open(window.workspace.root).current_target
    assert inspect.current_target == "rk3588" and inspect.chips["rk3588"].isChecked()
    npu = next((b for b in compile_.backends.values() if "rk3588" in b.targets), None)
    assert compile_.backend_combo.currentData() == (npu.id if npu else "tvm")
    assert compile_.target_combo.currentData() == "rk3588"
    assert package.board_combo.currentData() == "rk3588"  # the board whose accelerator is the target
    diff = window.page("diff")
    assert diff.target_combo.currentData() == "rk3588"  # Diff's verdicts are for the same target
    # the toolbar's choice reaches the inspector (it once kept its own)
    window.select_target("openvino")
    assert inspect.current_target == "openvino" and window.state.target == "openvino"
    # a user's own board pick on Package stays when the target changes again
    package.board_combo.setCurrentIndex(package.board_combo.findData("rpi5"))
    window.select_target("rk3588")
    assert package.board_combo.currentData() == "rpi5"
    assert compile_.target_combo.currentData() == "rk3588"
    # a target picked on Diff is everyone's; "(structure only)" is Diff's own way to compare, not a target
    diff.target_combo.activated.emit(diff.target_combo.findData("tvm-relax"))
    diff.target_combo.setCurrentIndex(diff.target_combo.findData("tvm-relax"))
    assert window.state.target == "tvm-relax" and inspect.current_target == "tvm-relax"
    diff.target_combo.setCurrentIndex(0)
    diff.target_combo.activated.emit(0)
    window.select_target("rk3588")
    assert window.state.target == "rk3588" and diff.target_combo.currentData() is None


def test_ort_cpu_packages_for_this_hosts_generic_board(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    from studio.package.boards import detect_board

    window.select_target("tensorrt")
    assert window.page("package").board_combo.currentData() == "jetson-orin-nano"
    window.select_target("ort-cpu")
    assert window.page("package").board_combo.currentData() == detect_board()


def test_new_export_starts_from_the_current_models_source(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """The toolbar shows tiny-whisper's export: the wizard's source is tiny-whisper, not the first sample."""
    assert window.model_combo.currentData() == "tiny-whisper-onnx"
    export = window.page("export")
    assert export.source.rb_workspace.isChecked() and export.source.ws_combo.currentData() == "tiny-whisper"
    window.select_model("tiny-clip")
    assert export.source.ws_combo.currentData() == "tiny-clip"
    assert window.workspace.origin("tiny-whisper-onnx").name == "tiny-whisper"


def test_a_file_opened_on_inspect_stays_when_the_target_changes(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The workspace's current model is an ONNX export; a file opened from disk (File > Open, `studio gui A.onnx`)
    is what the Inspector shows until the current model changes, whatever target is picked."""
    inspect = window.page("inspect")
    other = make_mlp(tmp_path / "elsewhere" / "a.onnx")
    window.open_page("inspect", str(other))
    qtbot.waitUntil(lambda: inspect.report is not None and inspect.model_path == other, timeout=60_000)
    window.select_target("rk3588")
    window.go_to_page("inspect")
    assert inspect.model_path == other
    window.select_model("tiny-clip")  # an HF model: nothing for the inspector to follow
    window.select_model("tiny-whisper-onnx")  # the current model changed: the inspector follows it
    qtbot.waitUntil(lambda: inspect.model_path is not None and inspect.model_path.name == "model.onnx",
                    timeout=60_000)


def test_a_target_no_board_carries_preselects_no_board(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """tvm-relax (or qnn-htp) names no board: Package asks for one instead of showing the first alphabetically
    (atlas-310p read as a choice), drops the last target's board it picked itself, and Build says what is missing."""
    package = window.page("package")
    window.select_target("tvm-relax")
    assert package.board_combo.currentData() is None and "tvm-relax" in package.board_info.text()
    window.select_target("rk3588")
    assert package.board_combo.currentData() == "rk3588"
    window.select_target("qnn-htp")
    assert package.board_combo.currentData() is None
    package.source_edit.setText(str(window.workspace.root))
    package.key_combo.addItem("k", "k")
    package.build()
    assert "board" in package.error.text()
    assert not [h for h in package.jobs.handles.values() if h.kind == "package"]
