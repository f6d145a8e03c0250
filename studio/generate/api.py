"""The generation entry point: an export folder and a prompt in, one GenerationResult (studio.generate.result)
out; the CLI, the agent and tests call it.

``generate`` raises InputError naming the flag for bad input (an empty or too long prompt, max_new_tokens < 1,
a negative temperature, top_p outside (0, 1], a folder without generation.json) before any work, and never
imports torch unless ``hf_parity=True`` asks for HF ``generate()`` on the source folder as a reference.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from studio.core.errors import InputError
from studio.generate.config import GenerationConfig, read_generation
from studio.generate.result import GenerationResult, text_streamer
from studio.generate.sampling import SamplingOptions

__all__ = ["RUNTIMES", "GenerationResult", "TextGenerator", "generate", "text_streamer"]  # the result: result.py

RUNTIMES = ("studio", "genai")  # the studio's ORT loop; onnxruntime-genai (optional package) on the same graph


class TextGenerator:
    """An export folder loaded once (session, tokenizer, layout) for many generations."""

    def __init__(self, export_dir: Path | str, threads: int | None = 1, io_binding: bool = False,
                 runtime: str = "studio", fused: bool = True) -> None:
        from studio.generate.runtime import DecoderRuntime

        if runtime not in RUNTIMES:
            raise InputError(f"unknown runtime '{runtime}'", offending="--runtime",
                             hint=f"choose one of: {', '.join(RUNTIMES)}")
        self.gen: GenerationConfig = read_generation(export_dir)
        path = Path(export_dir)
        self.folder = path.parent if path.suffix == ".onnx" else path
        if runtime == "genai":
            from studio.generate.genai_backend import GenaiRuntime

            self.runtime: Any = GenaiRuntime(self.folder, self.gen, threads=threads)
        else:
            self.runtime = DecoderRuntime(self.folder / self.gen.model_file, self.gen, threads=threads,
                                          io_binding=io_binding, fused=fused)
        self.runtime_name = ("onnxruntime-genai" if runtime == "genai" else
                             f"studio ORT loop ({'IO binding, preallocated cache' if io_binding else 'session.run'})")
        self._tokenizer: Any = None

    @property
    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            from studio.generate.tokenizer import TextTokenizer

            self._tokenizer = TextTokenizer(self.folder)
        return self._tokenizer

    def generate(self, prompt: str | None = None, *, prompt_ids: list[int] | None = None, max_new_tokens: int = 32,
                 sampling: SamplingOptions | None = None, stop_token_ids: list[int] | None = None,
                 hf_parity: bool = False, on_text: Callable[[str], None] | None = None,
                 should_stop: Callable[[], bool] | None = None) -> GenerationResult:
        """``should_stop``: asked after each token (the studio runtime only); True ends it "cancelled"."""
        sampling = (sampling or SamplingOptions()).check()
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
            raise InputError(f"--max-new-tokens must be >= 1, got {max_new_tokens}", offending="--max-new-tokens",
                             hint="for example --max-new-tokens 32")
        if prompt is not None and prompt_ids is None:
            _ = self.tokenizer  # loaded before the clock: encode_ms is the encoding alone
        t0 = time.perf_counter()
        ids = self._prompt_ids(prompt, prompt_ids)
        encode_ms = (time.perf_counter() - t0) * 1e3
        stops = set(self.gen.eos_token_ids if stop_token_ids is None else stop_token_ids)
        emit = self._streamer(on_text) if on_text is not None else None
        stop_hook = {} if should_stop is None else {"should_stop": should_stop}
        out = self.runtime.generate(ids, max_new_tokens, sampling, stops, on_token=emit, **stop_hook)
        text = self._decode(out.token_ids)
        result = GenerationResult(
            text=text, token_ids=out.token_ids, prompt_token_ids=ids, finish_reason=out.finish_reason,
            ttft_ms=round(out.ttft_s * 1e3, 4), tokens_per_s=round(out.tokens_per_s, 2),
            decode_tokens_per_s=None if out.decode_tokens_per_s is None else round(out.decode_tokens_per_s, 2),
            total_ms=round(out.total_s * 1e3, 4), encode_ms=round(encode_ms, 4), sampling=sampling.to_dict(),
            export_dir=str(self.folder), runtime=self.runtime_name)
        result.hf_parity = self._parity(ids, out.token_ids, max_new_tokens, sorted(stops), sampling, hf_parity)
        return result

    # --------------------------------------------------------------------------------------------- helpers
    def _prompt_ids(self, prompt: str | None, prompt_ids: list[int] | None) -> list[int]:
        if prompt_ids is not None and prompt is not None:
            raise InputError("both --prompt and --prompt-ids given", offending="--prompt-ids",
                             hint="give the prompt once: as text (--prompt) or as token ids (--prompt-ids)")
        if prompt_ids is not None:
            ids = [int(i) for i in prompt_ids]
            bad = [i for i in ids if not 0 <= i < self.gen.cache.vocab_size]
            if bad:
                raise InputError(f"--prompt-ids holds id {bad[0]} outside the vocabulary (0..{self.gen.cache.vocab_size - 1})",
                                 offending="--prompt-ids", hint="ids must index the model's embedding table")
            flag = "--prompt-ids"
        else:
            if prompt is None or prompt == "":
                raise InputError("no prompt given", offending="--prompt", hint='pass --prompt "some text"')
            ids = self.tokenizer.encode(prompt)
            flag = "--prompt"
        if not ids:
            raise InputError("the prompt encodes to no tokens", offending=flag, hint="give a longer prompt")
        if len(ids) >= self.gen.max_context:
            raise InputError(f"{flag} is {len(ids)} tokens, but the exported model's maximum context is "
                             f"{self.gen.max_context} (prompt plus at least one new token)", offending=flag,
                             hint=f"shorten the prompt to at most {self.gen.max_context - 1} tokens")
        return ids

    def _decode(self, ids: list[int]) -> str:
        try:
            return self.tokenizer.decode(ids)
        except InputError:  # no tokenizer.json: the ids are the answer
            return ""

    def _streamer(self, on_text: Callable[[str], None]) -> Callable[[int], None]:
        return text_streamer(self._decode, on_text)

    def _parity(self, ids: list[int], got: list[int], max_new: int, stops: list[int], sampling: SamplingOptions,
                run_hf: bool) -> dict[str, Any]:
        """The export's verdict from generation.json, and with ``run_hf`` HF generate() on this very prompt."""
        source = self.gen.source_model_dir
        out: dict[str, Any] = {"source_model_dir": source, "export_validation": self.gen.validation or None}
        if not run_hf:
            out["this_prompt"] = "not checked (pass --hf-parity to run HF generate() on it)"
            return out
        if not sampling.greedy:
            out["this_prompt"] = "not comparable: sampling (HF parity is checked for greedy decoding)"
            return out
        if not source or not (Path(source) / "config.json").is_file():
            out["this_prompt"] = f"not checked: the source HF folder {source!r} is not here"
            return out
        from studio.generate.parity import hf_greedy, load_causal_lm

        ref = hf_greedy(load_causal_lm(source), ids, max_new, stops, self.gen.pad_token_id)
        out["this_prompt"] = {"match": ref.token_ids == got, "hf_token_ids": ref.token_ids,
                              "reference": "transformers generate(do_sample=False, use_cache=True)"}
        return out


