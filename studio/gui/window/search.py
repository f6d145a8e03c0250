"""The toolbar search: "Page: X", "Model: Y", "Target: Z" entries and how typed text picks one."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

translate = QCoreApplication.translate
# the entry kinds (ids) and their words in the list (translated where shown)
KINDS = {"Page": QT_TRANSLATE_NOOP("search", "Page"), "Model": QT_TRANSLATE_NOOP("search", "Model"),
         "Target": QT_TRANSLATE_NOOP("search", "Target")}


def _kind_word(kind: str) -> str:
    return translate("search", KINDS[kind])


def _kind_of(word: str) -> str:
    """The kind id a shown word stands for (the English word too, whatever the language)."""
    return next((k for k in KINDS if word in (k, _kind_word(k))), "")


@dataclass(frozen=True)
class SearchPick:
    kind: str  # "Page" | "Model" | "Target" (ids, whatever the language); "" when nothing unique matched
    value: str
    message: str = ""  # why nothing was picked


def search_items(pages: list[str], models: list[str], targets: list[str]) -> list[str]:
    """The completer's entries, "Page: Export" or in the studio's language ("页面: 导出")."""
    page, model, target = _kind_word("Page"), _kind_word("Model"), _kind_word("Target")
    return ([f"{page}: {p}" for p in pages] + [f"{model}: {m}" for m in models] + [f"{target}: {t}" for t in targets])


def pick(text: str, items: list[str]) -> SearchPick:
    """A completion taken as it is; else the exact name, else the only entry containing the text."""
    text = text.strip()
    kind, _, value = text.partition(": ")
    if value:
        return SearchPick(_kind_of(kind) or kind, value)
    q = text.lower()
    hits = [s for s in items if q in s.lower()]
    exact = [s for s in hits if s.split(": ", 1)[1].lower() == q]
    chosen = exact[0] if exact else hits[0] if len(hits) == 1 else None
    if chosen is None:
        return SearchPick("", "", translate("search", "no unique match for '{text}'").format(text=text) if hits else translate("search", "nothing named '{text}'").format(text=text))
    kind, _, value = chosen.partition(": ")
    return SearchPick(_kind_of(kind), value)
