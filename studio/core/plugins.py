"""Plugin registry: entry points in group ``studio.plugins`` name a manifest of typed contributions.

Manifest-first so that listing what is installed (``studio --help``, ``studio plugins``, the Plugins dialog)
imports no plugin code, and one broken plugin never takes the rest down. A manifest is a dict (or a callable
returning one); every contribution is imported only when it is first used (``Contribution.resolve``)::

    {"name": "studio-example", "module": "studio_example.plugin",      # imported on first use
     "description": "...", "requires": ["onnx"], "hint": "pip install onnx",
     "provides": {
         "targets": {"example-npu": {"path": "studio_example:targets/example-npu.yaml"}},  # or module.target(name)
         "verifiers": ["example-npu"],                                  # module.verifier(name) -> Verifier
         "runtimes": ["example"],                                       # module.runtime(name), for the agent
         "compilers": {"example": {"object": "m:f", "title": "...",     # f(CompileOptions, job) -> CompileReport
                                   "targets": [...], "precisions": ["", "int8"], "status": "m:g"}},  # g() -> (ok, why)
         "cli": {"example-hello": {"help": "one line for --help", "module": "studio_example.cli"}},
         "pages": {"example": {"title": "Example"}},                    # module.page(name) -> (title, Page cls)
         "anything-else": ["..."]},                                     # other kinds: declared, listed only
     "messages": {"domain": "studio_example", "locale": "studio_example:locale"}}  # its .po (studio.core.catalogue)

A kind maps names to a dict of item keys (or is a plain list of names; a string value is the item's help /
title / path). Item keys: ``module`` (instead of the plugin's), ``object`` ("pkg.mod:attr", the thing itself),
``requires``, ``help`` (cli), ``title``/``class`` (pages), ``path`` (targets, "package:relative/glob" or absolute).
Every failure (manifest, import, resolve) is kept as the plugin's or the contribution's ``error``.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.entry_points import EntryPoint, entry_points
from studio.core.errors import PluginError

GROUP = "studio.plugins"
BUILTIN_DIST = "deployment-studio"
# kind -> the hook a plugin's module defines to resolve one named contribution of that kind
KINDS: dict[str, str] = {"targets": "target", "verifiers": "verifier", "runtimes": "runtime",
                         "compilers": "compiler", "cli": "cli_command", "pages": "page",
                         "evaluators": "evaluator"}  # evaluators: a target's tool judging a candidate (studio.tune)
_SHORT_KEY = {"cli": "help", "pages": "title", "targets": "path"}  # what a bare string value means
_KIND_REQUIRES = {"pages": ["PySide6"]}  # pages need Qt: without it they are unavailable, not broken
_UNIQUE_KINDS = ("verifiers", "runtimes", "compilers", "cli", "pages", "evaluators")  # a second plugin using a taken name gets an error


def _one_line(exc: BaseException) -> str:
    return traceback.format_exception_only(type(exc), exc)[-1].strip()


def _detail(exc: BaseException) -> str:
    """The traceback's last frames without importlib's own (what a plugin author needs to see)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<frozen importlib")]
    return "".join(["Traceback (most recent call last):\n", *traceback.format_list(frames[-8:]),
                    *traceback.format_exception_only(type(exc), exc)])


def _absent(mod: str) -> bool:
    try:
        return importlib.util.find_spec(mod.split(".")[0]) is None
    except (ImportError, ValueError):  # a broken install or an import blocker counts as missing
        return True


def import_object(ref: str) -> Any:
    """``"pkg.mod:attr.sub"`` -> that attribute; ``"pkg.mod"`` -> the module."""
    mod_name, _, attr = ref.partition(":")
    obj: Any = importlib.import_module(mod_name)
    for part in filter(None, attr.split(".")):
        obj = getattr(obj, part)
    return obj


