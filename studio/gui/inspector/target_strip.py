"""The inspector's target strip: one chip per target with its overall verdict and counts, in a one-row
scroller (so many targets never widen the window); a click on a chip picks that target.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QSize, Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QScrollArea, QSizePolicy, QStyle, QToolButton, QWidget

from studio.gui.graph import palette
from studio.gui.inspector import details

# a tool's whole-model verdict on a chip: (line, verdict colour)
VERIFIED_LINES = {"runs": (QT_TRANSLATE_NOOP("TargetChip", "RUNS"), "supported"),
                  "host-fallback": (QT_TRANSLATE_NOOP("TargetChip", "RUNS"), "risky"),
                  "does-not-build": (QT_TRANSLATE_NOOP("TargetChip", "FAIL"), "unsupported"),
                  "tool-crashed": (QT_TRANSLATE_NOOP("TargetChip", "TOOL CRASHED"), "unknown"),
                  "unknown": (QT_TRANSLATE_NOOP("TargetChip", "UNKNOWN"), "unknown")}


class TargetChip(QToolButton):
    """One target in the summary strip: id, overall verdict and counts; click to switch to it."""

    def __init__(self, target: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.target = target
        self.setCheckable(True)
        self.setAutoRaise(False)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        # as wide as its text (at least 122 px): the strip scrolls sideways instead of eliding the counts; an
        # explicit minimum width would let the layout squeeze the chip to it
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.set_summary(None)

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        hint = super().sizeHint()
        return QSize(max(122, hint.width()), hint.height())

    def set_summary(self, summary: Any, theme: str = "light", eff: Any = None) -> None:
        """Show a TargetSummary of the report (None: not inspected yet); ``eff`` (studio.verify.effective) when
        a tool answered for this target: its whole-model verdict is the chip's, the profile's in the tooltip."""
        if summary is None:
            self.setText(f"{self.target}\n—")
            self._style("none", theme)
            self.setToolTip(self.tr("{target}: not inspected yet").format(target=self.target))
            return
        if eff is not None and eff.verified and eff.model is not None:
            self._show_verified(summary, eff, theme)
            return
        c = summary.counts
        if summary.verdict == "fail":
            line = self.tr("FAIL · {n} unsupp.").format(n=c.get("unsupported", 0))
        elif summary.verdict == "risky":
            line = self.tr("RISKY · {n} risky").format(n=c.get("risky", 0))
        elif summary.verdict == "unknown":
            line = self.tr("UNKNOWN · no op list") if c.get("unknown", 0) else self.tr("UNKNOWN")
        else:
            line = self.tr("PASS")
        self.setText(f"{self.target}\n{line}")
        self._style(details.SUMMARY_TO_VERDICT.get(summary.verdict, "unknown"), theme)
        counts = ", ".join(f"{QCoreApplication.translate('Verdicts', k)} {v}" for k, v in c.items())
        self.setToolTip(f"{summary.name}\n{summary.source}\n" + self.tr("nodes: {counts}").format(counts=counts))

    def _show_verified(self, summary: Any, eff: Any, theme: str) -> None:
        m = eff.model
        line, colour = VERIFIED_LINES.get(m.verdict, ("UNKNOWN", "unknown"))
        line = self.tr(line)
        if m.verdict == "host-fallback":
            line = self.tr("RUNS · {n} on host").format(n=len(m.host_nodes))
        self.setText(f"{self.target}\n{line} ✓")
        self._style(colour, theme)
        static = eff.static_model.summary() if eff.static_model is not None else summary.verdict
        self.setToolTip(self.tr("{summary}\nverified by {by}: the tool wins over the profile\n"
                                "the profile ({name}) said: {static}").format(summary=m.summary(), by=m.by, name=summary.name, static=static))

    def _style(self, verdict: str, theme: str) -> None:
        solid, fill, border = palette.verdict_colors(theme)[verdict]
        text = palette.TEXT[theme][0]
        self.setStyleSheet(
            f"QToolButton {{ background: {fill}; color: {text}; border: 1px solid {fill};"
            f" border-left: 4px solid {solid}; border-radius: 5px; padding: 3px 8px; text-align: left;"
            f" font-size: 9pt; }}"
            f" QToolButton:checked {{ border: 2px solid {palette.SELECTION[theme]};"
            f" border-left: 4px solid {solid}; }}"
            f" QToolButton:hover {{ border-color: {border}; }}")


class TargetStrip(QScrollArea):
    """The chips in a row of fixed height; ``sig_target_chosen`` carries the id of a clicked chip."""

    sig_target_chosen = Signal(str)

    def __init__(self, targets: list[str] | tuple[str, ...] = (), parent: QWidget | None = None) -> None:
        super().__init__(parent)
        host = QWidget()
        self.row = QHBoxLayout(host)
        self.row.setContentsMargins(0, 0, 0, 0)
        self.row.setSpacing(6)
        self.chips: dict[str, TargetChip] = {}
        for t in targets:
            self.add_chip(t)
        self.row.addStretch(1)
        self.setWidget(host)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # room for the chips and, below them, the sideways scroll bar (it never covers the counts)
        self.setFixedHeight(46 + self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent))

    def add_chip(self, target: str) -> TargetChip:
        """The chip of ``target``, added before the trailing stretch when it is new."""
        chip = self.chips.get(target)
        if chip is None:
            chip = TargetChip(target)
            chip.clicked.connect(lambda _c=False, t=target: self.sig_target_chosen.emit(t))
            self.chips[target] = chip
            self.row.insertWidget(len(self.chips) - 1, chip)
        return chip

    def check(self, target: str) -> None:
        """Mark ``target``'s chip as the current one (the others unchecked)."""
        for t, chip in self.chips.items():
            chip.setChecked(t == target)

    def set_summaries(self, report: Any, theme: str = "light") -> None:
        """Each chip shows its target's verdict in ``report`` (None, or a target it lacks: not inspected), the
        tool's where a verifier answered."""
        from studio.verify.effective import effective

        for t, chip in self.chips.items():
            summary = report.targets.get(t) if report is not None else None
            chip.set_summary(summary, theme, effective(report, t) if summary is not None else None)


__all__ = ["TargetChip", "TargetStrip"]
