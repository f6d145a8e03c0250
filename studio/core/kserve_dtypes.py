"""The one table of tensor datatypes: KServe v2 names <-> numpy, ONNX element types, ONNX Runtime type strings,
Triton config type names and the KServe gRPC typed-contents fields.

The numpy side comes from ``tritonclient.utils`` (``triton_to_np_dtype`` / ``np_to_triton_dtype``, what the
Triton clients themselves use), read once at import into plain dicts: every lookup on the agent's inference
path is a dict access, never a call into tritonclient's if/elif chains. The importing process pays
tritonclient.utils and ml_dtypes once (about 30 ms and 3 MiB on top of numpy).

The studio's own entries, where tritonclient has none or differs:
- BF16 is not in :data:`KSERVE_TO_NP`: tritonclient (2.73, the pinned release) maps it to
  ``ml_dtypes.bfloat16``, which neither ONNX Runtime feeds nor JSON bodies take; the agent refuses BF16
  requests, and request builders for Triton (:func:`v2_to_numpy`) hand BF16 tensors around as float32.
- numpy str/bytes arrays (``<U``/``S`` kinds) are BYTES for request building (:func:`numpy_to_v2`);
  tritonclient only calls ``np.bytes_`` and ``object`` BYTES.
- ONNX element types, ONNX Runtime type strings, Triton ``TYPE_*`` names and the gRPC contents fields are
  not in tritonclient.utils at all.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tritonclient.utils import np_to_triton_dtype, triton_to_np_dtype

#: KServe v2 datatypes numpy holds natively, in the protocol's order
NUMPY_DATATYPES = ("BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64",
                   "FP16", "FP32", "FP64", "BYTES")

#: KServe datatype -> numpy scalar type (np.bool_, np.float32, ..., np.object_ for BYTES)
KSERVE_TO_NP: dict[str, Any] = {name: np.dtype(triton_to_np_dtype(name)).type for name in NUMPY_DATATYPES}
#: numpy dtype -> KServe datatype, for every fixed-size type above (BYTES has no single numpy dtype)
NP_TO_KSERVE: dict[np.dtype, str] = {np.dtype(t): np_to_triton_dtype(np.dtype(t))
                                     for name, t in KSERVE_TO_NP.items() if name != "BYTES"}
#: numpy dtypes of request tensors built for Triton: BF16 travels as float32 (see above)
V2_TO_NUMPY: dict[str, np.dtype] = {**{k: np.dtype(v) for k, v in KSERVE_TO_NP.items()},
                                    "BF16": np.dtype(np.float32)}

#: ONNX TensorProto element type -> KServe datatype (the numbers are the onnx.proto enum, so no onnx import)
ONNX_TO_KSERVE: dict[int, str] = {1: "FP32", 2: "UINT8", 3: "INT8", 4: "UINT16", 5: "INT16", 6: "INT32",
                                  7: "INT64", 8: "BYTES", 9: "BOOL", 10: "FP16", 11: "FP64", 12: "UINT32",
                                  13: "UINT64", 16: "BF16"}
#: ONNX Runtime's type strings (``NodeArg.type``) -> KServe datatype
ORT_TO_KSERVE: dict[str, str] = {
    "tensor(bool)": "BOOL", "tensor(uint8)": "UINT8", "tensor(uint16)": "UINT16", "tensor(uint32)": "UINT32",
    "tensor(uint64)": "UINT64", "tensor(int8)": "INT8", "tensor(int16)": "INT16", "tensor(int32)": "INT32",
    "tensor(int64)": "INT64", "tensor(float16)": "FP16", "tensor(float)": "FP32", "tensor(double)": "FP64",
    "tensor(string)": "BYTES", "tensor(bfloat16)": "BF16",
}
#: Triton config.pbtxt DataType name <-> KServe datatype (``TYPE_STRING`` is BYTES)
KSERVE_TO_CONFIG: dict[str, str] = {v2: "TYPE_STRING" if v2 == "BYTES" else f"TYPE_{v2}"
                                    for v2 in ONNX_TO_KSERVE.values()}
CONFIG_TO_KSERVE: dict[str, str] = {cfg: v2 for v2, cfg in KSERVE_TO_CONFIG.items()}
#: typed ``InferTensorContents`` field of the KServe gRPC protocol (FP16/BF16 have none: raw contents only)
GRPC_CONTENTS_FIELD: dict[str, str] = {
    "BOOL": "bool_contents", "INT8": "int_contents", "INT16": "int_contents", "INT32": "int_contents",
    "INT64": "int64_contents", "UINT8": "uint_contents", "UINT16": "uint_contents", "UINT32": "uint_contents",
    "UINT64": "uint64_contents", "FP32": "fp32_contents", "FP64": "fp64_contents", "BYTES": "bytes_contents",
}


def onnx_elem_to_kserve(elem_type: int) -> str:
    """ONNX element type -> KServe datatype; "UNKNOWN" for types KServe has no name for."""
    return ONNX_TO_KSERVE.get(int(elem_type), "UNKNOWN")


def dtype_to_kserve(dtype: str) -> str:
    """The KServe datatype of a numpy dtype name ("float32" -> "FP32"); "UNKNOWN" when numpy has no such dtype."""
    try:
        return NP_TO_KSERVE.get(np.dtype(dtype), "UNKNOWN")
    except TypeError:
        return "UNKNOWN"


def numpy_to_v2(dtype: Any) -> str:
    """KServe datatype of a request array's dtype: object/str/bytes arrays are BYTES; KeyError otherwise."""
    dtype = np.dtype(dtype)
    if dtype.kind in "OSU":
        return "BYTES"
    try:
        return NP_TO_KSERVE[dtype]
    except KeyError:
        raise KeyError(f"no KServe v2 datatype for numpy {dtype}") from None


def v2_to_numpy(v2: str) -> np.dtype:
    """numpy dtype for a KServe datatype when building requests (BF16 as float32); KeyError when unknown."""
    return V2_TO_NUMPY[v2]
