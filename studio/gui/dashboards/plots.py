"""The Dashboards page's plot grid: x-linked plots, one unit each, drawn from a SeriesStore on the GUI thread.

Redraw cost must not grow with run length (DESIGN convention 7): each frame redraws only the series whose
buffers changed, min/max-decimated to the plot's pixel columns, and sets axis ranges once (paged and with
hysteresis). Violation bands are a pool of region items moved in place; the crosshair reads the drawn curves.

Readable at 1366x768: every plot has one unit (its axis), its legend in its title row (never over the data),
PLOT_H pixels of height while it has data (a plot with nothing to show folds to its title, which says why),
and the page scrolls past them: the wheel over the plots scrolls the page unless the plots were clicked
(focused) or Ctrl is held, then it zooms.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QLabel, QVBoxLayout, QWidget

from studio.gui.dashboards.values import format_measure
from studio.gui.theme import set_role
from studio.telemetry import samples as S
from studio.telemetry.ringbuffer import SeriesStore

TARGET_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
# plot id -> (title, [(series, style)]); one unit per plot (its axis): a plot's unit is its series' (S.UNITS)
_PLOT_SERIES: list[tuple[str, str, list[tuple[str, Any]]]] = [
    ("latency", QT_TRANSLATE_NOOP("Plots", "Latency"), [(S.LAT_P50, Qt.PenStyle.SolidLine), (S.LAT_P95, Qt.PenStyle.DashLine),
                            (S.LAT_P99, Qt.PenStyle.DotLine)]),
    ("throughput", QT_TRANSLATE_NOOP("Plots", "Throughput"), [(S.THROUGHPUT, Qt.PenStyle.SolidLine), (S.SERVER_RPS, Qt.PenStyle.DashLine)]),
    ("tokens", QT_TRANSLATE_NOOP("Plots", "Output tokens"), [(S.OUTPUT_TPS, Qt.PenStyle.SolidLine)]),
    ("memory", QT_TRANSLATE_NOOP("Plots", "Memory / VRAM"), [(S.MEM_PCT, Qt.PenStyle.SolidLine), (S.GPU_MEM_PCT, Qt.PenStyle.DashLine)]),
    ("power", QT_TRANSLATE_NOOP("Plots", "Power"), [(S.GPU_POWER, Qt.PenStyle.SolidLine), (S.BOARD_POWER, Qt.PenStyle.DashLine)]),
    ("stages", QT_TRANSLATE_NOOP("Plots", "Agent pipeline stages"), [(S.STAGE_PRE_MS, Qt.PenStyle.SolidLine),
                                         (S.STAGE_INFER_MS, Qt.PenStyle.DashLine),
                                         (S.STAGE_POST_MS, Qt.PenStyle.DotLine),
                                         (S.STAGE_QUEUE_MS, Qt.PenStyle.DashDotLine)]),
    ("generation", QT_TRANSLATE_NOOP("Plots", "Generation: time to first token, inter-token latency"),
     [(S.TTFT_P50, Qt.PenStyle.SolidLine), (S.TTFT_P95, Qt.PenStyle.DashLine), (S.ITL_P95, Qt.PenStyle.DotLine)]),
    ("sla", QT_TRANSLATE_NOOP("Plots", "SLA compliance"), [(S.SLA_COMPLIANCE, Qt.PenStyle.SolidLine)]),
]


def _unit_of(pid: str, series: list[tuple[str, Any]]) -> str:
    units = {S.UNITS.get(name, "") for name, _style in series}
    if len(units) != 1:  # two units on one axis flattened req/s against tok/s: each unit gets its own plot
        raise ValueError(f"dashboard plot {pid!r} mixes units {sorted(units)}")
    return units.pop()


# plot id -> (title, unit, [(series, style)])
PLOTS: list[tuple[str, str, str, list[tuple[str, Any]]]] = [
    (pid, title, _unit_of(pid, series), series) for pid, title, series in _PLOT_SERIES]
# the curves' legend names (English; translated where drawn, in the "Plots" context)
SHORT_NAMES = {S.THROUGHPUT: QT_TRANSLATE_NOOP("Plots", "client"), S.SERVER_RPS: QT_TRANSLATE_NOOP("Plots", "server"),
               S.MEM_PCT: QT_TRANSLATE_NOOP("Plots", "host memory"), S.GPU_MEM_PCT: "VRAM", S.GPU_POWER: "GPU",
               S.BOARD_POWER: QT_TRANSLATE_NOOP("Plots", "board"),
               S.SLA_COMPLIANCE: QT_TRANSLATE_NOOP("Plots", "compliance"),
               S.OUTPUT_TPS: QT_TRANSLATE_NOOP("Plots", "output tok/s"), S.TTFT_P50: "TTFT p50", S.TTFT_P95: "TTFT p95",
               S.ITL_P95: QT_TRANSLATE_NOOP("Plots", "inter-token p95")}
SERIES_COLORS = ["#1f77b4", "#ff7f0e", "#d62728", "#2ca02c"]
MAX_POINTS = 1000  # per curve per frame when the plot's width is not known yet
MIN_POINTS = 200
MAX_SHADES = 60  # violation bands kept on screen
PLOT_H = 170  # a plot with data (title row, axis, curves): 150+ px of data at 1366x768
FOLDED_H = 30  # a plot with nothing to show: its title row, saying why
AXIS_H = 34  # the time axis under the last plot
_STYLE_MARK = {Qt.PenStyle.SolidLine: "━━", Qt.PenStyle.DashLine: "╍╍", Qt.PenStyle.DotLine: "┈┈",
               Qt.PenStyle.DashDotLine: "━┈"}


class PlotCanvas(pg.GraphicsLayoutWidget):
    """The plots' view: the wheel scrolls the page around it unless the plots have focus (a click) or Ctrl is
    held; then it zooms the plot under the pointer, as pyqtgraph does."""

    def __init__(self) -> None:
        super().__init__()
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)

    def zooms_with_wheel(self, event: QWheelEvent) -> bool:
        return self.hasFocus() or bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        if self.zooms_with_wheel(event):
            super().wheelEvent(event)
            return
        area = self._scroll_area()
        if area is None:
            event.ignore()
            return
        # handed to the page's scroll bar: Qt does not pass a wheel event an ancestor did not get spontaneously
        QApplication.sendEvent(area.verticalScrollBar(), event)
        event.accept()

    def _scroll_area(self) -> QAbstractScrollArea | None:
        w = self.parentWidget()
        while w is not None and not isinstance(w, QAbstractScrollArea):
            w = w.parentWidget()
        return w


CurveKey = tuple[str, str, str]  # (plot id, target, series)


class PlotGrid(QWidget):
    """The stacked plots and the crosshair line under them; ``redraw()`` is called by the page's timer."""

    #: curve points per horizontal pixel of the plot (min/max pairs): 1.0 is one pair per two columns,
    #: which draws like 2.0 at a little over half the stroking cost
    points_per_px = 1.0

    def __init__(self, store: SeriesStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.t0: float | None = None  # the time axis' zero (the run's start, else the first buffered point)
        self.follow = True
        self._drawn: dict[CurveKey, tuple[Any, ...]] = {}
        self._bounds: dict[CurveKey, tuple[float, float, float, float]] = {}  # t0, t1, vmin, vmax
        self._yrange: dict[str, tuple[float, float]] = {}
        self._xrange: tuple[float, float] | None = None
        self._curves: dict[CurveKey, pg.PlotDataItem] = {}
        self._shades: deque[tuple[float, float]] = deque(maxlen=MAX_SHADES)
        self._shade_items: list[pg.LinearRegionItem] = []
        self._shade_version = 0
        self._shade_drawn = -1
        self._build()

    def _build(self) -> None:
        pg.setConfigOptions(antialias=False, background="w", foreground="#333")
        self.glw = PlotCanvas()
        self.glw.setToolTip(self.tr("Click the plots (or hold Ctrl) to zoom with the wheel; the wheel scrolls the page "
                                    "otherwise. Drag to pan; Follow returns to the live view."))
        self.plots: dict[str, pg.PlotItem] = {}
        self.folded: dict[str, bool] = {pid: False for pid, *_ in PLOTS}
        self._titles: dict[str, str] = {}
        self.na_text: dict[str, pg.TextItem] = {}
        self.vlines: list[pg.InfiniteLine] = []
        first: pg.PlotItem | None = None
        for i, (pid, title, unit, _series) in enumerate(PLOTS):
            p = self.glw.addPlot(row=i, col=0, title=QCoreApplication.translate("Plots", title))
            p.setLabel("left", unit)
            p.titleLabel.setAttr("justify", "left")
            # no grid: axis grids are redrawn as full-size QPictures every frame and cost more than the curves.
            # No pyqtgraph auto-range or clip-to-view either: every setData would re-range all linked plots and
            # regenerate every axis; redraw() decimates to the visible pixel columns and sets ranges once a frame
            p.disableAutoRange()
            # the legend is the title row (_set_title): pyqtgraph's LegendItem sits over the data
            if first is None:
                first = p
            else:
                p.setXLink(first)
            vl = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#888", style=Qt.PenStyle.DashLine))
            p.addItem(vl, ignoreBounds=True)
            self.vlines.append(vl)
            txt = pg.TextItem("", color="#777", anchor=(0.5, 0.5))
            p.addItem(txt, ignoreBounds=True)
            self.na_text[pid] = txt
            p.getViewBox().sigRangeChangedManually.connect(self._user_zoomed)
            self.plots[pid] = p
        for p in self.plots.values():  # x is linked: one time axis, under the last plot shown (_fold)
            p.hideAxis("bottom")
            p.setLabel("bottom", "time", "s")
            for side in ("left", "bottom"):  # SI prefixes re-render each axis label (HTML) on every range change
                p.getAxis(side).enableAutoSIPrefix(False)
            p.getAxis("left").setWidth(56)  # the plots' data areas line up whatever their tick labels
        for pid, title, unit, _series in PLOTS:
            self._set_title(pid, title, unit)
        self._time_axis: str | None = None
        self._apply_folds()
        self.plots["sla"].setYRange(0, 105)
        self.thresholds: dict[str, pg.InfiniteLine] = {}
        for key, color in (("p95", "#e08000"), ("p99", "#d62728")):
            line = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen(color, width=1, style=Qt.PenStyle.DashLine),
                                   label=self.tr("{key} budget").format(key=key), labelOpts={"position": 0.05, "color": color})
            line.setVisible(False)
            self.plots["latency"].addItem(line, ignoreBounds=True)
            self.thresholds[key] = line
        req = pg.InfiniteLine(pos=100, angle=0, movable=False, pen=pg.mkPen("#d62728", style=Qt.PenStyle.DashLine),
                              label="required", labelOpts={"position": 0.05, "color": "#d62728"})
        self.plots["sla"].addItem(req, ignoreBounds=True)
        self.cross_label = QLabel(self.tr("Click the plots (or hold Ctrl) to zoom with the wheel; Follow returns to the "
                                          "live view."))
        set_role(self.cross_label, "muted")
        self.cross_label.setWordWrap(True)  # a long crosshair line must never widen the page
        self._mouse_proxy = pg.SignalProxy(self.glw.scene().sigMouseMoved, rateLimit=30, slot=self._mouse_moved)
        pl = QVBoxLayout(self)
        pl.setContentsMargins(0, 0, 0, 0)
        pl.addWidget(self.glw, 1)
        pl.addWidget(self.cross_label)

    # -- titles (the legends) and folding --------------------------------------------------------------
    def _set_title(self, pid: str, title: str, unit: str, entries: list[tuple[str, str, Any]] | None = None,
                   note: str = "") -> None:
        """``Latency (ms)   ━━ p50  ╍╍ p95  ┈┈ p99``: the curves' colours and strokes after the title, or why the
        plot is empty."""
        title = QCoreApplication.translate("Plots", title)  # the English title: a QT_TRANSLATE_NOOP of PLOTS
        html = f"<b>{title}</b> <span style='color:#666'>({unit})</span>" if unit else f"<b>{title}</b>"
        for name, color, style in entries or []:
            html += (f"&nbsp;&nbsp; <span style='color:{color}'>{_STYLE_MARK.get(style, '━━')}</span>"
                     f"&nbsp;{name}")
        if note:
            html += f"&nbsp;&nbsp; <span style='color:#888'>{note}</span>"
        if self._titles.get(pid) != html:
            self._titles[pid] = html
            self.plots[pid].setTitle(html, size="9pt")

    def _legend_entries(self, pid: str) -> list[tuple[str, str, Any]]:
        out = []
        styles = dict(next(x[3] for x in PLOTS if x[0] == pid))
        for (p, _target, series), curve in self._curves.items():
            if p == pid:
                out.append((curve.name() or series, curve.opts["pen"].color().name(), styles.get(series)))
        return out

    def title_text(self, pid: str) -> str:
        """The plot's title row as shown (its legend, or why it is empty): for tests and tools."""
        return self._titles.get(pid, "")

    def _apply_folds(self) -> None:
        """Plots with data get PLOT_H, the others fold to their title; the time axis goes under the last one
        shown; the canvas asks for the height of the rows it holds (the page scrolls past it)."""
        shown = [pid for pid, *_ in PLOTS if not self.folded[pid]]
        axis = shown[-1] if shown else None
        for pid, p in self.plots.items():
            if self.folded[pid]:
                p.hideAxis("left")
                p.setMaximumHeight(FOLDED_H)
                p.setMinimumHeight(FOLDED_H)
                p.getViewBox().setVisible(False)
            else:
                p.showAxis("left")
                p.setMaximumHeight(16_777_215)
                p.setMinimumHeight(PLOT_H + (AXIS_H if pid == axis else 0))
                p.getViewBox().setVisible(True)
            if pid == axis:
                p.showAxis("bottom")
            else:
                p.hideAxis("bottom")
        self._time_axis = axis
        rows = sum(FOLDED_H if f else PLOT_H for f in self.folded.values()) + (AXIS_H if axis else 0)
        self.glw.setMinimumHeight(rows + 8 * len(PLOTS))

    def _ref_view(self) -> Any:
        """The view whose width and time range the frame uses: the first plot shown (all are x-linked)."""
        pid = next((pid for pid, *_ in PLOTS if not self.folded[pid]), "latency")
        return self.plots[pid].getViewBox()

    def _fold(self, pid: str, fold: bool) -> bool:
        if self.folded[pid] == fold:
            return False
        self.folded[pid] = fold
        return True

    # -- what is on screen (public, for tests and tools) ----------------------------------------------
    def plotted_series(self) -> dict[CurveKey, int]:
        """Every curve drawn so far, (plot id, target, series) -> the points it shows now."""
        out = {}
        for key, curve in self._curves.items():
            xs, _ys = curve.getData()
            out[key] = 0 if xs is None else len(xs)
        return out

    def shaded_windows(self) -> list[tuple[float, float]]:
        """The SLA-violation bands on screen, (start, end) in plot seconds, as drawn on the latency plot."""
        return [(float(a), float(b)) for a, b in (r.getRegion() for r in self._shade_items[0::2] if r.isVisible())]

    # -- inputs ----------------------------------------------------------------------------------------
    def set_budgets(self, p95: float | None, p99: float | None) -> None:
        """Show the latency budgets as dashed lines (hidden when there is none)."""
        for key, val in (("p95", p95), ("p99", p99)):
            self.thresholds[key].setVisible(val is not None)
            if val is not None:
                self.thresholds[key].setValue(val)

    def add_shades(self, windows: Iterable[tuple[float, float]]) -> None:
        """Failing SLA windows (absolute times) to shade; the next redraw moves the bands."""
        self._shades.extend(windows)
        self._shade_version += 1

    def set_shades(self, windows: Iterable[tuple[float, float]]) -> None:
        self._shades.clear()
        self.add_shades(windows)

    def reset_view(self) -> None:
        """Back to the live view: redraw() fits x to the data and y with some head room."""
        self.follow = True
        self._yrange.clear()
        self._xrange = None
        self._drawn.clear()

    def _user_zoomed(self, *args: Any) -> None:
        self.follow = False

    def clear_curves(self) -> None:
        """Forget every curve and band (a new run or replay starts from an empty grid)."""
        for (pid, _t, _s), c in self._curves.items():
            self.plots[pid].removeItem(c)
        self._curves.clear()
        self._drawn.clear()
        self._bounds.clear()
        self._yrange.clear()
        self._xrange = None
        for r in self._shade_items:
            for p in self.plots.values():
                p.removeItem(r)
        self._shade_items = []
        self._shades.clear()
        self._shade_drawn = -1

    # -- drawing ---------------------------------------------------------------------------------------
    def _curve(self, pid: str, target: str, series: str, style: Any) -> pg.PlotDataItem:
        """One curve per (plot, target, series). Solid 1-px pens only: dashed or wide pens make Qt's raster
        stroking of dense curves tens of times slower."""
        key = (pid, target, series)
        c = self._curves.get(key)
        if c is None:
            targets = self.store.targets()
            names = [s for s, _ in next(x[3] for x in PLOTS if x[0] == pid)]
            si = names.index(series) if series in names else 0
            if len(targets) > 1:  # colour = target, shade = series
                color = pg.mkColor(TARGET_COLORS[targets.index(target) % len(TARGET_COLORS)])
                color.setAlpha((255, 160, 90)[si % 3])
            else:
                color = pg.mkColor(SERIES_COLORS[si % len(SERIES_COLORS)])
            short = (QCoreApplication.translate("Plots", SHORT_NAMES[series]) if series in SHORT_NAMES
                     else series.split(".", 1)[1].removesuffix("_ms"))
            name = f"{short} {target}" if len(targets) > 1 else short
            c = self.plots[pid].plot([], [], pen=pg.mkPen(color, width=1), name=name)
            c.setSkipFiniteCheck(True)
            self._curves[key] = c
        return c

    def redraw(self) -> list[tuple[str, str]]:
        """Redraw only series whose buffers changed, min/max-decimated to the plot's pixel columns over the
        visible time range; ranges set once per frame (so cost does not grow with run length or with the
        number of curves re-ranging linked plots). Returns the store's keys (the page lists their sources)."""
        keys = self.store.keys()
        targets = sorted({k[0] for k in keys})
        if self.t0 is None:
            firsts = [b.t[0] if b.n < b.capacity else b.t[b.head] for b in self.store.buffers.values() if b.n]
            if firsts:
                self.t0 = min(firsts)
        t0 = self.t0 or 0.0
        ref = self._ref_view()
        width = int(ref.width())
        max_points = max(MIN_POINTS, int(self.points_per_px * width)) if width > 0 else MAX_POINTS
        vis = None
        if not self.follow:
            (x0, x1), _ = ref.viewRange()
            vis = (x0 + t0, x1 + t0)
        x_lo, x_hi = np.inf, -np.inf
        refold = False
        for pid, title, unit, series_list in PLOTS:
            have = False
            notes = []
            y_lo, y_hi = np.inf, -np.inf
            for target in targets:
                for series, style in series_list:
                    key = (target, series)
                    version = self.store.version(key)
                    if version == 0:
                        note = self.store.notes.get(key)
                        if note:
                            notes.append(note.removeprefix(S.NOT_AVAILABLE + ": "))
                        continue
                    have = True
                    ck = (pid, target, series)
                    state = (version, vis, max_points, t0)
                    if self._drawn.get(ck) != state:
                        snap = self.store.snapshot(key, max_points, vis)
                        if snap is None:
                            continue
                        version, t, v = snap
                        curve = self._curve(pid, target, series, style)
                        if len(t):
                            curve.setData(t - t0, v)
                            finite = v[np.isfinite(v)]
                            self._bounds[ck] = (t[0] - t0, t[-1] - t0, *(
                                (float(finite.min()), float(finite.max())) if len(finite) else (np.inf, -np.inf)))
                        self._drawn[ck] = (version, vis, max_points, t0)
                    b = self._bounds.get(ck)
                    if b is not None:
                        x_lo, x_hi = min(x_lo, b[0]), max(x_hi, b[1])
                        y_lo, y_hi = min(y_lo, b[2]), max(y_hi, b[3])
            if self.follow and pid != "sla" and y_lo <= y_hi:
                if pid == "latency":  # budgets stay in view next to the data
                    for line in self.thresholds.values():
                        if line.isVisible():
                            y_lo, y_hi = min(y_lo, line.value()), max(y_hi, line.value())
                self._fit_y(pid, y_lo, y_hi)
            txt = self.na_text[pid]
            text = "" if have else (
                QCoreApplication.translate("Plots", "not available") + (f": {sorted(set(notes))[0]}" if notes else "")
                if targets else "")
            if txt.toPlainText() != text:
                txt.setText(text)
            if not have and text:
                vb = self.plots[pid].getViewBox()
                (x0, x1), (y0, y1) = vb.viewRange()
                txt.setPos((x0 + x1) / 2, (y0 + y1) / 2)
            # nothing to draw once targets report (another workload's plot, a source the server lacks): folded
            # to its title, which says why; before any run every plot is shown
            refold |= self._fold(pid, bool(targets) and not have)
            self._set_title(pid, title, unit, self._legend_entries(pid) if have else None,
                            note="" if have else (text or (QCoreApplication.translate("Plots", "no data yet")
                                                           if targets else "")))
        if refold:
            self._apply_folds()
            self._xrange = None  # a plot shown again takes the time range anew
        if self.follow and x_lo < x_hi:
            self._fit_x(x_lo, x_hi)
        if self._shade_drawn != self._shade_version:
            self._draw_shades(t0)
        return keys

    def _fit_x(self, lo: float, hi: float) -> None:
        """Follow mode's time range, paged: 10% head room on the right, moved only when the data reaches
        it (or no longer fills 80% of the view). A range change re-lays out the time axis and propagates
        through the x-linked plots; paging does that a few times a second instead of on every frame."""
        cur = self._xrange
        if cur is not None and cur[0] <= lo and hi <= cur[1] and (hi - lo) >= 0.8 * (cur[1] - cur[0]):
            return
        self._xrange = (lo, hi + 0.1 * (hi - lo))
        self._ref_view().setXRange(*self._xrange, padding=0)  # the others are x-linked

    def _fit_y(self, pid: str, lo: float, hi: float) -> None:
        """Follow mode's y range, with hysteresis: it changes only when the data leaves it or fills less
        than 40% of it, so the axis (re-laid out on every range change) stays put while values wiggle."""
        cur = self._yrange.get(pid)
        if cur is not None and cur[0] <= lo and hi <= cur[1] and (hi - lo) >= 0.4 * (cur[1] - cur[0]):
            return
        span = hi - lo
        if span <= 0:
            span = max(abs(hi), 1.0) * 0.2
        new = (lo - 0.15 * span, hi + 0.15 * span)
        if lo >= 0:  # non-negative quantities (all plotted ones) never show a negative axis
            new = (max(0.0, new[0]), new[1])
        self._yrange[pid] = new
        self.plots[pid].getViewBox().setYRange(*new, padding=0)

    def _draw_shades(self, t0: float) -> None:
        """Violation bands: a fixed pool of region items moved in place, never re-created per frame."""
        need = 2 * len(self._shades)
        while len(self._shade_items) < need:
            pid = ("latency", "sla")[len(self._shade_items) % 2]
            r = pg.LinearRegionItem((0, 0), movable=False, brush=pg.mkBrush(214, 39, 40, 40), pen=pg.mkPen(None))
            r.setZValue(-10)
            self.plots[pid].addItem(r, ignoreBounds=True)
            self._shade_items.append(r)
        for i, r in enumerate(self._shade_items):
            if i < need:
                a, b = self._shades[i // 2]
                r.setRegion((a - t0, b - t0))
                r.setVisible(True)
            else:
                r.setVisible(False)
        self._shade_drawn = self._shade_version

    # -- crosshair -------------------------------------------------------------------------------------
    def _mouse_moved(self, evt: Any) -> None:
        pos = evt[0]
        for pid, p in self.plots.items():
            if p.sceneBoundingRect().contains(pos):
                x = p.getViewBox().mapSceneToView(pos).x()
                for vl in self.vlines:
                    vl.setPos(x)
                self.cross_label.setText(self.values_at(x, pid))
                return

    def values_at(self, x: float, pid: str) -> str:
        """The crosshair's line: every curve of plot ``pid`` at time ``x`` (plot seconds)."""
        parts = [f"t = {x:.2f} s"]
        for (p, _target, series), curve in self._curves.items():
            if p != pid:
                continue
            xs, ys = curve.getData()
            if xs is None or not len(xs):
                continue
            i = int(np.clip(np.searchsorted(xs, x), 0, len(xs) - 1))
            name = curve.name() or series.split(".", 1)[1]
            parts.append(f"{name} = {format_measure(float(ys[i]), S.UNITS.get(series, ''))}")
        return "   ".join(parts)
