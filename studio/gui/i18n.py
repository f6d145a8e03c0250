"""The GUI's language: which one (the saved choice, else STUDIO_LANGUAGE, else the system locale) and the
QTranslator that draws it.

Strings are wrapped with ``self.tr`` / ``QCoreApplication.translate`` in the widgets; the catalogue is
``studio/gui/translations/studio_<code>.ts`` (edited with Qt's tools, ``make translations`` refreshes it and
builds the ``.qm`` next to it). English is the source language: it needs no catalogue and is always the fallback.
A broken ``.qm`` or an unknown language code never stops the studio: ``apply`` installs English and returns the
message the window shows in its status bar and log.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

from studio.core import language as _language
from studio.core.language import (  # the one rule, shared with the CLI (studio.core.catalogue)
    ENGLISH,
    ENV_OVERRIDE,
    LANGUAGES,
    SYSTEM,
    Choice,
    normalize,
    save_language,
    saved_language,
    unknown_message,
)

log = logging.getLogger(__name__)

TRANSLATIONS_DIR = Path(__file__).resolve().parent / "translations"


def _qt_locale() -> str:
    return QLocale.system().name()


def system_language(env: Mapping[str, str] | None = None) -> str:
    """The locale the environment asks for (LANGUAGE, LC_ALL, LC_MESSAGES, LANG, as gettext reads them), else
    Qt's idea of the system locale."""
    return _language.system_language(env, _qt_locale)


def resolve(setting: str | None = SYSTEM, env: Mapping[str, str] | None = None) -> Choice:
    """Which language to draw for the saved ``setting`` (a code or ``system``) in ``env`` (studio.core.language)."""
    return _language.resolve(setting, env, _qt_locale)


def qm_path(code: str, folder: Path | None = None) -> Path:
    return (folder or TRANSLATIONS_DIR) / f"studio_{code}.qm"


def lrelease() -> str | None:
    """Qt's ``lrelease`` (shipped inside PySide6, also as ``pyside6-lrelease`` in the venv)."""
    import PySide6

    inside = Path(PySide6.__file__).parent / "lrelease"
    return str(inside) if inside.is_file() else shutil.which("pyside6-lrelease") or shutil.which("lrelease")


def build_qm(ts: Path, qm: Path) -> str | None:
    """Compile ``ts`` into ``qm`` with lrelease; the error text, or None when it worked."""
    tool = lrelease()
    if tool is None:
        return "lrelease is not installed (it comes with PySide6)"
    try:
        done = subprocess.run([tool, "-silent", str(ts), "-qm", str(qm)], capture_output=True, text=True,
                              timeout=120)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{tool}: {exc}"
    if done.returncode != 0 or not qm.is_file():
        return (done.stderr or done.stdout).strip() or f"{tool} exited {done.returncode}"
    return None


def ensure_qm(code: str, folder: Path | None = None) -> Path:
    """The ``.qm`` for ``code``: built from its ``.ts`` when missing or older (a git checkout without
    `make`); into the cache folder when the package folder is read-only."""
    qm = qm_path(code, folder)
    ts = qm.with_suffix(".ts")
    if not ts.is_file() or (qm.is_file() and qm.stat().st_mtime >= ts.stat().st_mtime):
        return qm
    if build_qm(ts, qm) is None:
        return qm
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "deployment-studio" / "translations"
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:
        return qm
    cached = cache / qm.name
    if not cached.is_file() or cached.stat().st_mtime < ts.stat().st_mtime:
        build_qm(ts, cached)
    return cached if cached.is_file() else qm


class Translator:
    """Installs and removes the studio's QTranslator (and Qt's own, for standard dialog buttons)."""

    def __init__(self) -> None:
        self.code = ENGLISH
        self._installed: list[QTranslator] = []

    def apply(self, code: str, folder: Path | None = None) -> str | None:
        """Draw ``code`` from now on (widgets get QEvent.LanguageChange); English and a message on failure. The
        core's message catalogue (studio.core.catalogue: error frames, job status and log lines) follows."""
        from studio.core import catalogue

        failed = self._apply(code, folder)
        catalogue.use(self.code)  # no .po for the language: its messages stay English, the widgets do not
        return failed

    def _apply(self, code: str, folder: Path | None) -> str | None:
        from studio.gui.fonts import apply_ui_font

        app = QCoreApplication.instance()
        self._remove(app)
        self.code = ENGLISH
        apply_ui_font(ENGLISH)
        if code == ENGLISH:
            return None
        if code not in LANGUAGES:
            return self._warn(unknown_message(code, "the language menu"))
        path = ensure_qm(code, folder)
        if not path.is_file():
            return self._warn(f"the {LANGUAGES[code]} translation {path} is missing: showing English; "
                              "build it with `make translations`")
        tr = QTranslator(app)
        if not tr.load(str(path)) or tr.isEmpty():
            return self._warn(f"the {LANGUAGES[code]} translation {path} cannot be read (not a Qt .qm file): "
                              "showing English; rebuild it with `make translations`")
        qt_own = QTranslator(app)
        if not qt_own.load(f"qtbase_{code}", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
            qt_own = None
        for t in (qt_own, tr):
            if t is not None and app is not None:
                app.installTranslator(t)
                self._installed.append(t)
        self.code = code
        no_font = apply_ui_font(code)  # the language's font; the package to install when there is none
        return self._warn(no_font) if no_font else None

    def _remove(self, app: QCoreApplication | None) -> None:
        for t in self._installed:
            if app is not None:
                app.removeTranslator(t)
        self._installed.clear()

    def _warn(self, message: str) -> str:
        log.warning(message)
        return message


_TRANSLATOR: Translator | None = None


def translator() -> Translator:
    """The application's one Translator (kept here so the QTranslators outlive the call that made them)."""
    global _TRANSLATOR
    if _TRANSLATOR is None:
        _TRANSLATOR = Translator()
    return _TRANSLATOR


def install(setting: str | None = SYSTEM, env: Mapping[str, str] | None = None) -> Choice:
    """Resolve and install the language at start-up; ``Choice.warning`` holds what the user should be told."""
    choice = resolve(setting, env)
    failed = translator().apply(choice.code)
    if failed:  # English (a broken or missing .qm), or the language without a font to draw it
        return Choice(current(), choice.source, failed)
    return choice


def current() -> str:
    return translator().code


__all__ = ["ENGLISH", "ENV_OVERRIDE", "LANGUAGES", "SYSTEM", "TRANSLATIONS_DIR", "Choice", "Translator", "current",
           "install", "normalize", "qm_path", "resolve", "save_language", "saved_language", "system_language",
           "translator"]
