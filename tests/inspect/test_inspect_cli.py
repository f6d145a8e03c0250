"""`studio inspect` / `studio targets`: formats, --fail-on exit codes, SARIF read back, bad files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_models import nonzero_model, save, single_op_model

from studio.cli.main import main
from studio.inspect.api import InspectionReport
from studio.inspect.synthetic import save_transformer


@pytest.fixture()
def nz(tmp_path: Path) -> Path:
    return save(nonzero_model(), tmp_path / "nz.onnx")


@pytest.mark.parametrize("target,level,rc", [
    ("rk3588", "unsupported", 1),  # NonZero is not in RKNN's list
    ("openvino", "unsupported", 0),
    ("openvino", "risky", 0),
    ("ascend-310p", "unsupported", 0),
    ("ascend-310p", "risky", 1),  # data-dependent NonZero is risky on ATC
    ("openvino", "dynamic", 1),  # NonZero output is dynamic whatever the target
    ("hailo-8", "risky", 0),
    ("hailo-8", "unknown", 1),
])
def test_fail_on_exit_codes(nz: Path, target: str, level: str, rc: int, capsys: pytest.CaptureFixture) -> None:
    assert main(["inspect", str(nz), "--target", target, "--fail-on", level, "--format", "json"]) == rc
    json.loads(capsys.readouterr().out)


def test_static_model_passes_dynamic_gate(tmp_path: Path) -> None:
    p = save(single_op_model("Relu", shape=[1, 4]), tmp_path / "relu.onnx")
    assert main(["inspect", str(p), "-t", "openvino", "-t", "tensorrt", "--fail-on", "dynamic"]) == 0
    assert main(["inspect", str(p), "-t", "all", "--fail-on", "unsupported"]) == 0
    assert main(["inspect", str(p), "-t", "all", "--fail-on", "unknown"]) == 1  # hailo-8 / mlu370


def test_formats_and_output_file(nz: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "r" / "report.json"
    assert main(["inspect", str(nz), "--target", "all", "--format", "json", "--output", str(out)]) == 0
    rep = InspectionReport.from_dict(json.loads(out.read_text()))
    assert rep.schema_version == 1 and set(rep.targets) >= {"tensorrt", "rk3588", "hailo-8"}
    assert rep.node_verdicts["rk3588"]["nonzero"] == "unsupported" and rep.dynamic.origins[0].op_type == "NonZero"
    assert not list(out.parent.glob(".*tmp"))  # atomic: no temp leftovers
    capsys.readouterr()
    assert main(["inspect", str(nz), "-t", "rk3588"]) == 0
    text = capsys.readouterr().out
    assert "rk3588" in text and "NonZero" in text and "hint:" in text
    html_out = tmp_path / "r.html"
    assert main(["inspect", str(nz), "-t", "all", "--format", "html", "-o", str(html_out)]) == 0
    page = html_out.read_text()
    assert page.startswith("<!doctype html>") and "nonzero" in page and "<script" not in page


def test_sarif_reads_back_with_sarif_tools(tmp_path: Path) -> None:
    from sarif import loader

    model = save_transformer(tmp_path / "t.onnx", layers=1)
    out = tmp_path / "report.sarif"
    assert main(["inspect", str(model), "-t", "all", "--format", "sarif", "-o", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["version"] == "2.1.0" and data["$schema"].endswith("sarif-2.1.0.json")
    sf = loader.load_sarif_file(str(out))
    results = sf.get_results()
    assert len(results) == len(data["runs"][0]["results"]) > 0
    assert sf.get_result_count() == len(results)
    records = sf.get_records()
    sev = {r["Severity"] for r in records}
    assert {"error", "warning"} <= sev  # QNN refuses dynamic shapes; RKNN runs Erf on the CPU
    assert sf.get_distinct_tool_names() == ["studio-inspect"]
    report = sf.get_report()
    assert report.get_issue_count_for_severity("error") > 0
    rules = {r["id"] for r in data["runs"][0]["tool"]["driver"]["rules"]}
    assert {r["ruleId"] for r in data["runs"][0]["results"]} <= rules
    for r in data["runs"][0]["results"]:
        assert data["runs"][0]["tool"]["driver"]["rules"][r["ruleIndex"]]["id"] == r["ruleId"]


def test_shape_option_and_custom_domain(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    model = save_transformer(tmp_path / "t.onnx", layers=1)
    assert main(["inspect", str(model), "-t", "ort-cpu", "--shape", "input_ids=1,16", "-f", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["stats"]["input_shapes"] == {"input_ids": [1, 16]} and rep["stats"]["flops"] > 0
    assert rep["stats"]["estimate_note"] == ""
    assert main(["inspect", str(model), "--shape", "nope=1,2"]) == 2
    assert "nope" in capsys.readouterr().err


def test_split_parts_boundaries(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    import onnx.helper as h
    from inspect_models import make, vi
    from onnx import TensorProto as T

    a = save(make([h.make_node("Relu", ["x"], ["emb"], name="a")], [vi("x", T.FLOAT, [1, 8])],
                  [vi("emb", T.FLOAT, [1, 8])]), tmp_path / "vision.onnx")
    b_ok = save(make([h.make_node("Relu", ["emb"], ["y"], name="b")], [vi("emb", T.FLOAT, [1, 8])],
                     [vi("y", T.FLOAT, [1, 8])]), tmp_path / "fusion.onnx")
    assert main(["inspect", str(a), str(b_ok), "-t", "openvino", "--fail-on", "unsupported"]) == 0
    assert "1 checked, 0 problems" in capsys.readouterr().out
    bad = tmp_path / "bad"
    bad.mkdir()
    b_bad = save(make([h.make_node("Relu", ["emb"], ["y"], name="b")], [vi("emb", T.FLOAT, [1, 16])],
                      [vi("y", T.FLOAT, [1, 16])]), bad / "fusion.onnx")
    assert main(["inspect", str(a), str(b_bad), "-t", "openvino", "--fail-on", "unsupported"]) == 1
    assert "axis 1: 8 from vision.onnx but fusion.onnx expects 16" in capsys.readouterr().out


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "studio.cli.main", *args], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("kind", ["garbage", "text", "truncated", "empty", "folder", "missing", "json"])
def test_bad_model_files_give_clear_errors_without_traceback(tmp_path: Path, kind: str) -> None:
    good = save_transformer(tmp_path / "good.onnx", layers=1).read_bytes()
    p = tmp_path / f"{kind}.onnx"
    if kind == "garbage":
        p.write_bytes(bytes(range(256)) * 8)
    elif kind == "text":
        p.write_text("this is not a model\n")
    elif kind == "truncated":
        p.write_bytes(good[: len(good) // 3])
    elif kind == "empty":
        p.write_bytes(b"")
    elif kind == "folder":
        p.mkdir()
    elif kind == "json":
        p.write_text('{"graph": {}}')
    proc = _cli("inspect", str(p), "-t", "all")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("error: ")
    assert str(p) in proc.stderr and "hint:" in proc.stderr


def test_targets_command(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    assert main(["targets"]) == 0
    out = capsys.readouterr().out
    for tid in ("tensorrt", "openvino", "qnn-htp", "ascend-310p", "rk3588", "tvm-relax", "ort-cpu", "hailo-8",
                "mlu370"):
        assert tid in out
    assert main(["targets", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {d["id"] for d in data} >= {"hailo-8", "ort-cpu"}
    (tmp_path / "x.yaml").write_text("id: x\nname: X\n")
    assert main(["targets", "--profile-dir", str(tmp_path)]) == 2
    assert "x.yaml:1: source" in capsys.readouterr().err  # FILE:LINE: FIELD
