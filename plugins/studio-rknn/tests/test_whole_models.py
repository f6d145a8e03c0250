"""Whole exported models against the real rknn-toolkit2 2.5.0 (issue 33): the static rk3588 verdict of the
model agrees with the toolkit's, host-placed nodes named; a toolkit crash is the toolkit's, never the model's;
bad input (no static shapes, a broken environment, a target without a verifier) is said as such.

Tiny random-weight models built from transformers configs (no hub) and exported by the studio's exporter.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studio.cli.main import main

SHAPES = {"input_ids": [1, 8], "attention_mask": [1, 8], "pixel_values": [1, 3, 32, 32]}
TEXT = dict(hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4, vocab_size=99,
            max_position_embeddings=16)
VISION = dict(hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4, image_size=32,
              patch_size=8)


def _export(name: str, out: Path) -> Path:
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    import torch

    from studio.export.api import ExportOptions, export_model
    from studio.export.samples import write_sample

    hf = out / "hf"
    if name == "tiny-clip":
        write_sample("tiny-clip", hf)
    else:
        torch.manual_seed(0)
        ids = dict(pad_token_id=0, bos_token_id=1, eos_token_id=2)
        make = {"owlvit": lambda: transformers.OwlViTModel(transformers.OwlViTConfig(
                    text_config={**TEXT, **ids}, vision_config=VISION, projection_dim=16)),
                "chinese-clip": lambda: transformers.ChineseCLIPModel(transformers.ChineseCLIPConfig(
                    text_config={**TEXT, "type_vocab_size": 2}, vision_config=VISION, projection_dim=16)),
                "blip": lambda: transformers.BlipModel(transformers.BlipConfig(
                    text_config={**TEXT, **ids}, vision_config=VISION, projection_dim=16))}[name]
        make().eval().save_pretrained(hf)
    rep = export_model(ExportOptions(model_dir=hf, output=out / "model.onnx"))
    assert rep.status == "succeeded", rep.diagnosis
    return out / "model.onnx"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {n: _export(n, tmp_path_factory.mktemp(n)) for n in ("tiny-clip", "owlvit", "chinese-clip", "blip")}


def _shape_args(model: Path) -> list[str]:
    from studio.inspect.api import load_structure

    names = load_structure(model).graph_inputs
    return [a for n in names for a in ("--shape", f"{n}={','.join(map(str, SHAPES[n]))}")]


@pytest.mark.parametrize("name", ["tiny-clip", "owlvit", "chinese-clip"])
def test_clip_class_models_agree_with_the_toolkit_host_nodes_named(toolkit_env: Path, exported: dict[str, Path],
                                                                    name: str, capsys: pytest.CaptureFixture) -> None:
    model = exported[name]
    assert main(["inspect", str(model), "-t", "rk3588", "--verify", "-q", "-f", "json", *_shape_args(model)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["targets"]["rk3588"]["verdict"] != "fail"  # issue 33: "rk3588 FAIL" on models the toolkit builds
    held = data["verification"]["targets"]["rk3588"]
    static, tool = held["static"], held["verified"]
    assert tool["verdict"] == "host-fallback" and tool["by"] == "rknn-toolkit2 2.5.0" and tool["source"] == "verified"
    assert static["verdict"] == "host-fallback" and held["agrees"] is True and held["holds"] == "verified"
    tool_host = {h["node"] for h in tool["host_nodes"]}
    static_host = {h["node"] for h in static["host_nodes"]}
    assert any("token_embedding" in n or "word_embeddings" in n for n in tool_host)  # the token Gather
    # the same nodes named on both sides (the pooled-index Add of zero at batch 1 dropped by both)
    assert tool_host == static_host, (static_host ^ tool_host)
    nodes = held["nodes"]
    some = next(iter(tool_host))
    assert nodes[some]["source"] == "verified" and nodes[some]["by"] == "rknn-toolkit2 2.5.0"
    assert nodes[some]["placement"] == "cpu"


def test_blip_toolkit_crash_is_the_toolkits(toolkit_env: Path, exported: dict[str, Path],
                                            capsys: pytest.CaptureFixture) -> None:
    model = exported["blip"]
    assert main(["inspect", str(model), "-t", "rk3588", "--verify", "-q", *_shape_args(model)]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("  rk3588: rknn-rk3588"))
    assert "(rknn-toolkit2 2.5.0) CRASHED: a fault of the tool, not a verdict on the model" in line
    assert "TypeError: argument of type 'NoneType' is not iterable" in line
    assert "trace: " in out and "static verdict kept:" in out and "refuses the model" not in line
    assert main(["inspect", str(model), "-t", "rk3588", "--verify", "-q", "-f", "json", "--fail-on", "unsupported",
                 *_shape_args(model)]) == 0  # the toolkit's crash never fails the gate
    data = json.loads(capsys.readouterr().out)
    [c] = data["verification"]["comparisons"]
    assert c["tool_crashed"] and not c["tool_fails"] and c["model_agrees"] is None
    assert c["tool_model"]["verdict"] == "tool-crashed" and "fold_constant" in c["tool_model"]["crash"]
    assert data["verification"]["targets"]["rk3588"]["holds"] == "static"
    _gui_shows_the_crash(data)


def _gui_shows_the_crash(data: dict) -> None:
    """The Verify tab renders that same report: the toolkit's crash, with its version, not a refused model."""
    pytest.importorskip("PySide6")
    from PySide6.QtWidgets import QApplication

    from studio.gui.inspector.verify_panel import VerifyPanel
    from studio.inspect.report import InspectionReport

    app = QApplication.instance() or QApplication([])
    rep = InspectionReport.from_dict(data)
    panel = VerifyPanel()
    panel.show_verification(rep.verification, rep)
    top = panel.tree.topLevelItem(0)
    assert top.text(0) == "rk3588 · rknn-rk3588" and top.text(1) == "—"
    assert top.text(2).startswith("rknn-toolkit2 2.5.0: crashed (a fault of the tool, not a verdict on the model)")
    assert "refuses" not in top.text(2)
    panel.deleteLater()
    app.processEvents()


def test_verify_without_static_shapes_names_the_inputs(toolkit_env: Path, exported: dict[str, Path],
                                                       capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    assert main(["inspect", str(exported["tiny-clip"]), "-t", "rk3588", "--verify", "-q", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "input_ids [batch,sequence]" in err and "pixel_values [batch,3,32,32]" in err
    assert "--shape input_ids=1,8" in err and not out.exists()  # nothing half-written


def test_a_broken_environment_is_named_with_its_fix(exported: dict[str, Path], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture) -> None:
    broken = tmp_path / "env"
    (broken / "bin").mkdir(parents=True)
    (broken / "bin" / "python").write_text("")  # a half-made environment: no creation stamp
    monkeypatch.setenv("STUDIO_RKNN_ENV", str(broken))
    model = exported["tiny-clip"]
    assert main(["inspect", str(model), "-t", "rk3588", "-t", "tensorrt", "--verify", "-q",
                 *_shape_args(model)]) == 0
    out = capsys.readouterr().out
    assert f"rknn-rk3588 for rk3588: unavailable: rknn-toolkit2 environment at {broken} is incomplete" in out
    assert "run: studio-rknn-env create; the static verdict is kept" in out
    assert "tensorrt: no verifier; verdicts are from the list" in out and "the static verdict is kept" in out
    assert "whole model (static" in out