@dataclass(eq=False)
class Contribution:
    """One named thing a plugin contributes; resolved (imported) on first use, its failure kept."""

    kind: str
    name: str
    plugin: Plugin = field(repr=False)
    meta: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    detail: str = ""  # traceback of the failure, for --debug and the dialog
    loaded: bool = False
    _value: Any = field(default=None, repr=False)

    @property
    def typed(self) -> bool:
        """Whether the registry knows how to resolve this kind (others are only declared and listed)."""
        return self.kind in KINDS

    @property
    def help(self) -> str:
        return str(self.meta.get("help") or self.meta.get("title") or self.meta.get("description") or "")

    @property
    def module(self) -> str | None:
        ref = self.meta.get("object")
        return ref.partition(":")[0] if ref else (self.meta.get("module") or self.plugin.module)

    @property
    def requires(self) -> list[str]:
        return [*self.plugin.requires, *_KIND_REQUIRES.get(self.kind, []), *self.meta.get("requires", [])]

    def missing(self) -> list[str]:
        return [m for m in dict.fromkeys(self.requires) if _absent(m)]

    def state(self) -> tuple[str, str]:
        """("error" | "unavailable" | "loaded" | "available" | "declared", reason)."""
        if self.error:
            return "error", self.error
        if self.plugin.error and (self.module is None or self.module == self.plugin.module):
            return "error", self.plugin.error
        missing = self.missing()
        if missing:
            hint = f"; {self.plugin.hint}" if self.plugin.hint else ""
            return "unavailable", "missing " + ", ".join(missing) + hint
        if self.loaded:
            return "loaded", ""
        return ("available" if self.typed else "declared"), ""

    def fail(self, message: str, detail: str = "") -> None:
        """Record a failure found outside the registry (e.g. a CLI name that shadows a built-in command)."""
        self.error, self.detail = message, detail

    def resolve(self) -> Any:
        """Import and return the contribution; a failure is recorded and raised as a PluginError."""
        if self.loaded:
            return self._value
        if self.error is None:
            state, reason = self.state()
            if state == "error":
                self.error = reason
        if self.error is not None:
            raise self._as_error()
        try:
            value = _RESOLVERS.get(self.kind, _resolve_declared)(self)
        except Exception as exc:  # a plugin may fail in any way; we record and report, never crash
            self.error, self.detail = _one_line(exc), _detail(exc)
            raise self._as_error() from exc
        self._value, self.loaded = value, True
        return value

    def _as_error(self) -> PluginError:
        dist = f" (distribution {self.plugin.distribution})" if self.plugin.distribution else ""
        return PluginError(f"plugin '{self.plugin.name}' cannot provide {self.kind} '{self.name}': {self.error}",
                           offending=f"{self.plugin.name}{dist}: {self.kind}/{self.name}",
                           hint="`studio plugins --check` lists every plugin's state; fix or uninstall the "
                                "distribution that provides it")

    def to_dict(self) -> dict[str, Any]:
        state, reason = self.state()
        return {"kind": self.kind, "name": self.name, "state": state, "reason": reason, "help": self.help,
                "module": self.module, "error": self.error}


@dataclass(eq=False)
class Plugin:
    name: str
    entry_point: str
    provides: dict[str, list[str]] = field(default_factory=dict)  # kind -> names (what providers() walks)
    module: str | None = None
    description: str = ""
    requires: list[str] = field(default_factory=list)  # importable modules it needs, checked lazily
    hint: str = ""  # what to do when a required module is missing (e.g. the pip command)
    messages: dict[str, str] = field(default_factory=dict)  # its message catalogue: domain, locale ("pkg:folder")
    error: str | None = None  # set when the manifest or the plugin's module failed
    detail: str = ""
    distribution: str = ""
    version: str = ""
    builtin: bool = False
    contributions: list[Contribution] = field(default_factory=list)
    _loaded: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not self.contributions:
            self.contributions = [Contribution(k, n, self) for k, names in self.provides.items() for n in names]

    @property
    def ok(self) -> bool:
        return self.error is None

    def available(self) -> tuple[bool, str]:
        """Whether its required modules can be found, without importing them."""
        missing = [m for m in self.requires if _absent(m)]
        if missing:
            return False, "missing " + ", ".join(missing) + (f"; {self.hint}" if self.hint else "")
        return (self.error is None, self.error or "ok")

    def state(self) -> tuple[str, str]:
        """("error" | "unavailable" | "ok", reason) of the plugin as a whole."""
        if self.error:
            return "error", self.error
        ok, why = self.available()
        return ("ok", "") if ok else ("unavailable", why)

    def contribution(self, kind: str, name: str) -> Contribution | None:
        return next((c for c in self.contributions if c.kind == kind and c.name == name), None)

    def load(self) -> Any:
        """Import the plugin's module on first use; record (and re-raise) a failure."""
        if self._loaded is not None:
            return self._loaded
        if not self.module:
            return None
        try:
            self._loaded = importlib.import_module(self.module)
        except Exception as exc:  # a plugin may fail in any way; we report, not crash
            self.error, self.detail = f"{type(exc).__name__}: {exc}", _detail(exc)
            raise
        return self._loaded

    def to_dict(self) -> dict[str, Any]:
        ok, state = self.available()
        return {"name": self.name, "entry_point": self.entry_point, "distribution": self.distribution,
                "version": self.version, "builtin": self.builtin, "description": self.description,
                "module": self.module, "provides": self.provides, "available": ok, "state": state,
                "error": self.error, "contributions": [c.to_dict() for c in self.contributions]}


