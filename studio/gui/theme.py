"""Light and dark themes: Fusion style, a matching palette and a QSS file from studio/resources/themes/.

Widgets that need a themed look set a dynamic ``role`` property (``error``, ``muted``, ``heading``, ``banner-ok``,
``banner-fail``, ``card``, ``primary``) and the QSS styles it; code that paints by hand (graph snippets) asks
``colors()`` for the current theme's colours.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory, QWidget

from studio.core.paths import resource_folder

THEMES = ("light", "dark")

_PALETTES: dict[str, dict[str, str]] = {
    "light": {"window": "#f4f5f7", "base": "#ffffff", "alt": "#f0f2f5", "text": "#1f2328", "muted": "#656d76",
              "button": "#ffffff", "highlight": "#2f6fde", "htext": "#ffffff", "border": "#d0d7de",
              "ok": "#1a7f37", "fail": "#cf222e", "warn": "#9a6700", "node": "#eef2f8", "focus": "#ffebe9"},
    "dark": {"window": "#1e2228", "base": "#16191e", "alt": "#22262d", "text": "#e6edf3", "muted": "#9198a1",
             "button": "#2a2f37", "highlight": "#3d7be0", "htext": "#ffffff", "border": "#3a414b",
             "ok": "#3fb950", "fail": "#f85149", "warn": "#d29922", "node": "#262c35", "focus": "#4a1e1e"},
}


def themes_dir() -> Path:
    return resource_folder("themes", "*.qss")


def current_theme() -> str:
    app = QApplication.instance()
    name = app.property("studio_theme") if app is not None else None
    return name if name in THEMES else "light"


def colors(theme: str | None = None) -> dict[str, QColor]:
    """Named colours of a theme (the current one by default) for hand-painted widgets."""
    return {k: QColor(v) for k, v in _PALETTES[theme or current_theme()].items()}


def load_qss(theme: str) -> str:
    """The theme's style sheet; a missing file gives an empty sheet (the palette still applies)."""
    path = themes_dir() / f"{theme}.qss"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return ""
    return text.replace("@THEMES@", themes_dir().resolve().as_posix())


def apply_theme(app: QApplication, theme: str) -> str:
    """Switch the whole application to ``theme``; returns the name applied."""
    theme = theme if theme in THEMES else "light"
    c = _PALETTES[theme]
    app.setStyle(QStyleFactory.create("Fusion"))
    pal = QPalette()
    roles = {QPalette.ColorRole.Window: c["window"], QPalette.ColorRole.WindowText: c["text"],
             QPalette.ColorRole.Base: c["base"], QPalette.ColorRole.AlternateBase: c["alt"],
             QPalette.ColorRole.Text: c["text"], QPalette.ColorRole.Button: c["button"],
             QPalette.ColorRole.ButtonText: c["text"], QPalette.ColorRole.Highlight: c["highlight"],
             QPalette.ColorRole.HighlightedText: c["htext"], QPalette.ColorRole.ToolTipBase: c["base"],
             QPalette.ColorRole.ToolTipText: c["text"], QPalette.ColorRole.PlaceholderText: c["muted"],
             QPalette.ColorRole.Link: c["highlight"]}
    for role, value in roles.items():
        pal.setColor(role, QColor(value))
    dark = theme == "dark"
    shades = {QPalette.ColorRole.Light: "#4a525d" if dark else "#ffffff",
              QPalette.ColorRole.Midlight: "#3a414b" if dark else "#e6e9ed",
              QPalette.ColorRole.Mid: "#5b6470" if dark else "#b4bcc6",
              QPalette.ColorRole.Dark: "#7d8590" if dark else "#8c959f",
              QPalette.ColorRole.Shadow: "#000000" if dark else "#6e7781"}
    for role, value in shades.items():
        pal.setColor(role, QColor(value))
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor(c["muted"]))
    app.setPalette(pal)
    app.setProperty("studio_theme", theme)
    app.setStyleSheet(load_qss(theme))
    return theme


def set_role(widget: QWidget, role: str) -> None:
    """Give a widget a QSS role and re-polish it so the change shows at once."""
    widget.setProperty("role", role)
    style = widget.style()
    style.unpolish(widget)
    style.polish(widget)
    widget.update()
