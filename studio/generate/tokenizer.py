"""The exported tokenizer, loaded with the ``tokenizers`` library from ``tokenizer.json`` (no transformers, no
torch): the same fast tokenizer HF's ``AutoTokenizer`` builds from that file, so ids match it."""

from __future__ import annotations

from pathlib import Path

from studio.core.errors import DependencyMissing, InputError


class TextTokenizer:
    def __init__(self, folder: Path) -> None:
        path = Path(folder) / "tokenizer.json"
        if not path.is_file():
            raise InputError(f"{folder} has no tokenizer.json: text prompts cannot be encoded",
                             offending=str(path), hint="pass token ids with --prompt-ids 1,2,3, or export a model "
                                                       "whose folder has a fast tokenizer (tokenizer.json)")
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - a dependency of transformers and of the studio
            raise DependencyMissing.for_module("tokenizers", "export", "encoding a text prompt") from exc
        self._tok = Tokenizer.from_file(str(path))

    def encode(self, text: str) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=True).ids)

    def decode(self, ids: list[int]) -> str:
        return self._tok.decode(list(ids), skip_special_tokens=True)
