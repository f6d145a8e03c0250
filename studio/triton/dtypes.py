"""One table between ONNX element types, Triton config types, KServe v2 datatypes and numpy."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

# onnx elem type -> (Triton config DataType name, KServe v2 datatype, numpy dtype)
_TABLE: dict[int, tuple[str, str, str]] = {
    TensorProto.BOOL: ("TYPE_BOOL", "BOOL", "bool"),
    TensorProto.UINT8: ("TYPE_UINT8", "UINT8", "uint8"),
    TensorProto.UINT16: ("TYPE_UINT16", "UINT16", "uint16"),
    TensorProto.UINT32: ("TYPE_UINT32", "UINT32", "uint32"),
    TensorProto.UINT64: ("TYPE_UINT64", "UINT64", "uint64"),
    TensorProto.INT8: ("TYPE_INT8", "INT8", "int8"),
    TensorProto.INT16: ("TYPE_INT16", "INT16", "int16"),
    TensorProto.INT32: ("TYPE_INT32", "INT32", "int32"),
    TensorProto.INT64: ("TYPE_INT64", "INT64", "int64"),
    TensorProto.FLOAT16: ("TYPE_FP16", "FP16", "float16"),
    TensorProto.FLOAT: ("TYPE_FP32", "FP32", "float32"),
    TensorProto.DOUBLE: ("TYPE_FP64", "FP64", "float64"),
    TensorProto.STRING: ("TYPE_STRING", "BYTES", "object"),
    TensorProto.BFLOAT16: ("TYPE_BF16", "BF16", "float32"),
}

CONFIG_TO_V2 = {cfg: v2 for cfg, v2, _ in _TABLE.values()}
V2_TO_NUMPY = {v2: np.dtype(npd) for _cfg, v2, npd in _TABLE.values()}
CONFIG_TO_NUMPY = {cfg: np.dtype(npd) for cfg, _v2, npd in _TABLE.values()}


def onnx_to_config(elem_type: int) -> str:
    """ONNX element type -> Triton config type name (``TYPE_FP32``); KeyError for unsupported types."""
    return _TABLE[elem_type][0]


def onnx_type_name(elem_type: int) -> str:
    return TensorProto.DataType.Name(elem_type).lower()


def config_to_v2(cfg_type: str) -> str:
    """``TYPE_FP32`` -> ``FP32`` (``TYPE_STRING`` -> ``BYTES``)."""
    return CONFIG_TO_V2[cfg_type]


def numpy_to_v2(dtype: np.dtype) -> str:
    dtype = np.dtype(dtype)
    if dtype.kind in "OSU":
        return "BYTES"
    for v2, npd in V2_TO_NUMPY.items():
        if npd == dtype and v2 != "BF16":
            return v2
    raise KeyError(f"no KServe v2 datatype for numpy {dtype}")


def v2_to_numpy(v2: str) -> np.dtype:
    return V2_TO_NUMPY[v2]
