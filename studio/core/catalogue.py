"""The CLI's messages in the user's language: stdlib gettext over ``studio/locale/<code>/LC_MESSAGES/studio.po``.

The language is the GUI's (studio.core.language: the saved View > Language choice, ``STUDIO_LANGUAGE``, the
locale variables). The ``.po`` is the source kept in git; its ``.mo`` is compiled here, by :func:`compile_po`,
on first use after the ``.po`` changed (next to it, or into the cache folder when the package is read-only), so
neither ``msgfmt`` nor babel is needed. ``_("English text")`` returns the translation, or the text itself when
the catalogue has none: English is the source and the fallback. Machine-readable output (``--json``), flag
names, ids, paths and op names never go through here.

A plugin ships its own catalogue: its manifest's ``"messages": {"domain": D, "locale": "package:folder"}``
names ``folder/<code>/LC_MESSAGES/D.po`` (read without importing the plugin), which joins the studio's as a
gettext fallback, so the core never needs to know a plugin's strings. ``N_("...")`` marks a text that is
translated later, where it is shown (a reason kept in a report); the extractor reads those marks too.
"""

from __future__ import annotations

import gettext
import os
import re
import struct
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from studio.core import errors, language
from studio.core.jobs import ToolLine
from studio.core.message_templates import TemplateMatcher

LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
DOMAIN = "studio"

_current: gettext.NullTranslations | None = None
_code = language.ENGLISH
_env_key: tuple[str | None, ...] = ()  # the language variables the choice was made under
_warned: set[str] = set()


@dataclass
class Entry:
    """One ``msgid``/``msgstr`` pair of a ``.po`` file and its flags (``fuzzy``)."""

    msgid: str
    msgstr: str
    flags: set[str] = field(default_factory=set)
    line: int = 0


_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": "\r"}


def _unquote(text: str, where: str) -> str:
    text = text.strip()
    if len(text) < 2 or not (text.startswith('"') and text.endswith('"')):
        raise ValueError(f"{where}: expected a quoted string, got {text!r}")
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), text[1:-1])


def parse_po(text: str, name: str = "studio.po") -> list[Entry]:
    """The entries of a ``.po`` file (msgid/msgstr with continuation lines and flags; no plurals, no contexts)."""
    entries: list[Entry] = []
    flags: set[str] = set()
    cur: Entry | None = None
    part = ""
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or (line.startswith("#") and not line.startswith("#,")):
            continue
        if line.startswith("#,"):
            flags |= {f.strip() for f in line[2:].split(",") if f.strip()}
            continue
        if line.startswith(("msgctxt", "msgid_plural")):
            raise ValueError(f"{name}:{n}: {line.split()[0]} is not supported by the studio's catalogue")
        if line.startswith("msgid "):
            cur = Entry(_unquote(line[6:], f"{name}:{n}"), "", flags, n)
            entries.append(cur)
            flags, part = set(), "msgid"
        elif line.startswith("msgstr "):
            if cur is None:
                raise ValueError(f"{name}:{n}: msgstr without a msgid")
            cur.msgstr, part = _unquote(line[7:], f"{name}:{n}"), "msgstr"
        elif line.startswith('"') and cur is not None:
            if part == "msgid":
                cur.msgid += _unquote(line, f"{name}:{n}")
            else:
                cur.msgstr += _unquote(line, f"{name}:{n}")
        else:
            raise ValueError(f"{name}:{n}: cannot read {line!r}")
    return entries


