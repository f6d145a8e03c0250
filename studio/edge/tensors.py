"""KServe v2 datatype names of tensors, as ``runtime.json`` declares them and the agent's codecs decode them.

Why here: ``studio package`` writes a model's input and output datatypes into ``runtime.json`` and the agent
parses requests by the same names, so both sides read one table: :mod:`studio.core.kserve_dtypes`, the one
datatype table of the studio (also Triton's and the load generator's), re-exported here for the edge layers.
"""

from __future__ import annotations

from studio.core.kserve_dtypes import (
    KSERVE_TO_NP,
    NP_TO_KSERVE,
    ORT_TO_KSERVE,
    dtype_to_kserve,
    onnx_elem_to_kserve,
)

__all__ = ["KSERVE_TO_NP", "NP_TO_KSERVE", "ORT_TO_KSERVE", "dtype_to_kserve", "onnx_elem_to_kserve"]
