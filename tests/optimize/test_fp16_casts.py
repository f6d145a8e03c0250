"""`studio fix --fp16` on the Cast patterns exporters write, which onnxconverter-common 1.16 gets wrong: a no-op
``Cast(float -> float)`` on a graph input in front of a Conv (CLIP's ``pixel_values.to(weight.dtype)``), and an
integer -> float Cast feeding float math (rotary position ids, ViLT / WavLM masks). Before the repairs in
studio.optimize.passes ONNX Runtime refused the converted file ("Type parameter (T) of Optype (Conv) bound to
different types"; "Type (tensor(float16)) of output arg ... does not match expected type (tensor(float))")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnx.helper as h
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import numpy_helper

from studio.optimize.api import fix_model


def _exporter_like(path: Path) -> Path:
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((1, 3, 4, 4)).astype(np.float32) * 0.2, "patch.w")
    scale = numpy_helper.from_array(np.full((1,), 0.01, np.float32), "scale")
    nodes = [h.make_node("Cast", ["pixel_values"], ["pv"], name="noop_cast", to=T.FLOAT),
             h.make_node("Conv", ["pv", "patch.w"], ["c"], name="patch", strides=[4, 4]),
             h.make_node("Flatten", ["c"], ["f"], name="flatten"),  # [batch, 16]
             h.make_node("Cast", ["position_ids"], ["pos"], name="pos_cast", to=T.FLOAT),  # [batch, 16]
             h.make_node("Mul", ["pos", "scale"], ["freq"], name="freq"),
             h.make_node("Cos", ["freq"], ["cos"], name="cos"),
             h.make_node("Mul", ["f", "cos"], ["embeds"], name="rotate")]
    g = h.make_graph(nodes, "exporter_like",
                     [h.make_tensor_value_info("pixel_values", T.FLOAT, ["batch", 3, 16, 16]),
                      h.make_tensor_value_info("position_ids", T.INT64, ["batch", 16])],
                     [h.make_tensor_value_info("embeds", T.FLOAT, ["batch", 16])], [w, scale])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), str(path))
    return path


def test_fp16_repairs_the_converters_casts(tmp_path: Path) -> None:
    src = _exporter_like(tmp_path / "m.onnx")
    out = tmp_path / "fixed" / "m16.onnx"
    rep = fix_model(src, out, fp16=True, targets=["ort-cpu"])
    assert rep.passed and rep.files[0].precision == "fp16"
    m = onnx.load(str(out))
    assert not any(n.name == "noop_cast" for n in m.graph.node)  # dropped before the converter saw it
    assert any(t.data_type == T.FLOAT16 for t in m.graph.initializer)
    sess = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])  # refused before the repairs
    rng = np.random.default_rng(1)
    feed = {"pixel_values": rng.standard_normal((2, 3, 16, 16)).astype(np.float32),
            "position_ids": np.tile(np.arange(16, dtype=np.int64), (2, 1))}
    got = sess.run(None, feed)[0]
    ref = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).run(None, feed)[0]
    assert got.dtype == np.float32 and np.allclose(got, ref, atol=5e-2)
