"""The stand-in tokenizer of a folder without one: the config's special ids where the processor puts its tokens."""

from __future__ import annotations

import pytest

pytest.importorskip("tokenizers")

from studio.export.placeholder_tokenizer import build_placeholder_tokenizer  # noqa: E402


def test_a_hard_coded_token_string_takes_the_configs_id() -> None:
    """GLM-ASR's processor hard-codes "<|pad|>" for the audio token the config puts at id 1020: it must tokenize
    to 1020 (it got a fresh id while "<audio>" kept 1020, so the forward counted 0 audio tokens)."""
    config = {"audio_token_id": 1020, "bos_token_id": 1, "text_config": {"vocab_size": 1024}}
    tok = build_placeholder_tokenizer(config, {"audio_token": "<|pad|>"})
    assert tok("<|pad|> a photo")["input_ids"][0] == 1020
    assert tok.audio_token == "<|pad|>" and tok.convert_tokens_to_ids("<|pad|>") == 1020
    ids = list(tok.get_vocab().values())
    assert len(ids) == len(set(ids))  # one string per id
    plain = build_placeholder_tokenizer(config)  # no hard-coded string: "<audio>" at the config's id
    assert plain.audio_token == "<audio>" and plain("<audio>")["input_ids"] == [1020]


def test_a_composed_processor_expands_image_tokens_from_the_grid() -> None:
    """No processor class mapped (GLM-4.6V-class types): the image processor's grid says how many placeholder
    tokens each image takes (patches / merge^2), and mm_token_type_ids marks them, as a processor class would."""
    import numpy as np
    from PIL import Image
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    from studio.export.composed_processor import ComposedProcessor

    tok = build_placeholder_tokenizer({"image_token_id": 1000, "text_config": {"vocab_size": 1024}})
    proc = ComposedProcessor({"tokenizer": tok, "image_processor": Qwen2VLImageProcessorPil(merge_size=2)})
    images = [Image.new("RGB", (56, 56)), Image.new("RGB", (112, 56))]
    out = proc(images=images, text=["<image> a photo", "<image> the cat"], return_tensors="pt",
               text_kwargs={"padding": True})
    grid = np.asarray(out["image_grid_thw"])
    want = [int(t * h * w // 4) for t, h, w in grid.tolist()]
    ids = out["input_ids"].numpy()
    assert [(row == 1000).sum() for row in ids] == want and want[0] != want[1]
    assert (out["mm_token_type_ids"].numpy() == (ids == 1000)).all()
