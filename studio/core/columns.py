"""Text table cells that line up in a terminal whatever the language: a CJK character takes two columns.

Why: ``f"{word:8}"`` counts characters, so a translated heading or verdict word (two columns per Chinese
character) pushed every later column of a text table out of line.
"""

from __future__ import annotations

import unicodedata


def width(text: str) -> int:
    """Terminal columns of ``text`` (East Asian wide and full-width characters count two)."""
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def cell(text: object, size: int, right: bool = False) -> str:
    """``text`` padded to ``size`` columns (left-aligned, or right-aligned); longer text is left whole."""
    s = str(text)
    fill = " " * max(0, size - width(s))
    return fill + s if right else s + fill


def clip(text: str, columns: int) -> str:
    """``text`` cut to at most ``columns`` terminal columns (a CJK character takes two)."""
    if width(text) <= columns:
        return text
    out, used = [], 0
    for ch in text:
        used += width(ch)
        if used > columns:
            break
        out.append(ch)
    return "".join(out)
