"""Bad input to `studio optimize`: exit 2, the message names the thing, nothing is written (no --out folder, no
cache entry). All checked before any model is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.core.errors import InputError
from studio.tune.options import parse_budget
from tests.tune.helpers import run_cli


@pytest.fixture()
def model(tmp_path: Path) -> Path:
    """Any file ending in .onnx: bad flags are refused before it is read."""
    f = tmp_path / "m.onnx"
    f.write_bytes(b"not read")
    return f


@pytest.mark.parametrize("argv, named", [
    (["--target", "rk9999"], "rk9999"),
    (["--target", "tensorrt"], "no tool here can judge target 'tensorrt'"),
    (["--target", "ort-cpu", "--budget", "cosine>0.99"], "cosine>0.99"),
    (["--target", "ort-cpu", "--budget", "psnr>=30"], "psnr"),
    (["--target", "ort-cpu", "--budget", "cosine<=0.99"], "cosine"),
    (["--target", "ort-cpu", "--budget", "cosine>=1.5"], "cosine"),
    (["--target", "ort-cpu", "--budget", "max-abs<=abc"], "max-abs<=abc"),
    (["--target", "ort-cpu", "--time-limit", "0"], "--time-limit"),
    (["--target", "ort-cpu", "--time-limit", "-3"], "--time-limit"),
    (["--target", "ort-cpu", "--objective", "speed"], "speed"),
    (["--target", "ort-cpu", "--precision", "int4"], "int4"),
])
def test_bad_flag_exit_2_nothing_written(model: Path, tmp_path: Path, private_cache: Path,
                                         capsys: pytest.CaptureFixture[str], argv: list[str], named: str) -> None:
    out = tmp_path / "result"
    rc = run_cli("optimize", model, *argv, "--out", out)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert named in err and "hint" in err
    assert not out.exists() and not private_cache.exists()


def test_empty_calibration_folder(model: Path, tmp_path: Path, private_cache: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "samples"
    empty.mkdir()
    (empty / "notes.md").write_text("not a sample")
    out = tmp_path / "result"
    rc = run_cli("optimize", model, "--target", "ort-cpu", "--calibration", empty, "--out", out)
    err = capsys.readouterr().err
    assert rc == 2
    assert str(empty) in err and "holds no samples" in err
    assert not out.exists() and not private_cache.exists()


def test_missing_model_and_unknown_part(clip_export: Path, calibration: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "result"
    assert run_cli("optimize", tmp_path / "nope.onnx", "--target", "ort-cpu", "--out", out) == 2
    assert "nope.onnx" in capsys.readouterr().err
    assert run_cli("optimize", clip_export, "--target", "ort-cpu", "--part", "audio", "--calibration", calibration,
                   "--out", out) == 2
    err = capsys.readouterr().err
    assert "audio" in err and "vision" in err  # names the unknown part and the parts there are
    assert not out.exists()


def test_budget_parsing() -> None:
    b = parse_budget("cosine>=0.99")
    assert (b.metric, b.op, b.value) == ("cosine", ">=", 0.99) and b.met(0.995) and not b.met(0.98)
    m = parse_budget(" max-abs <= 0.05 ")
    assert m.met(0.01) and not m.met(0.1) and m.better(0.01, 0.02)
    assert parse_budget("top1-agree>=0.9").met(1.0)
    assert str(parse_budget(None)) == "cosine>=0.99"
    for bad in ("cosine", "cosine>=", ">=0.9", "cosine>=nan", "max-abs<=-1", "top1-agree>=0"):
        with pytest.raises(InputError):
            parse_budget(bad)


def test_a_target_whose_tool_is_missing_here(tmp_path: Path, private_cache: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """rk3588 without rknn-toolkit2's environment: exit 2 with the command that creates it, nothing written."""
    monkeypatch.setenv("STUDIO_RKNN_ENV", str(tmp_path / "no-env"))
    out = tmp_path / "result"
    onnx_model = tmp_path / "real.onnx"
    from tests.edge.helpers import make_mlp

    make_mlp(onnx_model)
    rc = run_cli("optimize", onnx_model, "--target", "rk3588", "--out", out)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "rk3588" in err and "studio-rknn-env create" in err
    assert not out.exists() and not private_cache.exists()
