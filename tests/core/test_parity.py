"""studio.core.parity: one tolerance rule, seeded inputs from runner specs, two real ONNX Runtime runners."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from studio.core.errors import ModelError
from studio.core.parity import (
    ID_HIGH,
    REWRITE,
    TOLERANCES,
    Tolerance,
    compare,
    compare_output,
    cosine,
    random_inputs,
    run_parity,
)
from studio.core.runner import ChainedRunner, OnnxRuntimeRunner, ort_session


def _model(path: Path, bias: float, *, x_type: int = TensorProto.FLOAT) -> Path:
    """y = x + bias (x: [batch, 4]); ids: an int64 input the graph ignores but declares."""
    nodes = [helper.make_node("Cast", ["x"], ["xf"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["xf", "b"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", x_type, ["batch", 4]),
                                           helper.make_tensor_value_info("attention_mask", TensorProto.INT64,
                                                                         ["batch", 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
                              [helper.make_tensor("b", TensorProto.FLOAT, [1], [bias])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_cosine_of_two_all_zero_outputs_is_agreement() -> None:
    """A ReLU head on a batch whose sums are all negative gives zeros on both sides: the same output (the rknn
    backend judged it cosine 0 and failed a correct build)."""
    zeros = np.zeros((1, 8), np.float32)
    rows = compare({"y": zeros}, {"y": zeros.copy()}, Tolerance(1e-4, 1e-3))
    assert rows[0].passed and rows[0].cosine == 1.0
    rows = compare({"y": zeros}, {"y": np.ones((1, 8), np.float32)}, Tolerance(1e-4, 1e-3))
    assert not rows[0].passed and rows[0].cosine == 0.0


def test_one_rule_elementwise_then_cosine() -> None:
    ref = np.linspace(1, 2, 100).astype(np.float32)
    near = ref + 1e-3  # within rtol 1e-3 * |ref| + atol 1e-4 for every element
    assert compare_output("y", ref, near, TOLERANCES["fp32"]).passed
    assert not compare_output("y", ref, near, REWRITE).passed  # a rewrite is held to atol 1e-4 alone
    flipped = ref.copy()
    flipped[0] = -50.0  # one element far off: int8 judges the direction, which still holds
    row = compare_output("y", ref, flipped, TOLERANCES["int8"])
    assert row.cosine is not None and row.cosine < 0.98 and not row.passed
    assert compare_output("y", ref, ref * 1.5, TOLERANCES["int8"]).passed  # scale: cosine 1, atol infinite
    assert not compare_output("y", ref, np.full_like(ref, np.nan), TOLERANCES["int8"]).passed
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an fp16 graph's saturated values: a non-finite cosine, never a warning
        assert not np.isfinite(cosine(np.full(4, 1e300), np.full(4, 1e300)))
    wrong = compare_output("y", ref, ref.reshape(10, 10), TOLERANCES["fp32"])
    assert not wrong.passed and wrong.shape == [10, 10] and wrong.max_abs == float("inf")


def test_missing_and_renamed_outputs() -> None:
    a = np.ones(3, np.float32)
    rows = compare({"y": a, "z": a}, {"y": a}, TOLERANCES["fp32"])
    assert [r.passed for r in rows] == [True, False]
    rows = compare({"y": a}, {"renamed": a}, TOLERANCES["fp32"])  # every name changed: matched by position
    assert rows[0].output == "y" and rows[0].passed


def test_random_inputs_from_specs() -> None:
    specs = {"input_ids": ("tensor(int64)", ["batch", "sequence"]), "attention_mask": ("int64", ["batch", "sequence"]),
             "pixel_values": ("tensor(float16)", [None, 3, 4, 4]), "flag": ("tensor(bool)", [2])}
    a = random_inputs(specs, shapes={"input_ids": [3, 5]}, dims={"Batch": 9}, rng=7)
    assert a["input_ids"].shape == (3, 5) and a["attention_mask"].shape == (3, 5)  # the symbols the shape fixed
    assert a["input_ids"].dtype == np.int64 and 0 <= a["input_ids"].min() and a["input_ids"].max() < ID_HIGH
    assert (a["attention_mask"] == 1).all() and a["flag"].all() and a["flag"].dtype == np.bool_
    assert a["pixel_values"].dtype == np.float16 and a["pixel_values"].shape == (2, 3, 4, 4)
    b = random_inputs(specs, shapes={"input_ids": [3, 5]}, rng=7)
    assert all(np.array_equal(a[k], b[k]) for k in a)  # seeded
    c = random_inputs({"x": ("float32", ["BATCH", 4])}, dims={"batch": 1}, default_dim=8)
    assert c["x"].shape == (1, 4)  # a symbol matched lower-cased


def test_run_parity_through_two_ort_runners(tmp_path: Path) -> None:
    ref, off = _model(tmp_path / "a.onnx", 0.0), _model(tmp_path / "b.onnx", 1e-2)
    with OnnxRuntimeRunner(ref) as r, OnnxRuntimeRunner(off) as c:
        strict = run_parity(r, c, tolerance=REWRITE, cases=2, dims={"batch": 3})
        loose = run_parity(r, c, tolerance=TOLERANCES["fp16"], cases=2)
    assert not strict.passed and strict.cases[0].input_shapes["x"] == [3, 4]
    assert abs(strict.extremes()[0] - 1e-2) < 1e-6
    assert loose.passed and len(loose.cases) == 2 and loose.cases[0].outputs[0].shape == [2, 4]
    assert "PASSED" in loose.summary_line("parity", "ORT") and "(>= 0.999)" in loose.summary_line("p", "ORT")


def test_candidate_with_other_input_types_and_a_chain(tmp_path: Path) -> None:
    """A candidate that takes x as float16: the feed made from its specs is cast for the reference; a chain
    feeds the first runner's outputs to the second."""
    ref = _model(tmp_path / "a.onnx", 0.0)
    half = _model(tmp_path / "h.onnx", 0.0, x_type=TensorProto.FLOAT16)
    with OnnxRuntimeRunner(ref) as r, OnnxRuntimeRunner(half) as c:
        rep = run_parity(r, c, tolerance=TOLERANCES["fp16"], cast_for_reference=True)
    assert rep.passed and rep.cases[0].error is None
    ident = helper.make_model(helper.make_graph(
        [helper.make_node("Identity", ["x"], ["x2"])], "h", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("x2", TensorProto.FLOAT, [2, 4])]), opset_imports=[helper.make_opsetid("", 17)])
    with OnnxRuntimeRunner(ref) as r:
        chain = ChainedRunner(OnnxRuntimeRunner(ident), OnnxRuntimeRunner(ref))
        rep = run_parity(r, chain, tolerance=REWRITE, feeds=[{"x": np.ones((2, 4), np.float32),
                                                              "attention_mask": np.ones((2, 4), np.int64)}])
    assert rep.passed and not chain.active and not r.active


