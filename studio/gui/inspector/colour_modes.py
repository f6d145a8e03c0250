"""What the inspector's graph and Netron tab are coloured by: verdicts of the current target, the values of the
heat hook (``set_heat``), or the profiled time per node; and the legend that explains the colours shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication

from studio.gui.inspector.profile_format import fmt_ms

if TYPE_CHECKING:
    from studio.gui.pages.inspect_page import InspectPage


class ColourModes:
    """Applies the colour mode chosen in the page's toolbar to both views and the legend."""

    def __init__(self, page: InspectPage) -> None:
        self.page = page
        self.heat: dict[str, float] | None = None  # values of the heat hook: node name -> number
        self.heat_label = "heat"

    def set_heat(self, values: dict[str, float] | None, label: str = "heat") -> None:
        """Node name -> number (e.g. ms); enables the heat mode and switches to it (None: back to verdicts)."""
        toolbar = self.page.toolbar
        self.heat = dict(values) if values else None
        self.heat_label = label
        toolbar.set_mode_available("heat", bool(values),
                                   QCoreApplication.translate("Inspector", "Colour: {label}").format(label=label))
        toolbar.set_mode("heat" if values else "verdict")
        self.apply()

    def apply(self) -> None:
        """Paint both views in the chosen mode; the legend shows the verdicts or the heat scale."""
        page = self.page
        mode = page.toolbar.mode()
        values: dict[str, float] | None = None
        netron_values: dict[str, float] | None = None
        if mode == "heat" and self.heat:
            values = netron_values = self.heat
        elif mode == "profile" and page.profiler.report is not None:
            values, netron_values = page.profiler.heat(), page.profiler.netron_heat()
        page.view.set_heat(values, "sum" if mode == "profile" else "max")  # time adds up, an error does not
        if page.netron is not None:
            page.netron.set_heat(netron_values)
        if values is None:
            page.legend.show_scale(None)
        elif mode == "profile":
            page.legend.show_scale((QCoreApplication.translate("Inspector", "time per node"), "0 ms", f"{fmt_ms(page.profiler.slowest_ms())} ms"),
                                   no_time=True)
        else:
            title = self.heat_label
            page.legend.show_scale((title, "0", f"{max(values.values(), default=0.0):g}"))


__all__ = ["ColourModes"]
