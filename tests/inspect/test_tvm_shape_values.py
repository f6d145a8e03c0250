"""The tvm-relax shape-value rule (studio/inspect/shape_values.py) on small onnx.helper models, and, where
apache-tvm is installed, the real ``from_onnx`` import agreeing with it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from studio.core.errors import TargetError
from studio.inspect.api import inspect_model
from studio.inspect.profiles import parse_profile

HAS_TVM = importlib.util.find_spec("tvm") is not None
needs_tvm = pytest.mark.skipif(not HAS_TVM, reason="apache-tvm not installed (pip install 'deployment-studio[compile]')")


def _save(nodes: list, inputs: list, outputs: list, path: Path, inits: list | None = None, opset: int = 17) -> Path:
    g = h.make_graph(nodes, "g", inputs, outputs, initializer=inits or [])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", opset)]), str(path))
    return path


def _i64(name: str, vals: list[int], dims: list[int] | None = None) -> onnx.TensorProto:
    return h.make_tensor(name, T.INT64, [len(vals)] if dims is None else dims, vals)


def shape_div(path: Path) -> Path:
    """Shape read directly by Div: TVM refuses it (Div's converter takes tensors only)."""
    return _save([h.make_node("Shape", ["x"], ["s"], name="shape"), h.make_node("Div", ["s", "two"], ["y"], name="div")],
                 [h.make_tensor_value_info("x", T.FLOAT, [2, 4])], [h.make_tensor_value_info("y", T.INT64, [2])],
                 path, [_i64("two", [2])])


def shape_reshape(path: Path) -> Path:
    """Static shapes: Shape -> Reshape takes the shape value as it is."""
    return _save([h.make_node("Shape", ["x"], ["s"], name="shape"),
                  h.make_node("Reshape", ["z", "s"], ["y"], name="reshape")],
                 [h.make_tensor_value_info("x", T.FLOAT, [2, 4]), h.make_tensor_value_info("z", T.FLOAT, [8])],
                 [h.make_tensor_value_info("y", T.FLOAT, [2, 4])], path)


def dynamic_flatten(path: Path) -> Path:
    """The exporter's pattern, symbolic batch: Shape -> Gather(0-D) -> Unsqueeze -> Concat -> Reshape stays a shape."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "zero"], ["n"], name="gather"),
             h.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsqueeze"),
             h.make_node("Concat", ["n1", "minus_one"], ["new"], axis=0, name="concat"),
             h.make_node("Reshape", ["x", "new"], ["y"], name="reshape")]
    return _save(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["N", 3, 4])],
                 [h.make_tensor_value_info("y", T.FLOAT, ["N", 12])], path,
                 [_i64("zero", [0], []), _i64("axes", [0]), _i64("minus_one", [-1])])


def shape_cast_div(path: Path) -> Path:
    """Cast is in TVM's list and turns the (static) shape into a constant: the Div after it is fine."""
    return _save([h.make_node("Shape", ["x"], ["s"], name="shape"), h.make_node("Cast", ["s"], ["c"], to=T.INT64),
                  h.make_node("Div", ["c", "two"], ["y"], name="div")],
                 [h.make_tensor_value_info("x", T.FLOAT, [2, 4])], [h.make_tensor_value_info("y", T.INT64, [2])],
                 path, [_i64("two", [2])])


def cast_then_reshape(path: Path, start: int = 0) -> Path:
    """Symbolic batch: Cast of the whole shape makes a runtime tensor (Reshape refuses it); Cast of the static
    tail (Shape start=1) folds to a constant, which Concat turns back into a shape value."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape", **({"start": start} if start else {})),
             h.make_node("Cast", ["s"], ["c"], to=T.INT64, name="cast"),
             h.make_node("Concat", ["minus_one", "c"] if start else ["c"], ["new"], axis=0, name="concat"),
             h.make_node("Reshape", ["x", "new"], ["y"], name="reshape")]
    return _save(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["N", 3, 4])],
                 [h.make_tensor_value_info("y", T.FLOAT, None)], path, [_i64("minus_one", [-1])])


def cast_tail(path: Path) -> Path:
    return cast_then_reshape(path, start=1)


def runtime_reshape(path: Path) -> Path:
    """Reshape whose new shape is a graph input (a runtime tensor, not a shape value): TVM refuses it."""
    return _save([h.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
                 [h.make_tensor_value_info("x", T.FLOAT, [2, 4]), h.make_tensor_value_info("shape", T.INT64, [2])],
                 [h.make_tensor_value_info("y", T.FLOAT, None)], path)


def range_broadcast(path: Path, new_shape: tuple[int, ...] = (-1,), rows: int = 6) -> Path:
    """Qwen2-VL's vision rotary pattern: Range over a dim read from a shape (TVM's Range converter gives it a fresh
    length, range_len_0), broadcast by Mul against x's static rows; Relax keeps the rank only, so a Reshape with a
    -1 cannot infer it. With an explicit new shape, or against a row count of 1, the import goes through."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "zero"], ["n"], name="gather"),
             h.make_node("Range", ["start", "n", "one"], ["r"], name="range"),
             h.make_node("Cast", ["r"], ["rf"], to=T.FLOAT, name="cast"),
             h.make_node("Unsqueeze", ["rf", "axes"], ["r2"], name="unsqueeze"),
             h.make_node("Mul", ["x", "r2"], ["m"], name="mul"),
             h.make_node("Reshape", ["m", "new"], ["y"], name="reshape")]
    return _save(nodes, [h.make_tensor_value_info("x", T.FLOAT, [rows, 4])],
                 [h.make_tensor_value_info("y", T.FLOAT, None)], path,
                 [_i64("zero", [0], []), _i64("start", [0], []), _i64("one", [1], []), _i64("axes", [1]),
                  _i64("new", list(new_shape))])