# -- resolving one contribution ---------------------------------------------------------------------------

def _module_of(c: Contribution) -> Any:
    if c.module is None:
        raise PluginError(f"the manifest names no module for {c.kind} '{c.name}'", offending=c.plugin.name,
                          hint="add 'module' to the manifest (or to the item)")
    if c.module == c.plugin.module:
        return c.plugin.load()
    return importlib.import_module(c.module)


def _hook(c: Contribution, *args: Any) -> Any:
    if "object" in c.meta:
        return import_object(c.meta["object"])
    mod = _module_of(c)
    fn = getattr(mod, KINDS[c.kind], None)
    if not callable(fn):
        raise AttributeError(f"module {c.module} has no {KINDS[c.kind]}() for {c.kind} '{c.name}'")
    return fn(*args)


_PKG_PATH = re.compile(r"^([A-Za-z_][\w.]*):(.+)$")


def _expand_path(spec: str) -> list[Path]:
    """``"package:relative/glob"`` (found without importing the package) or an absolute path or glob."""
    m = _PKG_PATH.match(spec)
    if m:
        pkg, rel = m.groups()
        top, *sub = pkg.split(".")
        found = importlib.util.find_spec(top)
        if found is None or not found.submodule_search_locations:
            raise FileNotFoundError(f"package '{top}' of target path '{spec}' is not installed")
        base = Path(list(found.submodule_search_locations)[0]).joinpath(*sub)
    else:
        base, rel = Path("/"), spec
        if not Path(spec).is_absolute():
            raise ValueError(f"target path '{spec}' must be 'package:relative/path' or absolute")
    files = sorted(base.glob(rel.lstrip("/"))) if any(ch in rel for ch in "*?[") else [base / rel.lstrip("/")]
    files = [f for f in files if f.is_file()]
    if not files:
        raise FileNotFoundError(f"target path '{spec}' matches no file (looked in {base})")
    return files


def _resolve_target(c: Contribution) -> Any:
    """A list of YAML paths, or what ``target(name)`` / a callable ``object`` returns (paths or profiles)."""
    if "path" in c.meta:
        return _expand_path(str(c.meta["path"]))
    if "object" in c.meta:
        obj = import_object(c.meta["object"])
        return obj() if callable(obj) else obj
    return _hook(c, c.name)


def _resolve_named(c: Contribution) -> Any:
    value = _hook(c) if "object" in c.meta else _hook(c, c.name)
    if value is None:
        raise LookupError(f"{KINDS[c.kind]}('{c.name}') returned None")
    if c.kind == "verifiers" and not (callable(getattr(value, "verify", None))
                                      and callable(getattr(value, "available", None))):
        raise TypeError(f"verifier '{c.name}' has no verify()/available() (see studio.verify.api.Verifier)")
    return value


def _is_command(obj: Any) -> bool:
    return callable(getattr(obj, "add_arguments", None)) and callable(getattr(obj, "run", None))


