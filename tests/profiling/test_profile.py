"""Per-op profiling: every node gets a time or a reason, comparisons, workspace saving, CLI, module mapping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from attention_models import attention_model, export_tiny_clip, save
from small_models import rewritten_by_ort

from studio.cli.main import main
from studio.core.errors import InputError
from studio.core.workspace import Workspace
from studio.optimize.fusion import fuse_attention
from studio.profiling.api import ProfileReport, compare_profiles, profile, save_to_workspace
from studio.profiling.modules import map_nodes
from studio.profiling.ort import node_keys, profile_model
from studio.profiling.report import FOLDED, FUSED, MEASURED, REMOVED


def test_every_node_gets_a_time_or_where_it_went(tmp_path: Path) -> None:
    import onnx

    path = rewritten_by_ort(tmp_path / "m.onnx")
    rep = profile_model(path, runs=3, warmup=1)
    keys = [k for k, _ in node_keys(onnx.load(str(path)).graph)]
    assert [n.key for n in rep.nodes] == keys  # graph order, every node, inspector keys ("Relu_8" unnamed)
    assert "Relu_8" in keys
    st = {n.key: n for n in rep.nodes}
    assert st["/block/Identity"].status == REMOVED
    assert st["/block/Shape"].status == FOLDED
    assert st["/block/fc/Add"].status == FUSED and st["/block/fc/Add"].fused_into == "/block/fc/MatMul"
    assert st["/block/fc/MatMul"].status == MEASURED and st["/block/fc/MatMul"].ort_op == "Gemm"
    assert st["/block/act/Sigmoid"].fused_into == "/block/act/Mul_1"
    assert "QuickGelu" in st["/block/act/Sigmoid"].reason
    for n in rep.nodes:
        if n.status == MEASURED:
            assert n.mean_ms > 0 and n.p95_ms >= n.mean_ms * 0.0 and n.calls >= 1
        else:
            assert n.mean_ms == 0 and n.reason, n
        if n.fused_into:
            assert st[n.fused_into].status == MEASURED
    assert sum(n.share for n in rep.nodes) == pytest.approx(1.0, abs=1e-6)
    assert rep.node_total_ms > 0 and rep.run_mean_ms > 0 and not rep.unmapped_ort
    assert set(rep.node_times()) == set(keys) and set(rep.shares()) == set(keys)
    top = rep.top(3)
    assert len(top) == 3 and top[0].mean_ms >= top[1].mean_ms >= top[2].mean_ms
    # without ORT's optimizer every node is measured as written
    plain = profile_model(path, runs=2, warmup=0, optimization="disable")
    assert {n.status for n in plain.nodes} == {MEASURED}


def test_fused_model_profiles_and_compares_before_after(tmp_path: Path) -> None:
    src = save(attention_model(layers=2), tmp_path / "m.onnx")
    fused = fuse_attention(src, tmp_path / "m.fused.onnx", inspect=False).output
    shapes = {"x": [1, 6, 8], "mask": [1, 1, 1, 6]}
    before = profile_model(src, shapes=shapes, runs=3, warmup=1)
    after = profile_model(fused, shapes=shapes, runs=3, warmup=1)
    assert "onnxruntime-extensions" in after.custom_ops and not before.custom_ops
    fa = after.node("/encoder/layers.0/self_attn/FusedAttention")
    assert fa is not None and fa.status == MEASURED and fa.mean_ms > 0
    c = compare_profiles(before, after)
    assert "/encoder/layers.0/self_attn/Softmax" in c.only_before
    assert "/encoder/layers.1/self_attn/FusedAttention" in c.only_after
    assert c.run_delta_ms == pytest.approx(after.run_mean_ms - before.run_mean_ms, abs=1e-6)
    scopes = {d.key: d for d in c.scopes}
    s = scopes["/encoder/layers.0/self_attn"]
    assert s.before_ms and s.after_ms and s.delta_ms == pytest.approx(s.after_ms - s.before_ms, abs=1e-6)
    assert not c.warnings
    # round trip through JSON keeps everything the comparison needs
    p = before.save(tmp_path / "before.json")
    again = ProfileReport.load(p)
    assert again.node_times() == before.node_times() and again.top(2)[0].key == before.top(2)[0].key


def test_bad_input(tmp_path: Path) -> None:
    path = rewritten_by_ort(tmp_path / "m.onnx")
    with pytest.raises(InputError, match="does not have"):
        profile_model(path, shapes={"nope": [1]})
    with pytest.raises(InputError, match="fixed to 2"):
        profile_model(path, shapes={"x": [3, 8]})
    with pytest.raises(InputError, match="runs"):
        profile_model(path, runs=0)
    with pytest.raises(InputError, match="not found"):
        profile_model(tmp_path / "missing.onnx")
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(InputError, match="not a profile"):
        ProfileReport.load(tmp_path / "bad.json")


def test_cli_profile_save_compare_workspace(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    src = save(attention_model(), tmp_path / "m.onnx")
    fused = fuse_attention(src, tmp_path / "m.fused.onnx", inspect=False).output
    ws = Workspace.create(tmp_path / "ws")
    assert main(["profile", str(src), "--shape", "x=1,4,8", "--runs", "3", "--warmup", "1", "-q",
                 "--save", str(tmp_path / "before.json"), "--workspace", str(ws.root), "--top", "5"]) == 0
    out = capsys.readouterr().out
    assert "mean ms" in out and "/encoder/layers.0/self_attn/" in out
    assert (ws.reports_dir / "m.profile.json").is_file()
    before = json.loads((tmp_path / "before.json").read_text())
    assert before["schema_version"] == 1 and before["input_shapes"]["mask"] == [1, 1, 1, 4]  # symbol 'seq' shared
    assert main(["profile", fused, "--shape", "x=1,4,8", "--runs", "3", "--warmup", "1", "-q", "--json",
                 "--compare", str(tmp_path / "before.json")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["comparison"]["only_after"] == ["/encoder/layers.0/self_attn/FusedAttention"]
    assert doc["profile"]["custom_ops"]
    # two saved profiles compare without running anything
    assert main(["profile", str(tmp_path / "before.json"), "--compare", str(tmp_path / "before.json")]) == 0
    assert "+0.0000" in capsys.readouterr().out
    assert main(["profile", str(src), "--shape", "x=1,4"]) == 2
    assert "rank 2" in capsys.readouterr().err
    rep = ProfileReport.load(ws.reports_dir / "m.profile.json")
    assert save_to_workspace(rep, ws) == ws.reports_dir / "m.profile.json"


def test_scopes_without_torch_from_node_names(tmp_path: Path) -> None:
    import onnx

    path = save(attention_model(layers=2), tmp_path / "m.onnx")
    mapping, source = map_nodes(onnx.load(str(path)))
    assert source == "node names"
    assert mapping["/encoder/layers.1/self_attn/q_proj/MatMul"] == "encoder.layers.1.self_attn.q_proj"


@pytest.mark.export
def test_module_mapping_covers_tiny_clip_encoder_layers(tmp_path: Path) -> None:
    model = export_tiny_clip(tmp_path)
    rep = profile(model, runs=2, warmup=1, torch_runs=2)  # config.json beside the export -> PyTorch times
    assert rep.module_source == "node names" and rep.torch.get("weights")
    mods = {m.module: m for m in rep.modules}
    for tower in ("text_model", "vision_model"):
        for i in (0, 1):
            layer = f"{tower}.encoder.layers.{i}"
            for sub in ("", ".self_attn", ".self_attn.q_proj", ".self_attn.k_proj", ".self_attn.v_proj",
                        ".self_attn.out_proj", ".mlp", ".mlp.fc1", ".mlp.fc2", ".layer_norm1", ".layer_norm2"):
                m = mods.get(layer + sub)
                assert m is not None and m.onnx_nodes, layer + sub
                assert m.torch_mean_ms is not None and m.torch_mean_ms > 0, layer + sub
            assert mods[layer].type == "CLIPEncoderLayer" and mods[layer + ".self_attn"].type == "CLIPAttention"
    by_key = {n.key: n for n in rep.nodes}
    sm = by_key["/model/vision_model/encoder/layers.0/self_attn/Softmax"]
    assert sm.module == "vision_model.encoder.layers.0.self_attn"
    # the fused model keeps the mapping: the fused node sits in its attention module
    fused = fuse_attention(model, tmp_path / "fused" / "model.onnx", inspect=False).output
    frep = profile(fused, runs=2, warmup=1, torch_modules=False)
    fa = frep.node("/model/text_model/encoder/layers.1/self_attn/FusedAttention")
    assert fa is not None and fa.module == "text_model.encoder.layers.1.self_attn" and fa.mean_ms > 0
