"""`studio optimize --target rk3588` with rknn-toolkit2 2.5.0 in the loop (skips with the reason when its
environment is not here: `studio-rknn-env create`). tiny-clip's vision and text parts: the chosen variant builds
with no node off the NPU, keeps cosine >= 0.99 against FP32 ONNX Runtime in the toolkit's simulator on the
calibration images and texts, and its recipe replayed by hand gives the same ONNX files (the .rknn itself is not
byte-stable across builds: the toolkit stamps each one) and builds."""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path

import pytest

from studio.tune.report import REPORT_FILE
from tests.tune.helpers import run_cli


@pytest.fixture(scope="module")
def rknn_env() -> Path:
    from studio_rknn import env

    status = env.check_env()
    if not status.ok:
        pytest.skip(f"rknn-toolkit2 environment: {status.reason}")
    return status.path


def _sha(p: Path | str) -> str:
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


def test_rk3588_vision_and_text_all_on_npu_within_budget(rknn_env: Path, clip_export: Path, calibration: Path,
                                                        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rk"
    rc = run_cli("optimize", clip_export, "--target", "rk3588", "--budget", "cosine>=0.99", "--calibration",
                 calibration, "--out", out, "--latency-runs", "3")
    text = capsys.readouterr().out
    assert rc == 0, text
    rep = json.loads((out / REPORT_FILE).read_text())
    assert rep["tools"]["judge"] == "rknn-toolkit2 2.5.0"
    assert {p["part"] for p in rep["parts"]} == {"vision", "text"}
    for part in rep["parts"]:
        c = next(x for x in part["candidates"] if x["id"] == part["chosen"])
        v = c["judged"]["verdict"]
        assert v["verdict"] == "runs" and not v.get("host_nodes") and c["judged"]["coverage"] == 1.0, v
        acc = c["judged"]["accuracy"]
        assert acc["cosine"] >= 0.99 and "x86 simulator" in acc["by"] and acc["samples"] == 4
        assert Path(part["files"]["compiled"], "model.rknn").is_file()
        # by hand: the fix gives the same device (and host) graph, the compile builds it
        replay = tmp_path / f"replay-{part['part']}"
        replay.mkdir()
        for line in part["commands"]:
            argv = [a.replace(str(out / part["part"]), str(replay)) for a in shlex.split(line)]
            assert argv[0] == "studio" and run_cli(*argv[1:]) == 0, line
        assert _sha(replay / "model.onnx") == _sha(part["files"]["model"]) == c["judged"]["sha256"]
        if "host" in part["files"]:
            assert _sha(replay / "model.host.onnx") == _sha(part["files"]["host"])
        assert (replay / "rk3588-rknn" / "model.rknn").is_file()
        capsys.readouterr()


def test_rk3588_int8_forced_unmeetable_names_layers(rknn_env: Path, clip_export: Path, calibration: Path,
                                                    tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rk-int8"
    rc = run_cli("optimize", clip_export, "--target", "rk3588", "--part", "text", "--precision", "int8",
                 "--budget", "cosine>=0.99999", "--calibration", calibration, "--out", out, "--latency-runs", "3")
    text = capsys.readouterr().out
    assert rc == 1, text
    rep = json.loads((out / REPORT_FILE).read_text())
    (part,) = rep["parts"]
    assert not part["met"] and part["chosen"]
    best = next(x for x in part["candidates"] if x["id"] == part["chosen"])
    assert best["recipe"]["build"] == "int8" and best["recipe"]["auto_hybrid"] is None  # int8 forced: no hybrid
    layers = [b for b in part["blocking"] if b["rule"] == "per-layer error"]
    assert layers and all("accuracy_analysis" in b["tool"] for b in layers), part["blocking"]
