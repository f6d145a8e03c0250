"""The TorchScript conversions the studio adds (studio.export.symbolics) against PyTorch's own numerics."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from studio.export.symbolics import torchscript_symbolics  # noqa: E402


class Solve(torch.nn.Module):
    def __init__(self, upper: bool, left: bool, unit: bool) -> None:
        super().__init__()
        self.upper, self.left, self.unit = upper, left, unit

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.linalg.solve_triangular(a, b, upper=self.upper, left=self.left, unitriangular=self.unit)


class ChunkedSolve(torch.nn.Module):
    """The matrix reaches the solve through a Reshape whose target ONNX shape inference cannot read (the gated
    delta-net chunk step's shape): its size is the trace's, guarded."""

    def forward(self, x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a = x.reshape(b.shape[0], b.shape[1], b.shape[2], -1)
        return torch.linalg.solve_triangular(a, b, upper=False, unitriangular=True)


def _export(module: torch.nn.Module, args: tuple[torch.Tensor, ...], axes: dict[str, dict[int, str]]) -> tuple:
    import onnxruntime as ort

    used: list[str] = []
    buf = io.BytesIO()
    with torchscript_symbolics(used), torch.no_grad():
        torch.onnx.export(module, args, buf, input_names=["a", "b"], dynamic_axes=axes, opset_version=17,
                          dynamo=False)
    return ort.InferenceSession(buf.getvalue()), used


def _matrix(*lead: int, n: int = 6) -> torch.Tensor:
    return torch.randn(*lead, n, n) * 0.3 + 2 * torch.eye(n)  # well conditioned, upper and lower parts nonzero


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_triangular_solve_matches_torch(upper: bool, left: bool, unit: bool) -> None:
    """Every variant torch has (lower/upper, left/right, unit diagonal or not), on a batch the trace never saw;
    the other triangle (and the diagonal when unit) are ignored, as in torch; the report line names it."""
    torch.manual_seed(0)
    module = Solve(upper, left, unit)
    b = torch.randn(2, 3, 6, 4) if left else torch.randn(2, 3, 4, 6)
    sess, used = _export(module, (_matrix(2, 3), b), {"a": {0: "batch"}, "b": {0: "batch", 3 if left else 2: "k"}})
    a2 = _matrix(5, 3)
    b2 = torch.randn(5, 3, 6, 7) if left else torch.randn(5, 3, 7, 6)
    got = sess.run(None, {"a": a2.numpy(), "b": b2.numpy()})[0]
    np.testing.assert_allclose(got, module(a2, b2).numpy(), rtol=1e-4, atol=1e-5)
    assert len(used) == 1 and "linalg_solve_triangular (6x6" in used[0] and "substitution" in used[0]
    assert ("unit diagonal" in used[0]) == unit


def test_traced_matrix_size_is_guarded() -> None:
    """A size only the trace knows is used and said so; a graph fed another size stops instead of solving a
    different system."""
    torch.manual_seed(0)
    x, b = _matrix(2, 3).reshape(2, 3, 36), torch.randn(2, 3, 6, 4)
    sess, used = _export(ChunkedSolve(), (x, b), {"a": {0: "batch", 2: "nn"}, "b": {0: "batch", 2: "n"}})
    assert "traced size" in used[0]
    x2, b2 = _matrix(4, 3).reshape(4, 3, 36), torch.randn(4, 3, 6, 4)
    got = sess.run(None, {"a": x2.numpy(), "b": b2.numpy()})[0]
    np.testing.assert_allclose(got, ChunkedSolve()(x2, b2).numpy(), rtol=1e-4, atol=1e-5)
    with pytest.raises(Exception, match="Reshape|reshape"):
        sess.run(None, {"a": _matrix(4, 3, n=5).reshape(4, 3, 25).numpy(), "b": torch.randn(4, 3, 5, 4).numpy()})


def test_registration_ends_with_the_block() -> None:
    """Outside the studio's export the exporter is as torch ships it."""
    with torchscript_symbolics([]):
        pass
    with pytest.raises(Exception, match="linalg_solve_triangular"):
        torch.onnx.export(Solve(False, True, True), (_matrix(1), torch.randn(1, 6, 2)), io.BytesIO(),
                          opset_version=17, dynamo=False)


def test_gated_delta_net_exports_with_parity(tmp_path: Path) -> None:
    """A tiny Qwen3.5 text model (gated delta-net layers: transformers solves the chunk's UT system with
    torch.linalg.solve_triangular under TorchScript) exports through the studio with ORT parity, and the report
    names the conversion. (Without a KV cache: a linear-attention layer's cache holds no key/value tensors.)"""
    import transformers

    from bench.coverage_shrink import shrink_config
    from studio.export.api import ExportOptions, export_model
    from studio.export.signatures import parse_signature

    config = shrink_config(transformers.CONFIG_MAPPING["qwen3_5_text"]())
    torch.manual_seed(0)
    transformers.AutoModelForCausalLM.from_config(config).eval().save_pretrained(tmp_path / "model")
    model = tmp_path / "model"
    signature = parse_signature("text:input_ids,text:attention_mask", model)  # its config also maps a processor
    report = export_model(ExportOptions(model_dir=model, output=tmp_path / "out" / "model.onnx",
                                        input_signature=signature, with_past=False))
    assert report.status == "succeeded", report.diagnosis
    assert report.validation.passed
    assert any("linalg_solve_triangular" in w and "substitution" in w for w in report.warnings)


def test_repeat_interleave_leaves_shared_constants_alone() -> None:
    """GLM-4.1V's rotary: ``repeat_interleave(2, dim=-1)`` then ``stack(...).flatten(-2)`` and a ``cat``. torch's
    conversion adds the rank to the pooled -1 constant in place (the flatten's end became 2 and the export stopped
    at the cat); with the studio's copy it exports and matches torch on a new batch and length."""
    import onnxruntime as ort
    import transformers
    from transformers.models.glm4v.modeling_glm4v import Glm4vTextRotaryEmbedding, apply_rotary_pos_emb

    config = transformers.CONFIG_MAPPING["glm4v"]().text_config
    config.rope_parameters["partial_rotary_factor"] = 0.5  # the checkpoints' share: the sections fill half a head

    class Rotary(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.rotary = Glm4vTextRotaryEmbedding(config)

        def forward(self, q: torch.Tensor, k: torch.Tensor, pos: torch.Tensor) -> tuple[torch.Tensor, ...]:
            cos, sin = self.rotary(q, pos)
            return apply_rotary_pos_emb(q, k, cos, sin)

    def inputs(batch: int, length: int) -> tuple[torch.Tensor, ...]:
        pos = torch.arange(length)[None, None].expand(3, batch, length).contiguous()
        return torch.randn(batch, 4, length, 128), torch.randn(batch, 2, length, 128), pos

    torch.manual_seed(0)
    buf, used = io.BytesIO(), []
    with torchscript_symbolics(used), torch.no_grad():
        torch.onnx.export(Rotary(), inputs(2, 5), buf, input_names=["q", "k", "pos"], opset_version=17, dynamo=False,
                          dynamic_axes={"q": {0: "b", 2: "s"}, "k": {0: "b", 2: "s"}, "pos": {1: "b", 2: "s"}})
    assert used == []  # same computation: nothing to report
    q, k, pos = inputs(3, 9)
    got = ort.InferenceSession(buf.getvalue()).run(None, {"q": q.numpy(), "k": k.numpy(), "pos": pos.numpy()})
    for g, want in zip(got, Rotary()(q, k, pos), strict=True):
        np.testing.assert_allclose(g, want.detach().numpy(), rtol=1e-4, atol=1e-5)


class Windows(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a.unfold(1, 4, 2) * 1 + b.unfold(-1, 3, 3).sum()


def test_unfold_along_a_dynamic_length_matches_torch() -> None:
    """torch's conversion needs the unfolded dim static ("input size not accessible"); the studio's gathers the
    windows: the same elements on lengths the trace never saw, a window count that drops a tail included."""
    torch.manual_seed(0)
    sess, used = _export(Windows(), (torch.randn(2, 10, 3), torch.randn(2, 5, 9)),
                         {"a": {0: "batch", 1: "length"}, "b": {2: "width"}})
    for length, width in ((13, 12), (4, 3)):
        a, b = torch.randn(3, length, 3), torch.randn(2, 5, width)
        got = sess.run(None, {"a": a.numpy(), "b": b.numpy()})[0]
        np.testing.assert_allclose(got, Windows()(a, b).numpy(), rtol=1e-5, atol=1e-5)
    assert used == []


class Positions(torch.nn.Module):
    """Idefics2/3's patch position ids: ``torch.full`` with an int fill and no dtype, then an embedding lookup."""

    def __init__(self) -> None:
        super().__init__()
        self.table = torch.nn.Embedding(16, 3)

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        ids = torch.full(size=(a.shape[0], 4), fill_value=0)
        ids = torch.where(a > 0, b, ids)
        return self.table(ids)


def test_full_without_dtype_keeps_torchs_dtype() -> None:
    """torch.full(size, 0) is int64 in torch; torch's conversion made it float and the Gather after it failed the
    checker. With the studio's it is int64 and the lookup matches torch."""
    import onnx
    import onnxruntime as ort

    torch.manual_seed(0)
    a, b = torch.randn(3, 4), torch.randint(0, 16, (3, 4))
    module = Positions()
    buf = io.BytesIO()
    used: list[str] = []
    with torchscript_symbolics(used), torch.no_grad():
        torch.onnx.export(module, (a, b), buf, input_names=["a", "b"], opset_version=17, dynamo=False)
    onnx.checker.check_model(onnx.shape_inference.infer_shapes(onnx.load_from_string(buf.getvalue())), full_check=True)
    out = ort.InferenceSession(buf.getvalue()).run(None, {"a": a.numpy(), "b": b.numpy()})[0]
    np.testing.assert_allclose(out, module(a, b).detach().numpy(), rtol=1e-6)
    assert used == []


class Take(torch.nn.Module):
    """MiniCPM-V's merger: a slice bound read from an int32 tensor (``target_sizes``)."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        height, width = b[0]
        return a[0, 1: 1 + height * width, :]


def test_slice_with_int32_bounds_passes_the_checker() -> None:
    """ONNX Slice wants its bounds of one type; torch's conversion passed the int32 one as it was."""
    import onnx
    import onnxruntime as ort

    a, b = torch.randn(1, 30, 3), torch.tensor([[2, 3]], dtype=torch.int32)
    buf = io.BytesIO()
    with torchscript_symbolics([]), torch.no_grad():
        torch.onnx.export(Take(), (a, b), buf, input_names=["a", "b"], opset_version=17, dynamo=False)
    onnx.checker.check_model(onnx.shape_inference.infer_shapes(onnx.load_from_string(buf.getvalue())), full_check=True)
    b2 = torch.tensor([[4, 5]], dtype=torch.int32)
    got = ort.InferenceSession(buf.getvalue()).run(None, {"a": a.numpy(), "b": b2.numpy()})[0]
    np.testing.assert_array_equal(got, Take()(a, b2).numpy())


class Span(torch.nn.Module):
    """GLM-5's video span: cumulative sums of token-id comparisons (bool)."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return ((a == 3).cumsum(-1) > (a == 4).cumsum(-1)) & (b.to(torch.int32).cumsum(0) > 0)


def test_cumsum_of_bool_passes_the_checker() -> None:
    """ONNX CumSum takes no bool; torch sums it as int64, and so does the studio's conversion."""
    import onnx
    import onnxruntime as ort

    a, b = torch.tensor([[1, 3, 5, 4, 3, 2]]), torch.tensor([[0, 0, 1, 0, 0, 1]])
    buf = io.BytesIO()
    with torchscript_symbolics([]), torch.no_grad():
        torch.onnx.export(Span(), (a, b), buf, input_names=["a", "b"], opset_version=17, dynamo=False,
                          dynamic_axes={"a": {1: "n"}, "b": {1: "n"}})
    onnx.checker.check_model(onnx.shape_inference.infer_shapes(onnx.load_from_string(buf.getvalue())), full_check=True)
    a2, b2 = torch.tensor([[3, 3, 4, 1, 4, 4, 3, 0]]), torch.tensor([[1, 0, 0, 0, 1, 0, 0, 0]])
    got = ort.InferenceSession(buf.getvalue()).run(None, {"a": a2.numpy(), "b": b2.numpy()})[0]
    np.testing.assert_array_equal(got, Span()(a2, b2).numpy())


class Mixer(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a.permute(0, -2, -1, 1) + b


def test_permute_with_negative_dims_passes_the_checker() -> None:
    """Transpose's perm must be non-negative; torch's conversion copied permute(0, -2, -1, 1) as it was."""
    import onnx
    import onnxruntime as ort

    a, b = torch.randn(2, 3, 4, 5), torch.randn(4, 5, 3)
    buf = io.BytesIO()
    with torchscript_symbolics([]), torch.no_grad():
        torch.onnx.export(Mixer(), (a, b), buf, input_names=["a", "b"], opset_version=17, dynamo=False)
    onnx.checker.check_model(onnx.shape_inference.infer_shapes(onnx.load_from_string(buf.getvalue())), full_check=True)
    got = ort.InferenceSession(buf.getvalue()).run(None, {"a": a.numpy(), "b": b.numpy()})[0]
    np.testing.assert_allclose(got, Mixer()(a, b).numpy())


class IsIn(torch.nn.Module):
    def __init__(self, invert: bool) -> None:
        super().__init__()
        self.invert = invert

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.isin(a, b, invert=self.invert).long() + a  # used downstream, as a mask is


@pytest.mark.parametrize("invert", [False, True])
def test_isin_matches_torch(invert: bool) -> None:
    """Grounding DINO's ``torch.isin(input_ids, special_ids)``: no ONNX op; same mask on shapes the trace never saw."""
    module = IsIn(invert)
    ids, special = torch.tensor([[1, 5, 7, 2], [3, 3, 9, 5]]), torch.tensor([5, 9, 11])
    sess, _ = _export(module, (ids, special), {"a": {0: "batch", 1: "seq"}, "b": {0: "n"}})
    ids2, special2 = torch.randint(0, 12, (3, 9)), torch.tensor([0, 4, 4, 8, 11])
    got = sess.run(None, {"a": ids2.numpy(), "b": special2.numpy()})[0]
    np.testing.assert_array_equal(got, module(ids2, special2).numpy())


class OrInPlace(torch.nn.Module):
    """SmolVLM's "if no images, leave one empty image": an in-place ``|=`` into an indexed bool view."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        inds = (a == 0.0).sum(dim=-1) != a.shape[-1]
        inds[0] |= ~torch.any(inds)
        return inds.long() * 3 + b


def test_in_place_or_into_a_view_matches_torch() -> None:
    module = OrInPlace()
    sess, _ = _export(module, (torch.zeros(3, 4), torch.tensor(1)), {"a": {0: "n", 1: "k"}})
    for a in (torch.zeros(3, 4), torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]]), torch.ones(2, 2),
              torch.zeros(5, 2)):
        got = sess.run(None, {"a": a.numpy(), "b": np.asarray(1)})[0]
        np.testing.assert_array_equal(got, module(a, torch.tensor(1)).numpy())


class Cumulative(torch.nn.Module):
    """Grounding DINO's previous / next special token: cummax and cummin (values and indices) along a dim."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:
        hi, lo = torch.cummax(a, dim=self.dim), torch.cummin(a, dim=self.dim)
        return hi.values + b, hi.indices, lo.values, lo.indices


@pytest.mark.parametrize("dim", [1, -1, 0])
def test_cummax_and_cummin_match_torch(dim: int) -> None:
    """Values and indices (ties: torch's last position), integers with repeats, on shapes the trace never saw."""
    module = Cumulative(dim)
    torch.manual_seed(0)
    sess, _ = _export(module, (torch.randint(-3, 4, (2, 5)), torch.tensor(0)), {"a": {0: "n", 1: "k"}})
    for a in (torch.randint(-3, 4, (3, 9)), torch.full((2, 4), 7), torch.arange(6).reshape(2, 3)):
        got = sess.run(None, {"a": a.numpy(), "b": np.asarray(0)})
        for g, w in zip(got, module(a, torch.tensor(0)), strict=True):
            np.testing.assert_array_equal(g, w.numpy())


class BoolEye(torch.nn.Module):
    """Grounding DINO's text mask: a bool identity of the prompt's length, or-ed with a block mask."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        n = a.shape[1]
        return (torch.eye(n, dtype=torch.bool).unsqueeze(0) | (a.unsqueeze(2) == a.unsqueeze(1))).long() + b


def test_a_bool_identity_loads_and_matches_torch() -> None:
    module = BoolEye()
    sess, _ = _export(module, (torch.tensor([[1, 2, 2]]), torch.tensor(0)), {"a": {0: "n", 1: "k"}})
    a = torch.tensor([[3, 3, 1, 0, 3], [1, 2, 3, 4, 5]])
    np.testing.assert_array_equal(sess.run(None, {"a": a.numpy(), "b": np.asarray(0)})[0], module(a, 0).numpy())