def generate(export_dir: Path | str, prompt: str | None = None, *, prompt_ids: list[int] | None = None,
             max_new_tokens: int = 32, temperature: float = 0.0, top_k: int = 0, top_p: float = 1.0,
             seed: int | None = None, stop_token_ids: list[int] | None = None, hf_parity: bool = False,
             threads: int | None = 1, io_binding: bool = False, runtime: str = "studio",
             on_text: Callable[[str], None] | None = None, image: Any = None, audio: Any = None
             ) -> GenerationResult:
    """Generate from an export folder written by ``studio export --with-past``; ``image`` (a file path or its
    bytes) for a vision-language export (kind "vlm", studio.generate.vlm); ``audio`` (a WAV path, its bytes or
    samples) for a speech export (kind "encoder-decoder", studio.generate.speech)."""
    sampling = SamplingOptions(float(temperature), int(top_k), float(top_p), seed).check()
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise InputError(f"--max-new-tokens must be >= 1, got {max_new_tokens}", offending="--max-new-tokens",
                         hint="for example --max-new-tokens 32")
    from studio.generate.config import export_kind
    from studio.generate.speech_config import KIND
    from studio.generate.vlm import open_vlm

    if export_kind(export_dir) == KIND:  # Whisper: the audio is the input
        from studio.generate.speech import speech_request

        return speech_request(export_dir, audio, prompt=prompt, prompt_ids=prompt_ids, image=image,  # type: ignore[no-any-return]
                              max_new_tokens=max_new_tokens, sampling=sampling, stop_token_ids=stop_token_ids,
                              hf_parity=hf_parity, threads=threads, on_text=on_text)
    if audio is not None:
        raise InputError("--audio given, but this model takes text only", offending="--audio",
                         hint="audio clips go to a speech (Whisper) export made with `studio export` (its default "
                              "keeps the KV cache; not --no-with-past)")
    if image is not None or export_kind(export_dir) == "vlm":
        return open_vlm(export_dir, threads, runtime, io_binding).generate(  # type: ignore[no-any-return]
            prompt, image=image, prompt_ids=prompt_ids, max_new_tokens=max_new_tokens, sampling=sampling,
            stop_token_ids=stop_token_ids, hf_parity=hf_parity, on_text=on_text)
    return TextGenerator(export_dir, threads=threads, io_binding=io_binding, runtime=runtime).generate(
        prompt, prompt_ids=prompt_ids, max_new_tokens=max_new_tokens, sampling=sampling,
        stop_token_ids=stop_token_ids, hf_parity=hf_parity, on_text=on_text)
