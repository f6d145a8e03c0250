"""Test inference offers the workspace's sample image / audio when the current model takes one (real Qt
offscreen, real ONNX files and HF config folders; empty fields only, a typed path is the user's)."""

from __future__ import annotations

import json
import wave
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from PIL import Image

from studio.core.workspace import Workspace
from studio.gui.pages.devices_page import DevicesPage

pytestmark = pytest.mark.gui


def _onnx(path: Path, input_name: str, shape: list[int]) -> Path:
    """A one-node model whose only input is ``input_name`` (what decides the modality)."""
    graph = helper.make_graph([helper.make_node("Identity", [input_name], ["out"])], "m",
                              [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, shape)])
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def _hf(folder: Path, model_type: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": model_type}))
    return folder


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = Workspace.create(tmp_path / "ws", name="samples")
    samples = ws.root / "samples"
    samples.mkdir()
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (16, 16, 3), dtype=np.uint8)).save(samples / "cat.png")
    with wave.open(str(samples / "speech.wav"), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes((np.sin(np.arange(1600) / 5) * 8000).astype("<i2").tobytes())
    (samples / "notes.txt").write_text("not a sample")
    return ws


def test_the_models_inputs_choose_the_workspace_samples(qtbot, ws: Workspace, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    page = DevicesPage()
    qtbot.addWidget(page)
    page.set_context(ws, None, None)
    image, audio = page.infer_image.edit, page.infer_audio.edit
    assert image.text() == "" and audio.text() == ""  # no model yet: nothing to offer it to

    text_only = page.state.add_model(_onnx(ws.models_dir / "bert" / "model.onnx", "input_ids", [1, 8]), name="bert")
    assert page.state.model_name == text_only.name
    assert image.text() == "" and audio.text() == ""  # samples exist, but this model takes neither

    page.state.add_model(_onnx(ws.models_dir / "vit" / "model.onnx", "pixel_values", [1, 3, 8, 8]), name="vit")
    assert image.text() == str(ws.root / "samples" / "cat.png")
    assert audio.text() == ""

    page.state.add_model(_hf(ws.models_dir / "tiny-whisper", "whisper"), name="tiny-whisper", kind="hf")
    assert audio.text() == str(ws.root / "samples" / "speech.wav")
    assert image.text() == ""  # the sample the form filled goes when the model no longer takes an image

    page.state.add_model(_hf(ws.models_dir / "tiny-clip", "clip"), name="tiny-clip", kind="hf")
    assert image.text() == str(ws.root / "samples" / "cat.png") and audio.text() == ""

    # a path the user typed is theirs: a later model change does not touch it
    mine = str(tmp_path / "mine.png")
    image.setText(mine)
    page.state.set_model("tiny-whisper")
    page.state.set_model("vit")
    assert image.text() == mine

    # the model's own recorded sample wins over the samples folder (filled once the field is empty again)
    own = tmp_path / "vit-sample.jpg"
    Image.new("RGB", (8, 8), "red").save(own)
    image.setText("")
    page.state.record_artifact("sample_image", own, "vit")
    assert image.text() == str(own)
    page.jobs.shutdown()


def test_no_samples_folder_leaves_the_fields_empty(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws = Workspace.create(tmp_path / "bare")
    page = DevicesPage()
    qtbot.addWidget(page)
    page.set_context(ws, None, None)
    page.state.add_model(_onnx(ws.models_dir / "vit" / "model.onnx", "pixel_values", [1, 3, 8, 8]), name="vit")
    assert page.infer_image.edit.text() == "" and page.infer_audio.edit.text() == ""
    page.jobs.shutdown()
