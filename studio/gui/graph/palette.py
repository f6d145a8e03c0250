"""Verdict and heat colours shared by the native view and the Netron tab (hex strings, so JS can use them)."""

from __future__ import annotations

VERDICTS = ("none", "supported", "risky", "unsupported", "unknown")
VERDICT_INDEX = {v: i for i, v in enumerate(VERDICTS)}

# per verdict: solid (low zoom and legend), fill and border (zoomed in), per theme
_VERDICT_COLORS: dict[str, dict[str, tuple[str, str, str]]] = {
    "light": {
        "none": ("#98a4b8", "#eef2f8", "#7d8aa0"),
        "supported": ("#3fae6a", "#dcf3e4", "#2f9158"),
        "risky": ("#e9a516", "#fdf0cc", "#c48a0c"),
        "unsupported": ("#e0524d", "#fbdcdb", "#c53a35"),
        "unknown": ("#8b7fc7", "#e9e6f7", "#7467b3"),
    },
    "dark": {
        "none": ("#5d6878", "#2a303a", "#6b778a"),
        "supported": ("#3fb36b", "#1d3527", "#3fa764"),
        "risky": ("#e0a11b", "#3b3119", "#d29922"),
        "unsupported": ("#f0605a", "#421f1f", "#e5534b"),
        "unknown": ("#9b8fe0", "#2b2740", "#8b7fd0"),
    },
}

DYNAMIC = {"light": "#e8590c", "dark": "#ff8a3d"}
SELECTION = {"light": "#2f6fde", "dark": "#5b9bff"}
MATCH = {"light": "#ffd43b", "dark": "#ffd43b"}
CANVAS = {"light": ("#fbfcfd", "#e8ecf1"), "dark": ("#14171c", "#20252c")}  # background, grid dots
EDGE = {"light": "#8c96a5", "dark": "#6f7a89"}
TEXT = {"light": ("#1f2328", "#5b6470"), "dark": ("#e6edf3", "#9aa4b1")}  # primary, muted
IO_NODE = {"light": ("#39424f", "#ffffff"), "dark": ("#c7ced8", "#14171c")}  # fill, text

VERDICT_LABELS = {"none": "not inspected", "supported": "supported", "risky": "risky",
                  "unsupported": "unsupported", "unknown": "unknown"}


def verdict_colors(theme: str = "light") -> dict[str, tuple[str, str, str]]:
    return _VERDICT_COLORS.get(theme, _VERDICT_COLORS["light"])


def heat_ramp(steps: int = 10) -> list[str]:
    """Cool-to-hot ramp for per-op heat (profiling time share): pale blue through amber to red."""
    stops = [(0.0, (0xe3, 0xee, 0xfa)), (0.5, (0xf6, 0xc3, 0x4f)), (1.0, (0xd6, 0x33, 0x2e))]
    out = []
    for i in range(steps):
        t = i / max(steps - 1, 1)
        for (t0, c0), (t1, c1) in zip(stops, stops[1:], strict=False):
            if t0 <= t <= t1:
                f = (t - t0) / (t1 - t0)
                rgb = tuple(round(a + (b - a) * f) for a, b in zip(c0, c1, strict=True))
                out.append("#{:02x}{:02x}{:02x}".format(*rgb))
                break
    return out


def current_theme() -> str:
    """The application's theme, or "light" where the theme module is not in use (the widget alone)."""
    try:
        from studio.gui.theme import current_theme as app_theme

        return app_theme()
    except Exception:  # the theme module is optional for this widget
        return "light"
