"""Triton's view of the datatype table: ONNX element types -> config.pbtxt ``TYPE_*`` names, and the KServe v2 /
numpy conversions request builders use. The table itself is :mod:`studio.core.kserve_dtypes`."""

from __future__ import annotations

from onnx import TensorProto

from studio.core.kserve_dtypes import (
    CONFIG_TO_KSERVE,
    KSERVE_TO_CONFIG,
    ONNX_TO_KSERVE,
    V2_TO_NUMPY,
    numpy_to_v2,
    v2_to_numpy,
)

CONFIG_TO_V2 = CONFIG_TO_KSERVE
CONFIG_TO_NUMPY = {cfg: V2_TO_NUMPY[v2] for cfg, v2 in CONFIG_TO_KSERVE.items()}

__all__ = ["CONFIG_TO_NUMPY", "CONFIG_TO_V2", "V2_TO_NUMPY", "config_to_v2", "numpy_to_v2", "onnx_to_config",
           "onnx_type_name", "v2_to_numpy"]


def onnx_to_config(elem_type: int) -> str:
    """ONNX element type -> Triton config type name (``TYPE_FP32``); KeyError for unsupported types."""
    return KSERVE_TO_CONFIG[ONNX_TO_KSERVE[elem_type]]


def onnx_type_name(elem_type: int) -> str:
    return TensorProto.DataType.Name(elem_type).lower()


def config_to_v2(cfg_type: str) -> str:
    """``TYPE_FP32`` -> ``FP32`` (``TYPE_STRING`` -> ``BYTES``)."""
    return CONFIG_TO_V2[cfg_type]

