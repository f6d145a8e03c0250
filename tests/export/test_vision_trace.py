"""The tensor-only ``transformers.vision_utils`` stand-ins (studio.export.vision_trace) and the in-graph M-RoPE
positions (studio.export.mrope_trace): equal to transformers' own functions on random grids (several images,
t > 1, non-square), still right when the traced graph runs on other grids, and a family the work was not tuned on
(GLM-4V, built tiny by the coverage shrinker) exporting with parity on a new image size. Real torch, real exporter,
real ONNX Runtime.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
ort = pytest.importorskip("onnxruntime")

import transformers.vision_utils as vu  # noqa: E402

from studio.export import vision_trace as vt  # noqa: E402

pytestmark = pytest.mark.export


def _grids(seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    n = int(torch.randint(1, 4, (1,), generator=g))
    t = torch.randint(1, 4, (n, 1), generator=g)
    hw = torch.randint(1, 9, (n, 2), generator=g) * 2  # even: whole 2x2 merge blocks, as processors make them
    return torch.cat([t, hw], dim=1)


@pytest.mark.parametrize("seed", range(8))
def test_replacements_equal_transformers(seed: int) -> None:
    grid = _grids(seed)
    for merge_temporal in (False, True):
        ours, theirs = vt.get_vision_cu_seqlens(grid, merge_temporal), vu.get_vision_cu_seqlens(grid, merge_temporal)
        assert ours.dtype == theirs.dtype and torch.equal(ours, theirs)
    for temporal in (False, True):
        assert torch.equal(vt.get_vision_position_ids(grid, 2, temporal), vu.get_vision_position_ids(grid, 2, temporal))
    per_image = torch.full((grid.shape[0],), 2)
    assert torch.equal(vt.get_vision_position_ids(grid, per_image), vu.get_vision_position_ids(grid, per_image))
    for window, patch in ((112, 14), (32, 4), (16, 4)):
        (a, b), (c, d) = vt.get_vision_window_index(grid, 2, window, patch), vu.get_vision_window_index(grid, 2, window,
                                                                                                         patch)
        assert torch.equal(a, c) and torch.equal(b, d) and b.dtype == d.dtype
    for mode in ("bilinear", "bicubic"):
        for corners in (False, True):
            for merge in (1, 2):
                ours_iw = vt.get_vision_interpolation_indices_and_weights(grid, 6, mode, corners, merge)
                theirs_iw = vu.get_vision_interpolation_indices_and_weights(grid, 6, mode, corners, merge)
                assert all(torch.equal(x, y) for x, y in zip(ours_iw, theirs_iw, strict=True))
    sizes = grid[:, 1:] + torch.arange(grid.shape[0])[:, None]  # odd sizes too
    assert torch.equal(vt.get_vision_nearest_position_ids(sizes, 7), vu.get_vision_nearest_position_ids(sizes, 7))


def test_precomputed_kwargs_are_popped_as_transformers_does() -> None:
    grid = torch.tensor([[1, 4, 4]])
    given = torch.arange(3)
    kwargs = {"cu_seqlens": given}
    assert vt.get_vision_cu_seqlens(grid, kwargs=kwargs) is given and not kwargs


def test_segment_attention_equals_attention_per_segment() -> None:
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 10, 8) for _ in range(3))
    cu = torch.tensor([0, 3, 7, 10], dtype=torch.int32)
    out, _ = vt.segment_attention(None, q, k, v, None, scaling=8 ** -0.5, cu_seq_lens_q=cu)
    pieces = [torch.nn.functional.scaled_dot_product_attention(q[:, :, a:b], k[:, :, a:b], v[:, :, a:b])
              for a, b in zip(cu[:-1].tolist(), cu[1:].tolist(), strict=True)]
    torch.testing.assert_close(out, torch.cat(pieces, dim=2).transpose(1, 2))


class _Precompute(torch.nn.Module):
    def forward(self, grid: torch.Tensor) -> tuple[torch.Tensor, ...]:
        window, cu_window = vt.get_vision_window_index(grid, 2, 32, 4)
        return (vt.get_vision_position_ids(grid, 2), vt.get_vision_cu_seqlens(grid), window, cu_window,
                *vt.get_vision_interpolation_indices_and_weights(grid, 6, spatial_merge_size=2))


def test_traced_graph_follows_new_grids(tmp_path: Path) -> None:
    path = tmp_path / "pre.onnx"
    names = ["pos", "cu", "window", "cu_window", "idx", "weights"]
    torch.onnx.export(_Precompute(), (torch.tensor([[1, 4, 6], [2, 2, 2]]),), str(path), input_names=["grid"],
                      output_names=names, dynamic_axes={"grid": {0: "images"}}, opset_version=17, dynamo=False)
    session = ort.InferenceSession(str(path))
    for seed in (11, 12, 13):
        grid = _grids(seed)
        got = dict(zip(names, session.run(None, {"grid": grid.numpy()}), strict=True))
        want_window, want_cu_window = vu.get_vision_window_index(grid, 2, 32, 4)
        want_idx, want_weights = vu.get_vision_interpolation_indices_and_weights(grid, 6, spatial_merge_size=2)
        np.testing.assert_array_equal(got["pos"], vu.get_vision_position_ids(grid, 2).numpy())
        np.testing.assert_array_equal(got["cu"], vu.get_vision_cu_seqlens(grid).numpy())
        np.testing.assert_array_equal(got["window"], want_window.numpy())
        np.testing.assert_array_equal(got["cu_window"], want_cu_window.numpy())
        np.testing.assert_array_equal(got["idx"], want_idx.numpy())
        np.testing.assert_allclose(got["weights"], want_weights.numpy(), atol=1e-6)


def test_masked_assignment_with_trailing_slice_exports(tmp_path: Path) -> None:
    """``h[mask, :] = x`` (qwen3_vl's deepstack merge): ORT refused the graph TorchScript made before the patch."""
    from studio.export.patches import export_patches

    class Deepstack(torch.nn.Module):
        def forward(self, h: torch.Tensor, mask: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
            h = h.clone()
            h[mask, :] = h[mask, :] + e
            return h

    h, mask = torch.randn(2, 6, 4), torch.zeros(2, 6, dtype=torch.bool)
    mask[0, 1:3] = mask[1, 2:5] = True
    path = tmp_path / "mask.onnx"
    with export_patches(Deepstack(), "none"):
        torch.onnx.export(Deepstack(), (h, mask, torch.randn(5, 4)), str(path), input_names=["h", "m", "e"],
                          dynamic_axes={"h": {0: "b", 1: "s"}, "m": {0: "b", 1: "s"}, "e": {0: "k"}},
                          opset_version=17, dynamo=False)
    mask[1, 0] = True
    e = torch.randn(6, 4)
    got = ort.InferenceSession(str(path)).run(None, {"h": h.numpy(), "m": mask.numpy(), "e": e.numpy()})[0]
    np.testing.assert_allclose(got, Deepstack()(h, mask, e).numpy())


def test_slice_assignment_empty_at_the_traced_size_exports(tmp_path: Path) -> None:
    """``offsets[1:] = ...`` with one image (ERNIE-4.5-VL's temporal slicing): converting it killed the process with
    SIGFPE inside the TorchScript exporter; now it is skipped at that size (a no-op there)."""
    from studio.export.patches import export_patches

    class Offsets(torch.nn.Module):
        def forward(self, counts: torch.Tensor) -> torch.Tensor:
            offsets = torch.zeros(counts.shape, dtype=counts.dtype)
            offsets[1:] = counts.cumsum(0)[:-1]
            return offsets + counts

    path = tmp_path / "offsets.onnx"
    counts = torch.tensor([4])
    with export_patches(Offsets(), "none"):
        torch.onnx.export(Offsets(), (counts,), str(path), input_names=["counts"], opset_version=17, dynamo=False)
    got = ort.InferenceSession(str(path)).run(None, {"counts": counts.numpy()})[0]
    np.testing.assert_array_equal(got, Offsets()(counts).numpy())


@pytest.fixture(scope="module")
def glm4v(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from bench.coverage_one import build

    folder = tmp_path_factory.mktemp("glm4v") / "model"
    build("glm4v", "Glm4vForConditionalGeneration", folder)
    return folder


def test_untuned_family_exports_with_parity_on_a_new_image(glm4v: Path, tmp_path: Path) -> None:
    from studio.cli.main import main as studio_main

    report_path = tmp_path / "report.json"
    rc = studio_main(["export", str(glm4v), "-o", str(tmp_path / "model.onnx"), "--report", str(report_path),
                      "--quiet"])
    r = json.loads(report_path.read_text())
    assert rc == 0 and r["status"] == "succeeded", r["diagnosis"]
    assert "static" not in r["example_inputs"]  # dynamic batch, sequence and image size, no narrowing
    cases = {c["name"]: c for c in r["validation"]["cases"]}
    assert cases["batch=3, longer prompts, new image"]["passed"]
    assert any("transformers.vision_utils" in w and "get_vision_position_ids" in w for w in r["warnings"])
    assert any("M-RoPE positions computed in the graph (equal to Glm4vModel.get_rope_index" in w for w in r["warnings"])
    # the example-input forward counted the per-image split, so the check ran and kept it whole (a new image passed)
    assert any("per-image torch.split of the vision features" in w for w in r["warnings"]), r["warnings"]
    names = {i["name"] for i in r["signature"]}
    assert {"pixel_values", "image_grid_thw"} <= names


def test_rope_check_names_a_mismatch_instead_of_using_it(glm4v: Path) -> None:
    from transformers import Glm4vForConditionalGeneration

    from studio.export.mrope_trace import check_rope_index

    model = Glm4vForConditionalGeneration.from_pretrained(str(glm4v)).eval()
    image_id = model.config.image_token_id
    ids = np.array([[5, image_id, image_id, image_id, image_id, 6]])
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "image_grid_thw": np.array([[1, 4, 4]])}
    assert check_rope_index(model, [feed]) is None
    feed["mm_token_type_ids"] = (ids == image_id).astype(np.int64) * 2  # marked as video: no video grid
    why = check_rope_index(model, [feed])
    assert why and "Glm4vModel.get_rope_index" in why


class _PerImageFeatures(torch.nn.Module):
    """A VLM's shape of the split: ``get_image_features`` returns one piece per image (sizes via ``.tolist()``)."""

    def __init__(self, concatenated: bool) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.concatenated = concatenated

    def get_image_features(self, pixels: torch.Tensor, counts: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return torch.split(self.proj(pixels), counts.tolist())

    def forward(self, pixels: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
        pieces = self.get_image_features(pixels, counts)
        if self.concatenated:
            return torch.cat(pieces, dim=0) * 2
        return torch.stack([p.mean(0) for p in pieces])  # pieces used one by one: the split must stay


def test_feature_split_kept_whole_only_when_proved_equal(tmp_path: Path) -> None:
    from studio.export.exporters import NamedWrapper
    from studio.export.features_split import SplitWhole, split_whole_is_equal

    args = (torch.randn(5, 4), torch.tensor([2, 3]))
    per_image = _PerImageFeatures(concatenated=False)
    assert not split_whole_is_equal(NamedWrapper(per_image, ["pixels", "counts"], ["out"]), per_image, args)
    model = _PerImageFeatures(concatenated=True)
    assert split_whole_is_equal(NamedWrapper(model, ["pixels", "counts"], ["out"]), model, args)
    path = tmp_path / "split.onnx"
    torch.onnx.export(NamedWrapper(SplitWhole(model, model), ["pixels", "counts"], ["out"]), args, str(path),
                      input_names=["pixels", "counts"], dynamic_axes={"pixels": {0: "patches"}, "counts": {0: "n"}},
                      opset_version=17, dynamo=False)
    pixels, counts = torch.randn(9, 4), torch.tensor([1, 2, 6])
    session = ort.InferenceSession(str(path))
    feeds = {"pixels": pixels.numpy(), "counts": counts.numpy()}  # counts only fed the frozen split: pruned
    got = session.run(None, {i.name: feeds[i.name] for i in session.get_inputs()})[0]
    np.testing.assert_allclose(got, model(pixels, counts).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_generic_path_also_covers_qwen2_vl(tmp_path: Path) -> None:
    """The family the hand-written ``qwen2_vl.py`` graph was made for, exported through the generic wrappers instead:
    parity on image grids and batch sizes the trace never saw (the hand-written graph stays the default)."""
    from transformers import Qwen2VLForConditionalGeneration

    from studio.export.api import write_sample
    from studio.export.exporters import NamedWrapper
    from studio.export.features_split import SplitWhole, split_whole_is_equal
    from studio.export.mrope_trace import TraceableVLM, check_rope_index
    from studio.export.patches import export_patches
    from studio.export.qwen2_vl import make_inputs
    from studio.export.validate import CaseSpec

    folder = write_sample("tiny-qwen2-vl", tmp_path / "qwen2-vl")
    config = json.loads((folder / "config.json").read_text())
    model = Qwen2VLForConditionalGeneration.from_pretrained(str(folder)).eval()
    names = ["input_ids", "attention_mask", "pixel_values", "image_grid_thw"]
    feeds = [make_inputs(names, {"input_ids": [2, 24]}, {"input_ids": {0: "batch", 1: "sequence"}}, config,
                         CaseSpec(str(i), {"batch": b, "sequence": s}, i, padded=i > 0), 100)
             for i, (b, s) in enumerate([(2, 24), (3, 30), (1, 12)])]
    for feed in feeds:  # as the processor makes it: HF's forward needs it for M-RoPE
        feed["mm_token_type_ids"] = (feed["input_ids"] == config["image_token_id"]).astype(np.int64)
    names.append("mm_token_type_ids")
    assert check_rope_index(model, feeds) is None
    inner = TraceableVLM(model, positions=True)
    args = tuple(torch.from_numpy(feeds[0][n]) for n in names)
    assert split_whole_is_equal(NamedWrapper(inner, names, ["logits"], {"use_cache": False}), model, args)
    wrapper = NamedWrapper(SplitWhole(inner, model), names, ["logits"], {"use_cache": False}).eval()
    path = tmp_path / "model.onnx"
    axes = {"input_ids": {0: "b", 1: "s"}, "attention_mask": {0: "b", 1: "s"}, "pixel_values": {0: "p"},
            "image_grid_thw": {0: "i"}, "mm_token_type_ids": {0: "b", 1: "s"}}
    with export_patches(model, "qwen2_vl"):
        torch.onnx.export(wrapper, args, str(path), input_names=names, output_names=["logits"], dynamic_axes=axes,
                          opset_version=17, dynamo=False)
    session = ort.InferenceSession(str(path))
    reference = NamedWrapper(model, names, ["logits"], {"use_cache": False})
    for feed in feeds[1:]:
        got = session.run(None, {i.name: feed[i.name] for i in session.get_inputs()})[0]
        with torch.no_grad():
            want = reference(*[torch.from_numpy(feed[n]) for n in names])[0].numpy()
        np.testing.assert_allclose(got, want, atol=1e-4)
