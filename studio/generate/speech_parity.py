"""The reference a speech generation is checked against: HF ``WhisperForConditionalGeneration.generate()``
(greedy, its own generation_config: the start / forced / suppressed tokens the export recorded) on the same
log-mel features, with the raw logits of every step. Torch and transformers are imported inside the functions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from studio.generate.parity import Reference
from studio.generate.speech_config import SpeechGenerationConfig


def hf_whisper_greedy(model: Any, features: np.ndarray, max_new_tokens: int, gen: SpeechGenerationConfig
                      ) -> Reference:
    """The ids HF generates after the init tokens (eos kept, as HF keeps it) and its unprocessed logits."""
    import torch

    feats = torch.from_numpy(np.ascontiguousarray(features, dtype=np.float32))
    with torch.no_grad():
        out = model.generate(feats, max_new_tokens=max_new_tokens, do_sample=False, num_beams=1,
                             output_logits=True, return_dict_in_generate=True)
    seq = out.sequences[0].tolist()
    start = len(gen.init_token_ids)
    if seq[:start] != list(gen.init_token_ids):
        raise ValueError(f"HF generate() started the decoder with {seq[:start]} on this clip but with "
                         f"{gen.init_token_ids} on the first one: a multilingual model detects the language per "
                         "clip, and the export records one start sequence; set language (and task) in "
                         "generation_config.json and re-export")
    logits = [t[0].float().numpy() for t in (out.logits or [])]
    return Reference([int(t) for t in seq[start:]], logits)


def hf_init_tokens(model: Any, features: np.ndarray) -> list[int]:
    """The start sequence HF generate() builds for this clip: decoder_start, then the forced / language / task /
    no-timestamps tokens its generation_config asks for (one greedy step, that step's token dropped)."""
    import torch

    feats = torch.from_numpy(np.ascontiguousarray(features, dtype=np.float32))
    with torch.no_grad():
        out = model.generate(feats, max_new_tokens=1, do_sample=False, num_beams=1, return_dict_in_generate=True)
    return [int(t) for t in out.sequences[0, :-1].tolist()]


def load_whisper(model_dir: Path | str) -> Any:
    """The source Whisper model in eval mode (eager attention: the math the export traced)."""
    from transformers import WhisperForConditionalGeneration
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    return WhisperForConditionalGeneration.from_pretrained(str(model_dir), attn_implementation="eager").eval()
