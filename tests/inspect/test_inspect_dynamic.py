"""Dynamic dims traced to their origin and marked on every tensor they reach."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_models import nonzero_model, save

from studio.inspect.api import inspect_model
from studio.inspect.synthetic import save_transformer


def test_nonzero_is_a_data_dependent_origin(tmp_path: Path) -> None:
    rep = inspect_model(save(nonzero_model(), tmp_path / "nz.onnx"), ["ort-cpu"])
    d = rep.dynamic
    assert d.dynamic_inputs == {}  # the input is static: all dynamism comes from NonZero
    assert [o.id for o in d.origins] == ["node:nonzero"]
    o = d.origins[0]
    assert o.kind == "data-dependent" and o.op_type == "NonZero" and o.reaches == 2
    assert set(d.tensors) == {"nz", "idx"}
    assert d.tensors["idx"].origins == ["node:nonzero"] and d.tensors["nz"].producer == "nonzero"
    assert "r" not in d.tensors and rep.fails_on("dynamic")


def test_clip_like_transformer_traces_batch_and_sequence(tmp_path: Path) -> None:
    """A CLIP-text-like graph built with onnx.helper (Shape -> Gather -> Range / Concat -> Reshape)."""
    rep = inspect_model(save_transformer(tmp_path / "t.onnx", layers=2), ["ort-cpu"])
    d = rep.dynamic
    b, s = "input:input_ids[0]=batch", "input:input_ids[1]=sequence"
    assert {o.id for o in d.origins} == {b, s}
    assert set(d.tensors["last_hidden_state"].origins) == {b, s}
    assert d.tensors["pooler_output"].origins == [b]  # the first-token Gather drops the sequence axis
    assert d.tensors["embeddings/position_ids_out"].origins == [s]  # Range(0, Shape(input_ids)[1]) -> sequence
    assert "embeddings/position_ids" not in d.data_dependent_nodes  # shape arithmetic, not data-dependent
    attn = d.tensors["layers.0/softmax_out"]
    assert set(attn.origins) == {b, s} and attn.shape is not None and len(attn.shape) == 4
    assert next(o for o in d.origins if o.id == b).reaches >= next(o for o in d.origins if o.id == s).reaches
    static = inspect_model(save_transformer(tmp_path / "s.onnx", layers=2, dynamic=False), ["ort-cpu"])
    assert static.dynamic.is_static and not static.dynamic.tensors and not static.fails_on("dynamic")


def test_data_dependent_reshape_is_its_own_origin(tmp_path: Path) -> None:
    import onnx.helper as h
    from inspect_models import make, vi
    from onnx import TensorProto as T

    m = make([h.make_node("Cast", ["shape_src"], ["shape"], name="cast", to=T.INT64),
              h.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
             [vi("x", T.FLOAT, [2, 6]), vi("shape_src", T.FLOAT, [2])], [vi("y", T.FLOAT, None)])
    rep = inspect_model(save(m, tmp_path / "r.onnx"), ["rk3588"])
    assert "reshape" in rep.dynamic.data_dependent_nodes
    assert rep.dynamic.tensors["y"].origins == ["node:reshape"]


@pytest.mark.export
@pytest.mark.slow
def test_exported_tiny_clip_dynamic_batch_and_sequence(tmp_path: Path) -> None:
    """The real exporter's tiny CLIP: dims trace back to input_ids / pixel_values."""
    import subprocess
    import sys

    pytest.importorskip("studio.export.samples")
    # A fresh interpreter: the export imports torch, and keeps torch out of this process.
    code = ("import sys; from pathlib import Path; from studio.export.api import write_sample, export_model, "
            "ExportOptions; d = Path(sys.argv[1]); hf = write_sample('tiny-clip', d / 'hf'); "
            "r = export_model(ExportOptions(model_dir=hf, output=d / 'onnx' / 'model.onnx')); "
            "print(r.status, r.diagnosis); sys.exit(0 if r.status == 'succeeded' else 1)")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    ins = inspect_model(tmp_path / "onnx" / "model.onnx", ["all"])
    ids = {o.id for o in ins.dynamic.origins}
    assert "input:input_ids[0]=batch" in ids and "input:input_ids[1]=sequence" in ids
    assert "input:pixel_values[0]=batch" in ids
    assert not ins.dynamic.data_dependent_nodes
    seq = "input:input_ids[1]=sequence"
    # sequence reaches the text tower's activations (and only those); the pooled embeddings are [batch, proj]
    reached = [name for name, t in ins.dynamic.tensors.items() if seq in t.origins]
    assert any("/text_model/encoder/" in name for name in reached)
    assert not [name for name in reached if "/vision_model/" in name]
    assert "input:input_ids[0]=batch" in ins.dynamic.tensors["text_embeds"].origins
    assert seq not in ins.dynamic.tensors["text_embeds"].origins
    assert seq not in ins.dynamic.tensors["image_embeds"].origins
    assert ins.targets["qnn-htp"].verdict == "fail"  # QNN refuses dynamic shapes
    assert ins.targets["ort-cpu"].verdict == "pass"


def test_a_loop_body_input_that_grows_is_a_control_flow_origin(tmp_path: Path) -> None:
    """A Loop carrying a tensor that grows each iteration (Concat): the body's formal input has a dim the graph
    cannot know, and that dim comes from the iteration (the rule keyed on the body's owner)."""
    import numpy as np
    import onnx.helper as h
    from inspect_models import make, vi
    from onnx import TensorProto as T
    from onnx import numpy_helper

    body = h.make_graph(
        [h.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond"),
         h.make_node("Concat", ["acc", "one"], ["acc_out"], name="body_grow", axis=0)],
        "grow_body",
        [vi("iter", T.INT64, []), vi("cond_in", T.BOOL, []), vi("acc", T.FLOAT, ["n", 4])],
        [vi("cond_out", T.BOOL, []), vi("acc_out", T.FLOAT, ["m", 4])],
        [numpy_helper.from_array(np.ones((1, 4), np.float32), "one")])
    trip = numpy_helper.from_array(np.array(3, dtype=np.int64), "trip")
    cond0 = numpy_helper.from_array(np.array(True), "cond0")
    loop = h.make_node("Loop", ["trip", "cond0", "x"], ["y"], name="grow", body=body)
    rep = inspect_model(save(make([loop], [vi("x", T.FLOAT, [1, 4])], [vi("y", T.FLOAT, None)], [trip, cond0]),
                             tmp_path / "loop.onnx"), ["ort-cpu"])
    body_origins = [o for o in rep.dynamic.origins if o.kind == "control-flow" and o.tensor == "acc"]
    assert len(body_origins) == 1, [o.id for o in rep.dynamic.origins]
    o = body_origins[0]
    assert o.op_type == "Loop" and o.node == "grow" and "changes per iteration" in o.description
