"""Small hand-built ONNX models for the inspector page tests (onnx.helper only: no torch, no downloads)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def vision_model_with_problems(path: Path, *, custom_op: bool = True) -> Path:
    """A tiny CNN head with a dynamic batch, a data-dependent NonZero, a cubic Resize and a custom-domain op.

    Node names are fixed so tests can select them: ``conv1``, ``relu1``, ``resize_cubic``, ``nonzero``,
    ``fancy_custom``, ``gap``, ``flatten``, ``fc``, ``softmax``. Without ``custom_op`` the FancyNorm node is an
    Identity (so ONNX Runtime can run the model, as the fixes' parity check needs).
    """
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "conv1.weight")
    b = numpy_helper.from_array(np.zeros(8, np.float32), "conv1.bias")
    fc_w = numpy_helper.from_array(rng.standard_normal((10, 8)).astype(np.float32), "fc.weight")
    fc_b = numpy_helper.from_array(np.zeros(10, np.float32), "fc.bias")
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "resize.scales")
    nodes = [
        helper.make_node("Conv", ["pixel_values", "conv1.weight", "conv1.bias"], ["conv1_out"], name="conv1",
                         pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("Relu", ["conv1_out"], ["relu1_out"], name="relu1"),
        helper.make_node("Resize", ["relu1_out", "", "resize.scales"], ["resized"], name="resize_cubic",
                         mode="cubic"),
        helper.make_node("FancyNorm", ["resized"], ["fancy_out"], name="fancy_custom", domain="com.example",
                         epsilon=1e-5) if custom_op else
        helper.make_node("Identity", ["resized"], ["fancy_out"], name="fancy_custom"),
        helper.make_node("GlobalAveragePool", ["fancy_out"], ["gap_out"], name="gap"),
        helper.make_node("Flatten", ["gap_out"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
        helper.make_node("NonZero", ["relu1_out"], ["nz"], name="nonzero"),
        helper.make_node("Transpose", ["nz"], ["active_idx"], name="transpose_idx", perm=[1, 0]),
    ]
    graph = helper.make_graph(
        nodes, "vision_head",
        [helper.make_tensor_value_info("pixel_values", TensorProto.FLOAT, ["batch", 3, 16, 16])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 10]),
         helper.make_tensor_value_info("active_idx", TensorProto.INT64, None)],
        initializer=[w, b, fc_w, fc_b, scales])
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid("com.example", 1)] if custom_op else [])
    model = helper.make_model(graph, opset_imports=opsets, producer_name="studio-tests")
    model.ir_version = 9
    onnx.save(model, path)
    return path
