"""The QColor / QPen / QFont objects one theme paints with, made once (constructing them per paint costs)."""

from __future__ import annotations

from PySide6.QtGui import QColor, QFontMetricsF

from studio.gui.fonts import graph_font
from studio.gui.graph import palette
from studio.gui.graph.lod import LAYER_GROUP_PX, LAYER_PX, OP_PX, SMALL_PX


class Theme:
    """QColor/QPen/QFont objects for one theme, made once (constructing them per paint is measurable).
    Fonts are sized in pixels (lod.py's thresholds are those sizes), with fallbacks for other scripts."""

    def __init__(self, theme: str) -> None:
        self.name = theme
        vc = palette.verdict_colors(theme)
        self.solid = [QColor(vc[v][0]) for v in palette.VERDICTS]
        self.fill = [QColor(vc[v][1]) for v in palette.VERDICTS]
        self.border = [QColor(vc[v][2]) for v in palette.VERDICTS]
        self.heat = [QColor(c) for c in palette.heat_ramp(10)]
        self.canvas = QColor(palette.CANVAS[theme][0])
        self.edge = QColor(palette.EDGE[theme])
        self.dynamic = QColor(palette.DYNAMIC[theme])
        self.selection = QColor(palette.SELECTION[theme])
        self.match = QColor(palette.MATCH[theme])
        self.text, self.muted = (QColor(c) for c in palette.TEXT[theme])
        self.on_dark, self.on_dark_muted = QColor("#ffffff"), QColor(255, 255, 255, 210)
        self.io_fill, self.io_text = (QColor(c) for c in palette.IO_NODE[theme])
        self.font_op = graph_font(OP_PX, bold=True)
        self.font_small = graph_font(SMALL_PX)
        self.font_layer = graph_font(LAYER_PX, bold=True)
        self.font_layer_group = graph_font(LAYER_GROUP_PX, bold=True)
        self.fm_op = QFontMetricsF(self.font_op)
        self.fm_small = QFontMetricsF(self.font_small)
        self.fm_layer = QFontMetricsF(self.font_layer)
        self.fm_layer_group = QFontMetricsF(self.font_layer_group)
