"""Which language the studio speaks: one rule for the window and the CLI, without Qt.

The saved choice (``language`` in the settings, set by View > Language), else ``STUDIO_LANGUAGE``, else the
locale the environment asks for (``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG``, as gettext reads them),
else the system's own idea (the GUI passes Qt's; the CLI has none and falls back to English). English is the
source language and always the fallback; an unknown code is a mistake worth one message, an unsupported locale
(fr_FR) is not.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

SYSTEM = "system"  # the saved choice that follows the system locale
ENGLISH = "en"
# code -> the language's own name (menus show each language in itself)
LANGUAGES: dict[str, str] = {ENGLISH: "English", "zh_CN": "简体中文"}
ENV_OVERRIDE = "STUDIO_LANGUAGE"  # e.g. STUDIO_LANGUAGE=zh_CN studio gui (the tests pin it to en)
SETTING_KEY = "language"  # in studio.core.settings.Settings.extra
LOCALE_VARS = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
# locale aliases: the part before the encoding, lower case -> a code in LANGUAGES
_ALIASES = {"zh": "zh_CN", "zh_cn": "zh_CN", "zh_sg": "zh_CN", "zh_hans": "zh_CN", "zh_hans_cn": "zh_CN",
            "c": ENGLISH, "posix": ENGLISH}


@dataclass
class Choice:
    """The language to speak, where it came from, and a message when the request could not be honoured."""

    code: str
    source: str  # "setting" | "env" | "locale" | "default"
    warning: str | None = None


def normalize(code: str | None) -> str | None:
    """``zh_CN.UTF-8`` / ``zh-CN`` / ``zh`` -> ``zh_CN``, ``en_GB`` / ``C`` -> ``en``; None when not supported."""
    if not code:
        return None
    base = code.strip().split(".")[0].split("@")[0].replace("-", "_")
    if base in LANGUAGES:
        return base
    low = base.lower()
    if low in _ALIASES:
        return _ALIASES[low]
    if low == "en" or low.startswith("en_"):
        return ENGLISH
    return None


def system_language(env: Mapping[str, str] | None = None, fallback: Callable[[], str] | None = None) -> str:
    """The locale the environment asks for, else ``fallback()`` (Qt's system locale in the GUI), else ''."""
    env = os.environ if env is None else env
    for var in LOCALE_VARS:
        value = env.get(var, "").split(":")[0]
        if value:
            return value
    return fallback() if fallback is not None else ""


def saved_language(settings: object) -> str:
    """The choice saved in the View > Language menu (``system`` when none)."""
    extra = getattr(settings, "extra", None)
    value = extra.get(SETTING_KEY) if isinstance(extra, dict) else None
    return value if isinstance(value, str) and value else SYSTEM


def save_language(settings: object, choice: str) -> None:
    extra = getattr(settings, "extra", None)
    if isinstance(extra, dict):
        extra[SETTING_KEY] = choice


def resolve(setting: str | None = SYSTEM, env: Mapping[str, str] | None = None,
            fallback: Callable[[], str] | None = None) -> Choice:
    """Which language to speak for the saved ``setting`` (a code or ``system``) in ``env``."""
    env = os.environ if env is None else env
    if setting and setting != SYSTEM:
        code = normalize(setting)
        if code is None:
            return Choice(ENGLISH, "setting", unknown_message(setting, "the saved language setting"))
        return Choice(code, "setting")
    override = env.get(ENV_OVERRIDE, "")
    if override:
        code = normalize(override)
        if code is None:
            return Choice(ENGLISH, "env", unknown_message(override, ENV_OVERRIDE))
        return Choice(code, "env")
    # an unsupported system locale (fr_FR, ...) is not a mistake: English, quietly
    return Choice(normalize(system_language(env, fallback)) or ENGLISH, "locale")


def unknown_message(code: str, where: str) -> str:
    known = ", ".join(LANGUAGES)
    return (f"unknown language '{code}' ({where}): showing English; the studio has {known} "
            f"(choose one in View > Language, or {ENV_OVERRIDE}=zh_CN)")


__all__ = ["ENGLISH", "ENV_OVERRIDE", "LANGUAGES", "LOCALE_VARS", "SETTING_KEY", "SYSTEM", "Choice", "normalize",
           "resolve", "save_language", "saved_language", "system_language", "unknown_message"]
