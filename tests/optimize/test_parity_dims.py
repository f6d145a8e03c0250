"""Fix parity feeds a waveform model a clip its processor would make, not a 2-sample one shorter than its kernel."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from studio.optimize.api import fix_model, render_fix_text
from studio.optimize.parity_dims import processor_dims

KERNEL = 10


def _conv_frontend(folder: Path, *, processor: bool = True) -> Path:
    """``input_values [batch, samples]`` -> Unsqueeze -> Conv1d (kernel 10, stride 5) -> ReduceMean: the front of
    wav2vec2 / WavLM, with a wav2vec2 feature extractor's settings beside it (as an export copies them)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 1, KERNEL)).astype(np.float32), "w")
    axes = numpy_helper.from_array(np.array([1], dtype=np.int64), "axes")
    nodes = [helper.make_node("Unsqueeze", ["input_values", "axes"], ["x3"]),
             helper.make_node("Conv", ["x3", "w"], ["conv"], kernel_shape=[KERNEL], strides=[5]),
             helper.make_node("ReduceMean", ["conv"], ["out"], axes=[2], keepdims=0)]
    graph = helper.make_graph(
        nodes, "frontend",
        [helper.make_tensor_value_info("input_values", TensorProto.FLOAT, ["batch", "samples"])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", 4])], [w, axes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = folder / "model.onnx"
    onnx.save(model, str(path))
    if processor:
        (folder / "preprocessor_config.json").write_text(json.dumps({
            "feature_extractor_type": "Wav2Vec2FeatureExtractor", "sampling_rate": 16000, "feature_size": 1,
            "do_normalize": True, "padding_value": 0.0, "padding_side": "right", "return_attention_mask": False}))
    return path


def test_the_processor_sizes_the_clip(tmp_path: Path) -> None:
    derived = processor_dims(_conv_frontend(tmp_path / "m"))
    assert derived.dims == {"samples": 16000}  # the studio's 1 s sample clip at the extractor's 16 kHz
    assert "batch" not in derived.dims and "processor files" in derived.source and "input_values" in derived.source


def test_fp16_fix_of_a_waveform_model_checks_parity_on_a_real_clip(tmp_path: Path) -> None:
    src = _conv_frontend(tmp_path / "m")
    rep = fix_model(src, tmp_path / "out" / "model.onnx", fp16=True, targets=["ort-cpu"])
    parity = rep.files[0].parity
    assert parity is not None and parity.passed, parity
    assert parity.dims == {"samples": 16000}
    text = render_fix_text(rep)
    assert "parity inputs: samples=16000 from the processor files" in text


def test_static_wins_and_no_processor_is_said(tmp_path: Path) -> None:
    src = _conv_frontend(tmp_path / "m")
    rep = fix_model(src, tmp_path / "out" / "model.onnx", fp16=True, static={"samples": 400}, targets=["ort-cpu"])
    parity = rep.files[0].parity
    assert parity is not None and parity.passed and parity.dims["samples"] == 400
    assert parity.dims_source.startswith("samples=400 from --static")
    bare = _conv_frontend(tmp_path / "bare", processor=False)
    assert processor_dims(bare).dims == {}
    rep = fix_model(bare, tmp_path / "out2" / "model.onnx", simplify=True, targets=["ort-cpu"])
    assert "parity's default size" in rep.files[0].parity.dims_source
