"""Messages made with f-strings, translated through their templates: ``model file not found: {path}`` in the
catalogue translates every message that f-string can make.

Why: most errors and hints are raised as ``InputError(f"... {name} ...", hint=f"...")``; a gettext lookup of
the rendered text never hits. The extractor (:mod:`studio.core.message_extract`) reads the raise sites with
``ast`` and writes each f-string as a template (a placeholder per interpolated expression, named after it); the catalogue
keeps template -> translation, and :class:`TemplateMatcher` turns a rendered message back into its template's
values and formats the translation with them. Templates that are nothing but placeholders and punctuation are
left out: they have no words to translate and would match anything.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator

PLACEHOLDER = re.compile(r"\{(\w+)\}")
# placeholders whose value is itself a message (a status word, a reason): translated too, so a Chinese line
# carries no English "failed" ("compile {status}", "rollout {status}: {reason}", "...; {why} (reaches ...)"); a
# shipped target profile's sentence has its own entry (message_extract.profile_sentences) and is translated with
# it; a value with no entry (a tool's own message, a user's profile's sentence) stays as it is
NESTED = frozenset(("status", "reason", "why"))
_WORD = re.compile(r"[A-Za-z]{2,}")


def _name(node: ast.expr, index: int) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
        return _name(node.func, index)
    return f"value{index}"


def template_of(node: ast.expr) -> str | None:
    """The template of a string literal or f-string (None for anything else)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if not isinstance(node, ast.JoinedStr):
        return None
    parts: list[str] = []
    seen: set[str] = set()
    for v in node.values:
        if isinstance(v, ast.Constant):
            if "{" in str(v.value) or "}" in str(v.value):
                return None  # literal braces would read as placeholders
            parts.append(str(v.value))
        elif isinstance(v, ast.FormattedValue):
            name = _name(v.value, len(seen))
            while name in seen:  # each placeholder its own name: two values are never taken for one
                name += "_"
            seen.add(name)
            parts.append("{" + name + "}")
    return "".join(parts)


def translatable(template: str) -> bool:
    """A template with words of its own (not only placeholders, punctuation and numbers)."""
    return bool(_WORD.search(PLACEHOLDER.sub("", template)))


class TemplateMatcher:
    """Rendered message -> translation, through the catalogue's templates that have placeholders; ``nested``
    translates the value of a :data:`NESTED` placeholder (the catalogue's own lookup)."""

    def __init__(self, translations: Iterable[tuple[str, str]],
                 nested: Callable[[str], str] | None = None) -> None:
        self.nested = nested
        rules = []
        for msgid, msgstr in translations:
            names = PLACEHOLDER.findall(msgid)
            if not names or not msgstr or not translatable(msgid):
                continue
            pieces = PLACEHOLDER.split(msgid)  # literal, name, literal, name, ..., literal
            pattern = "".join(re.escape(p) if i % 2 == 0 else "(.*?)" for i, p in enumerate(pieces))  # a value may be ""
            literal = sum(len(p) for p in pieces[::2])
            words = tuple(p for p in pieces[::2] if p)
            rules.append((literal, re.compile(pattern + r"\Z", re.S), names, msgstr, words))
        rules.sort(key=lambda r: -r[0])  # the most specific template first
        self.rules = rules

    def __len__(self) -> int:
        return len(self.rules)

    def _candidates(self, message: str, covering: bool) -> Iterator[str]:
        for literal, pattern, names, msgstr, words in self.rules:
            if covering and 2 * literal < len(message):
                continue
            if not all(w in message for w in words):  # a cheap no before the regular expression
                continue
            m = pattern.match(message)
            if m is not None:
                values = dict(zip(names, m.groups(), strict=True))
                if self.nested is not None:
                    values.update({k: self.nested(v) for k, v in values.items() if k.rstrip("_") in NESTED and v})
                try:
                    yield msgstr.format(**values)
                except (KeyError, IndexError, ValueError):
                    continue

    def translate(self, message: str, *, covering: bool = False) -> str | None:
        """``covering``: only a template whose own words are at least half the text (a NESTED value may be a
        sentence with no entry, a user's profile's or a tool's: "NPU has no INT64 compute; ..." is not
        "{name} has no {what}")."""
        return next(self._candidates(message, covering), None)

