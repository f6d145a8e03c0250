"""onnxruntime-genai as the loop (``studio generate --runtime genai``), on the studio's own graph and the
genai_config.json the export writes. Optional: the package is not a studio dependency.

Measured (BENCHMARKS.md): it loads the studio's graph unchanged, gives the same greedy ids, and its C++ loop is
faster than the studio's Python loop when the model is tiny (per-step overhead dominates) and on par once compute
does. Its sampling uses its own random stream (a seed repeats its runs, not the studio loop's), and it always
stops at the model's eos ids; extra stop ids are checked here.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from studio.core.errors import DependencyMissing
from studio.generate.config import GenerationConfig
from studio.generate.runtime import GenerationOutput
from studio.generate.sampling import SamplingOptions


class GenaiRuntime:
    io_binding = False
    name = "onnxruntime-genai"

    def __init__(self, folder: Path, gen: GenerationConfig, threads: int | None = 1) -> None:
        try:
            import onnxruntime_genai as og
        except ImportError as exc:
            raise DependencyMissing("--runtime genai needs the Python package 'onnxruntime-genai', which is not "
                                    "installed", offending="onnxruntime-genai",
                                    hint="python3 -m pip install onnxruntime-genai (or use --runtime studio)") from exc
        self.og = og
        self.gen = gen
        cfg = og.Config(str(folder))
        cfg.clear_providers()  # CPU
        if threads:
            cfg.overlay(json.dumps({"model": {"decoder": {"session_options": {"intra_op_num_threads": int(threads)}}}}))
        self.model = og.Model(cfg)

    def generate(self, prompt_ids: list[int], max_new_tokens: int, sampling: SamplingOptions | None = None,
                 stop_ids: set[int] | None = None, on_token: Callable[[int], None] | None = None,
                 record_logits: bool = False) -> GenerationOutput:
        s = sampling or SamplingOptions()
        params = self.og.GeneratorParams(self.model)
        opts: dict[str, object] = {"max_length": min(self.gen.max_context, len(prompt_ids) + max_new_tokens),
                                   "do_sample": not s.greedy}
        if not s.greedy:
            opts.update(temperature=s.temperature, top_p=s.top_p,
                        top_k=s.top_k if s.top_k > 0 else self.gen.cache.vocab_size)
            if s.seed is not None:
                opts["random_seed"] = int(s.seed)
        params.set_search_options(**opts)
        stops = set(stop_ids or ())
        t0 = time.perf_counter()
        g = self.og.Generator(self.model, params)
        g.append_tokens(np.asarray([prompt_ids], dtype=np.int32))
        tokens: list[int] = []
        ttft = 0.0
        reason = "length"
        while not g.is_done():
            g.generate_next_token()
            tok = int(g.get_next_tokens()[0])
            tokens.append(tok)
            if len(tokens) == 1:
                ttft = time.perf_counter() - t0
            if on_token is not None:
                on_token(tok)
            if tok in stops or tok in self.gen.eos_token_ids:
                reason = "stop"
                break
        if reason == "length" and len(prompt_ids) + len(tokens) >= self.gen.max_context \
                and len(tokens) < max_new_tokens:
            reason = "max_context"
        return GenerationOutput(tokens, reason, len(prompt_ids), ttft, time.perf_counter() - t0)
