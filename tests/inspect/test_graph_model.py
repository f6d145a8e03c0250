"""Whole-graph rules (a profile's ``graph:`` section, studio.inspect.graph_model) and the whole-model verdict:
shape arithmetic folds at the build's static shapes, integer / boolean work and runtime-index lookups go to the
host, and the verdict of the model says so in the vocabulary every verifier speaks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx.helper as h
import pytest
import yaml
from inspect_models import make, save, vi
from onnx import TensorProto as T
from onnx import numpy_helper as nh

from studio.cli.main import main
from studio.inspect.api import inspect_model
from studio.inspect.model_verdict import FAILS, FALLBACK, RUNS, ModelVerdict
from studio.inspect.profiles import builtin_dir
from studio.inspect.report import InspectionReport


def _text_encoder() -> object:
    """A text embedding the way exporters write it: a token lookup by input_ids, position ids sliced by
    Shape(input_ids), an Expand of the mask to the attention's shape, and the mask's casts."""
    emb = nh.from_array(np.random.default_rng(0).standard_normal((16, 4)).astype(np.float32), "emb")
    pos = nh.from_array(np.arange(8, dtype=np.int64).reshape(1, 8), "pos")
    w = nh.from_array(np.ones(4, np.float32), "ln_w")
    b = nh.from_array(np.zeros(4, np.float32), "ln_b")
    c = {n: nh.from_array(np.array(v, np.int64), n) for n, v in
         (("zero", [0]), ("one", [1]), ("starts", [0]), ("axis1", [1]), ("four", [4]))}
    nodes = [
        h.make_node("Gather", ["emb", "input_ids"], ["tok"], name="token_lookup"),
        h.make_node("Shape", ["input_ids"], ["ids_shape"], name="ids_shape"),
        h.make_node("Gather", ["ids_shape", "one"], ["seq"], name="seq_len", axis=0),
        h.make_node("Slice", ["pos", "starts", "seq", "axis1"], ["pos_ids"], name="pos_slice"),
        h.make_node("Gather", ["emb", "pos_ids"], ["pos_emb"], name="pos_lookup"),
        h.make_node("Add", ["tok", "pos_emb"], ["x"], name="add_pos"),
        h.make_node("LayerNormalization", ["x", "ln_w", "ln_b"], ["xn"], name="ln", axis=-1),
        h.make_node("Cast", ["attention_mask"], ["mask_b"], name="mask_to_bool", to=T.BOOL),
        h.make_node("Not", ["mask_b"], ["pad"], name="mask_not"),
        h.make_node("Unsqueeze", ["pad", "axis1"], ["pad3"], name="mask_unsqueeze"),
        h.make_node("Shape", ["xn"], ["x_shape"], name="x_shape"),
        h.make_node("Gather", ["x_shape", "zero"], ["batch"], name="batch_dim", axis=0),
        h.make_node("Concat", ["batch", "seq", "four"], ["mask_shape"], name="mask_shape", axis=0),
        h.make_node("Transpose", ["pad3"], ["pad3t"], name="mask_t", perm=[0, 2, 1]),
        h.make_node("Expand", ["pad3t", "mask_shape"], ["pad_full"], name="mask_expand"),
        h.make_node("Cast", ["pad_full"], ["pad_f"], name="mask_to_float", to=T.FLOAT),
        h.make_node("Mul", ["xn", "pad_f"], ["y"], name="apply_mask"),
    ]
    return make(nodes, [vi("input_ids", T.INT64, ["batch", "sequence"]),
                        vi("attention_mask", T.INT64, ["batch", "sequence"])],
                [vi("y", T.FLOAT, ["batch", "sequence", 4])], [emb, pos, w, b, *c.values()])


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save(_text_encoder(), tmp_path_factory.mktemp("graph") / "encoder.onnx")


def test_folded_shape_arithmetic_is_no_const_input_violation(encoder: Path) -> None:
    rep = inspect_model(encoder, ["rk3588"])
    v, why = rep.node_verdicts["rk3588"], rep.node_reasons["rk3588"]
    # Slice's end and Expand's shape come from Shape(input_ids): constants once load_onnx fixes the shapes
    assert not [f for f in rep.findings if f.rule == "constraint-const-input"]
    assert v["ids_shape"] == v["seq_len"] == v["mask_shape"] == "supported" and "folded" in why["seq_len"]
    assert v["pos_slice"] == v["pos_lookup"] == "supported"  # a constant table sliced by a folded index
    mv = rep.targets["rk3588"].model
    assert mv is not None and mv.verdict == FALLBACK and mv.source == "static"
    assert "rknn-toolkit2 2.5.0" in mv.by and "whole-graph rules" in mv.by
    host = {h.node: h.reason for h in mv.host_nodes}
    # the token lookup by a runtime index, the mask's integer / boolean work, a Cast from bool (the op list's
    # CPU Cast); the LayerNorm (constant scale and bias: exNorm), the layout ops and the float Mul: the NPU
    assert set(host) == {"token_lookup", "mask_to_bool", "mask_not", "mask_expand", "mask_to_float"}
    assert "index computed at run time" in host["token_lookup"] and "bool" in host["mask_not"]
    assert "runs on the CPU" in host["mask_to_float"]
    assert v["ln"] == "supported" and "exNorm" in why["ln"]
    assert v["mask_unsqueeze"] == v["mask_t"] == v["apply_mask"] == "supported"


def test_fallback_cost_at_the_given_shapes(encoder: Path) -> None:
    rep = inspect_model(encoder, ["rk3588"], shapes={"input_ids": [1, 8], "attention_mask": [1, 8]})
    mv = rep.targets["rk3588"].model
    assert mv is not None and mv.cost is not None
    # token rows go host -> NPU, the expanded mask comes back to the float Mul
    assert mv.cost.transfers >= 2 and mv.cost.transfer_bytes >= 8 * 4 * 4
    assert 0 <= mv.cost.host_flops_share < 1 and mv.cost.total_flops > 0
    assert "node(s) on the host" in mv.summary() and "transfer" in mv.summary()


def test_the_rules_come_from_the_profile_file(encoder: Path, tmp_path: Path) -> None:
    """The same profile without its graph: section judges node by node, as before (Expand refused)."""
    data = yaml.safe_load((builtin_dir() / "rk3588.yaml").read_text())
    data.pop("graph")
    (tmp_path / "rk3588.yaml").write_text(yaml.safe_dump(data))
    rep = inspect_model(encoder, ["rk3588"], profile_dirs=[tmp_path])
    assert rep.node_verdicts["rk3588"]["mask_expand"] == "unsupported"
    mv = rep.targets["rk3588"].model
    assert mv is not None and mv.verdict == FAILS and mv.blockers[0].rule == "constraint-const-input"


def test_other_targets_judge_the_whole_model_too(encoder: Path) -> None:
    rep = inspect_model(encoder, ["ort-cpu", "tensorrt", "hailo-8"])
    assert rep.targets["ort-cpu"].model.verdict == RUNS  # type: ignore[union-attr]
    assert rep.targets["hailo-8"].model.verdict == "unknown"  # type: ignore[union-attr]


def test_model_verdicts_round_trip_through_json(encoder: Path) -> None:
    rep = inspect_model(encoder, ["rk3588", "ort-cpu"])
    back = InspectionReport.from_dict(json.loads(rep.to_json()))
    assert isinstance(back.targets["rk3588"].model, ModelVerdict)
    assert back.targets["rk3588"].model.to_dict() == rep.targets["rk3588"].model.to_dict()  # type: ignore[union-attr]


def test_cli_text_and_json_carry_the_whole_model_verdict(encoder: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["inspect", str(encoder), "-t", "rk3588", "-q"]) == 0
    out = capsys.readouterr().out
    assert "whole model (static" in out and "rk3588       runs, with 5 node(s) on the host" in out
    assert main(["inspect", str(encoder), "-t", "rk3588", "-q", "-f", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    model = data["targets"]["rk3588"]["model"]
    assert model["verdict"] == FALLBACK and model["source"] == "static" and len(model["host_nodes"]) == 5
    assert set(data["verifiers"]) <= {"rk3588"}  # what --verify would ask, from the manifests


def test_casts_by_element_type(tmp_path: Path) -> None:
    nodes = [h.make_node("Cast", ["x"], ["x16"], name="to_half", to=T.FLOAT16),
             h.make_node("Cast", ["x16"], ["x16b"], name="to_itself", to=T.FLOAT16),
             h.make_node("Cast", ["x16b"], ["x32"], name="to_float", to=T.FLOAT),
             h.make_node("Cast", ["x32"], ["xi"], name="to_int", to=T.INT32)]
    p = save(make(nodes, [vi("x", T.FLOAT, [1, 4])], [vi("xi", T.INT32, [1, 4])]), tmp_path / "casts.onnx")
    rep = inspect_model(p, ["rk3588"])
    v, why = rep.node_verdicts["rk3588"], rep.node_reasons["rk3588"]
    assert v["to_half"] == v["to_float"] == "supported" and "float16" in why["to_half"]
    assert v["to_itself"] == "supported" and "removes it" in why["to_itself"]
    assert v["to_int"] == "risky" and "int32" in why["to_int"]


def _pooled(tmp_path: Path) -> Path:
    """CLIP's pooled token: hidden[arange(batch), argmax(ids)] as exported, ``arange(batch) * seq + argmax``."""
    c = {n: nh.from_array(np.array(v, np.int64), n) for n, v in (("zero", 0), ("one", 1), ("i0", [0]),
                                                                 ("i1", [1]), ("m1", [-1]))}
    nodes = [h.make_node("ArgMax", ["input_ids"], ["am"], name="argmax", axis=-1, keepdims=0),
             h.make_node("Shape", ["hidden"], ["hs"], name="hshape"),
             h.make_node("Gather", ["hs", "zero"], ["b"], name="batch", axis=0),
             h.make_node("Range", ["zero", "b", "one"], ["rows"], name="rows"),
             h.make_node("Gather", ["hs", "one"], ["s"], name="seq", axis=0),
             h.make_node("Mul", ["rows", "s"], ["offs"], name="offsets"),
             h.make_node("Add", ["am", "offs"], ["flat_idx"], name="pooled_index"),
             h.make_node("Reshape", ["hidden", "m1"], ["flat"], name="flatten_rows", allowzero=0),
             h.make_node("Gather", ["flat", "flat_idx"], ["pooled"], name="pooled_gather", axis=0)]
    m = make(nodes, [vi("input_ids", T.INT64, ["batch", "sequence"]), vi("hidden", T.FLOAT, ["batch", "sequence"])],
             [vi("pooled", T.FLOAT, ["batch"])], list(c.values()))
    return save(m, tmp_path / "pooled.onnx")


@pytest.mark.parametrize("batch,dropped", [(1, True), (2, False)])
def test_an_add_of_zero_at_build_is_dropped(tmp_path: Path, batch: int, dropped: bool) -> None:
    """At batch 1 arange(batch) * seq is [0]: the toolkit's remove_invalid_add drops the Add; at batch 2 it runs
    (on the host: integer work). The values come from the shapes given (--shape)."""
    model = _pooled(tmp_path)
    rep = inspect_model(model, ["rk3588"], shapes={"input_ids": [batch, 8], "hidden": [batch, 8]})
    why = rep.node_reasons["rk3588"].get("pooled_index", "")
    host = {x.node for x in rep.targets["rk3588"].model.host_nodes}  # type: ignore[union-attr]
    assert ("pooled_index" not in host) is dropped and ("all zeros at build" in why) is dropped
    assert {"argmax", "pooled_gather"} <= host
