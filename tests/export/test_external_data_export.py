"""The export's weights layout on the tiny CLIP sample: model.onnx + model.onnx.data on request, the working layout
(weights in a data file while the export works) folded back into one file, the stale data file of a replaced
model removed, and --no-external-data past the (lowered) protobuf limit refused before parity with nothing
written. The 2 GB run through the whole flow is tests/edge/test_past_2gb.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from studio.core.external_data import ALIGN, read_graph, uses_external_data  # noqa: E402
from studio.export.api import ExportOptions, export_model, write_sample  # noqa: E402

pytestmark = pytest.mark.export


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample("tiny-clip", tmp_path_factory.mktemp("s") / "tiny-clip")


def _outputs(path: Path) -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    feeds = {"input_ids": rng.integers(0, 100, (2, 7)).astype(np.int64), "attention_mask": np.ones((2, 7), np.int64),
             "pixel_values": rng.standard_normal((2, 3, 32, 32)).astype(np.float32)}
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)


def test_external_data_on_request_then_one_file_again(clip: Path, tmp_path: Path) -> None:
    out = tmp_path / "o" / "model.onnx"
    rep = export_model(ExportOptions(model_dir=clip, output=out, external_data=True))
    assert rep.status == "succeeded", rep.diagnosis
    data = out.with_name("model.onnx.data")
    assert [(Path(o.path).name, o.kind) for o in rep.outputs[:2]] == [("model.onnx", "model"), ("model.onnx.data", "data")]
    assert rep.outputs[1].size_bytes == data.stat().st_size > 0
    g = read_graph(out)
    offsets = [int({e.key: e.value for e in t.external_data}["offset"]) for t in g.graph.initializer
               if t.data_location == 1]
    assert offsets and all(o % ALIGN == 0 for o in offsets)
    assert rep.validation.checker == rep.validation.shape_inference == rep.validation.ort_load == "passed"
    assert rep.peak_rss_gb and set(rep.peak_rss_gb) <= set(rep.timings)
    external = _outputs(out)

    rep2 = export_model(ExportOptions(model_dir=clip, output=out, external_data=False))  # the same path, one file
    assert rep2.status == "succeeded"
    assert not data.exists(), "the replaced model's data file was left beside a one-file model"
    assert "data" not in {o.kind for o in rep2.outputs} and not uses_external_data(read_graph(out))
    for a, b in zip(external, _outputs(out), strict=True):
        np.testing.assert_array_equal(a, b)


def test_working_layout_is_folded_back(clip: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from studio.export import exporters

    monkeypatch.setattr(exporters, "WORKING_EXTERNAL", 0)  # what a model past 16 MB gets: a data file while working
    out = tmp_path / "w" / "model.onnx"
    rep = export_model(ExportOptions(model_dir=clip, output=out))
    assert rep.status == "succeeded", rep.diagnosis
    assert sorted(p.name for p in out.parent.iterdir() if p.suffix in (".onnx", ".data")) == ["model.onnx"]
    assert not uses_external_data(read_graph(out))
    ref = tmp_path / "r" / "model.onnx"
    monkeypatch.setattr(exporters, "WORKING_EXTERNAL", 1 << 40)
    assert export_model(ExportOptions(model_dir=clip, output=ref)).status == "succeeded"
    for a, b in zip(_outputs(ref), _outputs(out), strict=True):
        np.testing.assert_array_equal(a, b)


def test_one_file_past_the_limit_is_refused_before_parity(clip: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import studio.core.external_data as ed
    from studio.export import exporters

    monkeypatch.setattr(ed, "PROTOBUF_LIMIT", (64 << 20) + 1000)  # tiny-clip's weights are "past 2 GB" now
    monkeypatch.setattr(exporters, "WORKING_EXTERNAL", 0)
    out = tmp_path / "n" / "model.onnx"
    rep = export_model(ExportOptions(model_dir=clip, output=out, external_data=False))
    assert rep.status == "failed" and rep.diagnosis is not None
    assert rep.diagnosis.error_class == "protobuf_limit" and "--no-external-data" in rep.diagnosis.fix
    assert not rep.validation.cases, "parity ran before the refusal"
    assert not out.parent.exists() or not any(out.parent.iterdir())
