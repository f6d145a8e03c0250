"""One tiny Qwen2 decoder (hidden 32, 2 layers, vocab 348, built from its config: no hub) exported once with its
KV cache for the whole folder; tests that need their own export make it themselves."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from studio.export.api import ExportOptions, ExportReport, export_model, write_sample  # noqa: E402


@pytest.fixture(scope="session")
def qwen2_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample("tiny-qwen2", tmp_path_factory.mktemp("gen-src") / "tiny-qwen2")


@pytest.fixture(scope="session")
def exported(qwen2_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ExportReport]:
    out = tmp_path_factory.mktemp("gen-out") / "model.onnx"
    report = export_model(ExportOptions(model_dir=qwen2_dir, output=out, report=out.parent / "report.json"))
    assert report.status == "succeeded", report.diagnosis
    return out.parent, report


@pytest.fixture(scope="session")
def hf_model(qwen2_dir: Path):  # type: ignore[no-untyped-def]
    from studio.generate.parity import load_causal_lm

    return load_causal_lm(qwen2_dir)
