"""Plugin discovery: entry points in group ``studio.plugins`` name a small declarative manifest.

A manifest is a dict (or a callable returning one) with ``name`` and ``provides`` (targets, runtimes,
device connectors, cli options, compilers), plus ``module`` to import on first use. Heavy SDKs are only
imported by ``Plugin.load()``. A plugin whose manifest or module fails is kept with its error so the
Plugins view and ``studio plugins`` can show it; the rest of the app carries on.
"""

from __future__ import annotations

import importlib
import traceback
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any

GROUP = "studio.plugins"


@dataclass
class Plugin:
    name: str
    entry_point: str
    provides: dict[str, list[str]] = field(default_factory=dict)
    module: str | None = None
    description: str = ""
    requires: list[str] = field(default_factory=list)  # importable modules it needs, checked lazily
    hint: str = ""  # what to do when a required module is missing (e.g. the pip command)
    error: str | None = None  # set when manifest or import failed
    _loaded: Any = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    def available(self) -> tuple[bool, str]:
        """Whether its required modules can be found, without importing them."""
        import importlib.util

        def absent(mod: str) -> bool:
            try:
                return importlib.util.find_spec(mod.split(".")[0]) is None
            except (ImportError, ValueError):  # a broken install or an import blocker counts as missing
                return True

        missing = [m for m in self.requires if absent(m)]
        if missing:
            return False, "missing " + ", ".join(missing) + (f"; {self.hint}" if self.hint else "")
        return (self.error is None, self.error or "ok")

    def load(self) -> Any:
        """Import the plugin's module on first use; record (and re-raise) a failure."""
        if self._loaded is not None:
            return self._loaded
        if not self.module:
            return None
        try:
            self._loaded = importlib.import_module(self.module)
        except Exception as exc:  # a plugin may fail in any way; we report, not crash
            self.error = f"{type(exc).__name__}: {exc}"
            raise
        return self._loaded


def _from_entry_point(ep: EntryPoint) -> Plugin:
    try:
        obj = ep.load()
        manifest = obj() if callable(obj) else obj
        if not isinstance(manifest, dict) or "name" not in manifest:
            raise TypeError("manifest must be a dict with at least 'name'")
        return Plugin(name=str(manifest["name"]), entry_point=f"{ep.name} = {ep.value}",
                      provides={k: list(v) for k, v in dict(manifest.get("provides", {})).items()},
                      module=manifest.get("module"), description=manifest.get("description", ""),
                      requires=list(manifest.get("requires", [])), hint=str(manifest.get("hint", "")))
    except Exception as exc:
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return Plugin(name=ep.name, entry_point=f"{ep.name} = {ep.value}", error=tb)


_CACHE: list[Plugin] | None = None


def discover(refresh: bool = False) -> list[Plugin]:
    """All plugins registered in the environment (built-in ones register the same way)."""
    global _CACHE
    if _CACHE is None or refresh:
        _CACHE = [_from_entry_point(ep) for ep in entry_points(group=GROUP)]
        _CACHE.sort(key=lambda p: p.name)
    return _CACHE


def providers(kind: str) -> list[tuple[Plugin, str]]:
    """(plugin, item) pairs for everything of ``kind`` ("targets", "compilers", ...) that plugins provide."""
    return [(p, item) for p in discover() if p.ok for item in p.provides.get(kind, [])]


def find(name: str) -> Plugin | None:
    return next((p for p in discover() if p.name == name), None)
