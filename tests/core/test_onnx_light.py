"""studio.core.onnx_light: ONNX's classes and schemas without the onnx package, and a real onnx import after it."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from studio.core import onnx_light
from studio.inspect.model import dtype_bytes

AFTER_LIGHT = r"""
import json, sys
from studio.core import onnx_light
pb2 = onnx_light.proto()
ext = onnx_light.cpp()
schema = onnx_light.get_schema("Relu", 14, "")
light = {"numpy": "numpy" in sys.modules, "onnx": "onnx" in sys.modules, "relu_since": schema.since_version}
m = pb2.ModelProto.FromString(open(sys.argv[1], "rb").read())
import onnx, onnx.onnx_ml_pb2, onnx.checker, onnx.helper, onnx.defs
onnx.checker.check_model(m)
print(json.dumps({**light,
    "same_class": onnx.ModelProto is pb2.ModelProto and type(m) is onnx.ModelProto,
    "ext_attr": onnx.onnx_cpp2py_export is ext, "pb2_attr": onnx.onnx_ml_pb2.ModelProto is pb2.ModelProto,
    "helper_class": type(onnx.helper.make_tensor_value_info("x", 1, [1])) is pb2.ValueInfoProto,
    "schema": onnx.defs.get_schema("Relu", 14).since_version,
    "inferred": len(onnx.shape_inference.infer_shapes(m).graph.value_info)}))
"""


def _model(path) -> None:  # type: ignore[no-untyped-def]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Neg", ["h"], ["y"])],
                          "g", [x], [y])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def test_light_then_the_real_onnx_in_one_process(tmp_path) -> None:
    _model(tmp_path / "m.onnx")
    out = subprocess.run([sys.executable, "-c", AFTER_LIGHT, str(tmp_path / "m.onnx")], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout)
    assert got == {"numpy": False, "onnx": False, "relu_since": 14, "same_class": True, "ext_attr": True,
                   "pb2_attr": True, "helper_class": True, "schema": 14, "inferred": 1}


def test_with_onnx_imported_its_own_modules_are_used() -> None:
    assert onnx_light.proto().ModelProto is onnx.ModelProto
    assert onnx_light.cpp() is sys.modules["onnx.onnx_cpp2py_export"]


def _attrs() -> list:  # type: ignore[type-arg]
    t = numpy_helper.from_array(np.arange(3, dtype=np.int64), "t")
    g = helper.make_graph([], "sub", [], [])
    return [helper.make_attribute("f", 1.5), helper.make_attribute("i", 3), helper.make_attribute("s", b"abc"),
            helper.make_attribute("t", t), helper.make_attribute("g", g), helper.make_attribute("fs", [1.0, 2.0]),
            helper.make_attribute("is", [1, 2, 3]), helper.make_attribute("ss", [b"a", b"b"]),
            helper.make_attribute("ts", [t, t]), helper.make_attribute("gs", [g])]


@pytest.mark.parametrize("attr", _attrs(), ids=lambda a: a.name)
def test_attribute_value_as_onnx_helper(attr) -> None:  # type: ignore[no-untyped-def]
    assert onnx_light.attribute_value(attr) == helper.get_attribute_value(attr)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                   np.uint16, np.uint32, np.uint64, np.bool_, np.float16])
@pytest.mark.parametrize("raw", [True, False])
def test_const_values_as_numpy_helper(dtype, raw) -> None:  # type: ignore[no-untyped-def]
    arr = (np.arange(6).reshape(2, 3) % 3).astype(dtype)
    t = numpy_helper.from_array(arr, "c")
    if not raw:  # the typed fields numpy_helper reads for the same values
        t = helper.make_tensor("c", helper.np_dtype_to_tensor_dtype(arr.dtype), arr.shape, arr.reshape(-1).tolist())
    expect = numpy_helper.to_array(t)
    assert onnx_light.const_values(t) == (expect.shape, expect.reshape(-1).tolist())


def test_const_values_refuses_what_it_cannot_read() -> None:
    t = numpy_helper.from_array(np.arange(8, dtype=np.int64), "c")
    assert onnx_light.const_values(t, limit=7) is None  # over the limit
    t.raw_data = t.raw_data[:-1]  # shorter than its dims say
    assert onnx_light.tensor_values(t) is None and onnx_light.const_values(t) is None
    t.data_location = 1  # external: not loaded
    assert onnx_light.const_values(t) is None


def test_dtype_bytes_match_numpy_itemsize() -> None:
    for name, value in TensorProto.DataType.items():
        if value in (TensorProto.UNDEFINED, TensorProto.STRING):
            assert dtype_bytes(value) == 0, name
            continue
        try:
            size = float(helper.tensor_dtype_to_np_dtype(value).itemsize)
        except Exception:  # noqa: BLE001 - a type numpy cannot hold: one byte, as before
            size = 1.0
        assert dtype_bytes(value) == size, name
