"""The core's message templates, read from its source: what a message catalogue must translate.

Two kinds of call sites: the error and hint texts given to a StudioError class, and the status and log lines a
job reports (``job.set_status(...)``, ``job.log(...)``, ``job.step(i, n, status)``, ``stages.begin(name,
status)`` and the few wrappers around them, :data:`STATUS_CALLS`), which the GUI's Jobs and Log panels show.
A third: texts marked with ``N_(...)`` (translated where they are shown). A fourth, data rather than code: the
sentences of the shipped target profiles (``studio/resources/targets/*.yaml``, :func:`profile_sentences`) that a
finding, a node's reason or a hint carries as its ``{reason}`` / ``{why}`` (message_templates.NESTED), each needing
its own entry; a user's own profiles are not shipped and their sentences stay as written. The studio's catalogue
covers the ``studio`` package and those profiles, each plugin's (``messages`` in its manifest) its own package.
``python -m studio.core.message_extract [CODE]`` prints the templates CODE's catalogues (default zh_CN) lack as
``.po`` entries to fill in, per catalogue; ``tests/cli/test_cli_language.py`` fails while any is missing. Kept apart from
:mod:`studio.core.message_templates`, which the catalogue imports, so the catalogue never imports itself.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from pathlib import Path

from studio.core import catalogue, errors
from studio.core.message_templates import template_of, translatable

# the keys of a target profile (studio.inspect.profile_schema) whose text reaches the user: the model-wide
# rules' reasons (global_rules, the data-dependent finding in verdicts), an op's risky / cpu_fallback reason
# (op findings), a constraint's reason (constraints.check_constraint), and the whole-graph rules' reasons that
# say why a node runs on the host, stays on the accelerator or is removed (graph_model: findings, the node reasons
# of the GUI's details and of `inspect --verify`). Not: notes, source, version, shape_values.source and
# graph.fold_reason / graph.source, which no finding, hint or view shows (`studio targets` prints the sources as
# citations, untranslated).
PROFILE_RULE_REASONS = ("opset_reason", "dynamic_reason", "data_dependent_reason", "int64_reason", "double_reason")
PROFILE_OP_REASONS = ("risky", "cpu_fallback")
PROFILE_GRAPH_REASONS = ("host_dtypes_reason", "runtime_index_reason", "zero_operand_reason")

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
            for t in (template_of(_joined(x)) for x in texts):
                if t and translatable(t):
                    found.setdefault(t, f"{f.relative_to(root.parent)}:{node.lineno}")
    return found


def marked_templates(root: Path) -> dict[str, str]:
    """Template -> first ``file:line`` of every ``N_(...)`` mark under ``root`` (studio.core.catalogue.N_)."""
    found: dict[str, str] = {}
    for f, tree in _files(root):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _called(node) == "N_" and node.args:
                t = template_of(_joined(node.args[0]))
                if t and translatable(t):
                    found.setdefault(t, f"{f.relative_to(root.parent)}:{node.lineno}")
    return found


def _profile_texts(data: object) -> Iterable[tuple[str, tuple[str | int, ...]]]:
    """(sentence, where in the file) of one parsed profile: the keys of :data:`PROFILE_RULE_REASONS` and the rest."""
    if not isinstance(data, dict):
        return
    rules = data.get("rules") or {}
    for key in PROFILE_RULE_REASONS:
        yield rules.get(key), ("rules", key)
    for table in PROFILE_OP_REASONS:
        for op, reason in (data.get(table) or {}).items():
            yield reason, (table, op)
    for op, items in (data.get("constraints") or {}).items():
        for i, c in enumerate(items or []):
            yield (c.get("reason") if isinstance(c, dict) else None), ("constraints", op, i, "reason")
    graph = data.get("graph") or {}
    for key in PROFILE_GRAPH_REASONS:
        yield graph.get(key), ("graph", key)
    for op, acc in (graph.get("accelerated") or {}).items():
        yield (acc.get("reason") if isinstance(acc, dict) else None), ("graph", "accelerated", op, "reason")


def profile_sentences(folder: Path | None = None) -> dict[str, tuple[Path, tuple[str | int, ...]]]:
    """Sentence -> (file, key path) of its first place, for every user-visible sentence of the target profiles
    in ``folder`` (default: the shipped ones), read with the project's YAML loader (so a folded ``>-`` text is
    the one string the finding carries)."""
    from studio.core import yamlio

    if folder is None:
        folder = Path(__file__).resolve().parents[1] / "resources" / "targets"
    found: dict[str, tuple[Path, tuple[str | int, ...]]] = {}
    for f in sorted(folder.glob("*.yaml")):
        for text, loc in _profile_texts(yamlio.safe_load(f.read_text(encoding="utf-8"))):
            if isinstance(text, str) and text and translatable(text):
                found.setdefault(text, (f, loc))
    return found


def _profile_where(f: Path, loc: tuple[str | int, ...], root: Path) -> str:
    from studio.core import yamlio

    rel = f.relative_to(root.parent) if f.is_relative_to(root.parent) else f
    return f"{rel}:{yamlio.node_line(f.read_text(encoding='utf-8'), loc) or 1}"


def templates(root: Path) -> dict[str, str]:
    """Every template a catalogue covering the package ``root`` must hold: errors, hints, status lines, marks."""
    names = [n for n, v in vars(errors).items() if isinstance(v, type) and issubclass(v, errors.StudioError)]
    return {**status_templates(root), **source_templates(root, names), **marked_templates(root)}


def missing(code: str, domain: catalogue.Domain) -> dict[str, str]:
    """The templates of ``domain``'s sources its ``code`` catalogue lacks (all of them when it has no .po), and
    for the studio's own catalogue the shipped target profiles' sentences it lacks (:func:`profile_sentences`)."""
    po = catalogue.po_path(code, domain.folder, domain.name)
    text = po.read_text(encoding="utf-8") if po.is_file() else ""
    have = {e.msgid for e in catalogue.parse_po(text, po.name) if e.msgstr}
    lacking = {t: where for t, where in templates(domain.sources).items() if t not in have}
    if not domain.plugin:
        lacking.update({t: _profile_where(f, loc, domain.sources) for t, (f, loc) in profile_sentences().items()
                        if t not in have and t not in lacking})
    return lacking


def main(argv: list[str] | None = None) -> int:
    """``python -m studio.core.message_extract [CODE]``: the error, hint, status and log templates that CODE's
    catalogues (default zh_CN; the studio's, then each plugin's) lack, as ``.po`` entries with empty
    translations to fill in and append to the file named above them."""
    code = (argv if argv is not None else sys.argv[1:] or ["zh_CN"])[0]
    total = 0
    for domain in (catalogue.studio_domain(), *catalogue.plugin_domains()):
        lacking = missing(code, domain)
        if not lacking:
            continue
        print(f"# {catalogue.po_path(code, domain.folder, domain.name)}\n")
        for t, where in lacking.items():
            quoted = t.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
            print(f'#: {where}\nmsgid "{quoted}"\nmsgstr ""\n')
        print(f"{len(lacking)} template(s) missing from {catalogue.po_path(code, domain.folder, domain.name)}",
              file=sys.stderr)
        total += len(lacking)
    return 1 if total else 0


if __name__ == "__main__":
    raise SystemExit(main())
