"""The inputs stage's diagnosis names the real cause when no prompt form works: a key the default config class
leaves to the checkpoint, an input the mapped processor class does not make, an id past an embedding table.

Real exceptions from tiny models built from transformers config classes (no hub, no mocks).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from bench.coverage_shrink import shrink_config  # noqa: E402
from studio.export.locate import locate_exception  # noqa: E402
from studio.export.processor_inputs import ExampleInputError  # noqa: E402
from studio.export.stages.derive_diagnosis import fix_for, unset_keys_read  # noqa: E402


def _raised(fn: object) -> BaseException:
    try:
        fn()  # type: ignore[operator]
    except Exception as exc:  # noqa: BLE001 - the exception is the subject
        return exc
    raise AssertionError("expected the call to raise")


def test_a_key_the_raising_function_reads_and_the_config_lacks_is_named() -> None:
    """HunYuan-VL's get_rope_index reads rope_parameters["mrope_section"], which its default config leaves to the
    checkpoint, then raises "at least 3 multimodal RoPE axes, got 0": the fix names mrope_section."""
    config = shrink_config(transformers.CONFIG_MAPPING["hunyuan_vl"]())
    model = transformers.HunYuanVLForConditionalGeneration(config).eval()
    ids = torch.tensor([[1, 2, 3]])
    exc = _raised(lambda: model.model.get_rope_index(ids, torch.zeros_like(ids)))
    where = locate_exception(exc)
    assert unset_keys_read(exc, where, config.to_dict()) == ["mrope_section"]
    assert unset_keys_read(exc, where, {**config.to_dict(), "mrope_section": [8, 8, 8, 8]}) == []


def test_a_forward_input_the_processor_does_not_make_and_an_unset_config_key() -> None:
    """Wav2Vec2-BERT's mapped feature extractor makes input_values; the forward requires input_features. An Omni
    thinker's default config has no vision_start_token_id, which its model code reads."""
    config = shrink_config(transformers.CONFIG_MAPPING["wav2vec2-bert"]())
    model = transformers.Wav2Vec2BertForCTC(config).eval()
    exc = _raised(lambda: model(input_values=torch.zeros(1, 1600)))
    line = f"prompt with no placeholder: forward raised TypeError: {exc}"
    fix = fix_for(ExampleInputError("x", [line], exc))
    assert "requires input_features" in fix and "preprocessor_config.json" in fix
    thinker = transformers.CONFIG_MAPPING["qwen2_5_omni_thinker"]()
    exc = _raised(lambda: thinker.vision_start_token_id)
    fix = fix_for(ExampleInputError("x", [f"prompt: forward raised AttributeError: {exc}"], exc))
    assert "vision_start_token_id" in fix and "config.json" in fix


def test_ids_past_an_embedding_table_name_the_vocab_sizes() -> None:
    """CLVP's default config gives its speech encoder 256 ids and its decoder 8194: the decoder's ids index past the
    encoder's table (IndexError in an embedding), not a processor problem."""
    config = shrink_config(transformers.CONFIG_MAPPING["clvp"]())
    model = transformers.ClvpModelForConditionalGeneration(config).eval()
    mels = config.to_dict().get("feature_size", 80)
    torch.manual_seed(0)
    exc = _raised(lambda: model(input_ids=torch.tensor([[1, 2, 3]]), input_features=torch.randn(1, mels, 40)))
    assert isinstance(exc, IndexError)
    fix = fix_for(ExampleInputError("x", [f"prompt with no placeholder: forward raised IndexError: {exc}"], exc))
    assert "vocab_size" in fix and "embedding" in fix


def test_layers_that_disagree_on_a_width_are_a_config_contradiction() -> None:
    """Llama 4's default vision config sizes its pixel-shuffle MLP for another hidden size (5632 = 4 x 1408, beside
    hidden 768): the tower's own Linear refuses what the shuffle returns, whatever the processor made."""
    config = shrink_config(transformers.CONFIG_MAPPING["llama4"]()).vision_config
    model = transformers.Llama4VisionModel(config).eval()
    size = config.image_size
    exc = _raised(lambda: model(torch.zeros(1, 3, size, size)))
    line = f"prompt with image placeholder '<|image|>': forward raised RuntimeError: {exc}"
    fix = fix_for(ExampleInputError("x", [line], exc))
    assert "disagree on a width" in fix and "config.json" in fix
    assert f"made for {config.intermediate_size} input features" in fix and "gets 2048" in fix


def test_media_inputs_the_forward_takes_none_of_are_named() -> None:
    """Kyutai's forward takes audio codes as input_ids (its codec runs in generate()): the feature extractor's
    input_values reach no parameter. Moonshine's forward takes them (control)."""
    from pathlib import Path

    from studio.export.processor_source import load_processor
    from studio.export.stages.derive_diagnosis import media_not_taken, not_taken_fix

    def params(cls: type) -> list[str]:
        import inspect

        return [n for n in inspect.signature(cls.forward).parameters if n != "self"]

    kyutai = load_processor(Path("/nonexistent"), transformers.CONFIG_MAPPING["kyutai_speech_to_text"]().to_dict())
    assert kyutai is not None
    untaken = media_not_taken(kyutai, {"audio"}, params(transformers.KyutaiSpeechToTextForConditionalGeneration))
    assert untaken == [("audio", "KyutaiSpeechToTextFeatureExtractor", ["input_values"])]
    fix = not_taken_fix("KyutaiSpeechToTextForConditionalGeneration", untaken)
    assert "takes none of the audio inputs" in fix and "generate()" in fix
    moonshine = load_processor(Path("/nonexistent"), transformers.CONFIG_MAPPING["moonshine"]().to_dict())
    assert moonshine is not None
    assert media_not_taken(moonshine, {"audio"}, params(transformers.MoonshineForConditionalGeneration)) == []


def test_a_keyword_argument_is_not_a_config_key_the_line_reads() -> None:
    """GLM-Image's failing line ``image_shapes[seq_ids, 1].to(dtype=torch.float32)`` was blamed on the config's
    ``dtype``; SmolVLM's ``config.scale_factor`` is still read (real lines of transformers' code, real configs)."""
    import inspect

    from studio.export.stages.derive_diagnosis import config_keys_read

    def line(module: object, text: str) -> str:
        return next(x for x in inspect.getsource(module).splitlines() if text in x)  # type: ignore[arg-type]

    from transformers.models.glm_image import modeling_glm_image
    from transformers.models.smolvlm import modeling_smolvlm

    glm = line(modeling_glm_image, ".to(dtype=torch.float32)")
    assert config_keys_read(glm, transformers.CONFIG_MAPPING["glm_image"]().to_dict()) == []
    smol = line(modeling_smolvlm, "= config.scale_factor")
    assert config_keys_read(smol, transformers.CONFIG_MAPPING["smolvlm"]().to_dict()) == ["scale_factor"]
