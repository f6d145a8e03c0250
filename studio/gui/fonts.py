"""Fonts that have the glyphs a model's names use: the application font, then installed families for the
scripts it lacks (CJK, Arabic, Devanagari ...), in the native graph view and in Netron's page alike.

Qt and Chromium fall back per glyph through fontconfig, but only to fonts that are installed: without one
that covers CJK a name such as ``视觉编码器/MatMul`` is drawn as boxes (tofu). ``uncovered`` finds the
characters no installed family has, so the view can say so (with the package to install) instead of showing
boxes quietly; ``studio.gui.platform_check`` names and, as root, installs the package.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from PySide6.QtGui import QFont, QFontDatabase, QFontInfo, QFontMetricsF
from PySide6.QtWidgets import QApplication

_WS = QFontDatabase.WritingSystem
# scripts model names are written in (module names, tensor names from other languages' exporters)
SCRIPTS = (_WS.SimplifiedChinese, _WS.Japanese, _WS.Korean, _WS.TraditionalChinese, _WS.Cyrillic, _WS.Greek,
           _WS.Arabic, _WS.Hebrew, _WS.Devanagari, _WS.Thai)
CJK_PACKAGE = "fonts-noto-cjk"  # Debian / Ubuntu: Noto Sans CJK (Chinese, Japanese, Korean)
# the region a pan-CJK family is drawn for (Noto Sans CJK SC / TC / JP / KR), preferred for that script
_REGION = {_WS.SimplifiedChinese: " sc", _WS.TraditionalChinese: " tc", _WS.Japanese: " jp", _WS.Korean: " kr"}


def _base_family() -> str:
    """The family the application font resolves to (``Sans Serif`` is an alias: ``DejaVu Sans`` here)."""
    app = QApplication.instance()
    return QFontInfo(app.font() if isinstance(app, QApplication) else QFont()).family()


def _pick(families: list[str], region: str = "") -> str | None:
    """A sans-serif, proportional family among ``families`` (Noto Sans first, the script's region variant
    first among those), else the first."""
    def rank(f: str) -> tuple[int, int, int, int, str]:
        low = f.lower()
        return (0 if low.startswith("noto sans") else 1, 0 if "sans" in low else 1,
                1 if "mono" in low or "serif" in low.replace("sans", "") else 0,
                0 if region and low.endswith(region) else 1, f)

    return min(families, key=rank) if families else None


@lru_cache(maxsize=4)
def fallback_families(base: str | None = None) -> tuple[str, ...]:
    """Installed families for the scripts ``base`` (the application font) lacks, one per script."""
    base = base or _base_family()
    have = set(QFontDatabase.writingSystems(base))
    out: list[str] = []
    for ws in SCRIPTS:
        if ws in have:
            continue
        pick = _pick(QFontDatabase.families(ws), _REGION.get(ws, ""))
        if pick and pick not in out and pick != base:
            out.append(pick)
    return tuple(out)


def families() -> list[str]:
    """The application font's family, then the fallbacks: what the graph view and Netron's page use."""
    base = _base_family()
    return [base, *fallback_families(base)]


def graph_font(px: int, bold: bool = False) -> QFont:
    """A font of ``px`` pixels (lod.py's thresholds are pixel sizes) with the script fallbacks."""
    f = QFont()
    f.setPixelSize(px)
    f.setBold(bold)
    f.setFamilies(families())
    return f


def css_font_family() -> str:
    """``"DejaVu Sans", "Noto Sans CJK SC", sans-serif``: the same families for a web page (Netron)."""
    names = [f.replace('"', "") for f in families()]
    return ", ".join(f'"{n}"' for n in names) + ", sans-serif"


@lru_cache(maxsize=4096)
def _covered(ch: str, fams: tuple[str, ...]) -> bool:
    code = ord(ch)
    for fam in fams:
        f = QFont()
        f.setFamily(fam)
        if QFontMetricsF(f).inFontUcs4(code):
            return True
    return False


def uncovered(texts: Iterable[str], limit: int = 20_000) -> list[str]:
    """Characters in ``texts`` (the first ``limit`` names) that no installed family draws: shown as boxes."""
    seen: set[str] = set()
    for k, t in enumerate(texts):
        if k >= limit:
            break
        if not t.isascii():
            seen.update(c for c in t if ord(c) > 0x7F and not c.isspace())
    fams = tuple(QFontDatabase.families())
    return sorted(c for c in seen if not _covered(c, fams))


def missing_font_hint(chars: list[str]) -> str:
    """What to install for ``chars`` (a CJK font for Han / kana / hangul, else a Noto family for the script)."""
    cjk = any(0x2E80 <= ord(c) <= 0x9FFF or 0xAC00 <= ord(c) <= 0xD7AF or 0xF900 <= ord(c) <= 0xFAFF
              for c in chars)
    pkg = CJK_PACKAGE if cjk else "fonts-noto-core"
    return f"install a font that has them (Debian / Ubuntu, as root: apt-get install {pkg})"


# the interface language -> the writing system its text needs and the region variant of a pan-CJK family
_UI_SCRIPTS = {"zh_CN": (_WS.SimplifiedChinese, " sc")}
_ui_base: QFont | None = None  # the application font before a language asked for another family


def apply_ui_font(language: str) -> str | None:
    """The application font for the interface ``language``: for zh_CN a Simplified Chinese family first (Noto Sans
    CJK SC), then the application's, so Han characters take their Chinese forms and not those of the first CJK
    family fontconfig finds (often the Japanese one), and line heights are the CJK font's (with the Latin font
    first, dock titles and tabs were sized for it and cut the taller Han glyphs); other languages get the font
    back as it was. Returns a message naming the package to install when no family draws the language."""
    global _ui_base
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        return None
    if _ui_base is None:
        _ui_base = QFont(app.font())
    script = _UI_SCRIPTS.get(language)
    if script is None:
        app.setFont(_ui_base)
        return None
    pick = _pick(QFontDatabase.families(script[0]), script[1])
    if pick is None:
        app.setFont(_ui_base)
        return (f"no installed font draws {language} text, so the interface shows boxes: "
                f"{missing_font_hint(['中'])}")
    font = QFont(_ui_base)
    font.setFamilies([pick, QFontInfo(_ui_base).family()])  # its metrics: CJK glyphs are taller than Latin ones
    app.setFont(font)
    return None


__all__ = ["CJK_PACKAGE", "SCRIPTS", "apply_ui_font", "css_font_family", "fallback_families", "families",
           "graph_font", "missing_font_hint", "uncovered"]