def compile_po(po: Path, mo: Path) -> int:
    """Write the GNU ``.mo`` of ``po`` (what ``msgfmt`` makes, less fuzzy and empty entries); the count written."""
    pairs = {e.msgid: e.msgstr for e in parse_po(po.read_text(encoding="utf-8"), po.name)
             if e.msgstr and "fuzzy" not in e.flags}
    keys = sorted(pairs)
    ids = [k.encode("utf-8") for k in keys]
    strs = [pairs[k].encode("utf-8") for k in keys]
    n = len(keys)
    ids_at = 7 * 4
    strs_at = ids_at + n * 8
    data_at = strs_at + n * 8
    table_ids, table_strs, blob = [], [], b""
    for raw in ids:
        table_ids.append((len(raw), data_at + len(blob)))
        blob += raw + b"\0"
    for raw in strs:
        table_strs.append((len(raw), data_at + len(blob)))
        blob += raw + b"\0"
    out = struct.pack("<7I", 0x950412DE, 0, n, ids_at, strs_at, 0, data_at)
    out += b"".join(struct.pack("<2I", *t) for t in table_ids + table_strs) + blob
    tmp = mo.with_name(f"{mo.name}.{os.getpid()}.tmp")  # two first runs at once each write their own
    tmp.write_bytes(out)
    tmp.replace(mo)
    return n


def po_path(code: str, folder: Path | None = None, domain: str = DOMAIN) -> Path:
    return (folder or LOCALE_DIR) / code / "LC_MESSAGES" / f"{domain}.po"


@dataclass(frozen=True)
class Domain:
    """One message catalogue: ``folder/<code>/LC_MESSAGES/<name>.po``, covering the call sites under ``sources``
    (the package studio.core.message_extract reads); ``plugin``: the plugin that registered it ("" the studio)."""

    name: str
    folder: Path
    sources: Path
    plugin: str = ""


def studio_domain() -> Domain:
    return Domain(DOMAIN, LOCALE_DIR, Path(__file__).resolve().parents[1])


def plugin_domains() -> list[Domain]:
    """The catalogues plugins register in their manifests (``messages``), found without importing the plugins;
    a plugin whose package cannot be found is left out (its manifest's own error is ``studio plugins``')."""
    import importlib.util

    from studio.core import plugins

    found: list[Domain] = []
    for p in plugins.discover():
        if not p.messages or p.error:
            continue
        package, _sep, rel = p.messages["locale"].partition(":")
        try:
            spec = importlib.util.find_spec(package.split(".")[0])
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.submodule_search_locations:
            continue
        base = Path(list(spec.submodule_search_locations)[0]).joinpath(*package.split(".")[1:])
        found.append(Domain(p.messages["domain"], base / rel, base, p.name))
    return found


def N_(message: str) -> str:  # noqa: N802 - gettext's name for the no-op mark
    """``message`` itself: marks a text for the catalogue (message_extract) that is translated where it is shown."""
    return message


def ensure_mo(code: str, folder: Path | None = None, domain: str = DOMAIN) -> Path | None:
    """The compiled catalogue of ``code``, built when missing or older than its ``.po``; None when there is none."""
    po = po_path(code, folder, domain)
    mo = po.with_suffix(".mo")
    if not po.is_file():
        return mo if mo.is_file() else None
    if mo.is_file() and mo.stat().st_mtime >= po.stat().st_mtime:
        return mo
    try:
        compile_po(po, mo)
        return mo
    except OSError:  # a read-only install: the user's cache folder
        from studio.core.paths import cache_dir

        cached = cache_dir() / "locale" / code / f"{domain}.mo"
        if cached.is_file() and cached.stat().st_mtime >= po.stat().st_mtime:
            return cached
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            compile_po(po, cached)
            return cached
        except OSError:
            return None


def use(code: str, folder: Path | None = None, plugins: list[Domain] | None = None) -> str | None:
    """Speak ``code`` from now on (the studio's catalogue, then each plugin's); English and the reason when the
    studio's cannot be read, that plugin's messages in English and the reason when a plugin's cannot.
    ``plugins``: the plugin catalogues (default: the installed plugins', :func:`plugin_domains`)."""
    global _current, _code, _env_key
    _current, _code, _env_key = gettext.NullTranslations(), language.ENGLISH, _env_now()
    if code == language.ENGLISH:
        return None
    try:
        mo = ensure_mo(code, folder)
        if mo is None:
            return f"the {code} message catalogue is missing: speaking English"
        with mo.open("rb") as fh:
            _current, _code = gettext.GNUTranslations(fh), code
    except (OSError, ValueError, struct.error) as exc:
        return f"the {code} message catalogue cannot be read ({exc}): speaking English"
    problems = []
    for d in plugin_domains() if plugins is None else plugins:
        try:
            mo = ensure_mo(code, d.folder, d.name)
            if mo is not None:
                with mo.open("rb") as fh:
                    _current.add_fallback(gettext.GNUTranslations(fh))
        except (OSError, ValueError, struct.error) as exc:
            problems.append(f"the {code} messages of plugin {d.plugin} cannot be read ({exc}): they stay English")
    return "; ".join(problems) or None


