"""What a generation returns, for every kind (text, vision-language, speech): the GenerationResult report and
the streamer that turns new token ids into the text they add. Apart from the entry point
(``studio.generate.api``), which dispatches to the kinds (``speech``, ``vlm``) that import this: no import circle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from studio.core.reports import Report


@dataclass
class GenerationResult(Report):
    text: str
    token_ids: list[int]  # the new ids (a stop id, when one ended it, is the last)
    prompt_token_ids: list[int]
    finish_reason: str  # "stop" | "length" | "max_context" | "cancelled"
    ttft_ms: float  # prompt ids in -> first new token (prefill + sampling)
    tokens_per_s: float  # new tokens / total generation time (prefill included)
    decode_tokens_per_s: float | None
    total_ms: float
    encode_ms: float
    sampling: dict[str, Any] = field(default_factory=dict)
    hf_parity: dict[str, Any] = field(default_factory=dict)
    export_dir: str = ""
    runtime: str = "studio ORT loop"


def text_streamer(decode: Callable[[list[int]], str], on_text: Callable[[str], None]) -> Callable[[int], None]:
    """Token -> the text it adds (decoding the whole answer each time keeps multi-byte characters whole)."""
    seen: list[int] = []
    shown = [""]

    def emit(tok: int) -> None:
        seen.append(tok)
        text = decode(seen)
        if text.startswith(shown[0]) and not text.endswith("\ufffd"):
            on_text(text[len(shown[0]):])
            shown[0] = text

    return emit
