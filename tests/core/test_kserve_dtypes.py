"""The one datatype table (studio.core.kserve_dtypes, built from tritonclient.utils): the three tables it replaces
(the agent's and packager's, Triton's, the load generator's) map as before, and a bad datatype is an error
naming the input."""

from __future__ import annotations

import json

import numpy as np
import pytest
from onnx import TensorProto
from tritonclient.utils import np_to_triton_dtype, triton_to_np_dtype

from studio.core import kserve_dtypes as D
from studio.edge import tensors
from studio.triton import dtypes as triton_dtypes

# the tables as they were spelled out before (studio/edge/tensors.py, studio/triton/dtypes.py,
# studio/telemetry/kserve.py): every old entry must map the same
OLD_KSERVE_TO_NP = {
    "BOOL": np.bool_, "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32, "UINT64": np.uint64,
    "INT8": np.int8, "INT16": np.int16, "INT32": np.int32, "INT64": np.int64,
    "FP16": np.float16, "FP32": np.float32, "FP64": np.float64, "BYTES": np.object_,
}
OLD_TRITON = {  # onnx elem type -> (config name, KServe name, numpy dtype name)
    TensorProto.BOOL: ("TYPE_BOOL", "BOOL", "bool"), TensorProto.UINT8: ("TYPE_UINT8", "UINT8", "uint8"),
    TensorProto.UINT16: ("TYPE_UINT16", "UINT16", "uint16"), TensorProto.UINT32: ("TYPE_UINT32", "UINT32", "uint32"),
    TensorProto.UINT64: ("TYPE_UINT64", "UINT64", "uint64"), TensorProto.INT8: ("TYPE_INT8", "INT8", "int8"),
    TensorProto.INT16: ("TYPE_INT16", "INT16", "int16"), TensorProto.INT32: ("TYPE_INT32", "INT32", "int32"),
    TensorProto.INT64: ("TYPE_INT64", "INT64", "int64"), TensorProto.FLOAT16: ("TYPE_FP16", "FP16", "float16"),
    TensorProto.FLOAT: ("TYPE_FP32", "FP32", "float32"), TensorProto.DOUBLE: ("TYPE_FP64", "FP64", "float64"),
    TensorProto.STRING: ("TYPE_STRING", "BYTES", "object"), TensorProto.BFLOAT16: ("TYPE_BF16", "BF16", "float32"),
}


def test_the_old_tables_map_the_same() -> None:
    assert D.KSERVE_TO_NP == OLD_KSERVE_TO_NP
    assert all(D.KSERVE_TO_NP[k] is v for k, v in OLD_KSERVE_TO_NP.items())  # the same numpy types, not lookalikes
    assert D.NP_TO_KSERVE == {np.dtype(v): k for k, v in OLD_KSERVE_TO_NP.items() if k != "BYTES"}
    assert tensors.KSERVE_TO_NP is D.KSERVE_TO_NP and tensors.NP_TO_KSERVE is D.NP_TO_KSERVE  # re-exported
    for elem, (cfg, v2, npd) in OLD_TRITON.items():
        assert triton_dtypes.onnx_to_config(elem) == cfg
        assert triton_dtypes.config_to_v2(cfg) == v2 and D.onnx_elem_to_kserve(elem) == v2
        assert triton_dtypes.v2_to_numpy(v2) == np.dtype(npd) and triton_dtypes.CONFIG_TO_NUMPY[cfg] == np.dtype(npd)
    assert TensorProto.DataType.Name(TensorProto.BFLOAT16) == "BFLOAT16"  # the enum numbers are onnx's own
    assert {TensorProto.DataType.Name(e) for e in D.ONNX_TO_KSERVE} == {TensorProto.DataType.Name(e) for e in OLD_TRITON}
    assert triton_dtypes.numpy_to_v2(np.dtype("<U4")) == "BYTES" and triton_dtypes.numpy_to_v2(np.float16) == "FP16"
    assert D.dtype_to_kserve("float32") == "FP32" and D.dtype_to_kserve("no-such") == "UNKNOWN"
    assert D.dtype_to_kserve("complex64") == "UNKNOWN" and D.onnx_elem_to_kserve(14) == "UNKNOWN"
    from studio.telemetry.kserve import KSERVE_DTYPES

    assert KSERVE_DTYPES == {k: v for k, v in OLD_KSERVE_TO_NP.items() if k != "BYTES"}


def test_built_from_tritonclient() -> None:
    for name in D.NUMPY_DATATYPES:
        assert np.dtype(D.KSERVE_TO_NP[name]) == np.dtype(triton_to_np_dtype(name))
    for dt, name in D.NP_TO_KSERVE.items():
        assert np_to_triton_dtype(dt) == name
    assert "BF16" not in D.KSERVE_TO_NP  # the studio's own choice: see the module docstring


def test_bad_datatypes_are_errors_naming_the_input() -> None:
    from studio.agent.kserve import ProtocolError, decode_request

    ok = decode_request(json.dumps({"inputs": [{"name": "x", "datatype": "INT64", "shape": [2],
                                                "data": [1, 2]}]}).encode(), None)
    assert ok.inputs["x"].dtype == np.int64
    for bad in ("BF16", "FP8", "float32"):
        body = json.dumps({"inputs": [{"name": "pixel_values", "datatype": bad, "shape": [1], "data": [1]}]})
        with pytest.raises(ProtocolError, match=f"input 'pixel_values': unsupported datatype {bad}"):
            decode_request(body.encode(), None)
    with pytest.raises(KeyError, match="TYPE_FP8"):
        triton_dtypes.config_to_v2("TYPE_FP8")
    with pytest.raises(KeyError, match="no KServe v2 datatype for numpy complex64"):
        triton_dtypes.numpy_to_v2(np.complex64)
