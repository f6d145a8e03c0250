"""The core's message templates, read from its source: what a message catalogue must translate.

Two kinds of call sites: the error and hint texts given to a StudioError class, and the status and log lines a
job reports (``job.set_status(...)``, ``job.log(...)``, ``job.step(i, n, status)``, ``stages.begin(name,
status)`` and the few wrappers around them, :data:`STATUS_CALLS`), which the GUI's Jobs and Log panels show.
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

# method or function name -> (position, keyword) of its status/log text: the JobState methods
# (studio.core.jobs), Stages.begin and its local wrappers, and the load generators', rknn-free reporters' and
# fleet engine's one-line relays to set_status / log
STATUS_CALLS: dict[str, tuple[int, str]] = {"set_status": (0, "text"), "log": (0, "line"), "step": (2, "status"),
                                            "begin": (1, "status"), "_status": (0, "text"), "say": (0, "text"),
                                            "emit": (1, "message")}


def _called(node: ast.Call) -> str | None:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _joined(node: ast.expr) -> ast.expr:
    """``"a: " + ", ".join(xs)`` as the f-string ``f"a: {join}"`` (a status line is often built with ``+``)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
        return node
    values: list[ast.expr] = []
    for side in (_joined(node.left), _joined(node.right)):
        if isinstance(side, ast.JoinedStr):
            values += side.values
        elif isinstance(side, ast.Constant) and isinstance(side.value, str):
            values.append(side)
        else:
            values.append(ast.FormattedValue(side, -1, None))
    return ast.JoinedStr(values)


def _files(root: Path) -> list[tuple[Path, ast.Module]]:
    """Every module under ``root`` but the GUI's (its texts go through Qt's translator)."""
    return [(f, ast.parse(f.read_text(encoding="utf-8"))) for f in sorted(root.rglob("*.py"))
            if "gui" not in f.relative_to(root).parts]


def status_templates(root: Path) -> dict[str, str]:
    """Template -> first ``file:line`` of every status and log line a job reports under ``root``
    (:data:`STATUS_CALLS`; a text that is not a literal, an f-string or a sum of them is tool output or a
    relay, and is left as it comes)."""
    found: dict[str, str] = {}
    for f, tree in _files(root):
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or _called(node) not in STATUS_CALLS:
                continue
            pos, kw = STATUS_CALLS[_called(node) or ""]
            texts = node.args[pos:pos + 1] + [k.value for k in node.keywords if k.arg == kw]
            for t in (template_of(_joined(x)) for x in texts):
                if t and translatable(t):
                    found.setdefault(t, f"{f.relative_to(root.parent)}:{node.lineno}")
    return found


def source_templates(root: Path, error_names: Iterable[str]) -> dict[str, str]:
    """Template -> first ``file:line`` of every message and hint given to one of ``error_names`` under
    ``root`` (the GUI's own texts go through Qt's translator and are skipped)."""
    names = set(error_names)
    found: dict[str, str] = {}
    for f, tree in _files(root):
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
    """``python -m studio.core.message_extract [CODE]``: the core's error, hint, status and log templates that
    CODE's catalogue (default zh_CN) lacks, as ``.po`` entries with empty translations to fill in and append."""
    code = (argv if argv is not None else sys.argv[1:] or ["zh_CN"])[0]
    po = catalogue.po_path(code)
    have = {e.msgid for e in catalogue.parse_po(po.read_text(encoding="utf-8"), po.name)}
    names = [n for n, v in vars(errors).items() if isinstance(v, type) and issubclass(v, errors.StudioError)]
    root = Path(catalogue.__file__).resolve().parents[1]
    found = {**status_templates(root), **source_templates(root, names)}
    missing = {t: where for t, where in found.items() if t not in have}
    for t, where in missing.items():
        quoted = t.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        print(f'#: {where}\nmsgid "{quoted}"\nmsgstr ""\n')
    print(f"{len(missing)} template(s) missing from {po}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
