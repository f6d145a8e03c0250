"""Mutated models never crash the inspector: it either reports or raises a StudioError."""

from __future__ import annotations

import tempfile
from pathlib import Path

import onnx
import onnx.helper as h
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inspect_models import nested_model

from studio.core.errors import StudioError
from studio.inspect.api import inspect_model, render
from studio.inspect.synthetic import transformer_model

BASE = transformer_model(layers=1, hidden=8, heads=2, vocab=11, max_pos=8)
NESTED = nested_model()
BASE_BYTES = BASE.SerializeToString()
OPS = ["NonZero", "Loop", "If", "Range", "TopK", "Resize", "Conv", "Gemm", "MatMul", "Foo", "", "Reshape",
       "Shape", "Gather", "Scan", "Unique", "OneHot", "Softmax", "ConstantOfShape", "Expand"]
DOMAINS = ["", "ai.onnx", "com.microsoft", "com.example", "ai.onnx.ml"]


def _check(path: Path) -> None:
    try:
        rep = inspect_model(path, ["all"])
    except StudioError:
        return
    for fmt in ("text", "json", "html", "sarif"):
        assert render(rep, fmt)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(BASE_BYTES) - 1), st.integers(0, 255)), max_size=20),
       st.integers(0, len(BASE_BYTES)))
def test_byte_mutations(flips: list[tuple[int, int]], cut: int) -> None:
    data = bytearray(BASE_BYTES[:cut] if cut > 8 else BASE_BYTES)
    for pos, val in flips:
        if pos < len(data):
            data[pos] = val
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.onnx"
        p.write_bytes(bytes(data))
        _check(p)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_structural_mutations(data: st.DataObject) -> None:
    m = onnx.ModelProto()
    m.CopyFrom(data.draw(st.sampled_from([BASE, NESTED])))
    nodes = m.graph.node
    for _ in range(data.draw(st.integers(1, 6))):
        if not len(nodes):
            break
        n = nodes[data.draw(st.integers(0, len(nodes) - 1))]
        action = data.draw(st.sampled_from(["op", "domain", "drop_input", "rename_input", "attr", "opset",
                                            "drop_init", "drop_output", "dup_name"]))
        if action == "op":
            n.op_type = data.draw(st.sampled_from(OPS))
        elif action == "domain":
            n.domain = data.draw(st.sampled_from(DOMAINS))
        elif action == "drop_input" and len(n.input):
            del n.input[data.draw(st.integers(0, len(n.input) - 1))]
        elif action == "rename_input" and len(n.input):
            n.input[0] = data.draw(st.sampled_from(["", "missing", n.output[0] if n.output else "x"]))
        elif action == "attr":
            n.attribute.append(h.make_attribute(data.draw(st.sampled_from(["sorted", "mode", "axis", "to"])),
                                                data.draw(st.one_of(st.integers(-5, 5), st.text(max_size=4),
                                                                    st.floats(allow_nan=True)))))
        elif action == "opset":
            m.opset_import[0].version = data.draw(st.integers(-3, 40))
        elif action == "drop_init" and len(m.graph.initializer):
            del m.graph.initializer[0]
        elif action == "drop_output" and len(n.output):
            del n.output[:]
        elif action == "dup_name":
            n.name = nodes[0].name
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.onnx"
        p.write_bytes(m.SerializeToString())
        _check(p)
