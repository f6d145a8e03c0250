"""KServe v2 datatype names of tensors, as ``runtime.json`` declares them and the agent's codecs decode them.

Why here: ``studio package`` writes a model's input and output datatypes into ``runtime.json`` and the agent
parses requests by the same names, so both sides read one table.
"""

from __future__ import annotations

from typing import Any

import numpy as np

KSERVE_TO_NP: dict[str, Any] = {
    "BOOL": np.bool_, "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32, "UINT64": np.uint64,
    "INT8": np.int8, "INT16": np.int16, "INT32": np.int32, "INT64": np.int64,
    "FP16": np.float16, "FP32": np.float32, "FP64": np.float64, "BYTES": np.object_,
}
NP_TO_KSERVE = {np.dtype(v): k for k, v in KSERVE_TO_NP.items() if k != "BYTES"}
ORT_TO_KSERVE = {
    "tensor(bool)": "BOOL", "tensor(uint8)": "UINT8", "tensor(uint16)": "UINT16", "tensor(uint32)": "UINT32",
    "tensor(uint64)": "UINT64", "tensor(int8)": "INT8", "tensor(int16)": "INT16", "tensor(int32)": "INT32",
    "tensor(int64)": "INT64", "tensor(float16)": "FP16", "tensor(float)": "FP32", "tensor(double)": "FP64",
    "tensor(string)": "BYTES", "tensor(bfloat16)": "BF16",
}
_ONNX_ELEM = {1: "FP32", 2: "UINT8", 3: "INT8", 4: "UINT16", 5: "INT16", 6: "INT32", 7: "INT64", 8: "BYTES",
              9: "BOOL", 10: "FP16", 11: "FP64", 12: "UINT32", 13: "UINT64", 16: "BF16"}


def onnx_elem_to_kserve(elem_type: int) -> str:
    return _ONNX_ELEM.get(int(elem_type), "UNKNOWN")


def dtype_to_kserve(dtype: str) -> str:
    """The KServe datatype of a numpy dtype name ("float32" -> "FP32"); "UNKNOWN" when numpy has no such dtype."""
    try:
        return NP_TO_KSERVE.get(np.dtype(dtype), "UNKNOWN")
    except TypeError:
        return "UNKNOWN"
