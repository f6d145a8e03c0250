"""The stand-in tokenizer of a folder without one: the config's special ids where the processor puts its tokens."""

from __future__ import annotations

from pathlib import Path

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


def test_a_unigram_tokenizer_class_gets_the_placeholder_vocabulary_at_the_same_ids() -> None:
    """A model type's own tokenizer class whose vocabulary is a Unigram ``[(piece, score)]`` list (T5's, UDOP's)
    is built on the placeholder's pieces at their ids (it was refused: the generic tokenizer took no boxes)."""
    from transformers import T5Tokenizer, UdopTokenizer

    config = {"image_token_id": 1000, "eos_token_id": 1, "pad_token_id": 0, "text_config": {"vocab_size": 1024}}
    tok = build_placeholder_tokenizer(config, tokenizer_class=T5Tokenizer)
    assert isinstance(tok, T5Tokenizer)
    assert tok.convert_tokens_to_ids("<image>") == 1000 and tok.eos_token_id == 1 and tok.pad_token_id == 0
    assert all(0 <= i < 1024 for i in tok("<image> a photo of a cat")["input_ids"])
    udop = build_placeholder_tokenizer(config, tokenizer_class=UdopTokenizer)
    assert isinstance(udop, UdopTokenizer)
    words = ["a", "photo"]
    out = udop(words, boxes=[[0, 0, 10, 10], [20, 0, 30, 10]])
    assert len(out["bbox"]) == len(out["input_ids"]) and out["input_ids"][-1] == 1


def test_decoder_ids_of_a_word_level_tokenizer_come_from_the_words() -> None:
    from transformers import UdopTokenizer

    from studio.export.processor_inputs import MEDIA_CASES, decoder_ids
    from studio.export.processor_source import ProcessorSource

    config = {"eos_token_id": 1, "pad_token_id": 0, "decoder_start_token_id": 0, "vocab_size": 1024,
              "is_encoder_decoder": True}
    pieces = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("\u2581a", -1.0), ("\u2581photo", -1.0)]
    tok = UdopTokenizer(vocab=pieces)
    source = ProcessorSource(None, "derived", sub={"tokenizer": tok})
    ids = decoder_ids(source, config, MEDIA_CASES[0])  # UdopTokenizer refuses a plain string
    assert ids.shape == (2, MEDIA_CASES[0].decoder_tokens) and (ids[:, 0] == 0).all()


def test_token_strings_a_processor_writes_in_its_code_get_ids_of_their_own(tmp_path: Path) -> None:
    """Ovis2's processor expands an image into ``<IMG_START><IMG_ATOM>...`` written in a method, not an attribute:
    each string gets an id of its own (all were the unknown token, which is the padding one: 0 image tokens)."""
    import numpy as np
    from transformers import CONFIG_MAPPING, GotOcr2Processor

    from studio.export import processor_inputs as pi
    from studio.export.placeholder_tokenizer import literal_tokens
    from studio.export.processor_source import load_processor

    assert {"<img>", "<imgpad>"} <= set(literal_tokens(GotOcr2Processor).values())
    source = load_processor(tmp_path, CONFIG_MAPPING["ovis2"]().to_dict())
    assert source is not None
    tok = source.sub["tokenizer"]
    atom = tok.convert_tokens_to_ids("<IMG_ATOM>")
    assert atom != tok.unk_token_id and tok.convert_tokens_to_ids("<IMG_START>") not in (atom, tok.unk_token_id)
    ids = pi.run_processor(source, pi.MEDIA_CASES[0], {"vision"}, pi.Placeholders(image="<image>"), None)["input_ids"]
    assert int((np.asarray(ids) == atom).sum(axis=1).min()) >= source.processor.image_seq_length