def range_explicit(path: Path) -> Path:
    return range_broadcast(path, (24,))


def range_one_row(path: Path) -> Path:
    return range_broadcast(path, rows=1)


def pow_model(path: Path, exp_type: int) -> Path:
    return _save([h.make_node("Pow", ["x", "e"], ["y"], name="pow")],
                 [h.make_tensor_value_info("x", T.FLOAT, [3]), h.make_tensor_value_info("e", exp_type, [3])],
                 [h.make_tensor_value_info("y", T.FLOAT, [3])], path)


def _tvm(p: Path):  # noqa: ANN202 - VerifyResult
    from studio.verify.tvm_relax import TvmRelaxVerifier

    return TvmRelaxVerifier().verify(p)


def test_shape_read_by_div_is_refused_with_tvms_words(tmp_path: Path) -> None:
    p = shape_div(tmp_path / "m.onnx")
    rep = inspect_model(p, ["tvm-relax"])
    assert rep.node_verdicts["tvm-relax"] == {"shape": "supported", "div": "unsupported"}
    f = next(f for f in rep.findings if f.node == "div")
    assert f.rule == "shape-value" and f.tensor == "s"
    assert "cannot handle ShapeExpr inputs" in f.message and "apache-tvm 0.27" in f.message
    assert "_construct_nodes" in f.message and "Cast" in f.hint
    other = inspect_model(p, ["tensorrt"])  # a target without the rule: no shape-value finding
    assert all(f.rule != "shape-value" for f in other.findings)


@pytest.mark.parametrize("build", [shape_reshape, dynamic_flatten, shape_cast_div, cast_tail])
def test_shape_values_taken_by_tvm_are_not_flagged(tmp_path: Path, build) -> None:  # noqa: ANN001
    p = build(tmp_path / "m.onnx")
    rep = inspect_model(p, ["tvm-relax"])
    assert set(rep.node_verdicts["tvm-relax"].values()) == {"supported"}, rep.findings


