"""Generation models served: a model exported with its KV cache, its request checks, its stop strings. The edge
agent (its /generate routes; slots in studio.agent.generate_routes) and Triton's generate model.py both serve
through this module, so both answer the same text and refuse the same requests.

A bundle model whose ``runtime.json`` entry carries ``"generation"`` (``studio package`` of an export folder with
``generation.json``) is loaded here next to its ONNX session. The request schema is Triton's generate extension
(``text_input``, ``parameters`` {max_tokens / max_new_tokens, temperature, top_k, top_p, seed, stop}; the same
keys are accepted at the top level, as Triton maps them to model inputs). Every check runs before a slot is
taken and fails as :class:`GenerateInputError` naming the field (HTTP 400).

Export kinds plug in through :data:`GENERATION_KINDS`, keyed by generation.json's ``kind`` (absent:
"decoder-only"; the exports also write "vlm" and "encoder-decoder"): a kind lists the media fields it takes
(``image`` / ``audio`` as base64 bytes) and turns a checked request into a generation. "vlm" and
"encoder-decoder" live in studio.generate.serving_media; the request checks (fields, sampling, media, stop
strings) in studio.generate.requests, which both import (no import circle); a text-only model answers a request with an image or
audio by naming the field.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from studio.core.errors import InputError
from studio.generate.requests import (
    GenerateInputError,
    GenerateRequest,
    check_sampling,
    decode_media,
    request_fields,
)
from studio.generate.serving_media import SpeechGeneration, VisionGeneration


class TextGeneration:
    """A text-only decoder export (kind "decoder-only"): the studio's ORT loop (studio.generate) on the folder."""

    kind = "decoder-only"
    accepts: tuple[str, ...] = ()

    def __init__(self, folder: Path, raw: dict[str, Any], threads: int | None = 1) -> None:
        from studio.generate.api import TextGenerator

        self.generator = TextGenerator(folder, threads=threads or None)
        self.gen = self.generator.gen
        self.model_type = str(raw.get("model_type") or self.gen.model_type)
        self.session = self.generator.runtime.session  # the agent serves /infer on the same session

    @property
    def max_context(self) -> int:
        return self.gen.max_context

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "model_type": self.model_type, "max_context": self.max_context,
                "accepts": ["text_input", *self.accepts], "runtime": self.generator.runtime_name}

    def parse(self, body: Any) -> GenerateRequest:
        text, params, media = request_fields(body)
        what = f"this model ({self.model_type}, a text-only generation export)"
        files = decode_media(media, self.accepts, what)
        if not isinstance(text, str) or not text:
            raise GenerateInputError("text_input", "'text_input' must be a non-empty string",
                                     hint='send {"text_input": "some text"}')
        n, sampling, stop = check_sampling(params)
        ids = self.generator.tokenizer.encode(text)
        if not ids:
            raise GenerateInputError("text_input", "'text_input' encodes to no tokens", hint="send a longer text")
        if len(ids) >= self.max_context:
            raise GenerateInputError("text_input", f"'text_input' is {len(ids)} tokens, but the exported model's "
                                                   f"maximum context is {self.max_context} (prompt plus at least "
                                                   "one new token)",
                                     hint=f"shorten the prompt to at most {self.max_context - 1} tokens")
        return GenerateRequest(ids, n, sampling, stop, files)

    def run(self, req: GenerateRequest, on_text: Callable[[str], None], should_stop: Callable[[], bool]) -> Any:
        return self.generator.generate(prompt_ids=req.prompt_ids, max_new_tokens=req.max_new_tokens,
                                       sampling=req.sampling, on_text=on_text, should_stop=should_stop)

    def warmup(self) -> float:
        t0 = time.perf_counter()
        self.generator.generate(prompt_ids=[self.gen.bos_token_id or 0], max_new_tokens=2)
        return time.perf_counter() - t0


class UnservedKind:
    """A generation export of a kind this agent cannot run yet: the bundle installs (its graphs serve /infer),
    /generate answers 400 saying so. No warm-up: zeros cannot feed a KV-cache graph."""

    accepts: tuple[str, ...] = ()
    session = None

    def __init__(self, kind: str, raw: dict[str, Any]) -> None:
        self.kind, self.model_type = kind, str(raw.get("model_type") or "")

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "model_type": self.model_type, "served": False}

    def parse(self, body: Any) -> GenerateRequest:
        raise GenerateInputError("model", f"this agent cannot generate with a '{self.kind}' export yet "
                                          f"(kinds served: {', '.join(GENERATION_KINDS)})",
                                 hint="update the agent, or call /infer on the exported graphs")

    def warmup(self) -> float:
        return 0.0


GENERATION_KINDS: dict[str, type] = {TextGeneration.kind: TextGeneration, VisionGeneration.kind: VisionGeneration,
                                     SpeechGeneration.kind: SpeechGeneration}


def is_generation_model(onnx_path: Path) -> bool:
    """True when generation.json beside ``onnx_path`` names it: a bundle packaged before runtime.json carried
    ``generation`` is detected this way."""
    try:
        raw = json.loads((onnx_path.parent / "generation.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(raw, dict) and (raw.get("model_file") or raw.get("decoder_file")) == onnx_path.name


def load_generation(folder: Path, threads: int | None = 1) -> Any:
    """The generation model of an installed bundle's model folder, by generation.json's ``kind``."""
    from studio.generate.config import GENERATION_FILE

    try:
        raw = json.loads((folder / GENERATION_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{folder / GENERATION_FILE} is unreadable: {exc}", offending=str(folder),
                         hint="package the export folder `studio export --with-past` wrote") from exc
    kind = str(raw.get("kind") or "decoder-only")
    cls = GENERATION_KINDS.get(kind)
    return UnservedKind(kind, raw) if cls is None else cls(folder, raw, threads)