def _resolve_cli(c: Contribution) -> Any:
    """An object (often a module) with ``add_arguments(parser)`` and ``run(args) -> int``."""
    if "object" in c.meta:
        obj = import_object(c.meta["object"])
    else:
        mod = _module_of(c)
        if callable(getattr(mod, "cli_command", None)):
            obj = mod.cli_command(c.name)
        elif callable(getattr(mod, "cli_commands", None)):
            commands = mod.cli_commands()
            if c.name not in commands:
                raise LookupError(f"cli_commands() of {c.module} has no '{c.name}' (has {', '.join(commands)})")
            obj = commands[c.name]
        else:
            obj = mod
    if not _is_command(obj):
        raise TypeError(f"command '{c.name}' from {c.module} has no add_arguments(parser) and run(args)")
    return obj


def _resolve_page(c: Contribution) -> tuple[str, type]:
    """(title, Page subclass); the Page check itself is the GUI's (the core has no Qt)."""
    title = str(c.meta.get("title") or c.name.replace("-", " ").title())
    if "object" in c.meta:
        value: Any = import_object(c.meta["object"])
    elif "class" in c.meta:
        value = getattr(_module_of(c), str(c.meta["class"]))
    else:
        value = _hook(c, c.name)
    if isinstance(value, tuple):
        title, value = value
    if not isinstance(value, type):
        raise TypeError(f"page '{c.name}' resolved to {value!r}, not a class")
    return str(title), value


def _resolve_declared(c: Contribution) -> Any:
    return _module_of(c) if c.module else None


_RESOLVERS: dict[str, Callable[[Contribution], Any]] = {
    "targets": _resolve_target, "verifiers": _resolve_named, "runtimes": _resolve_named,
    "compilers": _resolve_named, "cli": _resolve_cli, "pages": _resolve_page, "evaluators": _resolve_named}


# -- discovery --------------------------------------------------------------------------------------------

def _items(kind: str, raw: Any) -> dict[str, dict[str, Any]]:
    """Normalise one kind of ``provides`` to name -> item keys."""
    if isinstance(raw, str):
        raw = [raw]
    if isinstance(raw, (list, tuple)):
        if not all(isinstance(n, str) for n in raw):
            raise TypeError(f"provides.{kind} must list names (strings)")
        return {n: {} for n in raw}
    if not isinstance(raw, dict):
        raise TypeError(f"provides.{kind} must be a list of names or a mapping name -> item")
    out: dict[str, dict[str, Any]] = {}
    for name, meta in raw.items():
        if meta is None:
            meta = {}
        elif isinstance(meta, str):
            meta = {_SHORT_KEY.get(kind, "description"): meta}
        if not isinstance(name, str) or not isinstance(meta, dict):
            raise TypeError(f"provides.{kind}.{name}: an item is a mapping of keys (help, module, ...)")
        if not isinstance(meta.get("requires", []), list):
            raise TypeError(f"provides.{kind}.{name}.requires must be a list of module names")
        out[name] = dict(meta)
    return out


def _from_entry_point(ep: EntryPoint | Any) -> Plugin:
    dist = getattr(ep, "dist", None)
    dname = str(dist.name) if dist is not None else ""
    base = {"entry_point": f"{ep.name} = {ep.value}", "distribution": dname,
            "version": str(dist.version) if dist is not None else "",
            "builtin": dname.lower().replace("_", "-") == BUILTIN_DIST}
    try:
        obj = ep.load()
        manifest = obj() if callable(obj) else obj
        if not isinstance(manifest, dict) or "name" not in manifest:
            raise TypeError("manifest must be a dict with at least 'name'")
        provides = manifest.get("provides", {}) or {}
        if not isinstance(provides, dict):
            raise TypeError("manifest 'provides' must be a mapping kind -> names")
        items = {str(k): _items(str(k), v) for k, v in provides.items()}
        requires = manifest.get("requires", []) or []
        if not isinstance(requires, list):
            raise TypeError("manifest 'requires' must be a list of module names")
        messages = manifest.get("messages") or {}
        if messages and not (isinstance(messages, dict) and all(isinstance(messages.get(k), str)
                                                                 for k in ("domain", "locale"))
                             and _PKG_PATH.match(messages["locale"])):
            raise TypeError("manifest 'messages' must be {'domain': NAME, 'locale': 'package:folder'}")
        plugin = Plugin(name=str(manifest["name"]), provides={k: list(v) for k, v in items.items()},
                        module=manifest.get("module"), description=str(manifest.get("description", "")),
                        requires=[str(r) for r in requires], hint=str(manifest.get("hint", "")),
                        messages=dict(messages), contributions=[], **base)
        plugin.contributions = [Contribution(k, n, plugin, meta) for k, v in items.items() for n, meta in v.items()]
        return plugin
    except Exception as exc:
        return Plugin(name=ep.name, error=_one_line(exc), detail=_detail(exc), **base)


