"""Messages made with f-strings, translated through their templates: ``model file not found: {path}`` in the
catalogue translates every message that f-string can make.

Why: most errors and hints are raised as ``InputError(f"... {name} ...", hint=f"...")``; a gettext lookup of
the rendered text never hits. The extractor (:func:`source_templates`) reads the raise sites with ``ast`` and
writes each f-string as a template (a placeholder per interpolated expression, named after it); the catalogue
keeps template -> translation, and :class:`TemplateMatcher` turns a rendered message back into its template's
values and formats the translation with them. Templates that are nothing but placeholders and punctuation are
left out: they have no words to translate and would match anything.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

PLACEHOLDER = re.compile(r"\{(\w+)\}")
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


def source_templates(root: Path, error_names: Iterable[str]) -> dict[str, str]:
    """Template -> first ``file:line`` of every message and hint given to one of ``error_names`` under
    ``root`` (the GUI's own texts go through Qt's translator and are skipped)."""
    names = set(error_names)
    found: dict[str, str] = {}
    for f in sorted(root.rglob("*.py")):
        if "gui" in f.relative_to(root).parts:
            continue
        tree = ast.parse(f.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names):
                continue
            texts = [node.args[0]] if node.args else []
            texts += [kw.value for kw in node.keywords if kw.arg in ("message", "hint")]
            for t in map(template_of, texts):
                if t and translatable(t):
                    found.setdefault(t, f"{f.relative_to(root.parent)}:{node.lineno}")
    return found


class TemplateMatcher:
    """Rendered message -> translation, through the catalogue's templates that have placeholders."""

    def __init__(self, translations: Iterable[tuple[str, str]]) -> None:
        rules = []
        for msgid, msgstr in translations:
            names = PLACEHOLDER.findall(msgid)
            if not names or not msgstr or not translatable(msgid):
                continue
            pieces = PLACEHOLDER.split(msgid)  # literal, name, literal, name, ..., literal
            pattern = "".join(re.escape(p) if i % 2 == 0 else "(.+?)" for i, p in enumerate(pieces))
            literal = sum(len(p) for p in pieces[::2])
            rules.append((literal, re.compile(pattern + r"\Z", re.S), names, msgstr))
        rules.sort(key=lambda r: -r[0])  # the most specific template first
        self.rules = rules

    def __len__(self) -> int:
        return len(self.rules)

    def _candidates(self, message: str) -> Iterator[str]:
        for _literal, pattern, names, msgstr in self.rules:
            m = pattern.match(message)
            if m is not None:
                try:
                    yield msgstr.format(**dict(zip(names, m.groups(), strict=True)))
                except (KeyError, IndexError, ValueError):
                    continue

    def translate(self, message: str) -> str | None:
        return next(self._candidates(message), None)


def main(argv: list[str] | None = None) -> int:
    """``python -m studio.core.message_templates [CODE]``: the core's error and hint templates that CODE's
    catalogue (default zh_CN) lacks, as ``.po`` entries with empty translations to fill in and append."""
    import sys

    from studio.core import catalogue, errors

    code = (argv if argv is not None else sys.argv[1:] or ["zh_CN"])[0]
    po = catalogue.po_path(code)
    have = {e.msgid for e in catalogue.parse_po(po.read_text(encoding="utf-8"), po.name)}
    names = [n for n, v in vars(errors).items() if isinstance(v, type) and issubclass(v, errors.StudioError)]
    root = Path(catalogue.__file__).resolve().parents[1]
    missing = {t: where for t, where in source_templates(root, names).items() if t not in have}
    for t, where in missing.items():
        quoted = t.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        print(f'#: {where}\nmsgid "{quoted}"\nmsgstr ""\n')
    print(f"{len(missing)} template(s) missing from {po}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
