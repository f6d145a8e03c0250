"""Measures as a reader wants them in a narrow cell: their unit, SI-scaled bytes, times in ms, three figures.

"5.422e+06 B/s" was cut to "5.422e+…" in the sources table; "5.42 MB/s" fits and reads. Formatting only: the
values are the collectors' (studio.telemetry), nothing is computed here.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QCoreApplication

_BYTES = ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"))
_RATE = ((1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"))


def _figures(v: float) -> str:
    """Three significant figures without an exponent: 0.0123, 1.23, 12.3, 123, 12,345."""
    a = abs(v)
    if a == 0 or (a < 1e6 and float(v).is_integer()):
        return f"{v:,.0f}"
    if a >= 1000:
        return f"{v:,.0f}"
    decimals = max(0, 2 - int(math.floor(math.log10(a))))
    text = f"{v:.{min(decimals, 6)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text  # 3.50 -> 3.5, 0.100 -> 0.1


def format_measure(value: float | None, unit: str) -> str:
    """``value`` in ``unit`` (S.UNITS) for a table cell; None is "not available", never 0."""
    if value is None or not math.isfinite(value):
        return QCoreApplication.translate("Plots", "not available")
    if unit == "B":
        for scale, name in _BYTES:
            if abs(value) >= scale:
                return f"{_figures(value / scale)} {name}"
        return f"{value:,.0f} B"
    if unit == "B/s":
        for scale, name in _RATE:
            if abs(value) >= scale:
                return f"{_figures(value / scale)} {name}"
        return f"{_figures(value)} B/s"
    if unit == "us":  # times read in ms everywhere on the page
        return f"{_figures(value / 1000.0)} ms"
    return f"{_figures(value)} {unit}".strip()


__all__ = ["format_measure"]
