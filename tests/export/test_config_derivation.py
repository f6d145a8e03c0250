"""The coverage table's generic shrinker keeps the relations a config's defaults hold, and a derived processor's
sizes, counts and image-token ids follow the config the model was built from.

Real transformers config classes, processors and tiny models (no hub, no mocks): each case is one mechanism, named
by what it keeps, on an architecture whose default config needs it.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from bench.coverage_shrink import fit_rotary_sections, shrink_config  # noqa: E402

pytestmark = pytest.mark.export


def _shrunk(model_type: str) -> dict:
    return shrink_config(transformers.CONFIG_MAPPING[model_type]()).to_dict()


def test_backbone_keeps_its_stages_and_requested_outputs() -> None:
    """A Swin backbone keeps its four stages (each depth shrinks); a ViT backbone's out_features follow its depth."""
    swin = _shrunk("grounding-dino")["backbone_config"]
    assert len(swin["depths"]) == 4 and max(swin["depths"]) <= 2
    assert set(swin["out_features"]) <= set(swin["stage_names"])
    assert len(swin["out_features"]) == len(swin["out_indices"])
    vit = _shrunk("tipsv2")["vision_config"]
    assert vit["out_features"] == [vit["stage_names"][-1]] and vit["out_indices"] == [len(vit["stage_names"]) - 1]


def test_a_backbones_first_stage_heads_divide_its_width() -> None:
    """Swin's first stage has 3 heads over 96 channels; shrunk to 64 channels, 3 heads cannot split them (the model
    failed in its window attention): the count becomes a divisor. A count that still divides is kept."""
    for model_type in ("mask2former", "oneformer"):
        swin = _shrunk(model_type)["backbone_config"]
        assert swin["embed_dim"] % swin["num_heads"][0] == 0
        model = transformers.AutoBackbone.from_config(transformers.SwinConfig(**{
            k: swin[k] for k in ("embed_dim", "num_heads", "depths", "window_size", "image_size")}))
        import torch

        with torch.no_grad():
            maps = model(torch.zeros(1, 3, 224, 224)).feature_maps
        assert maps[0].shape[1] == swin["embed_dim"] * 2 ** (len(swin["depths"]) - 1)
    assert _shrunk("grounding-dino")["backbone_config"]["num_heads"][0] == 3  # 96 channels: 3 heads still divide


def test_sizes_tied_to_the_width_follow_it() -> None:
    """Pixtral's explicit head_dim (= hidden / heads), Mllama's vision_output_dim (= hidden x (layers listed + 1)),
    Kyutai's depthwise groups (= width), a DeepSeek-style qk_head_dim (= nope + rope)."""
    pixtral = _shrunk("lighton_ocr")["vision_config"]
    assert pixtral["head_dim"] == pixtral["hidden_size"] // pixtral["num_attention_heads"]
    vision = _shrunk("mllama")["vision_config"]
    assert vision["vision_output_dim"] == vision["hidden_size"] * (len(vision["intermediate_layers_indices"]) + 1)
    codec = _shrunk("kyutai_speech_to_text")["codec_config"]
    assert codec["upsample_groups"] == codec["hidden_size"]
    text = _shrunk("kimi_k25")["text_config"]
    assert text["qk_head_dim"] == text["qk_nope_head_dim"] + text["qk_rope_head_dim"]
    mamba = _shrunk("nemo_speechlm")["text_config"]
    assert mamba["mamba_num_heads"] % mamba["n_groups"] == 0


def test_a_roots_tower_output_size_stays_k_sub_config_widths() -> None:
    """MuseGlimmer's root out_hidden_size is 4 vision widths (a 2x2 merge concatenates patches): it stays 4 shrunk
    widths, so the adapter takes what the tower returns; a projector size with no single such tie is a width."""
    glimmer = _shrunk("muse_glimmer")
    assert glimmer["out_hidden_size"] == 4 * glimmer["vision_config"]["hidden_size"]
    lfm3 = _shrunk("lfm3_vl")  # 4096: 4 vision widths and 2 text widths, no single tie
    assert lfm3["projector_hidden_size"] == lfm3["text_config"]["hidden_size"]


def test_more_layer_kinds_than_layers_keep_the_first_kinds() -> None:
    """LFM3 mixes conv, full and sliding attention layers: two layers keep conv and full attention (both conv left
    the model no attention layer, and its forward failed in the cache); the tiny text model runs."""
    import torch

    config = shrink_config(transformers.CONFIG_MAPPING["lfm3"]())
    assert config.layer_types == ["conv", "full_attention"]
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    with torch.no_grad():
        out = model(input_ids=torch.tensor([[1, 2, 3, 4]]))
    assert out.logits.shape[:2] == (1, 4)
    assert _shrunk("lara_mini")["layer_types"] == ["linear_attention", "sliding_attention"]