def _mark_duplicates(plugins: list[Plugin]) -> None:
    taken: dict[tuple[str, str], str] = {}
    for p in plugins:
        for c in p.contributions:
            if c.kind not in _UNIQUE_KINDS:
                continue
            owner = taken.setdefault((c.kind, c.name), p.name)
            if owner != p.name:
                c.fail(f"{c.kind} '{c.name}' is already provided by plugin '{owner}'")


_CACHE: list[Plugin] | None = None


def discover(refresh: bool = False) -> list[Plugin]:
    """All plugins registered in the environment, built-in ones first (they register the same way)."""
    global _CACHE
    if _CACHE is None or refresh:
        plugins = [_from_entry_point(ep) for ep in entry_points(group=GROUP)]
        plugins.sort(key=lambda p: (not p.builtin, p.name))
        _mark_duplicates(plugins)
        _CACHE = plugins
    return _CACHE


def providers(kind: str) -> list[tuple[Plugin, str]]:
    """(plugin, name) pairs for everything of ``kind`` ("targets", "verifiers", ...) working plugins provide."""
    return [(c.plugin, c.name) for c in contributions(kind)]


def find(name: str) -> Plugin | None:
    return next((p for p in discover() if p.name == name), None)


def contributions(kind: str | None = None) -> list[Contribution]:
    """Contributions of ``kind`` (all kinds when None) whose plugin and own record carry no error yet."""
    return [c for p in discover() if p.ok for c in p.contributions
            if (kind is None or c.kind == kind) and c.error is None]


def contribution(kind: str, name: str) -> Contribution | None:
    """The one contribution of that kind and name (any state), or None."""
    return next((c for p in discover() for c in p.contributions if c.kind == kind and c.name == name), None)


def resolve(kind: str, name: str) -> Any:
    """The contribution itself (imported now if not yet); PluginError when absent or broken."""
    c = contribution(kind, name)
    if c is None:
        known = ", ".join(sorted(x.name for x in contributions(kind))) or "none"
        raise PluginError(f"no plugin provides {kind} '{name}'", offending=name,
                          hint=f"installed {kind}: {known}; `studio plugins` lists every plugin")
    return c.resolve()


def target_sources(include_builtin: bool = False) -> list[tuple[Contribution, Any]]:
    """Every resolvable target contribution with what it resolved to (Path per YAML file, or a profile /
    profile mapping); failing ones are skipped, their error kept for `studio plugins`. Built-in targets are
    read by the inspector from its resources folder, so they are left out unless asked for."""
    out: list[tuple[Contribution, Any]] = []
    for c in contributions("targets"):
        if (c.plugin.builtin and not include_builtin) or c.state()[0] == "unavailable":
            continue
        try:
            value = c.resolve()
        except PluginError:
            continue
        for v in value if isinstance(value, (list, tuple)) else [value]:
            out.append((c, Path(v) if isinstance(v, str) else v))
    return out


def check_all(kinds: tuple[str, ...] | None = None) -> list[Contribution]:
    """Resolve every typed, available contribution now (``studio plugins --check``); returns the failed ones."""
    failed: list[Contribution] = []
    for p in discover():
        for c in p.contributions:
            if not c.typed or (kinds and c.kind not in kinds) or c.state()[0] in ("unavailable", "loaded"):
                continue
            try:
                c.resolve()
            except PluginError:
                failed.append(c)
    return failed
