"""The real rknn-toolkit2 2.5.0 (its own environment, the x86 simulator): verdicts, builds, parity vs ORT.

Skipped, with the command that makes the environment, when it is not there.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from studio_rknn.plugin import accuracy, build_rknn, simulate, verifier


def test_mlp_builds_and_every_node_is_on_the_npu(toolkit_env: Path, models: dict[str, Path]) -> None:
    res = verifier("rknn-rk3588").verify(models["mlp"])
    assert res.ran and not res.error and res.tool == "rknn-toolkit2 2.5.0" and res.shapes == {"x": [1, 16]}
    assert {n.node: (n.verdict, n.placement) for n in res.nodes} == {
        "mm1": ("supported", "accelerator"), "relu": ("supported", "accelerator"),
        "mm2": ("supported", "accelerator")}
    assert "ConvRelu" in res.by_node()["relu"].message  # fused into the first MatMul's conv
    assert res.to_dict()["nodes"][0]["node"] == "mm1"


def test_isnan_is_a_cpu_fallback_on_its_node_with_the_toolkits_message(toolkit_env: Path,
                                                                        models: dict[str, Path]) -> None:
    res = verifier("rknn-rk3588").verify(models["isnan"])
    by = res.by_node()
    assert res.ran and not res.error
    assert (by["isnan_node"].verdict, by["isnan_node"].placement) == ("risky", "cpu")
    assert by["isnan_node"].message == ("No lowering found for: isnan_node, node type = IsNaN, "
                                        "use CustomOperatorLower instead.")
    assert by["relu"].placement == by["where"].placement == "accelerator"


def test_a_node_the_toolkit_refuses_is_failed_with_its_words(toolkit_env: Path, models: dict[str, Path]) -> None:
    res = verifier("rknn-rk3588").verify(models["resize"], {"x": [1, 3, 4, 4], "scales": [4]})
    up = res.by_node()["up"]
    assert (up.verdict, up.placement) == ("unsupported", "failed")
    assert "scales" in up.message or "Resize('up')" in up.message
    assert res.error and up.message in res.error


def test_rk3566_and_rk3576_are_real_platforms(toolkit_env: Path, models: dict[str, Path]) -> None:
    for name in ("rknn-rk3566", "rknn-rk3576"):
        res = verifier(name).verify(models["isnan"])
        assert res.ran and not res.error and res.target == name.removeprefix("rknn-")
        assert res.by_node()["isnan_node"].placement == "cpu"


def test_fp16_and_int8_builds_and_simulator_matches_ort(toolkit_env: Path, models: dict[str, Path],
                                                        tmp_path: Path) -> None:
    import onnxruntime as ort

    fp16 = build_rknn(models["mlp"], tmp_path / "mlp.rknn")
    assert fp16["dtype"] == "fp16" and (tmp_path / "mlp.rknn").stat().st_size == fp16["bytes"] > 0
    rng = np.random.default_rng(1)
    ds = tmp_path / "dataset.txt"
    samples = []
    for i in range(4):
        x = rng.standard_normal((1, 16)).astype(np.float32)
        np.save(tmp_path / f"s{i}.npy", x)
        samples.append(str(tmp_path / f"s{i}.npy"))
    ds.write_text("\n".join(samples) + "\n")
    int8 = build_rknn(models["mlp"], tmp_path / "mlp_int8.rknn", dataset=ds)
    assert int8["dtype"] == "int8" and int8["bytes"] > 0

    x = np.load(samples[0])
    want = ort.InferenceSession(str(models["mlp"]), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = simulate(models["mlp"], {"x": x})[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2 * float(np.abs(want).max()))

    rows = accuracy(models["mlp"], {"x": x}, ds, tmp_path / "acc")
    assert rows and all(0.9 < float(r["entire_cos"]) <= 1.0001 for r in rows if r["tensor"] != "x")


def _tiny_clip_vision(path: Path) -> Path:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    cfg = transformers.CLIPVisionConfig(hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                                        num_attention_heads=4, image_size=32, patch_size=8)
    torch.manual_seed(0)
    model = transformers.CLIPVisionModel(cfg).eval()
    x = torch.randn(1, 3, 32, 32)
    torch.onnx.export(model, (x,), str(path), input_names=["pixel_values"],
                      output_names=["last_hidden_state", "pooler_output"], opset_version=17, dynamo=False)
    return path


def test_tiny_clip_vision_simulator_parity_with_ort(toolkit_env: Path, tmp_path: Path) -> None:
    import onnxruntime as ort

    model = _tiny_clip_vision(tmp_path / "clip_vision.onnx")
    res = verifier("rknn-rk3588").verify(model)
    assert res.ran and not res.error, res.error
    assert res.nodes and all(n.placement in ("accelerator", "cpu", "") for n in res.nodes)
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    want = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"]).run(None, {"pixel_values": x})
    got = simulate(model, {"pixel_values": x})
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        rel = float(np.abs(g - w).max() / (np.abs(w).max() + 1e-6))
        assert rel < 5e-2, rel  # fp16 on the NPU simulator
