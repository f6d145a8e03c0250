"""Fix parity feeds a waveform model a clip its processor would make, not a 2-sample one shorter than its kernel."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from studio.optimize.api import fix_model
from studio.optimize.parity_dims import processor_dims
from studio.optimize.render import render_fix_text

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


QWEN_PATCHES = {"image_processor_type": "Qwen2VLImageProcessor", "do_convert_rgb": True, "do_normalize": True,
                "do_rescale": True, "do_resize": True, "image_mean": [0.48145466, 0.4578275, 0.40821073],
                "image_std": [0.26862954, 0.26130258, 0.27577711], "merge_size": 2, "patch_size": 4, "resample": 3,
                "rescale_factor": 1 / 255, "size": {"longest_edge": 1024, "shortest_edge": 256},
                "temporal_patch_size": 2}
PATCH_DIM = 3 * 2 * 4 * 4  # channels x temporal x patch x patch


def _patch_vision(folder: Path) -> Path:
    """A Qwen2-VL-style vision part: ``pixel_values [patches, 96]`` and ``image_grid_thw [images, 3]``; the graph
    reshapes the patches to ``[sum(t*h*w), 96]``, so it only runs when the grid and the patch count agree (as the
    real tower's rotary and window code does), with the patching processor's settings beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array(rng.standard_normal((PATCH_DIM, 8)).astype(np.float32), "w")
    consts = [numpy_helper.from_array(np.array(v, dtype=np.int64), n)
              for n, v in (("axis1", [1]), ("axis0", [0]), ("dim", [PATCH_DIM]))]
    nodes = [helper.make_node("ReduceProd", ["image_grid_thw", "axis1"], ["per_image"], keepdims=0),
             helper.make_node("ReduceSum", ["per_image", "axis0"], ["total"], keepdims=1),
             helper.make_node("Concat", ["total", "dim"], ["shape"], axis=0),
             helper.make_node("Reshape", ["pixel_values", "shape"], ["patches"]),
             helper.make_node("MatMul", ["patches", "w"], ["image_embeds"])]
    graph = helper.make_graph(
        nodes, "vision",
        [helper.make_tensor_value_info("pixel_values", TensorProto.FLOAT, ["patches", PATCH_DIM]),
         helper.make_tensor_value_info("image_grid_thw", TensorProto.INT64, ["images", 3])],
        [helper.make_tensor_value_info("image_embeds", TensorProto.FLOAT, ["patches", 8])], [w, *consts])
    path = folder / "vision.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), str(path))
    (folder / "preprocessor_config.json").write_text(json.dumps(QWEN_PATCHES))
    return path


def test_a_patching_processors_grid_is_fed_as_the_processor_made_it(tmp_path: Path) -> None:
    """A Qwen2-VL vision part: a random grid (ids up to 1000) never matches the patch count, so every fp16 / int8
    fix of the seed's flagship failed parity on the feed. The processor's grid and patch count are fed instead."""
    src = _patch_vision(tmp_path / "m")
    derived = processor_dims(src)
    grid = derived.values["image_grid_thw"]
    assert grid.dtype == np.int64 and grid.shape == (1, 3) and grid[0, 0] == 1
    assert derived.dims == {"patches": int(grid.prod()), "images": 1}, derived
    for kwargs in ({"fp16": True}, {"int8": True}):
        rep = fix_model(src, tmp_path / str(sorted(kwargs)[0]) / "vision.onnx", targets=["ort-cpu"], **kwargs)
        parity = rep.files[0].parity
        assert parity is not None and parity.passed, parity
        text = render_fix_text(rep)
        assert f"image_grid_thw={grid.tolist()} from the processor files" in text, text


def test_the_agents_image_input_makes_the_grid_too(tmp_path: Path) -> None:
    """The same processor, as a bundle's raw image input: it produces the grid beside the patches (the agent then
    serves the vision part from an image file); a model without a grid input is declared pixels only."""
    from studio.core.sample_inputs import write_sample_inputs
    from studio.edge.preprocess import build_preprocessors
    from studio.edge.raw_inputs import declare_raw_inputs

    folder = _patch_vision(tmp_path / "m").parent
    specs = [{"name": "pixel_values", "shape": ["patches", PATCH_DIM]}, {"name": "image_grid_thw", "shape": ["images", 3]}]
    declared = declare_raw_inputs(specs, folder)
    assert declared[0]["produces"] == ["pixel_values", "image_grid_thw"]
    assert declare_raw_inputs(specs[:1], folder)[0]["produces"] == ["pixel_values"]
    image = write_sample_inputs(tmp_path / "s")["vision"].read_bytes()
    out = build_preprocessors(declared, folder)["image"].fn([image, image])
    assert out["image_grid_thw"].tolist() == [out["image_grid_thw"][0].tolist()] * 2
    assert out["pixel_values"].shape == (int(out["image_grid_thw"].prod(axis=1).sum()), PATCH_DIM)
    assert set(build_preprocessors(declare_raw_inputs(specs[:1], folder), folder)["image"].fn([image])) == {"pixel_values"}


def test_a_dynamic_input_finding_is_the_same_finding_after_a_cast_is_added(tmp_path: Path) -> None:
    """FP16 adds Casts behind the inputs, so a dynamic input reaches more tensors: the fix's diff listed every
    dynamic-shape finding as both resolved and new (15 + 15 on Qwen2-VL's decoder for rk3588)."""
    src = _conv_frontend(tmp_path / "m")
    rep = fix_model(src, tmp_path / "out" / "model.onnx", fp16=True, targets=["rk3588", "ascend-310p"])
    diff = rep.files[0].diff
    assert diff is not None
    for tid, td in diff.targets.items():
        assert not [r for r in td.resolved if r.startswith("dynamic-shape")], (tid, td.resolved)
        assert not [r for r in td.introduced if r.startswith("dynamic-shape")], (tid, td.introduced)
