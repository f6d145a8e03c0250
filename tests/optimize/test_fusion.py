"""studio.fused::FusedAttention: rewrite, ORT runtime (onnxruntime-extensions), parity, inspector, CLI."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from attention_models import attention_model, export_tiny_clip, save

from studio.cli.main import main
from studio.core.errors import InputError
from studio.inspect.api import inspect_model
from studio.optimize.custom_ops import DOMAIN, fused_attention, make_session, uses_domain
from studio.optimize.fusion import fuse_attention, fuse_attention_proto


def _fused_nodes(path: Path) -> list[onnx.NodeProto]:
    return [n for n in onnx.load(str(path)).graph.node if n.domain == DOMAIN]


@pytest.mark.parametrize("style,mask", [("eager", True), ("eager", False), ("sdpa", True)])
def test_attention_is_fused_and_matches_unfused(tmp_path: Path, style: str, mask: bool) -> None:
    src = save(attention_model(style=style, mask=mask, layers=2), tmp_path / "m.onnx")
    rep = fuse_attention(src, tmp_path / "out" / "m.fused.onnx", parity_cases=2, dims={"batch": 2, "seq": 5},
                         targets=["ort-cpu", "tvm-relax"])
    assert len(rep.sites) == 2
    assert rep.parity is not None and rep.parity.passed, rep.parity
    worst = max(o.max_abs for c in rep.parity.cases for o in c.outputs)
    assert worst < 1e-5
    fused = _fused_nodes(Path(rep.output))
    assert [n.op_type for n in fused] == ["FusedAttention", "FusedAttention"]
    assert [n.name for n in fused] == ["/encoder/layers.0/self_attn/FusedAttention",
                                       "/encoder/layers.1/self_attn/FusedAttention"]
    assert all(len(n.input) == (4 if mask else 3) for n in fused)
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in fused[0].attribute}
    assert attrs["key_format"] == (b"BHSd" if style == "eager" else b"BSHd")
    assert attrs["scale"] == pytest.approx(0.5)  # 1/sqrt(4), whether as Div(sqrt d) or two Mul(d^-1/4)
    assert rep.nodes_after < rep.nodes_before
    # the attention nodes are gone; projections and reshapes stay
    ops = [n.op_type for n in onnx.load(rep.output).graph.node]
    assert "Softmax" not in ops and ops.count("MatMul") == 2 * 4


def test_fused_model_runs_in_ort_and_matches_reference(tmp_path: Path) -> None:
    model = attention_model(mask=True)
    fused, sites = fuse_attention_proto(model)
    assert len(sites) == 1 and sites[0].has_mask and sites[0].replaced
    assert uses_domain(fused) and not uses_domain(model)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 6, 8)).astype(np.float32)
    m = np.zeros((2, 1, 1, 6), np.float32)
    m[1, ..., 4:] = -1e9  # padded positions
    a = make_session(model).run(None, {"x": x, "mask": m})[0]
    b = make_session(fused).run(None, {"x": x, "mask": m})[0]
    np.testing.assert_allclose(a, b, atol=1e-5)


def test_reference_kernel_matches_numpy_and_checks_heads() -> None:
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 2, 3, 4)).astype(np.float32) for _ in range(3))
    s = q @ k.transpose(0, 1, 3, 2) * 0.5
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(fused_attention(q, k, v, scale=0.5), p @ v, rtol=1e-5)
    np.testing.assert_allclose(fused_attention(q, k.transpose(0, 2, 1, 3), v, scale=0.5, key_format="BSHd"),
                               p @ v, rtol=1e-5)
    full = np.full((1, 1, 1, 3), -np.inf, np.float32)
    assert not np.isnan(fused_attention(q, k, v, full, scale=0.5, nan_to_zero=1)).any()
    with pytest.raises(ValueError, match="num_heads"):
        fused_attention(q, k, v, scale=0.5, num_heads=3)


def test_nothing_matched_writes_nothing(tmp_path: Path) -> None:
    import onnx.helper as h
    from onnx import TensorProto as T

    g = h.make_graph([h.make_node("Relu", ["x"], ["y"], name="r")], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [2])], [h.make_tensor_value_info("y", T.FLOAT, [2])])
    src = save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), tmp_path / "relu.onnx")
    with pytest.raises(InputError, match="no attention subgraph"):
        fuse_attention(src, tmp_path / "o.onnx")
    assert not (tmp_path / "o.onnx").exists()
    with pytest.raises(InputError, match="must differ"):
        fuse_attention(src, src)


def test_inspector_declares_studio_domain_and_flags_targets_without_it(tmp_path: Path) -> None:
    src = save(attention_model(), tmp_path / "m.onnx")
    out = fuse_attention(src, tmp_path / "f.onnx", inspect=False).output
    rep = inspect_model(out, ["ort-cpu", "tvm-relax", "rk3588", "tensorrt"])
    assert DOMAIN in rep.allowed_domains  # declared: no domain-policy finding
    assert not [f for f in rep.findings if f.rule == "domain-policy"]
    for tid in ("tvm-relax", "rk3588", "tensorrt"):
        found = [f for f in rep.findings if f.target == tid and f.domain == DOMAIN]
        assert found and found[0].rule == "domain-unsupported" and found[0].verdict in ("unsupported", "unknown"), tid
        assert "fuse-attention" in found[0].hint
        assert rep.targets[tid].verdict == "fail" or found[0].verdict == "unknown"
    key = next(k for k, v in rep.node_verdicts["ort-cpu"].items() if "FusedAttention" in k)
    assert rep.node_verdicts["ort-cpu"][key] == "risky"  # loads only with the kernels registered
    assert rep.node_verdicts["tvm-relax"][key] == "unsupported"
    # the unfused model passes ort-cpu: the fusion is what changes the verdict
    assert inspect_model(src, ["ort-cpu"]).targets["ort-cpu"].verdict == "pass"


def test_fix_cli_fuse_attention(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    src = save(attention_model(style="sdpa"), tmp_path / "m.onnx")
    out = tmp_path / "fixed" / "m.onnx"
    rc = main(["fix", str(src), "--fuse-attention", "--out", str(out), "-t", "tvm-relax",
               "--report", str(tmp_path / "r.json")])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "1 subgraph(s) -> studio.fused::FusedAttention" in text and "PASSED" in text
    assert "tvm-relax" in text and "domain 'studio.fused'" in text
    assert _fused_nodes(out)
    # combined with another fix: simplify first, then fuse in place
    out2 = tmp_path / "fixed2" / "m.onnx"
    assert main(["fix", str(src), "--simplify", "--fuse-attention", "--out", str(out2), "-t", "ort-cpu"]) == 0
    assert _fused_nodes(out2)
    assert not [p for p in out2.parent.iterdir() if p.name.startswith(".")]  # no temp leftovers
    # bad custom-op library: exit 2, nothing written
    out3 = tmp_path / "fixed3" / "m.onnx"
    rc = main(["fix", str(src), "--fuse-attention", "--out", str(out3), "--custom-op-lib", str(tmp_path / "no.so")])
    assert rc == 2 and not out3.exists()
    assert "custom-op library not found" in capsys.readouterr().err


@pytest.mark.export
def test_tiny_clip_encoder_attention_is_fused(tmp_path: Path) -> None:
    model = export_tiny_clip(tmp_path)
    rep = fuse_attention(model, tmp_path / "fused" / "model.onnx", targets=["ort-cpu"])
    scopes = sorted(s.scope for s in rep.sites)
    assert scopes == [f"/model/{m}_model/encoder/layers.{i}/self_attn" for m in ("text", "vision") for i in (0, 1)]
    assert all(s.key_format == "BSHd" for s in rep.sites)
    text = [s for s in rep.sites if "text_model" in s.scope]
    assert all(s.has_mask and s.nan_to_zero for s in text)  # causal + padding mask, Where(IsNaN) guard absorbed
    assert rep.parity is not None and rep.parity.passed
    assert max(o.max_abs for c in rep.parity.cases for o in c.outputs) < 1e-4


def test_onnxruntime_extensions_leaves_the_environment_as_it_was() -> None:
    """Its import set PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python for every later child process (the studio's
    shape-inference fork and any tool it starts parsed protobuf in pure Python): the variable is put back. A fresh
    process, so the import is a first one."""
    import os
    import subprocess
    import sys

    code = ("import os; from studio.optimize import custom_ops; assert custom_ops.extensions_available(); "
            "custom_ops.register_python_ops(); print(os.environ.get('PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION'))")
    env = {k: v for k, v in os.environ.items() if k != "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "None"