def _env_now() -> tuple[str | None, ...]:
    return tuple(os.environ.get(v) for v in (language.ENV_OVERRIDE, *language.LOCALE_VARS))


def _saved_setting() -> str:
    from studio.core.settings import Settings

    return language.saved_language(Settings.load())


def init(setting: str | None = None, env: Mapping[str, str] | None = None, warn: bool = True) -> language.Choice:
    """Resolve the language (the saved choice when ``setting`` is None) and use it; a problem is printed once
    to stderr as ``warning: ...``, in English."""
    choice = language.resolve(_saved_setting() if setting is None else setting, env)
    failed = use(choice.code)
    message = choice.warning or failed
    if message and warn and message not in _warned:
        _warned.add(message)
        print(f"warning: {message}", file=sys.stderr)
    return choice


def current() -> str:
    if _current is None or _env_key != _env_now():
        init()
    return _code


def _(message: str) -> str:
    """``message`` in the user's language (itself when untranslated); the language is decided on first use,
    and again when STUDIO_LANGUAGE or a locale variable changed since (a test, an embedding process)."""
    if _current is None or _env_key != _env_now():
        init()
    assert _current is not None
    if not message:
        return message
    text = _current.gettext(message)
    if text is message and _code != language.ENGLISH:  # no entry: an f-string's message, through its template
        text = _templates().translate(message) or message
    return text


_matcher: tuple[object, TemplateMatcher] | None = None


def _templates() -> TemplateMatcher:
    """The current catalogue's templates (built once per catalogue: a few hundred regular expressions)."""
    global _matcher
    if _matcher is None or _matcher[0] is not _current:
        pairs: list[tuple[str, str]] = []
        t: object = _current
        while t is not None:  # the studio's catalogue, then the plugins' (gettext fallbacks)
            pairs += [(k, v) for k, v in getattr(t, "_catalog", {}).items() if isinstance(k, str)]
            t = getattr(t, "_fallback", None)
        _matcher = (_current, TemplateMatcher(pairs, nested=_nested))
    return _matcher[1]


def part(text: str) -> str:
    """A piece of a message (what a NESTED placeholder holds: a reason, a profile's sentence) in the user's language:
    its entry, or a template whose own words are at least half of it (a short template never half-translates a
    longer sentence it happens to match); else the piece as it is."""
    if _current is None or _env_key != _env_now():
        init()
    return _nested(text) if text else text


def _nested(value: str) -> str:
    """A NESTED placeholder's value (studio.core.message_templates): its entry, or a template that covers it."""
    text = _current.gettext(value) if _current is not None else value
    if text is value and _code != language.ENGLISH:
        text = _templates().translate(value, covering=True) or value
    return text


def job_text(text: object) -> str:
    """A job's status or log line (studio.core.jobs) in the user's language, for the GUI's panels and the CLI's
    progress lines: its entry, or its template's (studio.core.message_extract reads the job call sites) with the
    values kept. A ToolLine (a tool's own output) and very long lines (tool output too) come back as they are."""
    if isinstance(text, ToolLine) or not isinstance(text, str) or len(text) > 2000:
        return str(text)
    return _(text)


def tr(template: str, /, **values: object) -> str:
    """``_(template).format(**values)``: the template is what the catalogue holds."""
    return _(template).format(**values)


errors.set_translator(_)  # StudioError.render speaks the same language


__all__ = ["DOMAIN", "LOCALE_DIR", "Domain", "Entry", "N_", "_", "compile_po", "current", "ensure_mo", "init",
           "job_text", "parse_po", "part", "plugin_domains", "po_path", "studio_domain", "tr", "use"]
