"""The generation loop on ONNX Runtime: one decoder graph with past inputs, prefill then one token per step.

Two step functions, chosen on measurement (BENCHMARKS.md, bench/bench_generate.py):
- plain ``session.run`` (the default on CPU): one call per step with the ids, mask, positions and the cache as
  numpy arrays; the graph's ``present.*`` come back as arrays and go in as the next ``past_key_values.*``;
- IO binding with a preallocated cache (``io_binding=True``): each layer's key and value live in two buffers
  sized for the whole generation (prompt + new tokens), bound by pointer: step n reads buffer A and writes the
  cache one position longer into buffer B, then they swap; ids, mask, positions and logits are bound the same
  way, so a step allocates nothing. On CPU it is no faster: every bind is a Python -> C++ call (about 4-10 us,
  a dozen per step for 2 layers), which costs what the avoided copies save, and the graph's Concat copies the
  cache once per step either way. It is the loop a device-resident cache (a GPU provider) needs.

No torch, no Qt: numpy and onnxruntime only. Batch 1.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from studio.generate.config import GenerationConfig
from studio.generate.sampling import Sampler, SamplingOptions

NP_CACHE = {"float32": np.float32, "float16": np.float16}


@dataclass
class GenerationOutput:
    """Token ids out of one generation, why it stopped, and its timings (seconds)."""

    token_ids: list[int]
    finish_reason: str  # "stop" (a stop token, kept as the last id) | "length" | "max_context" | "cancelled"
    prompt_tokens: int
    ttft_s: float  # prompt ids in -> first new token chosen (the prefill step + sampling)
    total_s: float
    step_logits: list[np.ndarray] = field(default_factory=list)  # raw logits per new token, when recorded

    @property
    def tokens_per_s(self) -> float:
        return len(self.token_ids) / self.total_s if self.total_s > 0 else 0.0

    @property
    def decode_tokens_per_s(self) -> float | None:
        """Tokens per second after the first one (the decode steps alone)."""
        n = len(self.token_ids) - 1
        return n / (self.total_s - self.ttft_s) if n > 0 and self.total_s > self.ttft_s else None


def session_options(threads: int | None) -> Any:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    if threads:
        opts.intra_op_num_threads = int(threads)
        opts.inter_op_num_threads = 1
    return opts


Step = Callable[[list[int], int], np.ndarray]  # (new token ids, past length) -> the last position's logits


def token_loop(step: Step, first: list[int], sampler: Sampler, stops: set[int], max_new_tokens: int,
               max_context: int, t0: float, on_token: Callable[[int], None] | None = None,
               should_stop: Callable[[], bool] | None = None, record_logits: bool = False,
               process: Callable[[np.ndarray, int], np.ndarray] | None = None
               ) -> tuple[list[int], str, float, list[np.ndarray]]:
    """The one token loop of every generation runtime (text decoder, VLM, speech): ``first`` is the prefill (a
    zero-length past), then one token per step until a stop id (kept as the last id), ``max_new_tokens``, the
    context (prompt + new tokens reach ``max_context``) or ``should_stop`` (asked after each token: the serving
    agent's cancel hook). ``process`` adjusts the logits before sampling (Whisper's suppress processors).
    Returns (tokens, finish reason, TTFT seconds since ``t0``, recorded logits)."""
    tokens: list[int] = []
    recorded: list[np.ndarray] = []
    ttft, reason, past, new = 0.0, "length", 0, list(first)
    while True:
        logits = step(new, past)
        if record_logits:
            recorded.append(np.array(logits, dtype=np.float32, copy=True))
        tok = sampler(logits if process is None else process(logits, len(tokens)))
        tokens.append(tok)
        if len(tokens) == 1:
            ttft = time.perf_counter() - t0
        if on_token is not None:
            on_token(tok)
        past += len(new)
        if should_stop is not None and should_stop():
            reason = "cancelled"
            break
        if tok in stops:
            reason = "stop"
            break
        if len(tokens) >= max_new_tokens:
            break
        if past + 1 >= max_context:  # prompt + new tokens fill the context (genai's max_length)
            reason = "max_context"
            break
        new = [tok]
    return tokens, reason, ttft, recorded


class DecoderRuntime:
    """An ORT session on the exported decoder plus the loop that drives it."""

    def __init__(self, model_path: Path | str, gen: GenerationConfig, threads: int | None = 1,
                 io_binding: bool = False, fused: bool = True, config: dict[str, Any] | None = None) -> None:
        """``fused``: run each layer's attention as one GroupQueryAttention (studio.generate.fused, batch 1 as
        this loop is; ~25 % faster per step at hidden 512); the exported graph when it does not apply, with the
        reason in ``fused_note``. ``config``: the HF config (default: config.json beside the model)."""
        from studio.core.runner import ort_session

        self.gen = gen
        self.path = Path(model_path)
        self.fused = False
        self.fused_note = "off (fused=False): the exported graph"
        self.session = self._fused_session(threads, config) if fused else None
        if self.session is None:
            self.session = ort_session(self.path, session_options(threads), error=None)
        self.io_binding = io_binding
        names = {i.name for i in self.session.get_inputs()}
        self.use_positions = "position_ids" in names
        self.use_mask = "attention_mask" in names
        past_type = {i.name: i.type for i in self.session.get_inputs()}.get(next(iter(gen.cache.past_names()), ""))
        # the graph's own cache type wins (an export with --kv-cache-dtype float16 says so in generation.json too)
        self.cache_dtype = np.float16 if past_type == "tensor(float16)" else NP_CACHE.get(gen.cache.dtype, np.float32)
        types = {o.name: o.type for o in self.session.get_outputs()}
        self.logits_dtype = np.float16 if types.get("logits") == "tensor(float16)" else np.float32
        self.past = gen.cache.past_names()
        self.present = gen.cache.present_names()
        self._buffers: dict[str, Any] = {}

    def _fused_session(self, threads: int | None, config: dict[str, Any] | None) -> Any:
        """A session on the fused-attention variant (studio.generate.fused), or None with the reason noted."""
        import tempfile

        from studio.core.runner import ort_session
        from studio.generate.fused import Fused, fuse_attention, read_config, session_source

        cfg = read_config(self.path.parent) if config is None else config
        with tempfile.TemporaryDirectory(prefix="studio-fused-") as tmp:
            try:
                got = fuse_attention(self.path, self.gen.cache, cfg, self.gen.max_context, Path(tmp) / "model.onnx")
                if not isinstance(got, Fused):
                    self.fused_note = f"not applied ({got}): the exported graph"
                    return None
                opts = session_options(threads)
                session = ort_session(session_source(got, opts), opts, error=None)
            except Exception as exc:  # noqa: BLE001 - any failure of the rewrite leaves the exported graph
                self.fused_note = f"not applied ({type(exc).__name__}: {exc}): the exported graph"
                return None
        self.fused = True
        self.fused_note = (f"on: {got.attention_nodes} GroupQueryAttention nodes, {got.nodes_before} -> "
                           f"{got.nodes_after} nodes")
        return session

    # --------------------------------------------------------------------------------------------- loop
    def generate(self, prompt_ids: list[int], max_new_tokens: int, sampling: SamplingOptions | None = None,
                 stop_ids: set[int] | None = None, on_token: Callable[[int], None] | None = None,
                 record_logits: bool = False, should_stop: Callable[[], bool] | None = None) -> GenerationOutput:
        """Prefill ``prompt_ids`` (one run with a zero-length past), then one step per new token until a stop
        id, ``max_new_tokens`` or the exported context is reached. The caller checks its inputs first.
        ``should_stop`` (the serving agent's cancel hook) is asked after each token: True ends it "cancelled"."""
        sampler = Sampler(sampling or SamplingOptions())
        stops = set(stop_ids or ())
        capacity = min(self.gen.max_context, len(prompt_ids) + max_new_tokens)
        step = self._bound_step(capacity) if self.io_binding else self._plain_step()
        t0 = time.perf_counter()
        tokens, reason, ttft, recorded = token_loop(step, prompt_ids, sampler, stops, max_new_tokens,
                                                    self.gen.max_context, t0, on_token, should_stop, record_logits)
        return GenerationOutput(tokens, reason, len(prompt_ids), ttft, time.perf_counter() - t0, recorded)

    # --------------------------------------------------------------------------------------------- plain run
    def _plain_step(self) -> Callable[[list[int], int], np.ndarray]:
        c = self.gen.cache
        cache = [np.zeros((1, c.kv_heads, 0, c.head_dim), self.cache_dtype) for _ in self.past]
        outputs = ["logits", *self.present]

        def step(new: list[int], past: int) -> np.ndarray:
            n = len(new)
            feeds: dict[str, np.ndarray] = {"input_ids": np.asarray([new], dtype=np.int64)}
            if self.use_mask:
                feeds["attention_mask"] = np.ones((1, past + n), dtype=np.int64)
            if self.use_positions:
                feeds["position_ids"] = np.arange(past, past + n, dtype=np.int64)[None]
            feeds.update(zip(self.past, cache, strict=True))
            got = self.session.run(outputs, feeds)
            cache[:] = got[1:]
            return got[0][0, -1]

        return step

    # --------------------------------------------------------------------------------------------- IO binding
    def _bound_step(self, capacity: int) -> Callable[[list[int], int], np.ndarray]:
        c = self.gen.cache
        b = self._buffers
        if b.get("capacity", 0) < capacity:  # grow once; later generations of the same size reuse the buffers
            per = c.kv_heads * capacity * c.head_dim
            b.clear()
            b["capacity"] = capacity
            b["ids"] = np.zeros(capacity, dtype=np.int64)
            b["mask"] = np.ones(capacity, dtype=np.int64)
            b["positions"] = np.arange(capacity, dtype=np.int64)
            b["logits"] = np.zeros(capacity * c.vocab_size, dtype=self.logits_dtype)
            b["a"] = [np.zeros(per, dtype=self.cache_dtype) for _ in self.past]
            b["b"] = [np.zeros(per, dtype=self.cache_dtype) for _ in self.past]
        io = self.session.io_binding()
        ids, mask, positions, logits = b["ids"], b["mask"], b["positions"], b["logits"]
        reads, writes = list(b["a"]), list(b["b"])
        item = np.dtype(np.int64).itemsize
        vocab = c.vocab_size

        def step(new: list[int], past: int) -> np.ndarray:
            nonlocal reads, writes
            n = len(new)
            ids[:n] = new
            io.bind_input("input_ids", "cpu", 0, np.int64, [1, n], ids.ctypes.data)
            if self.use_mask:
                io.bind_input("attention_mask", "cpu", 0, np.int64, [1, past + n], mask.ctypes.data)
            if self.use_positions:
                io.bind_input("position_ids", "cpu", 0, np.int64, [1, n], positions.ctypes.data + past * item)
            past_shape = [1, c.kv_heads, past, c.head_dim]
            present_shape = [1, c.kv_heads, past + n, c.head_dim]
            for name, buf in zip(self.past, reads, strict=True):
                io.bind_input(name, "cpu", 0, self.cache_dtype, past_shape, buf.ctypes.data)
            for name, buf in zip(self.present, writes, strict=True):
                io.bind_output(name, "cpu", 0, self.cache_dtype, present_shape, buf.ctypes.data)
            io.bind_output("logits", "cpu", 0, self.logits_dtype, [1, n, vocab], logits.ctypes.data)
            self.session.run_with_iobinding(io)
            reads, writes = writes, reads
            return logits[(n - 1) * vocab:n * vocab]

        return step
