"""The computed ONNX Runtime CPU profile agrees with actually creating ORT sessions."""

from __future__ import annotations

from pathlib import Path

import onnxruntime as ort
import pytest
from inspect_models import save, single_op_model
from onnx import TensorProto as T

from studio.inspect.api import inspect_model

CASES = [
    # (op, n_inputs, dtype, opset, attrs)
    ("Relu", 1, T.FLOAT, 17, {}),
    ("Relu", 1, T.INT32, 17, {}),  # int32 kernel from Relu-14
    ("Relu", 1, T.INT16, 17, {}),  # schema allows int16, ORT has no kernel
    ("Floor", 1, T.FLOAT, 17, {}),
    ("Floor", 1, T.FLOAT16, 17, {}),  # schema allows float16, ORT CPU has no kernel
    ("Sin", 1, T.FLOAT, 17, {}),
    ("HardSwish", 1, T.FLOAT, 17, {}),  # no kernel: ORT inlines the function body
    ("Mish", 1, T.FLOAT, 18, {}),
    ("ImageDecoder", 1, T.UINT8, 20, {}),  # no kernel, no function
    ("Add", 2, T.FLOAT, 17, {}),
    ("Add", 2, T.BOOL, 17, {}),  # not even in the schema (checker refuses): ORT fails too
]


def _session_ok(path: Path) -> tuple[bool, str]:
    so = ort.SessionOptions()
    so.log_severity_level = 4
    try:
        ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        return True, ""
    except Exception as exc:  # ORT raises its own exception types for NOT_IMPLEMENTED / INVALID_GRAPH
        return False, str(exc)[:300]


@pytest.mark.parametrize("op,n,dtype,opset,attrs", CASES, ids=[f"{c[0]}-{T.DataType.Name(c[2])}" for c in CASES])
def test_ort_profile_matches_session_creation(tmp_path: Path, op: str, n: int, dtype: int, opset: int,
                                              attrs: dict) -> None:
    shape = [4] if op == "ImageDecoder" else [1, 4]
    p = save(single_op_model(op, n, opset=opset, dtype=dtype, shape=shape, **attrs), tmp_path / "m.onnx")
    rep = inspect_model(p, ["ort-cpu"])
    verdict = rep.node_verdicts["ort-cpu"][f"the_{op}"]
    ok, err = _session_ok(p)
    assert verdict in ("supported", "unsupported")
    assert (verdict == "supported") == ok, f"inspector says {verdict}, ORT session: {ok} {err}"


def test_the_cases_cover_both_directions() -> None:
    assert any(c[0] == "ImageDecoder" for c in CASES) and any(c[0] == "Relu" for c in CASES)