def test_runtime_reshape_shape_is_refused(tmp_path: Path) -> None:
    rep = inspect_model(runtime_reshape(tmp_path / "m.onnx"), ["tvm-relax"])
    assert rep.node_verdicts["tvm-relax"]["reshape"] == "unsupported"
    f = next(f for f in rep.findings if f.node == "reshape")
    assert "a graph input" in f.message and "Reshape requires the input new shape to be Shape" in f.message
    dyn = inspect_model(cast_then_reshape(tmp_path / "d.onnx"), ["tvm-relax"])
    assert dyn.node_verdicts["tvm-relax"]["reshape"] == "unsupported"
    assert "computed at run time by Concat" in next(f.message for f in dyn.findings if f.node == "reshape")


def test_shape_lost_by_a_range_broadcast_stops_a_reshape_with_minus_one(tmp_path: Path) -> None:
    rep = inspect_model(range_broadcast(tmp_path / "m.onnx"), ["tvm-relax"])
    assert rep.node_verdicts["tvm-relax"]["reshape"] == "unsupported", rep.findings
    f = next(f for f in rep.findings if f.node == "reshape")
    assert f.rule == "shape-value" and f.tensor == "m"
    assert "Reshape expects the input tensor to have known shape" in f.message and "Range" in f.message
    for ok in (range_explicit(tmp_path / "e.onnx"), range_one_row(tmp_path / "one.onnx")):
        assert set(inspect_model(ok, ["tvm-relax"]).node_verdicts["tvm-relax"].values()) == {"supported"}


def test_pow_with_a_different_exponent_type(tmp_path: Path) -> None:
    mixed = inspect_model(pow_model(tmp_path / "mixed.onnx", T.INT64), ["tvm-relax"])
    assert mixed.node_verdicts["tvm-relax"]["pow"] == "unsupported"
    assert "float, input 1 int64" in next(f.message for f in mixed.findings if f.node == "pow")
    same = inspect_model(pow_model(tmp_path / "same.onnx", T.FLOAT), ["tvm-relax"])
    assert same.node_verdicts["tvm-relax"]["pow"] == "supported"


def test_shape_values_block_is_validated() -> None:
    base = {"id": "x", "name": "X", "source": "s", "date_read": "2026", "supported": {"ai.onnx": ["Shape"]}}
    ok = parse_profile({**base, "shape_values": {"accepts": ["Reshape"], "source": "tvm"}}, "x.yaml")
    assert ok.shape_values is not None and ok.shape_values.accepts == ["Reshape"]
    assert parse_profile(base, "x.yaml").shape_values is None
    for bad in ({"accepts": ["Reshape"]}, {"accepts": "Reshape", "source": "tvm"}, {"source": "t", "extra": 1}):
        with pytest.raises(TargetError):
            parse_profile({**base, "shape_values": bad}, "x.yaml")
    with pytest.raises(TargetError):
        parse_profile({**base, "constraints": {"Shape": [{"kind": "same_dtype", "inputs": [0], "reason": "r"}]}},
                      "x.yaml")


@needs_tvm
@pytest.mark.parametrize("build, fails, words", [
    (shape_div, True, "cannot handle ShapeExpr inputs"),
    (runtime_reshape, True, "Reshape requires the input new shape to be Shape"),
    (cast_then_reshape, True, "Reshape requires the input new shape to be Shape"),
    (shape_reshape, False, ""), (dynamic_flatten, False, ""), (shape_cast_div, False, ""), (cast_tail, False, ""),
    (range_broadcast, True, "Reshape expects the input tensor to have known shape"), (range_explicit, False, ""),
    (range_one_row, False, ""),
])
def test_real_tvm_import_agrees(tmp_path: Path, build, fails: bool, words: str) -> None:  # noqa: ANN001
    from studio.verify.compare import compare

    p = build(tmp_path / "m.onnx")
    res = _tvm(p)
    assert res.ran and bool(res.error) == fails, res.error
    assert words in res.error
    assert compare(inspect_model(p, ["tvm-relax"]), res).agrees


@needs_tvm
def test_real_tvm_refuses_mixed_pow(tmp_path: Path) -> None:
    res = _tvm(pow_model(tmp_path / "m.onnx", T.INT64))
    assert "must have the same datatype" in res.error
    assert not _tvm(pow_model(tmp_path / "f.onnx", T.FLOAT)).error
