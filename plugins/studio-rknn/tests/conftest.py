"""Fixtures for the plugin's tests: tiny ONNX models built in-process, and the toolkit environment (or a skip).

Run from the checkout without installing: ``.venv/bin/python -m pytest plugins/studio-rknn/tests``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import studio.export  # noqa: F401 - its torchvision hook (studio.export.torchvision_compat), before transformers loads

try:
    import studio_rknn  # noqa: F401
except ImportError:  # not pip-installed: test the checkout's copy
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def toolkit_env() -> Path:
    """The toolkit environment; the tests that need it skip, saying how to make it, when it is not there."""
    from studio_rknn import env

    status = env.check_env()
    if not status.ok:
        pytest.skip(status.reason)
    return status.path


def _save(graph, path: Path, opset: int = 17) -> Path:
    import onnx
    from onnx import helper

    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8  # the toolkit's onnx 1.18 and its opset <= 19 rule
    onnx.save(model, path)
    return path


@pytest.fixture(scope="session")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """mlp (MatMul-Relu-MatMul), isnan (IsNaN between NPU ops), dynamic (batch 'N'), resize (non-constant scales)."""
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    out = tmp_path_factory.mktemp("rknn-models")
    rng = np.random.default_rng(0)
    w1 = nh.from_array(rng.standard_normal((16, 8)).astype(np.float32), "W1")
    w2 = nh.from_array(rng.standard_normal((8, 4)).astype(np.float32), "W2")
    mlp = h.make_graph([h.make_node("MatMul", ["x", "W1"], ["a"], name="mm1"),
                        h.make_node("Relu", ["a"], ["b"], name="relu"),
                        h.make_node("MatMul", ["b", "W2"], ["y"], name="mm2")], "mlp",
                       [h.make_tensor_value_info("x", T.FLOAT, [1, 16])],
                       [h.make_tensor_value_info("y", T.FLOAT, [1, 4])], [w1, w2])
    isnan = h.make_graph([h.make_node("Relu", ["x"], ["a"], name="relu"),
                          h.make_node("IsNaN", ["a"], ["n"], name="isnan_node"),
                          h.make_node("Where", ["n", "x", "a"], ["y"], name="where")], "isnan",
                         [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 8, 8])],
                         [h.make_tensor_value_info("y", T.FLOAT, [1, 3, 8, 8])])
    dynamic = h.make_graph([h.make_node("MatMul", ["x", "W1"], ["y"], name="mm")], "dyn",
                           [h.make_tensor_value_info("x", T.FLOAT, ["N", 16]),
                            h.make_tensor_value_info("mask", T.FLOAT, [1, "S"])],
                           [h.make_tensor_value_info("y", T.FLOAT, ["N", 8])], [w1])
    resize = h.make_graph([h.make_node("Resize", ["x", "", "scales"], ["y"], name="up", mode="nearest")], "rs",
                          [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 4, 4]),
                           h.make_tensor_value_info("scales", T.FLOAT, [4])],
                          [h.make_tensor_value_info("y", T.FLOAT, None)])
    return {"mlp": _save(mlp, out / "mlp.onnx"), "isnan": _save(isnan, out / "isnan.onnx"),
            "dynamic": _save(dynamic, out / "dynamic.onnx"), "resize": _save(resize, out / "resize.onnx")}
