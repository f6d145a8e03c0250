"""LLaVA (``LlavaForConditionalGeneration`` built from a config, no hub) through ``studio export``: example inputs
with as many ``<image>`` tokens as the tower returns features, the monolithic graph and the vision tower ->
projector -> decoder parts checked against the unmodified HF forward, and a model whose example inputs still fail
ending in a diagnosis, never a traceback. Real torch, real exporter, real ONNX Runtime, the sample's own processor.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from studio.cli.main import main as studio_main  # noqa: E402
from studio.export.api import write_sample  # noqa: E402

pytestmark = pytest.mark.export


@pytest.fixture(scope="module")
def llava_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample("tiny-llava", tmp_path_factory.mktemp("llava") / "tiny-llava")


@pytest.fixture(scope="module")
def llava_export(llava_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict, Path]:
    out = tmp_path_factory.mktemp("llava-out") / "model.onnx"
    report = out.with_name("report.json")
    rc = studio_main(["export", str(llava_dir), "-o", str(out), "--split-modalities", "--report", str(report),
                      "--quiet"])
    return rc, json.loads(report.read_text()), out


def test_sample_processor_expands_image_to_the_tower_tokens(llava_dir: Path) -> None:
    from PIL import Image
    from transformers import AutoProcessor

    proc = AutoProcessor.from_pretrained(str(llava_dir))
    feeds = proc(images=Image.new("RGB", (40, 40), (200, 30, 30)), text="a photo <image> of a cat",
                 return_tensors="np")
    image_id = json.loads((llava_dir / "config.json").read_text())["image_token_index"]
    assert int((feeds["input_ids"] == image_id).sum()) == 16  # (32 / 8)^2 patches, CLS dropped
    assert feeds["pixel_values"].shape == (1, 3, 32, 32)


def test_llava_export_exits_0_with_parts_and_parity(llava_export: tuple[int, dict, Path]) -> None:
    rc, r, out = llava_export
    assert rc == 0 and r["status"] == "succeeded", r["diagnosis"]
    assert r["model_type"] == "llava" and r["diagnosis"] is None
    assert list(r["parts"]) == ["vision", "projector", "decoder", "text"]
    assert r["parts"]["vision"]["outputs"]["vision_features"] == ["image_batch", 16, 32]
    assert r["parts"]["decoder"]["inputs"]["image_embeds"] == ["image_batch", 16, 32]
    assert r["parts"]["text"]["standalone"] is True
    graphs = {c["graph"] for c in r["validation"]["cases"]}
    assert graphs == {"model", "chained parts", "text part"}
    assert all(c["passed"] for c in r["validation"]["cases"])
    # the example inputs came from the processor, image tokens expanded: 16 per image on top of each prompt
    seqs = [c["input_shapes"]["input_ids"][1] for c in r["validation"]["cases"] if c["graph"] == "model"]
    assert len(set(seqs)) == 3 and min(seqs) > 16
    assert r["example_inputs"]["processor"] == "LlavaProcessor" and r["example_inputs"]["origin"] == "folder"
    for name in ("model", "model.vision", "model.projector", "model.decoder", "model.text"):
        assert (out.parent / f"{name}.onnx").is_file()


def test_exported_llava_matches_hf_on_processor_inputs(llava_dir: Path, llava_export: tuple[int, dict, Path]
                                                       ) -> None:
    """The monolithic graph and the chained parts on what the HF processor makes of a real image + prompt."""
    import onnxruntime as ort
    import torch
    from PIL import Image
    from transformers import AutoProcessor, LlavaForConditionalGeneration

    _rc, _r, out = llava_export
    proc = AutoProcessor.from_pretrained(str(llava_dir))
    img = Image.fromarray(np.random.default_rng(3).integers(0, 255, (36, 44, 3)).astype(np.uint8))
    feeds = {k: np.asarray(v) for k, v in proc(images=img, text="what is <image> the color", return_tensors="np")
             .items()}
    model = LlavaForConditionalGeneration.from_pretrained(str(llava_dir)).eval()
    with torch.no_grad():
        ref = model(**{k: torch.from_numpy(v) for k, v in feeds.items()}, use_cache=False).logits.numpy()

    def sess(name: str) -> ort.InferenceSession:
        return ort.InferenceSession(str(out.parent / f"{name}.onnx"), providers=["CPUExecutionProvider"])

    mono = sess("model").run(None, feeds)[0]
    feats = sess("model.vision").run(None, {"pixel_values": feeds["pixel_values"]})[0]
    embeds = sess("model.projector").run(None, {"vision_features": feats})[0]
    chained = sess("model.decoder").run(None, {"input_ids": feeds["input_ids"],
                                                "attention_mask": feeds["attention_mask"],
                                                "image_embeds": embeds})[0]
    assert np.abs(mono - ref).max() < 1e-4 and np.abs(chained - ref).max() < 1e-4


def test_example_inputs_that_still_fail_end_in_a_diagnosis(llava_dir: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A config whose tower cannot return the selected layer: a diagnosis (stage, class, fix), exit 1,
    no traceback, nothing written."""
    bad = tmp_path / "bad-llava"
    shutil.copytree(llava_dir, bad)
    cfg = json.loads((bad / "config.json").read_text())
    cfg["vision_feature_layer"] = -9  # the 2-layer tower has 3 hidden states
    (bad / "config.json").write_text(json.dumps(cfg))
    out = tmp_path / "out" / "model.onnx"
    report = tmp_path / "report.json"
    rc = studio_main(["export", str(bad), "-o", str(out), "--report", str(report)])
    text = capsys.readouterr()
    assert rc == 1
    assert "Traceback" not in text.out + text.err
    assert "failed at stage 'inputs': example_inputs_failed" in text.out
    d = json.loads(report.read_text())["diagnosis"]
    assert d["stage"] == "inputs" and d["error_class"] == "example_inputs_failed"
    assert "IndexError" in d["message"] and "vision_feature_layer" in d["fix"]
    assert "Traceback" in d["raw_log"]  # the raw log one click away
    assert not out.parent.exists() or not any(out.parent.iterdir())
