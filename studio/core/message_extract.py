"""The core's error and hint templates, read from its raise sites: what a message catalogue must translate.

``python -m studio.core.message_extract [CODE]`` prints the templates CODE's catalogue (default zh_CN) lacks as
``.po`` entries to fill in; ``tests/cli/test_cli_language.py`` fails while any is missing. Kept apart from
:mod:`studio.core.message_templates`, which the catalogue imports, so the catalogue never imports itself.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from pathlib import Path

from studio.core import catalogue, errors
from studio.core.message_templates import template_of, translatable


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


def main(argv: list[str] | None = None) -> int:
    """``python -m studio.core.message_templates [CODE]``: the core's error and hint templates that CODE's
    catalogue (default zh_CN) lacks, as ``.po`` entries with empty translations to fill in and append."""
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
