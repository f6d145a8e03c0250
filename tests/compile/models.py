"""Tiny ONNX graphs for the compile tests, built with onnx.helper (no torch, no network)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _save(model: onnx.ModelProto, path: Path) -> Path:
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))
    return path


def small_cnn(path: Path) -> Path:
    """Conv-ReLU-MaxPool-Conv-ReLU-GAP-Gemm classifier with a dynamic batch dim."""
    rng = np.random.default_rng(0)

    def init(name: str, shape: tuple[int, ...]) -> onnx.TensorProto:
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["logits"], name="fc", transB=1),
    ]
    g = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 16, 16])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])],
        [init("w1", (8, 3, 3, 3)), init("b1", (8,)), init("w2", (16, 8, 3, 3)), init("b2", (16,)),
         init("wf", (10, 16)), init("bf", (10,))])
    return _save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def with_loop(path: Path) -> Path:
    """y = x + 3 computed by a Loop (TVM Relax has no Loop converter)."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond"),
         helper.make_node("Add", ["acc_in", "one"], ["acc_out"], name="body_add")],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.array(1.0, np.float32), "one")])
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Loop", ["trip", "cond", "r"], ["y"], name="add_three_times", body=body)]
    g = helper.make_graph(nodes, "loop", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                          [numpy_helper.from_array(np.array(3, np.int64), "trip"),
                           numpy_helper.from_array(np.array(True), "cond")])
    return _save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def import_failure(path: Path) -> Path:
    """Every op is on TVM's list (the pre-check passes), but TVM 0.27 cannot import ConstantOfShape of an
    empty shape (a scalar fill): "broadcast_to expects the input shape to have the number of ndim at least
    as the input tensor's" -- the same failure as a tiny CLIP text encoder at opset 18. The culprit node is
    ``bias_fill``, in the middle of the graph."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Mul", ["r", "two"], ["m"], name="scale"),
        helper.make_node("Constant", [], ["shp"], name="empty_shape",
                         value=numpy_helper.from_array(np.zeros((0,), np.int64))),
        helper.make_node("ConstantOfShape", ["shp"], ["c"], name="bias_fill",
                         value=numpy_helper.from_array(np.array([1.0], np.float32))),
        helper.make_node("Add", ["m", "c"], ["a"], name="add_bias"),
        helper.make_node("Sigmoid", ["a"], ["s"], name="sigmoid"),
        helper.make_node("Tanh", ["s"], ["y"], name="tanh"),
    ]
    g = helper.make_graph(nodes, "fails_import", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
                          [numpy_helper.from_array(np.array(2.0, np.float32), "two")])
    return _save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), path)


def tiny_clip(folder: Path) -> tuple[Path, Path]:
    """(full model, vision part) of a tiny random-weight CLIP exported at opset 18 with torch.

    The HF folder comes from the export helper's sample (studio.export.api.write_sample) when it is there,
    else from a CLIPConfig built here; both parts are exported by torch.onnx.export (TorchScript exporter),
    the vision part as ``get_image_features`` (pixel_values -> image_embeds).
    """
    import torch
    from transformers import CLIPConfig, CLIPModel

    hf = folder / "tiny-clip"
    try:
        from studio.export.api import write_sample

        write_sample("tiny-clip", hf)
        model = CLIPModel.from_pretrained(hf).eval()
    except Exception:
        cfg = CLIPConfig(text_config=dict(hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                                          num_attention_heads=4, vocab_size=99, max_position_embeddings=32),
                         vision_config=dict(hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                                            num_attention_heads=4, image_size=32, patch_size=8),
                         projection_dim=16)
        torch.manual_seed(0)
        model = CLIPModel(cfg).eval()
    size = model.config.vision_config.image_size
    vocab = model.config.text_config.vocab_size
    ids = torch.randint(0, vocab, (2, 7))
    pv = torch.randn(2, 3, size, size)
    full, vision = folder / "clip_opset18.onnx", folder / "clip_vision_opset18.onnx"
    torch.onnx.export(model, (ids, pv, torch.ones_like(ids)), str(full),
                      input_names=["input_ids", "pixel_values", "attention_mask"],
                      output_names=["logits_per_image", "logits_per_text", "text_embeds", "image_embeds"],
                      opset_version=18, dynamo=False,
                      dynamic_axes={"input_ids": {0: "batch", 1: "sequence"},
                                    "attention_mask": {0: "batch", 1: "sequence"}, "pixel_values": {0: "batch"}})

    class Vision(torch.nn.Module):
        def __init__(self, m: torch.nn.Module) -> None:
            super().__init__()
            self.m = m

        def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
            out = self.m.get_image_features(pixel_values=pixel_values)
            return out if isinstance(out, torch.Tensor) else out.pooler_output

    torch.onnx.export(Vision(model), (pv,), str(vision), input_names=["pixel_values"],
                      output_names=["image_embeds"], opset_version=18, dynamo=False,
                      dynamic_axes={"pixel_values": {0: "batch"}})
    return full, vision
