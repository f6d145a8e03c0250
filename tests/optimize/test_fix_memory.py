"""A conversion that cannot fit stops before any work with its estimate (exit 2), never an OOM kill half-way."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from studio.optimize.memory import BASE_BYTES, FACTORS, check_fix_fits, weight_bytes


def _external(folder: Path) -> Path:
    """A MatMul whose 256x256 float weight lives in model.onnx.data (the layout of every model past 2 GB)."""
    folder.mkdir(parents=True, exist_ok=True)
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 256])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 256])], [w])
    path = folder / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path),
              save_as_external_data=True, location="model.onnx.data", size_threshold=0)
    return path


def test_the_estimate_counts_the_external_data(tmp_path: Path) -> None:
    src = _external(tmp_path / "m")
    w = weight_bytes(src)
    assert w == src.stat().st_size + 256 * 256 * 4
    est = check_fix_fits([("model", src, "int8", False), ("vision", src, "fp32", False)])  # fp32 rewrites are not modelled
    assert est.files == {"model": (w, BASE_BYTES + int(FACTORS["int8"] * w), "int8")}


def test_a_conversion_that_cannot_fit_exits_2_before_writing(tmp_path: Path) -> None:
    src = _external(tmp_path / "m")
    out = tmp_path / "out" / "model.onnx"
    env = {**os.environ, "STUDIO_FIX_MEMORY": "0.5"}
    r = subprocess.run([sys.executable, "-m", "studio.cli.main", "fix", str(src), "--int8", "--out", str(out)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 2, r.stderr
    assert "converting 'model' to int8 will not fit in memory" in r.stderr and "0.5 GB free (STUDIO_FIX_MEMORY)" in r.stderr
    assert "ways out: run it on a machine with" in r.stderr
    assert not out.parent.exists()  # nothing half-written
    r = subprocess.run([sys.executable, "-m", "studio.cli.main", "fix", str(src), "--int8", "--out", str(out)],
                       capture_output=True, text=True, env={k: v for k, v in env.items() if k != "STUDIO_FIX_MEMORY"})
    assert r.returncode == 0, r.stderr
    assert out.is_file()
