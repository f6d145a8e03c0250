"""The sidebar's page ids without importing Qt: for shell completion (`studio gui --page`) and anything else
that must name a page before a window exists.

The ids are read from the page modules' source text (the class named in ``PAGE_SPECS`` and its ``page_id = "..."``
class attribute), the same modules and fallback (`<module>` less `_page`) ``studio.gui.pages.load_pages`` uses;
plugin pages follow as ``plugin-<name>``. tests/gui/test_page_ids.py holds them equal to the built window's.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

_CLASS = re.compile(r"^class\s+(\w+)\b", re.M)
_PAGE_ID = re.compile(r"^[ \t]+page_id\s*(?::\s*str\s*)?=\s*(['\"])([^'\"]+)\1", re.M)


def _class_page_id(source: str, class_name: str) -> str | None:
    """``page_id = "..."`` in the body of ``class_name``, or of the module's only class that sets one.

    A line scan, not an AST: the page modules are 4,000 lines and a Tab must answer in well under 0.1 s."""
    classes = [(m.start(), m.group(1)) for m in _CLASS.finditer(source)]
    found: dict[str, str] = {}
    for m in _PAGE_ID.finditer(source):
        owner = next((name for pos, name in reversed(classes) if pos < m.start()), None)
        if owner is not None:
            found.setdefault(owner, m.group(2))
    if class_name in found:
        return found[class_name]
    return next(iter(found.values())) if len(found) == 1 else None


def _module_file(module: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    return Path(spec.origin) if spec is not None and spec.origin and spec.origin.endswith(".py") else None


def builtin_page_ids() -> list[str]:
    """Ids of the built-in pages present in this installation, in sidebar order."""
    from studio.gui.pages import PAGE_SPECS

    out: list[str] = []
    for module, class_name in PAGE_SPECS:
        path = _module_file(module)
        if path is None:
            continue
        try:
            pid = _class_page_id(path.read_text(encoding="utf-8"), class_name)
        except (OSError, UnicodeDecodeError):
            pid = None
        out.append(pid or module.rsplit(".", 1)[-1].removesuffix("_page"))
    return out


def plugin_page_ids() -> list[str]:
    """``plugin-<name>`` for each page a working plugin declares (its class is not imported); a plugin
    declaring a built-in page (the compile plugin's Compile page) is that page, as in ``plugin_pages``."""
    from studio.core.plugins import contributions
    from studio.gui.pages import PAGE_SPECS

    known = set(PAGE_SPECS)
    return [f"plugin-{c.name}" for c in contributions("pages") if (c.module, str(c.meta.get("class", ""))) not in known]


def page_ids() -> list[str]:
    ids = builtin_page_ids()
    try:
        ids += [p for p in plugin_page_ids() if p not in ids]
    except Exception:  # noqa: BLE001 (a broken plugin registry: the built-in pages still complete)
        pass
    return ids
