"""Every verifier the environment offers (built-in and plugins alike, through ``studio.plugins`` manifests).

Entries are made without importing any tool: each verifier is resolved through the plugin registry
(``Contribution.resolve``, which imports the plugin's module; plugins keep SDK imports inside ``verify``) and
its ``available()`` says the tool and version, or why not. A plugin whose module
fails to import, or whose ``verifier(name)`` raises, is kept as an entry with its error, so the CLI and the
GUI show it and everything else goes on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from studio.core.catalogue import N_
from studio.verify.api import Verifier


@dataclass
class VerifierEntry:
    """One verifier as the registry knows it; ``verifier`` is None when it could not even be built."""

    name: str
    plugin: str
    target: str  # "" when the plugin broke before saying
    ok: bool  # usable now
    reason: str  # tool and version when ok, else why not (missing package + install hint, import error)
    verifier: Verifier | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "plugin": self.plugin, "target": self.target, "ok": self.ok,
                "reason": self.reason}


def _entry(plugin: Any, name: str) -> VerifierEntry:
    """The registry's contribution, resolved (imported) through it, so `studio plugins` records what happened."""
    c = plugin.contribution("verifiers", name)
    try:
        if c is None:
            raise LookupError(f"plugin '{plugin.name}' lists no verifier '{name}'")
        v = c.resolve()
    except Exception as exc:  # a plugin may break in any way: shown with its error, never fatal
        reason = (c.error if c is not None and c.error else None) or f"{type(exc).__name__}: {exc}"
        return VerifierEntry(name=name, plugin=plugin.name, target="", ok=False,
                             reason=N_(f"plugin '{plugin.name}' failed: {reason}"))
    try:
        ok, why = v.available()
    except Exception as exc:
        ok, why = False, N_(f"available() failed: {type(exc).__name__}: {exc}")
    if ok:
        missing = c.missing()
        if missing:
            ok, why = False, "missing " + ", ".join(missing) + (f"; {plugin.hint}" if plugin.hint else "")
    return VerifierEntry(name=name, plugin=plugin.name, target=str(getattr(v, "target", "")), ok=bool(ok),
                         reason=str(why), verifier=v)


def all_verifiers(refresh: bool = False) -> list[VerifierEntry]:
    """Every verifier any plugin provides, each with whether it can run and why (not)."""
    from studio.core.plugins import discover, providers

    if refresh:
        discover(refresh=True)
    return [_entry(p, item) for p, item in providers("verifiers")]


def verifiers_for(target: str, entries: list[VerifierEntry] | None = None) -> list[VerifierEntry]:
    """The verifiers that confirm or contradict ``target`` (usable or not; check ``ok``)."""
    return [e for e in (entries if entries is not None else all_verifiers()) if e.target == target]


def offers(targets: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The verifiers installed for each of ``targets`` ({name, ok, reason}), read from the manifests alone: an
    item's ``target``, its ``requires`` (found, not imported) and its cheap ``status`` hook ("module:function"
    -> (ok, why)). No verifier module is imported: `studio inspect` says what `--verify` would ask at no cost."""
    from studio.core.entry_points import version
    from studio.core.plugins import import_object, providers

    out: dict[str, list[dict[str, Any]]] = {}
    for plugin, name in providers("verifiers"):
        c = plugin.contribution("verifiers", name)
        target = c.meta.get("target") if c is not None else None
        if c is None or target not in targets:
            continue
        missing = c.missing()
        if missing:
            ok, why = False, "missing " + ", ".join(missing) + (f"; {plugin.hint}" if plugin.hint else "")
        elif "status" in c.meta:
            try:
                ok, why = import_object(c.meta["status"])()
            except Exception as exc:  # a plugin's status hook may break: shown, never fatal
                ok, why = False, N_(f"status check failed: {type(exc).__name__}: {exc}")
        else:
            tool = str(c.meta.get("tool") or name)
            ok, why = True, f"{tool} {version(tool)}".strip()
        out.setdefault(target, []).append({"name": name, "ok": bool(ok), "reason": str(why)})
    return out


def get(name: str) -> VerifierEntry | None:
    return next((e for e in all_verifiers() if e.name == name), None)


def broken_plugins() -> list[tuple[str, str]]:
    """(plugin, error) for plugins whose manifest itself failed: they may have offered verifiers."""
    from studio.core.plugins import discover

    return [(p.name, p.error or "") for p in discover() if not p.ok]
