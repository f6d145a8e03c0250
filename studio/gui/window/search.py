"""The toolbar search: "Page: X", "Model: Y", "Target: Z" entries and how typed text picks one."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication

translate = QCoreApplication.translate


@dataclass(frozen=True)
class SearchPick:
    kind: str  # "Page" | "Model" | "Target"; "" when nothing unique matched
    value: str
    message: str = ""  # why nothing was picked


def search_items(pages: list[str], models: list[str], targets: list[str]) -> list[str]:
    return ([f"Page: {p}" for p in pages] + [f"Model: {m}" for m in models] + [f"Target: {t}" for t in targets])


def pick(text: str, items: list[str]) -> SearchPick:
    """A completion taken as it is; else the exact name, else the only entry containing the text."""
    text = text.strip()
    kind, _, value = text.partition(": ")
    if value:
        return SearchPick(kind, value)
    q = text.lower()
    hits = [s for s in items if q in s.lower()]
    exact = [s for s in hits if s.split(": ", 1)[1].lower() == q]
    chosen = exact[0] if exact else hits[0] if len(hits) == 1 else None
    if chosen is None:
        return SearchPick("", "", translate("search", "no unique match for '{text}'").format(text=text) if hits else translate("search", "nothing named '{text}'").format(text=text))
    kind, _, value = chosen.partition(": ")
    return SearchPick(kind, value)
