"""The reference a generation is checked against: HF ``generate()`` (greedy, ``use_cache=True``) on the source
model, with the raw logits of every step. Imports torch and transformers inside its functions only, so the
generate path stays torch-free unless HF parity is asked for (at export, or ``studio generate --hf-parity``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

TIE_ATOL = 1e-3  # a divergence counts as a near tie only while the logits agree this well (float rounding)


@dataclass
class Reference:
    token_ids: list[int]
    step_logits: list[np.ndarray] = field(default_factory=list)


def hf_greedy(model: Any, prompt_ids: list[int], max_new_tokens: int, stop_ids: list[int],
              pad_token_id: int | None) -> Reference:
    """``model.generate`` greedy with the KV cache; the new ids (a stop id included, as HF keeps it)."""
    import torch

    ids = torch.tensor([prompt_ids], dtype=torch.long)
    with torch.no_grad():
        out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_new_tokens,
                             min_new_tokens=0, do_sample=False, num_beams=1, use_cache=True,
                             eos_token_id=list(stop_ids) or None,
                             pad_token_id=pad_token_id if pad_token_id is not None else (stop_ids or [0])[0],
                             output_logits=True, return_dict_in_generate=True,
                             temperature=None, top_k=None, top_p=None)
    new = out.sequences[0, len(prompt_ids):].tolist()
    logits = [t[0].float().numpy() for t in out.logits]
    return Reference([int(t) for t in new], logits)


def load_causal_lm(model_dir: Path | str) -> Any:
    """The source HF model in eval mode (eager attention: the math the export traced)."""
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    return AutoModelForCausalLM.from_pretrained(str(model_dir), attn_implementation="eager").eval()


@dataclass
class StepParity:
    """One prompt: ONNX tokens vs HF tokens, the first step where they differ, and the logits' max abs diff."""

    prompt_tokens: int
    max_new_tokens: int
    onnx_ids: list[int]
    hf_ids: list[int]
    match: bool
    first_divergence: int | None
    logits_max_abs: float
    near_tie: bool = False  # they diverge where HF's two best logits are closer than the logits' error


def compare_steps(onnx_ids: list[int], onnx_logits: list[np.ndarray], ref: Reference, prompt_tokens: int,
                  max_new_tokens: int) -> StepParity:
    """Token-exact comparison plus per-step logits diff over the steps both runs share up to the divergence."""
    first = next((i for i, (a, b) in enumerate(zip(onnx_ids, ref.token_ids, strict=False)) if a != b), None)
    if first is None and len(onnx_ids) != len(ref.token_ids):
        first = min(len(onnx_ids), len(ref.token_ids))
    upto = len(onnx_ids) if first is None else first + 1
    diffs = [float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))
             for a, b in zip(onnx_logits[:upto], ref.step_logits[:upto], strict=False) if a.shape == b.shape]
    max_abs = max(diffs, default=float("inf") if upto else 0.0)
    tie = False
    if first is not None and first < min(len(ref.step_logits), len(onnx_ids)) and max_abs <= TIE_ATOL:
        top2 = np.sort(ref.step_logits[first].astype(np.float64))[-2:]
        tie = bool(top2[1] - top2[0] <= 2 * max_abs)
    return StepParity(prompt_tokens, max_new_tokens, list(onnx_ids), list(ref.token_ids), first is None, first,
                      max_abs, tie)
