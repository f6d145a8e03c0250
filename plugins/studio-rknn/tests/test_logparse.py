"""The toolkit's log read without the toolkit (saved logs of rknn-toolkit2 2.5.0 runs)."""

from __future__ import annotations

from pathlib import Path

from studio_rknn.logparse import lineage, parse_accuracy, parse_log

DATA = Path(__file__).parent / "data"


def test_layer_table_and_lineage_of_the_mlp() -> None:
    log = parse_log((DATA / "mlp.log").read_text())
    assert [(ly.op_type, ly.target, ly.name) for ly in log.layers] == [
        ("InputOperator", "CPU", "x"), ("Reshape", "NPU", "x_rs"), ("ConvRelu", "NPU", "mm1#2"),
        ("Conv", "NPU", "mm2#2"), ("Reshape", "CPU", "y_mm_tp_rs"), ("OutputOperator", "CPU", "y")]
    assert not log.errors and not log.fallbacks  # "Unkown op target: 0" is printed on every build: noise
    desc = lineage(log.rewrites, ["mm1", "relu", "mm2"])
    assert desc["mm1"] == {"mm1#2"} and "mm2#2" in desc["mm2"]


def test_cpu_lowering_fallback_is_read_with_the_toolkits_words() -> None:
    log = parse_log((DATA / "isnan.log").read_text())
    op, line = log.fallbacks["isnan_node"]
    assert op == "IsNaN"
    assert line == "No lowering found for: isnan_node, node type = IsNaN, use CustomOperatorLower instead."
    assert {ly.name: ly.target for ly in log.layers}["isnan_node"] == "CPU"


def test_build_error_and_traceback_exception_lines() -> None:
    log = parse_log((DATA / "resize_dynamic.log").read_text())
    assert log.first_error().startswith("build: The input 2 of Resize('Y') need to be constant!")
    tb = parse_log((DATA / "load_traceback.log").read_text())
    assert tb.first_error() == "AttributeError: 'list' object has no attribute 'HasField'"


def test_accuracy_analysis_rows() -> None:
    rows = parse_accuracy((DATA / "error_analysis.txt").read_text())
    by = {r["tensor"]: r for r in rows}
    assert by["x"]["entire_cos"] == 1.0 and by["y_int8"]["single_cos"] < 1.0


def test_a_toolkit_crash_is_told_from_its_refusal() -> None:
    """BLIP's build dies in the toolkit's own fold_constant (TypeError): the toolkit's fault, with its trace; a
    Resize with a non-constant scale is the toolkit refusing the model (its words, then a ValueError)."""
    crash = parse_log((DATA / "blip_build_crash.log").read_text()).crash()
    assert crash is not None and crash.stage == "build" and crash.internal
    assert crash.exception == "TypeError: argument of type 'NoneType' is not iterable"
    assert "graph_optimizer.GraphOptimizer.fold_constant" in crash.text
    refusal = parse_log((DATA / "resize_dynamic.log").read_text())
    assert refusal.crash() is None and refusal.traces and not refusal.traces[0].internal
    assert refusal.refusals[0].startswith("build: The input 2 of Resize('Y') need to be constant!")


def test_crash_results_name_the_tool_and_never_refuse_a_node() -> None:
    from studio_rknn.verifier import ModelInputs, RknnVerifier, result_from_run

    log = parse_log((DATA / "blip_build_crash.log").read_text())
    v = RknnVerifier(name="rknn-rk3588", target="rk3588", platform="rk3588")
    rec = {"reached": "load", "failed_stage": "build", "error": "TypeError: argument of type 'NoneType' is not "
           "iterable"}
    res = result_from_run(v, rec, log, ModelInputs([], []), "rknn-toolkit2 2.5.0", {}, 1.0)
    assert res.crash.startswith("rknn-toolkit2 2.5.0 failed inside its own code at build")
    assert "TypeError" in res.crash and res.error.startswith("build: TypeError")
    stalled = result_from_run(v, {"reached": "build", "failed_stage": "timeout", "error": "did not finish"},
                              parse_log(""), ModelInputs([], []), "rknn-toolkit2 2.5.0", {}, 1.0)
    assert stalled.crash == "rknn-toolkit2 2.5.0: did not finish"
    refused = result_from_run(v, {"reached": "load", "failed_stage": "build", "error": "ValueError: x"},
                              parse_log((DATA / "resize_dynamic.log").read_text()), ModelInputs([], []),
                              "rknn-toolkit2 2.5.0", {}, 1.0)
    assert not refused.crash and refused.error.startswith("build: The input 2 of Resize('Y')")
