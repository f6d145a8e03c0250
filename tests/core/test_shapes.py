"""studio.core.shapes: the one shape-spec syntax (NAME=D,D,...), the old spellings accepted with a warning, the
errors naming the field, and per command family an old spelling that still works end to end."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import warnings
from pathlib import Path

import onnx.helper as h
import pytest
from onnx import TensorProto as T

from studio.cli.main import main
from studio.core.errors import InputError, StudioDeprecationWarning
from studio.core.shapes import (
    ShapeSpec,
    check_against,
    format_shapes,
    parse_shapes,
    parse_spec,
    read_shapes,
    split_specs,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "inspect"))
from inspect_models import make, save, vi  # noqa: E402

OLD = {  # the old spelling -> what the warning says to write
    "x:1,64": "x=1,64",  # bench
    "x=1x3x224x224": "x=1,3,224,224",  # inspect, compile
    "x=[1,3,224,224]": "x=1,3,224,224",  # compile
    "x=(1, 3)": "x=1,3",
    "x=1 3 16": "x=1,3,16",  # compile (one quoted --shape value)
    "input:0:1,16": "input:0=1,16",  # a TF-style name keeps its ':'
}


def test_canonical_forms() -> None:
    assert parse_spec("pixel_values=1,3,224,224") == ShapeSpec("pixel_values", (1, 3, 224, 224),
                                                               "pixel_values=1,3,224,224")
    assert parse_spec(" x = 1, 3 ").dims == (1, 3) and parse_spec(" x = 1, 3 ").old is None  # spaces are fine
    assert parse_spec("input:0=1,2").name == "input:0"
    assert parse_spec("empty=0,3").dims == (0, 3)  # ONNX allows zero-size dims: the default rule is >= 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning for canonical specs
        assert parse_shapes(["a=1,2", "b=3"]) == {"a": [1, 2], "b": [3]}
        assert parse_shapes("a=1,2; b=3") == {"a": [1, 2], "b": [3]}  # one value (a GUI field): ';'
        assert parse_shapes(["a=1,2;b=3 c=4"]) == {"a": [1, 2], "b": [3], "c": [4]}  # ';' or spaces between specs
        assert parse_shapes(None) == {} and parse_shapes("") == {} and parse_shapes([]) == {}
    assert split_specs("a=1, 2; b=3 input:0=4;") == ["a=1, 2", "b=3", "input:0=4"]
    assert format_shapes({"a": [1, 2], "b": [3]}) == "a=1,2; b=3"
    assert read_shapes(format_shapes({"a": [1, 2], "b": [3]})).shapes == {"a": [1, 2], "b": [3]}


@pytest.mark.parametrize("text", sorted(OLD))
def test_old_spelling_is_read_with_its_warning(text: str) -> None:
    canonical = OLD[text]
    name, _, dims = canonical.partition("=")
    with pytest.warns(StudioDeprecationWarning) as rec:
        assert parse_shapes([text]) == {name: [int(d) for d in dims.split(",")]}
    assert [str(w.message) for w in rec] == [f"--shape '{text}' is an old spelling; write {canonical}"]
    parsed = read_shapes(text, field="Shapes")  # the GUI's form: a note, no warning
    assert parsed.notes == [f"Shapes '{text}' is an old spelling; write {canonical}"]


@pytest.mark.parametrize("text,words,axis", [
    ("x=-1,3", "axis 0 of input 'x' is -1", 0),
    ("x=1,2.5", "axis 1 of input 'x' is '2.5', not a whole number", 1),
    ("x=1,three", "axis 1 of input 'x' is 'three'", 1),
    ("x=1,,3", "axis 1 of input 'x' has no size", 1),
    ("x=", "gives no sizes for input 'x'", None),
    ("x=[]", "gives no sizes for input 'x'", None),
    ("pixel_values", "no '=' between the input name and its sizes", None),
    ("=1,2", "names no input", None),
])
def test_bad_spec_is_an_input_error_naming_field_input_and_axis(text: str, words: str, axis: int | None) -> None:
    for field in ("--shape", "Static shapes"):
        with pytest.raises(InputError) as ei:
            read_shapes([text], field=field)
        err = ei.value
        assert err.message.startswith(f"{field} '{text}': ") and words in err.message
        assert err.offending == text and err.hint and err.details["field"] == field
        assert err.details["axis"] == axis


def test_zero_sizes_where_data_must_exist_and_other_refusals() -> None:
    with pytest.raises(InputError) as ei:
        parse_shapes(["x=1,0"], min_size=1)  # compile, bench
    assert "axis 1 of input 'x' is 0" in ei.value.message and ">= 1" in ei.value.message
    assert "x=1,<size>" in (ei.value.hint or "")
    with pytest.raises(InputError, match="has a shape already"):
        parse_shapes(["x=1,2", "x=1,3"])
    with pytest.raises(InputError, match="has a shape already"):
        parse_shapes("x=1,2; x:1,3")
    with pytest.raises(InputError, match="is empty"):
        parse_shapes(["x=1", ""])


def test_checked_against_the_model_inputs() -> None:
    inputs = {"x": ["n", 4], "ids": None}  # None: rank unknown
    check_against({"x": [2, 4], "ids": [1, 2, 3]}, inputs)
    with pytest.raises(InputError) as ei:
        check_against({"x": [2, 4, 1]}, inputs, field="Shapes")
    assert ei.value.message == "Shapes x: rank 3 but the model's input has rank 2"
    assert ei.value.hint == "the model declares x as [n, 4]; give one size per axis, e.g. x=1,4"
    with pytest.raises(InputError, match="axis 1 is fixed to 4, not 5"):
        check_against({"x": [2, 5]}, inputs)
    with pytest.raises(InputError, match="does not have: 'y'") as ei:
        check_against({"y": [1]}, inputs)
    assert ei.value.hint == "the model's inputs: x, ids"


# --- one command per family: the old spelling still works, the warning on stderr once -----------------------

@pytest.fixture(scope="module")
def relu(tmp_path_factory: pytest.TempPathFactory) -> Path:
    m = make([h.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", T.FLOAT, ["n", 4])],
             [vi("y", T.FLOAT, ["n", 4])])
    return save(m, tmp_path_factory.mktemp("shapes") / "relu.onnx")


def test_inspect_old_spelling_end_to_end(relu: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(relu), "-t", "ort-cpu", "--shape", "x:3,4", "--shape", "x:3,4;", "-f", "json",
                 "-q"]) == 2  # the same input twice is refused, whatever the spelling
    assert "has a shape already" in capsys.readouterr().err
    assert main(["inspect", str(relu), "-t", "ort-cpu", "--shape", "x:3,4", "-f", "json", "-q"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["stats"]["input_shapes"] == {"x": [3, 4]}
    assert err.count("warning: --shape 'x:3,4' is an old spelling; write x=3,4") == 1
    assert main(["inspect", str(relu), "-t", "ort-cpu", "--shape", "x=3,4,1", "-q"]) == 2
    assert "--shape x: rank 3 but the model's input has rank 2" in capsys.readouterr().err


def test_profile_old_spelling_end_to_end(relu: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile", str(relu), "--shape", "x=[3,4]", "--runs", "2", "--warmup", "0", "--json", "-q"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["input_shapes"] == {"x": [3, 4]}
    assert "warning: --shape 'x=[3,4]' is an old spelling; write x=3,4" in err


@pytest.mark.skipif(importlib.util.find_spec("tvm") is None, reason="apache-tvm is not installed (extra 'compile')")
def test_compile_old_spelling_end_to_end(relu: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", str(relu), "--target", "llvm", "--shape", "x=0x4", "--out", str(tmp_path / "z")]) == 2
    assert "sizes here must be >= 1" in capsys.readouterr().err  # compile needs data: min_size=1
    assert main(["compile", str(relu), "--target", "llvm", "--shape", "x=3x4", "--no-verify", "--json",
                 "--out", str(tmp_path / "llvm")]) == 0
    out, err = capsys.readouterr()
    rep = json.loads(out)
    assert rep["status"] == "succeeded" and rep["input_shapes"] == {"x": [3, 4]}
    assert "warning: --shape 'x=3x4' is an old spelling; write x=3,4" in err


@pytest.mark.timeout(120)
def test_bench_old_spelling_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    server = Path(__file__).resolve().parents[1] / "telemetry" / "kserve_server.py"
    proc = subprocess.Popen([sys.executable, str(server), "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("PORT "), line
        url = f"http://127.0.0.1:{int(line.split()[1])}"
        common = ["bench", "--url", url, "--model", "mlp", "--concurrency", "1", "--duration", "0.5", "--warmup",
                  "0.1", "--window", "0.5", "--no-stability", "--no-collectors", "--quiet", "--json"]
        assert main([*common, "--shape", "INPUT0:3,16"]) == 0  # bench's own old NAME:D
        out, err = capsys.readouterr()
        [level] = json.loads(out)["levels"]
        assert level["successes"] > 0 and level["error_count"] == 0
        assert err.count("warning: --shape 'INPUT0:3,16' is an old spelling; write INPUT0=3,16") == 1
        assert main([*common, "--shape", "INPUT0=0,16"]) == 2  # no zero-size request bodies
        assert "axis 0 of input 'INPUT0' is 0" in capsys.readouterr().err
    finally:
        proc.kill()
        proc.wait(10)
