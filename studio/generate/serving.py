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
"encoder-decoder" live in studio.generate.serving_media; a text-only model answers a request with an image or
audio by naming the field.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import InputError
from studio.generate.sampling import SamplingOptions

DEFAULT_MAX_TOKENS = 32
MEDIA_FIELDS = ("image", "audio")  # base64 bytes in the JSON body; a kind lists those it takes
SAMPLING_FIELDS = ("max_tokens", "max_new_tokens", "temperature", "top_k", "top_p", "seed", "stop")
IGNORED_FIELDS = ("id", "stream", "exclude_input_in_output")  # the route decides streaming; input is never echoed
MAX_STOP_STRINGS = 8


class GenerateInputError(Exception):
    """A generate request the agent refuses (HTTP 400): the offending field, the message and a fix."""

    def __init__(self, field_name: str, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.field, self.message, self.hint = field_name, message, hint

    def to_dict(self) -> dict[str, Any]:
        return {"error": self.message, "kind": "input", "field": self.field, "hint": self.hint}


@dataclass
class GenerateRequest:
    """A checked request: prompt ids, how many new tokens, sampling, stop strings and any media bytes."""

    prompt_ids: list[int]
    max_new_tokens: int
    sampling: SamplingOptions
    stop: list[str] = field(default_factory=list)
    media: dict[str, bytes] = field(default_factory=dict)
    prepared: Any = None  # what a media kind's parse made of its media (image patches, waveform) for its run


def _number(params: dict[str, Any], key: str, kind: type, default: Any) -> Any:
    v = params.get(key, default)
    if v is default:
        return v
    ok = isinstance(v, (int, float)) if kind is float else isinstance(v, int)
    if isinstance(v, bool) or not ok:
        what = "an integer" if kind is int else "a number"
        raise GenerateInputError(key, f"'{key}' must be {what}, got {json.dumps(v)}",
                                 hint=f'for example "parameters": {{"{key}": {1 if kind is int else 0.7}}}')
    return kind(v)


def _stop_strings(v: Any) -> list[str]:
    if v is None:
        return []
    stops = [v] if isinstance(v, str) else v
    if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops) \
            or len(stops) > MAX_STOP_STRINGS:
        raise GenerateInputError("stop", f"'stop' must be a non-empty string or a list of at most "
                                         f"{MAX_STOP_STRINGS} of them, got {json.dumps(v)[:80]}",
                                 hint='for example "parameters": {"stop": ["\\n\\n"]}')
    return stops


def request_fields(body: Any) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """(text_input, sampling parameters, media fields) of a JSON body; unknown top-level fields are refused
    (Triton refuses inputs a model does not have)."""
    if not isinstance(body, dict):
        raise GenerateInputError("body", "a generate request is a JSON object",
                                 hint='send {"text_input": "...", "parameters": {"max_tokens": 16}}')
    params = body.get("parameters", {})
    if not isinstance(params, dict):
        raise GenerateInputError("parameters", "'parameters' must be a JSON object",
                                 hint='for example "parameters": {"max_tokens": 16, "temperature": 0}')
    params = {k: v for k, v in params.items() if k in SAMPLING_FIELDS}  # others are free-form request parameters
    known = {"text_input", "parameters", *SAMPLING_FIELDS, *MEDIA_FIELDS, *IGNORED_FIELDS}
    for key, value in body.items():
        if key not in known:
            raise GenerateInputError(key, f"unexpected generate field '{key}'",
                                     hint="fields: text_input, parameters {" + ", ".join(SAMPLING_FIELDS) + "}, "
                                          + ", ".join(MEDIA_FIELDS))
        if key in SAMPLING_FIELDS:
            if key in params and params[key] != value:
                raise GenerateInputError(key, f"'{key}' is given twice with different values (top level and "
                                              "in parameters)", hint="give it once")
            params[key] = value
    media = {k: body[k] for k in MEDIA_FIELDS if body.get(k) is not None}
    return body.get("text_input"), params, media


def check_sampling(params: dict[str, Any]) -> tuple[int, SamplingOptions, list[str]]:
    """max new tokens, sampling options and stop strings, each refused by its field name."""
    a, b = params.get("max_tokens"), params.get("max_new_tokens")
    if a is not None and b is not None and a != b:
        raise GenerateInputError("max_tokens", "max_tokens and max_new_tokens disagree", hint="give one of them")
    key = "max_tokens" if a is not None else "max_new_tokens"
    n = _number(params, key, int, None)
    n = DEFAULT_MAX_TOKENS if n is None else n
    if n < 1:
        raise GenerateInputError(key, f"'{key}' must be >= 1, got {n}", hint=f'for example "{key}": 16')
    s = SamplingOptions(temperature=_number(params, "temperature", float, 0.0),
                        top_k=_number(params, "top_k", int, 0), top_p=_number(params, "top_p", float, 1.0),
                        seed=_number(params, "seed", int, None))
    try:
        s.check()
    except InputError as exc:  # the CLI's words ("--top-p must be ...") with the request's field name
        name = str(exc.offending or "").lstrip("-").replace("-", "_")
        raise GenerateInputError(name, exc.message.replace(str(exc.offending), f"'{name}'"), exc.hint) from exc
    return n, s, _stop_strings(params.get("stop"))


def decode_media(media: dict[str, Any], accepted: tuple[str, ...], what: str, send: str = "text_input") -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for key, value in media.items():
        if key not in accepted:
            raise GenerateInputError(key, f"'{key}' given, but {what} takes no {key}",
                                     hint=f"send {send} alone, or deploy a model that takes {key} input")
        if not isinstance(value, str):
            raise GenerateInputError(key, f"'{key}' must be base64 text", hint=f"base64-encode the {key} file")
        try:
            out[key] = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise GenerateInputError(key, f"'{key}' is not valid base64: {exc}",
                                     hint=f"base64-encode the {key} file") from exc
    return out


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


GENERATION_KINDS: dict[str, type] = {"decoder-only": TextGeneration}  # + "vlm", "encoder-decoder" (generation_media)


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


class StopStrings:
    """Text pieces in, the pieces to show out, cut at the first stop string; a tail that may begin one is held."""

    def __init__(self, stops: list[str]) -> None:
        self.stops, self.text, self.shown, self.hit = stops, "", 0, False

    def feed(self, piece: str) -> str:
        if not self.stops:
            return piece
        self.text += piece
        cut = min((i for i in (self.text.find(s, self.shown) for s in self.stops) if i >= 0),
                  default=-1)
        if cut >= 0:
            self.hit = True
            out, self.shown = self.text[self.shown:cut], cut
            return out
        hold = max((k for s in self.stops for k in range(1, len(s)) if self.text.endswith(s[:k])), default=0)
        end = len(self.text) - hold
        out, self.shown = self.text[self.shown:end], max(self.shown, end)
        return out

    def flush(self) -> str:
        out = "" if self.hit else self.text[self.shown:]
        self.shown = len(self.text)
        return out


import studio.generate.serving_media  # noqa: E402,F401  (registers "vlm" and "encoder-decoder"; it imports the above)
