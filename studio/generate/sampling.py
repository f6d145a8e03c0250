"""Choosing the next token from one row of logits: greedy, or temperature / top-k / top-p sampling, seeded.

numpy only. The semantics follow HF's logits warpers (temperature, then top-k, then top-p keeping the smallest
set of tokens whose probability reaches ``top_p``, at least one), but the random stream is numpy's PCG64, so a
seeded run repeats itself exactly and does not repeat HF's torch sampling.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from studio.core.errors import InputError


@dataclass(frozen=True)
class SamplingOptions:
    temperature: float = 0.0  # 0: greedy (argmax); > 0: sample
    top_k: int = 0  # 0: off
    top_p: float = 1.0  # 1: off
    seed: int | None = None

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "mode": "greedy" if self.greedy else "sampling"}

    def check(self) -> SamplingOptions:
        """InputError naming the CLI flag for a value that cannot be used."""
        if not np.isfinite(self.temperature) or self.temperature < 0:
            raise InputError(f"--temperature must be >= 0, got {self.temperature}", offending="--temperature",
                             hint="0 is greedy decoding; 0.7 - 1.0 samples")
        if self.top_k < 0:
            raise InputError(f"--top-k must be >= 0, got {self.top_k}", offending="--top-k",
                             hint="0 turns top-k off; 40 keeps the 40 most likely tokens")
        if not 0.0 < self.top_p <= 1.0:
            raise InputError(f"--top-p must be in (0, 1], got {self.top_p}", offending="--top-p",
                             hint="1.0 turns top-p off; 0.9 keeps the tokens covering 90% of the probability")
        if self.seed is not None and self.seed < 0:
            raise InputError(f"--seed must be >= 0, got {self.seed}", offending="--seed", hint="for example --seed 0")
        return self


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - np.max(x))
    return e / e.sum()


class Sampler:
    """Next-token choice for one generation; owns its random stream (seeded from ``options.seed``)."""

    def __init__(self, options: SamplingOptions) -> None:
        self.options = options
        self.rng = np.random.default_rng(options.seed)

    def __call__(self, logits: np.ndarray) -> int:
        o = self.options
        if o.greedy:
            return int(np.argmax(logits))
        x = logits.astype(np.float64) / o.temperature
        if 0 < o.top_k < x.size:
            kth = np.partition(x, -o.top_k)[-o.top_k]
            x = np.where(x < kth, -np.inf, x)
        if o.top_p < 1.0:
            order = np.argsort(-x, kind="stable")
            cum = np.cumsum(_softmax(x[order]))
            keep = min(int(np.searchsorted(cum, o.top_p)) + 1, x.size)
            kept = np.full(x.shape, -np.inf)
            kept[order[:keep]] = x[order[:keep]]
            x = kept
        cum = np.cumsum(_softmax(x))
        return int(min(np.searchsorted(cum, self.rng.random() * cum[-1], side="right"), x.size - 1))
