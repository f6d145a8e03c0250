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
