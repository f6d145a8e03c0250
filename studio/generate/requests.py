"""The generate extension's request contract, shared by every generation kind and both servers (the edge agent's
/generate routes, Triton's generate model.py): the fields a body may carry, the sampling checks naming the
offending field (HTTP 400 / INVALID_ARG), base64 media, and stop strings cut from the streamed text.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
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
