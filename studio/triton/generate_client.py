"""A client of the KServe v2 / Triton generate extension (``/v2/models/M/generate`` and ``generate_stream``),
the same for Triton and the edge agent: the request body (text, image and audio as base64, sampling parameters),
the server-sent events read one ``data: {...}`` line at a time, and a streamed answer with its timings.

``studio.edge.sse.sse_data`` is the one parser of an event line; the load generator (``studio.telemetry.genload``)
reads its streams with it too.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import InputError, StudioError
from studio.edge.sse import sse_data


class GenerateError(StudioError, kind="server"):
    """The server refused or broke off a generation (its JSON error is the message)."""


@dataclass
class GenerateAnswer:
    text: str
    pieces: int
    ttft_ms: float | None  # request sent -> first non-empty text piece
    total_ms: float
    finish_reason: str = ""
    usage: dict[str, Any] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return int(self.usage.get("completion_tokens", self.pieces))

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / (self.total_ms / 1e3) if self.total_ms > 0 else 0.0


def takes_generate(metadata: dict[str, Any]) -> bool:
    """Whether a served model answers the generate extension, from its KServe v2 metadata: an edge agent lists its
    generation loop (``generation``); a Triton generate model takes ``text_input`` (the extension's convention,
    as the studio's generate repository writes it)."""
    if metadata.get("generation"):
        return True
    return any(str(t.get("name")) == "text_input" for t in metadata.get("inputs") or [] if isinstance(t, dict))


def generate_body(text: str | None, *, image: str | Path | None = None, audio: str | Path | None = None,
                  max_tokens: int = 32, parameters: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON body: ``text_input``, ``parameters`` and the media files as base64 (what the agent reads)."""
    body: dict[str, Any] = {"text_input": text or "", "parameters": {**(parameters or {}), "max_tokens": max_tokens}}
    for key, path in (("image", image), ("audio", audio)):
        if path:
            try:
                body[key] = base64.b64encode(Path(path).read_bytes()).decode("ascii")
            except OSError as exc:
                raise InputError(f"cannot read the {key} file {path}: {exc.strerror or exc}", offending=key,
                                 hint=f"choose an existing {key} file") from exc
    return body


def stream_generate(url: str, model: str, body: dict[str, Any], on_text: Callable[[str], None] | None = None,
                    headers: dict[str, str] | None = None, timeout: float = 120.0) -> GenerateAnswer:
    """POST ``generate_stream`` and hand each text piece to ``on_text`` as it arrives; the whole answer back."""
    import httpx

    base = url if "://" in url else "http://" + url
    endpoint = f"{base.rstrip('/')}/v2/models/{model}/generate_stream"
    body = {**body, "stream": True}  # Triton's decoupled models answer piece by piece only when asked (vLLM's
    # convention); the agent streams on this route anyway and ignores the field
    pieces: list[str] = []
    ttft: float | None = None
    finish, usage = "", {}
    t0 = time.perf_counter()
    try:
        with httpx.stream("POST", endpoint, json=body, headers=headers, timeout=timeout) as r:
            if r.status_code != 200:
                r.read()
                raise GenerateError(f"{endpoint} answered {r.status_code}: {_error_text(r)}", offending=model,
                                    hint="a 404 means the model is not a generation model on this server; a 400 "
                                         "names the field to change")
            for line in r.iter_lines():
                ev = sse_data(line)
                if ev is None:
                    continue
                if "error" in ev:
                    raise GenerateError(f"the generation stopped: {ev['error']}", offending=model)
                piece = ev.get("text_output") or ""
                if piece:
                    if ttft is None:
                        ttft = (time.perf_counter() - t0) * 1e3
                    pieces.append(piece)
                    if on_text is not None:
                        on_text(piece)
                finish = str(ev.get("finish_reason") or finish)
                if isinstance(ev.get("usage"), dict):
                    usage = ev["usage"]
    except httpx.HTTPError as exc:
        raise GenerateError(f"cannot stream from {endpoint}: {exc}", offending=url,
                            hint="check that the server is up and serves the generate extension") from exc
    return GenerateAnswer("".join(pieces), len(pieces), ttft, (time.perf_counter() - t0) * 1e3, finish, usage)


def _error_text(r: Any) -> str:
    try:
        d = r.json()
        return str(d.get("error", d)) if isinstance(d, dict) else str(d)
    except ValueError:
        return r.text[:300]