def test_a_run_that_raises_is_a_failed_case(tmp_path: Path) -> None:
    ref = _model(tmp_path / "a.onnx", 0.0)
    with OnnxRuntimeRunner(ref) as r:
        rep = run_parity(r, r, tolerance=REWRITE, feeds=[{"x": np.ones((2, 5), np.float32)}])
    assert not rep.passed and rep.cases[0].error and not rep.cases[0].outputs


def test_ort_session_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "broken.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(ModelError, match="broken.onnx"):
        ort_session(bad)
    with pytest.raises(Exception) as info:  # export diagnoses ORT's own words
        ort_session(bad, error=None)
    assert not isinstance(info.value, ModelError)


def test_a_decoder_with_past_gets_a_mask_over_cache_and_new_tokens() -> None:
    """total_sequence = past_sequence + sequence (the studio's decoder-with-past contract): a mask as long as the
    new tokens alone made the fp16 fix of a tiny Qwen2 with its KV cache fail in ONNX Runtime's Gather."""
    from studio.core.parity import random_inputs

    specs = {"input_ids": ("tensor(int64)", ["batch", "sequence"]),
             "attention_mask": ("tensor(int64)", ["batch", "total_sequence"]),
             "past_key_values.0.key": ("tensor(float)", ["batch", 2, "past_sequence", 8])}
    feed = random_inputs(specs, dims={"sequence": 3, "past_sequence": 5})
    assert feed["attention_mask"].shape == (2, 8) and feed["past_key_values.0.key"].shape == (2, 2, 5, 8)
    assert random_inputs(specs)["attention_mask"].shape == (2, 4)  # both defaulted: 2 + 2
    assert random_inputs(specs, dims={"total_sequence": 6})["attention_mask"].shape == (2, 6)  # given wins
