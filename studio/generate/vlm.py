"""Qwen2-VL generation on ONNX Runtime: image -> vision graph once -> prefill -> decode loop with the KV cache.

The export (``studio export --with-past`` of a Qwen2-VL folder) writes ``vision.onnx`` (patches + grid -> image
embeddings) and the decoder with past inputs (ids, mask, 3-D M-RoPE positions, image embeddings, cache). The
prefill positions are computed here with numpy (``vlm_image.rope_index``, HF ``get_rope_index`` ported); a decode
step at past length L stands at ``L + rope_delta`` on all three axes, as HF ``generate`` does. numpy, PIL,
onnxruntime and tokenizers only: no torch unless ``hf_parity`` asks for HF ``generate()`` as the reference.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import InputError
from studio.generate.config import GenerationConfig
from studio.generate.runtime import NP_CACHE, GenerationOutput, session_options, token_loop
from studio.generate.sampling import Sampler, SamplingOptions
from studio.generate.vlm_image import ImageInput, ImageProcessor, VisionSettings, image_prompt, rope_index


def vision_settings(gen: GenerationConfig) -> VisionSettings:
    return VisionSettings(**gen.vision)


def open_vlm(export_dir: Path | str, threads: int | None = 1, runtime: str = "studio",
             io_binding: bool = False) -> VisionLanguageGenerator:
    """A VLM export folder loaded for generation; InputError for a folder that is not one, or for options the VLM
    loop does not have."""
    from studio.generate.config import read_generation

    gen = read_generation(export_dir)
    path = Path(export_dir)
    folder = path.parent if path.suffix == ".onnx" else path
    if gen.kind != "vlm":
        raise InputError("--image given, but this model takes text only", offending="--image",
                         hint=f"{folder} holds a {gen.kind} export; pass --prompt TEXT alone, or export a "
                              "vision-language model (Qwen2-VL) with --with-past")
    if runtime != "studio":
        raise InputError(f"--runtime {runtime} cannot run this VLM export", offending="--runtime",
                         hint="onnxruntime-genai knows qwen2_5_vl's three-graph layout, not the studio's Qwen2-VL "
                              "one; use --runtime studio")
    if io_binding:
        raise InputError("--io-binding is not available for VLM exports", offending="--io-binding",
                         hint="drop --io-binding (the VLM loop uses session.run, as fast on CPU)")
    missing = [f for f in (gen.parts.get("vision"), gen.model_file) if not f or not (folder / f).is_file()]
    if missing:
        from studio.core.errors import ModelError

        raise ModelError(f"{folder} lacks the graph {missing[0]!r} named by generation.json", offending=str(folder),
                         hint="re-export the model with `studio export --with-past`")
    return VisionLanguageGenerator(folder, gen, threads)


class VisionLanguageRuntime:
    """Two ORT sessions (vision, decoder with past) and the loop that drives them; batch 1, one or more images."""

    def __init__(self, folder: Path, gen: GenerationConfig, threads: int | None = 1) -> None:
        from studio.core.runner import ort_session

        self.gen = gen
        self.vision_cfg = vision_settings(gen)
        opts = session_options(threads)
        self.vision = ort_session(folder / gen.parts["vision"], opts, error=None)
        self.decoder = ort_session(folder / gen.model_file, opts, error=None)
        self.cache_dtype = NP_CACHE.get(gen.cache.dtype, np.float32)
        self.past, self.present = gen.cache.past_names(), gen.cache.present_names()

    def encode(self, images: list[ImageInput]) -> np.ndarray:
        """All images through the vision graph in one run: ``[image_tokens, hidden]``."""
        if not images:
            return np.zeros((0, self.gen.cache.hidden_size), dtype=np.float32)
        pixels = np.concatenate([im.pixel_values for im in images])
        grid = np.concatenate([im.grid_thw for im in images]).astype(np.int64)
        return self.vision.run(["image_embeds"], {"pixel_values": pixels, "image_grid_thw": grid})[0]

    def generate(self, prompt_ids: list[int], images: list[ImageInput], max_new_tokens: int,
                 sampling: SamplingOptions | None = None, stop_ids: set[int] | None = None,
                 on_token: Callable[[int], None] | None = None, record_logits: bool = False,
                 should_stop: Callable[[], bool] | None = None) -> GenerationOutput:
        """Vision graph, prefill (zero-length past) with the image embeddings, then one step per new token until a
        stop id, ``max_new_tokens`` or the exported context. TTFT counts from the patches in (vision included).
        ``should_stop`` (the serving agent's cancel hook) is asked after each token: True ends it "cancelled"."""
        sampler = Sampler(sampling or SamplingOptions())
        stops = set(stop_ids or ())
        v, c = self.vision_cfg, self.gen.cache
        t0 = time.perf_counter()
        embeds = self.encode(images)
        ids = np.asarray(prompt_ids, dtype=np.int64)
        grids = np.concatenate([im.grid_thw for im in images]) if images else np.zeros((0, 3), np.int64)
        positions, delta = rope_index(ids, grids, v.image_token_id, v.merge_size)
        cache = [np.zeros((1, c.kv_heads, 0, c.head_dim), self.cache_dtype) for _ in self.past]
        no_image = np.zeros((0, c.hidden_size), dtype=np.float32)
        outputs = ["logits", *self.present]

        def step(new: list[int], past: int) -> np.ndarray:
            nonlocal cache
            if past == 0:  # prefill: the prompt's M-RoPE positions and the image embeddings
                pos, image = positions[:, None], embeds
            else:  # decode: one token at past + rope_delta on all three axes, no image rows
                pos, image = np.full((3, 1, len(new)), past + delta, dtype=np.int64), no_image
            feeds = {"input_ids": np.asarray([new], dtype=np.int64),
                     "attention_mask": np.ones((1, past + len(new)), dtype=np.int64), "position_ids": pos,
                     "image_embeds": image, **dict(zip(self.past, cache, strict=True))}
            got = self.decoder.run(outputs, feeds)
            cache = got[1:]
            return got[0][0, -1]

        tokens, reason, ttft, recorded = token_loop(step, prompt_ids, sampler, stops, max_new_tokens,
                                                    self.gen.max_context, t0, on_token, should_stop, record_logits)
        return GenerationOutput(tokens, reason, len(prompt_ids), ttft, time.perf_counter() - t0, recorded)


class VisionLanguageGenerator:
    """A VLM export folder loaded once (sessions, processor, tokenizer) for many image + text generations."""

    def __init__(self, folder: Path, gen: GenerationConfig, threads: int | None = 1) -> None:
        from studio.generate.tokenizer import TextTokenizer

        self.folder, self.gen = folder, gen
        self.runtime = VisionLanguageRuntime(folder, gen, threads)
        self.processor = ImageProcessor(folder, self.runtime.vision_cfg)
        self.tokenizer = TextTokenizer(folder)
        self.runtime_name = "studio ORT loop (vision graph + decoder with past, session.run)"

    def prepare(self, prompt: str | None, image: Any, prompt_ids: list[int] | None = None,
                flag: str = "--image") -> tuple[list[int], list[ImageInput]]:
        """The prompt ids with the image placeholders, and the image patches; InputError naming the flag."""
        images = [] if image is None else [image if isinstance(image, ImageInput) else self.processor.load(image, flag)]
        if prompt_ids is not None:
            if prompt:
                raise InputError("both --prompt and --prompt-ids given", offending="--prompt-ids",
                                 hint="give the prompt once: as text (--prompt) or as token ids (--prompt-ids)")
            text = [int(i) for i in prompt_ids]
            vocab = self.gen.cache.vocab_size
            if any(not 0 <= i < vocab for i in text):
                raise InputError(f"--prompt-ids holds an id outside the vocabulary (0..{vocab - 1})",
                                 offending="--prompt-ids", hint="ids must index the model's embedding table")
        elif prompt:
            text = self.tokenizer.encode(prompt)
        elif not images:
            raise InputError("no prompt given", offending="--prompt", hint='pass --prompt "some text"')
        else:
            text = []
        v = self.runtime.vision_cfg
        if v.image_token_id in text:
            raise InputError("the prompt holds the image placeholder token itself", offending="--prompt",
                             hint="pass the image with --image; the placeholders are added for it")
        ids = image_prompt(v, images, text)
        ctx = self.gen.max_context
        if len(ids) >= ctx:
            extra = len(ids) - len(text)
            prompt_flag = "--prompt-ids" if prompt_ids is not None else "--prompt"
            raise InputError(f"{prompt_flag} is {len(text)} tokens, {len(ids)} with the image's {extra} placeholder "
                             f"tokens, but the exported model's maximum context is {ctx} (prompt plus at least one "
                             "new token)", offending=prompt_flag,
                             hint=f"shorten the prompt to at most {max(ctx - 1 - extra, 0)} tokens"
                                  + (" (or pass a smaller image)" if images else ""))
        return ids, images

    def generate(self, prompt: str | None = None, *, image: Any = None, max_new_tokens: int = 32,
                 sampling: SamplingOptions | None = None, stop_token_ids: list[int] | None = None,
                 hf_parity: bool = False, prompt_ids: list[int] | None = None,
                 on_text: Callable[[str], None] | None = None, should_stop: Callable[[], bool] | None = None) -> Any:
        """``image``: a file path, its bytes, or an ImageInput; None asks the text-only question. ``should_stop``:
        asked after each token; True ends it "cancelled"."""
        from studio.generate.result import GenerationResult

        sampling = (sampling or SamplingOptions()).check()
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
            raise InputError(f"--max-new-tokens must be >= 1, got {max_new_tokens}", offending="--max-new-tokens",
                             hint="for example --max-new-tokens 32")
        t0 = time.perf_counter()
        ids, images = self.prepare(prompt, image, prompt_ids)
        encode_ms = (time.perf_counter() - t0) * 1e3
        stops = set(self.gen.eos_token_ids if stop_token_ids is None else stop_token_ids)
        from studio.generate.result import text_streamer

        emit = None if on_text is None else text_streamer(self.tokenizer.decode, on_text)
        out = self.runtime.generate(ids, images, max_new_tokens, sampling, stops, on_token=emit,
                                    should_stop=should_stop)
        result = GenerationResult(
            text=self.tokenizer.decode(out.token_ids), token_ids=out.token_ids, prompt_token_ids=ids,
            finish_reason=out.finish_reason, ttft_ms=round(out.ttft_s * 1e3, 4),
            tokens_per_s=round(out.tokens_per_s, 2),
            decode_tokens_per_s=None if out.decode_tokens_per_s is None else round(out.decode_tokens_per_s, 2),
            total_ms=round(out.total_s * 1e3, 4), encode_ms=round(encode_ms, 4), sampling=sampling.to_dict(),
            export_dir=str(self.folder), runtime=self.runtime_name)
        result.hf_parity = self._parity(ids, images, out.token_ids, max_new_tokens, sorted(stops), sampling,
                                        hf_parity)
        return result

    def _parity(self, ids: list[int], images: list[ImageInput], got: list[int], max_new: int, stops: list[int],
                sampling: SamplingOptions, run_hf: bool) -> dict[str, Any]:
        source = self.gen.source_model_dir
        out: dict[str, Any] = {"source_model_dir": source, "export_validation": self.gen.validation or None}
        if not run_hf:
            out["this_prompt"] = "not checked (pass --hf-parity to run HF generate() on it)"
        elif not sampling.greedy:
            out["this_prompt"] = "not comparable: sampling (HF parity is checked for greedy decoding)"
        elif not source or not (Path(source) / "config.json").is_file():
            out["this_prompt"] = f"not checked: the source HF folder {source!r} is not here"
        else:
            from studio.generate.vlm_parity import hf_vlm_greedy, load_vlm

            ref = hf_vlm_greedy(load_vlm(source), ids, images, max_new, stops, self.gen.pad_token_id)
            out["this_prompt"] = {"match": ref.token_ids == got, "hf_token_ids": ref.token_ids,
                                  "reference": "transformers generate(do_sample=False, use_cache=True)"}
        return out
