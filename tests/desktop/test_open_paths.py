"""`studio gui PATH` sends each kind of path to the page that takes it, and refuses the rest by name before any
window opens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studio.core.errors import InputError
from studio.desktop.open_paths import classify, classify_all
from tests.edge.helpers import make_mlp


def test_paths_go_to_the_page_that_takes_them(tmp_path: Path) -> None:
    model = make_mlp(tmp_path / "export" / "model.onnx")
    (tmp_path / "export" / "config.json").write_text(json.dumps({"model_type": "clip"}))  # exports copy it along
    hf = tmp_path / "hf"
    hf.mkdir()
    (hf / "config.json").write_text(json.dumps({"architectures": ["Qwen2VLForConditionalGeneration"]}))
    assert (classify(model).page, classify(model).what) == ("inspect", "ONNX model")
    assert (classify(model.parent).page, classify(model.parent).what) == ("inspect", "export folder")
    assert (classify(hf).page, classify(hf).what) == ("export", "HuggingFace model folder")
    rel = classify("model.onnx", cwd=model.parent)
    assert rel.path == str(model) and rel.page == "inspect"  # relative to the launch's folder


def test_bad_paths_are_refused_before_anything_opens(tmp_path: Path) -> None:
    good = make_mlp(tmp_path / "m.onnx")
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "empty").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "config.json").write_text("{}")  # not a HuggingFace config
    with pytest.raises(InputError, match="does not exist"):
        classify_all([str(good), str(tmp_path / "nope.onnx")])
    with pytest.raises(InputError, match="opens .onnx models and model folders"):
        classify(tmp_path / "notes.txt")
    for folder in ("empty", "other"):
        with pytest.raises(InputError, match="no .onnx model and no HuggingFace config.json"):
            classify(tmp_path / folder)
