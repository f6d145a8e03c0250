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
