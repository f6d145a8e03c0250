"""`studio fix` and attention fusion on models whose weights live in a data file (the layout past 2 GB), with the
in-memory "past 2 GB" paths forced by lowering the limits: shape inference on the weightless skeleton, the output
written as graph + data file, parity by path; a missing data file is a ModelError naming it."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from attention_models import attention_model

from studio.core import big_proto
from studio.core.errors import ModelError
from studio.core.external_data import check_model_files, uses_external_data
from studio.inspect.synthetic import save_transformer
from studio.optimize import api, passes
from studio.optimize.api import fix_model
from studio.optimize.fusion import fuse_attention


@pytest.fixture()
def past_2gb(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every model counts as past 2 GB: inference on skeletons, outputs with data files."""
    monkeypatch.setattr(big_proto, "LIMIT", 1000)
    monkeypatch.setattr(passes, "LIMIT", 1000)
    monkeypatch.setattr(api, "EXTERNAL_THRESHOLD", 1000)


@pytest.mark.parametrize("fix", ["static+simplify", "fp16", "int8"])
def test_fix_takes_and_writes_external_data(tmp_path: Path, past_2gb: None, fix: str) -> None:
    (tmp_path / "src").mkdir()
    src = save_transformer(tmp_path / "src" / "m.onnx", external_data=True, layers=1, hidden=32, heads=2)
    assert uses_external_data(onnx.load(str(src), load_external_data=False))
    out = tmp_path / "out" / "m.onnx"
    kw = {"static+simplify": {"static": {"batch": 1, "sequence": 8}, "simplify": True},
          "fp16": {"fp16": True, "static": {"batch": 1, "sequence": 8}}, "int8": {"int8": True}}[fix]
    rep = fix_model(src, out, targets=["ort-cpu"], **kw)
    f = rep.files[0]
    assert f.parity is not None and f.parity.passed, f.parity
    assert [d.location for d in check_model_files(out)] == ["m.onnx.data"]
    assert f.diff is not None and f.diff.targets["ort-cpu"].after in ("pass", "risky")


def test_fusion_takes_external_data(tmp_path: Path, past_2gb: None) -> None:
    src = tmp_path / "a" / "m.onnx"
    src.parent.mkdir()
    onnx.save_model(attention_model(layers=2), str(src), save_as_external_data=True, location="m.onnx.data",
                    size_threshold=200)  # the 8x8 weights out, the shape constants in (as exporters write them)
    rep = fuse_attention(src, tmp_path / "f" / "m.fused.onnx", targets=["ort-cpu"])
    assert len(rep.sites) == 2 and rep.parity is not None and rep.parity.passed
    check_model_files(tmp_path / "f" / "m.fused.onnx")  # its 256-byte weights are written inline (< 1 KiB)


def test_missing_data_file_is_named(tmp_path: Path) -> None:
    src = save_transformer(tmp_path / "m.onnx", external_data=True, layers=1, hidden=32, heads=2)
    (tmp_path / "m.onnx.data").unlink()
    with pytest.raises(ModelError, match="m.onnx.data of m.onnx is missing"):
        fix_model(src, tmp_path / "o.onnx", static={"batch": 1})
