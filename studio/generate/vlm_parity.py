"""The reference a Qwen2-VL generation is checked against: HF ``generate()`` (greedy, ``use_cache=True``) fed the same
prompt ids, patches and grid (``mm_token_type_ids`` marks the image tokens, as the processor does), with the raw
logits of every step. torch and transformers are imported inside the functions only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from studio.generate.parity import Reference
from studio.generate.vlm_image import ImageInput


def hf_vlm_greedy(model: Any, prompt_ids: list[int], images: list[ImageInput], max_new_tokens: int,
                  stop_ids: list[int], pad_token_id: int | None) -> Reference:
    import torch

    ids = torch.tensor([prompt_ids], dtype=torch.long)
    kw: dict[str, Any] = {}
    if images:
        kw = {"pixel_values": torch.from_numpy(np.concatenate([im.pixel_values for im in images])),
              "image_grid_thw": torch.from_numpy(np.concatenate([im.grid_thw for im in images])),
              "mm_token_type_ids": (ids == int(model.config.image_token_id)).int()}
    model.model.rope_deltas = None
    with torch.no_grad():
        out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_new_tokens,
                             min_new_tokens=0, do_sample=False, num_beams=1, use_cache=True,
                             eos_token_id=list(stop_ids) or None,
                             pad_token_id=pad_token_id if pad_token_id is not None else (stop_ids or [0])[0],
                             output_logits=True, return_dict_in_generate=True,
                             temperature=None, top_k=None, top_p=None, **kw)
    new = out.sequences[0, len(prompt_ids):].tolist()
    return Reference([int(t) for t in new], [t[0].float().numpy() for t in out.logits])


def load_vlm(model_dir: Path | str) -> Any:
    """The source Qwen2-VL model in eval mode (eager attention: the math the export traced)."""
    from transformers import Qwen2VLForConditionalGeneration
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    return Qwen2VLForConditionalGeneration.from_pretrained(str(model_dir), attn_implementation="eager").eval()