def test_grid_folds_and_cross_config_indices() -> None:
    """An image size that a 2x pixel shuffle cannot fold moves to the multiple below; an adapter's layer indices
    into a sub-config with its own depth stay inside it; an int-keyed table is data; None media ids get ids."""
    aya = _shrunk("aya_vision")
    assert aya["vision_config"]["image_size"] % (aya["vision_config"]["patch_size"] * 2) == 0
    llava_ov = _shrunk("llava_onevision")  # no merge factor: SigLIP's 384 over patch 14 stays as the default says
    assert llava_ov["vision_config"]["image_size"] == 384
    vip = _shrunk("vipllava")
    assert all(-3 <= i <= 2 for i in vip["vision_feature_layer"])
    assert _shrunk("aria")["projector_patch_to_query_dict"]  # int keys kept as they are
    blip = _shrunk("blip-2")
    assert isinstance(blip["image_token_index"], int) and blip["image_token_index"] < 1024
    assert _shrunk("wav2vec2-bert")["vocab_size"] == 1024
    gemma4 = _shrunk("gemma4")  # the default leaves vision and audio out: the class's own sub-configs fill them
    assert gemma4["vision_config"] and gemma4["audio_config"]


def test_mapped_processor_for_sub_model_types() -> None:
    """A thinker sub-config is mapped under its module's type; a processor's image processor under the processor
    class's own module's type."""
    from studio.export.processor_source import mapped_classes

    omni = mapped_classes("qwen2_5_omni_thinker")
    assert omni["processor"] == "Qwen2_5OmniProcessor" and "image_processor" in omni and "feature_extractor" in omni
    assert "image_processor" in mapped_classes("glm4v_moe")


def test_processor_sizes_follow_the_config() -> None:
    """A list-valued image_size sizes the processor; a tile limit named after the image size follows it, and the
    resize that is k tiles stays k tiles."""
    from studio.export.processor_sizes import config_image_size, size_kwargs

    assert config_image_size([{"image_size": [448, 448]}]) == 448
    got = transformers.GotOcr2ImageProcessorPil().to_dict()
    assert size_kwargs(got, 448)[0]["size"] == {"height": 448, "width": 448}
    idefics = transformers.Idefics3ImageProcessorPil().to_dict()
    kwargs, notes = size_kwargs(idefics, 192)
    assert kwargs["max_image_size"] == {"longest_edge": 192} and kwargs["size"] == {"longest_edge": 4 * 192}
    assert notes


def test_grid_tower_is_not_probed_without_its_grid() -> None:
    """A tower that reads image_grid_thw with pixel_values (Qwen2-VL style) is not a LLaVA-style tower: the blank
    image probe would call it without the grid."""
    import torch

    from studio.export import llava

    config = shrink_config(transformers.CONFIG_MAPPING["qwen2_vl"]())
    torch.manual_seed(0)
    model = transformers.Qwen2VLForConditionalGeneration(config).eval()
    assert "image_grid_thw" in llava.image_companions(model)
    assert not llava.is_llava_style(config.to_dict(), model)


def test_expanded_image_token_takes_the_config_id() -> None:
    """A processor that expands <image> into another hard-coded token: that token's placeholder id is mapped onto
    the config's image id (placeholder tokenizers only)."""
    from studio.export.placeholder_tokenizer import build_placeholder_tokenizer
    from studio.export.token_rebind import apply, rebind

    config = {"image_token_id": 90, "vocab_size": 100}
    tok = build_placeholder_tokenizer(config, {"img_patch_token": "<|IMG_PATCH|>"})
    patch = tok.convert_tokens_to_ids("<|IMG_PATCH|>")
    ids = np.array([[5, patch, patch, patch, 6]])
    id_map: dict[int, int] = {}
    note = rebind("Image features and image tokens do not match, tokens: 0, features: 6", {"input_ids": ids},
                  config, tok, id_map)
    assert note and id_map == {patch: 90}
    assert apply({"input_ids": ids}, id_map)["input_ids"].tolist() == [[5, 90, 90, 90, 6]]


def test_moe_exports_through_the_batched_experts_path() -> None:
    """While the exporter runs, grouped_mm experts (torch.histc, which no exporter converts) use transformers'
    batched_mm path: the same logits; the model's own setting comes back afterwards."""
    import torch

    from studio.export.patches import export_patches

    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(shrink_config(transformers.CONFIG_MAPPING["qwen3_moe"]()))
    model.eval()
    ids = torch.randint(0, 1000, (2, 7))
    with torch.no_grad():
        before = model(input_ids=ids).logits
        with export_patches(model, "qwen3_moe") as notes:
            assert notes and model.config._experts_implementation == "batched_mm"
            patched = model(input_ids=ids).logits
    assert model.config._experts_implementation == "grouped_mm"
    assert torch.allclose(before, patched, atol=1e-5)


def test_rotary_share_fits_the_models_mrope_sections() -> None:
    """GLM-4.1V's default config has no partial_rotary_factor, and its model code falls back to M-RoPE sections
    [8, 12, 12] (32 frequencies, the checkpoints' half head): the built model names the mismatch, the share
    becomes 0.5 and the model built again runs a forward; a model that already fits is left as it is."""
    import torch

    config = shrink_config(transformers.CONFIG_MAPPING["glm4v"]())
    model = transformers.Glm4vForConditionalGeneration(config)
    ids = torch.randint(0, 100, (1, 6))
    with pytest.raises(RuntimeError, match="split_with_sizes"):
        model(input_ids=ids)
    notes = fit_rotary_sections(model)
    assert len(notes) == 1 and "partial_rotary_factor 0.5" in notes[0] and "[8, 12, 12]" in notes[0]
    model = transformers.Glm4vForConditionalGeneration(config).eval()
    assert fit_rotary_sections(model) == []
    with torch.no_grad():
        assert model(input_ids=ids).logits.shape[:2] == (1, 6)
