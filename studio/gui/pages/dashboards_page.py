"""Dashboards page: live latency / throughput / memory / power / SLA plots for one or several KServe v2
targets, driven by load runs started here, recorded to SQLite and replayable.

Workers (load runs, replay) only push Samples into a locked SeriesStore of bounded ring buffers; a GUI-thread
QTimer redraws what changed, decimated to a fixed point count, so redraw cost does not grow with run length.
"""

from __future__ import annotations

import csv
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.core.atomic import atomic_path
from studio.core.errors import InputError, Problem, StudioError
from studio.gui.file_dialogs import start_dir
from studio.gui.jobs_qt import JobHandle, JobRunner
from studio.gui.page import Page
from studio.gui.theme import set_role
from studio.gui.widgets.flow import FlowLayout
from studio.gui.widgets.layout import add_heading
from studio.telemetry import samples as S
from studio.telemetry.ringbuffer import SeriesStore

TARGET_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
# plot id -> (title, unit, [(series, style)])
PLOTS: list[tuple[str, str, str, list[tuple[str, Any]]]] = [
    ("latency", "Latency", "ms", [(S.LAT_P50, Qt.PenStyle.SolidLine), (S.LAT_P95, Qt.PenStyle.DashLine),
                                  (S.LAT_P99, Qt.PenStyle.DotLine)]),
    ("throughput", "Throughput", "req/s", [(S.THROUGHPUT, Qt.PenStyle.SolidLine),
                                           (S.SERVER_RPS, Qt.PenStyle.DashLine)]),
    ("memory", "Memory / VRAM", "%", [(S.MEM_PCT, Qt.PenStyle.SolidLine), (S.GPU_MEM_PCT, Qt.PenStyle.DashLine)]),
    ("power", "Power", "W", [(S.GPU_POWER, Qt.PenStyle.SolidLine), (S.BOARD_POWER, Qt.PenStyle.DashLine)]),
    ("stages", "Agent pipeline stages", "ms", [(S.STAGE_PRE_MS, Qt.PenStyle.SolidLine),
                                               (S.STAGE_INFER_MS, Qt.PenStyle.DashLine),
                                               (S.STAGE_POST_MS, Qt.PenStyle.DotLine),
                                               (S.STAGE_QUEUE_MS, Qt.PenStyle.DashDotLine)]),
    ("sla", "SLA compliance", "%", [(S.SLA_COMPLIANCE, Qt.PenStyle.SolidLine)]),  # last: carries the time axis
]
SHORT_NAMES = {S.THROUGHPUT: "client", S.SERVER_RPS: "server", S.MEM_PCT: "host memory",
               S.GPU_MEM_PCT: "VRAM", S.GPU_POWER: "GPU", S.BOARD_POWER: "board", S.SLA_COMPLIANCE: "compliance"}
SERIES_COLORS = ["#1f77b4", "#ff7f0e", "#d62728", "#2ca02c"]
MAX_POINTS = 1000  # per curve per frame when the plot's width is not known yet
MIN_POINTS = 200
MAX_SHADES = 60  # violation bands kept on screen


DEFAULT_URL = "http://127.0.0.1:8000"  # only until a device is known: then the device's URL


class DashboardsPage(Page):
    page_id = "dashboards"
    title = "Dashboards"

    sig_window = Signal(object)  # internal: a verdict crossed from a worker (queued to the GUI thread)
    #: curve points per horizontal pixel of the plot (min/max pairs): 1.0 is one pair per two columns,
    #: which draws like 2.0 at a little over half the stroking cost
    points_per_px = 1.0

    def __init__(self, jobs: JobRunner | None = None, parent: QWidget | None = None,
                 capacity: int = 50_000) -> None:
        super().__init__(jobs, parent)
        self.store = SeriesStore(capacity)
        self.handles: dict[str, JobHandle] = {}
        self.reports: dict[str, Any] = {}
        self.targets: list[tuple[str, str]] = []  # (url, model)
        self.paused = False
        self.follow = True
        self.frames = 0
        self.t0: float | None = None
        self._drawn: dict[tuple[str, str, str], tuple[Any, ...]] = {}
        self._bounds: dict[tuple[str, str, str], tuple[float, float, float, float]] = {}  # t0, t1, vmin, vmax
        self._yrange: dict[str, tuple[float, float]] = {}
        self._xrange: tuple[float, float] | None = None
        self._curves: dict[tuple[str, str, str], pg.PlotDataItem] = {}
        self._shades: deque[tuple[float, float]] = deque(maxlen=MAX_SHADES)
        self._shade_items: list[pg.LinearRegionItem] = []
        self._shade_version = 0
        self._shade_drawn = -1
        self._lock = threading.Lock()
        self._replay_stop = threading.Event()
        self._replay_thread: threading.Thread | None = None
        self._build()
        self.sig_window.connect(self._on_verdict)
        self.timer = QTimer(self)
        self.timer.setInterval(100)
        self.timer.timeout.connect(self.redraw)
        self.timer.start()

    # -- layout ----------------------------------------------------------------------------------
    def _build(self) -> None:
        root = QVBoxLayout(self)
        root.setContentsMargins(12, 10, 12, 10)
        add_heading(root, "Dashboards — live load, latency, resources and SLA verdicts")

        form = QHBoxLayout()
        left = QFormLayout()
        self._filled: dict[QLineEdit, str] = {}  # what the page itself put into a field (follows the device)
        self.url_edit = QLineEdit(DEFAULT_URL)
        self.model_edit = QLineEdit()
        self.model_edit.setPlaceholderText("model name on the server")
        self.metrics_edit = QLineEdit()
        self.metrics_edit.setPlaceholderText("optional: http://HOST:8002/metrics (default URL/metrics)")
        left.addRow("Server URL", self.url_edit)
        left.addRow("Model", self.model_edit)
        left.addRow("Metrics", self.metrics_edit)
        form.addLayout(left, 3)

        mid = QFormLayout()
        self.mode = QComboBox()
        self.mode.addItems(["concurrency", "rate"])
        self.level_edit = QLineEdit("1,2,4")
        self.level_edit.setToolTip("concurrency levels (1,2,4) or requests per second (rate mode)")
        self.mode.currentTextChanged.connect(
            lambda m: self.level_edit.setText("1,2,4" if m == "concurrency" else "100"))
        self.duration = QDoubleSpinBox()
        self.duration.setRange(0.5, 86400)
        self.duration.setValue(10)
        self.duration.setSuffix(" s")
        mid.addRow("Mode", self.mode)
        mid.addRow("Levels / rate", self.level_edit)
        mid.addRow("Duration per level", self.duration)
        form.addLayout(mid, 2)

        right = QFormLayout()
        self.tier = QComboBox()
        self.tier.addItems(["(none)", "L1", "L2", "L3"])
        self.p95 = QDoubleSpinBox()
        self.p99 = QDoubleSpinBox()
        for sp in (self.p95, self.p99):
            sp.setRange(0, 1e6)
            sp.setDecimals(2)
            sp.setSuffix(" ms")
            sp.setSpecialValueText("no budget")
        right.addRow("SLA tier", self.tier)
        right.addRow("p95 budget", self.p95)
        right.addRow("p99 budget", self.p99)
        form.addLayout(right, 2)
        root.addLayout(form)

        bar = FlowLayout(spacing=6)
        self.add_btn = QPushButton("Add target")
        self.add_btn.setToolTip("watch several targets side by side: each gets its own colour")
        self.add_btn.clicked.connect(self._add_target_from_fields)
        self.start_btn = QPushButton("Start load")
        self.start_btn.clicked.connect(self.start_runs)
        self.stop_btn = QPushButton("Stop")
        self.stop_btn.clicked.connect(self.stop_runs)
        self.stop_btn.setEnabled(False)
        self.record_box = QCheckBox("Record to")
        self.record_edit = QLineEdit()
        self.record_edit.setPlaceholderText("run.sqlite")
        self.pause_btn = QPushButton("Pause")
        self.pause_btn.setCheckable(True)
        self.pause_btn.toggled.connect(self.set_paused)
        self.follow_btn = QPushButton("Follow")
        self.follow_btn.setToolTip("zoom with the mouse wheel or a drag; Follow returns to the live view")
        self.follow_btn.clicked.connect(self.reset_view)
        self.replay_btn = QPushButton("Replay…")
        self.replay_btn.clicked.connect(self._choose_replay)
        self.png_btn = QPushButton("Export PNG…")
        self.png_btn.clicked.connect(self._choose_png)
        self.csv_btn = QPushButton("Export CSV…")
        self.csv_btn.clicked.connect(self._choose_csv)
        for w in (self.add_btn, self.start_btn, self.stop_btn, self.record_box, self.record_edit, self.pause_btn,
                  self.follow_btn, self.replay_btn, self.png_btn, self.csv_btn):
            bar.addWidget(w)
        root.addLayout(bar)
        self.targets_list = QListWidget()
        self.targets_list.setMaximumHeight(48)
        self.targets_list.setFlow(QListWidget.Flow.LeftToRight)
        root.addWidget(self.targets_list)

        split = QSplitter(Qt.Orientation.Horizontal)
        pg.setConfigOptions(antialias=False, background="w", foreground="#333")
        self.glw = pg.GraphicsLayoutWidget()
        # six stacked plots stay readable (about 110 px each): on a short screen the page scrolls instead
        self.glw.setMinimumHeight(110 * len(PLOTS))
        self.plots: dict[str, pg.PlotItem] = {}
        self.na_text: dict[str, pg.TextItem] = {}
        self.vlines: list[pg.InfiniteLine] = []
        first: pg.PlotItem | None = None
        for i, (pid, title, unit, _series) in enumerate(PLOTS):
            p = self.glw.addPlot(row=i, col=0, title=title)
            p.setLabel("left", unit)
            # no grid: axis grids are redrawn as full-size QPictures every frame and cost more than the curves.
            # No pyqtgraph auto-range or clip-to-view either: every setData would re-range all linked plots and
            # regenerate every axis; redraw() decimates to the visible pixel columns and sets ranges once a frame
            p.disableAutoRange()
            p.addLegend(offset=(-5, 5), labelTextSize="8pt")
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
        for pid in list(self.plots)[:-1]:  # x is linked: one time axis at the bottom (axes cost per frame)
            self.plots[pid].hideAxis("bottom")
        self.plots["sla"].setLabel("bottom", "time", "s")
        for p in self.plots.values():  # SI prefixes re-render each axis label (HTML) on every range change
            for side in ("left", "bottom"):
                p.getAxis(side).enableAutoSIPrefix(False)
        self.plots["sla"].setYRange(0, 105)
        self.thresholds: dict[str, pg.InfiniteLine] = {}
        for key, color in (("p95", "#e08000"), ("p99", "#d62728")):
            line = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen(color, width=1, style=Qt.PenStyle.DashLine),
                                   label=f"{key} budget", labelOpts={"position": 0.05, "color": color})
            line.setVisible(False)
            self.plots["latency"].addItem(line, ignoreBounds=True)
            self.thresholds[key] = line
        req = pg.InfiniteLine(pos=100, angle=0, movable=False, pen=pg.mkPen("#d62728", style=Qt.PenStyle.DashLine),
                              label="required", labelOpts={"position": 0.05, "color": "#d62728"})
        self.plots["sla"].addItem(req, ignoreBounds=True)
        self.cross_label = QLabel("")
        set_role(self.cross_label, "muted")
        self._mouse_proxy = pg.SignalProxy(self.glw.scene().sigMouseMoved, rateLimit=30, slot=self._mouse_moved)
        plots_box = QWidget()
        pl = QVBoxLayout(plots_box)
        pl.setContentsMargins(0, 0, 0, 0)
        pl.addWidget(self.glw, 1)
        pl.addWidget(self.cross_label)
        split.addWidget(plots_box)

        side = QWidget()
        sl = QVBoxLayout(side)
        sl.setContentsMargins(0, 0, 0, 0)
        self.verdict_label = QLabel("No run yet. Start a load against a KServe v2 server, or replay a recording.")
        self.verdict_label.setWordWrap(True)
        sl.addWidget(self.verdict_label)
        self.sources_table = QTableWidget(0, 3)
        self.sources_table.setHorizontalHeaderLabels(["series", "latest", "source"])
        self.sources_table.verticalHeader().setVisible(False)
        self.sources_table.horizontalHeader().setStretchLastSection(True)
        self.sources_table.setColumnWidth(0, 170)
        self.sources_table.setColumnWidth(1, 90)
        sl.addWidget(self.sources_table, 1)
        split.addWidget(side)
        split.setSizes([900, 380])
        root.addWidget(split, 1)

    # -- targets and runs --------------------------------------------------------------------------
    def context_changed(self) -> None:
        self._follow_device()
        if self.model_name and not self.model_edit.text():
            self.model_edit.setText(self.model_name)

    def state_changed(self, topic: str, payload: object) -> None:
        if topic in ("selection", "workspace") or (topic == "device_state" and self._device_name() == payload):
            self._follow_device()

    def _device_name(self) -> str | None:
        d = self.state.selected_device
        if d is None:  # nothing chosen yet: the first connected device, else the first known
            ds = self.state.devices()
            d = next((x for x in ds if self.state.device_state(x.name).ok), ds[0] if ds else None)
        return d.name if d is not None else None

    def _follow_device(self) -> None:
        """Target the device Devices (or a deploy) selected: URL, served model, metrics URL. A field the user
        typed into is left alone; one the page filled follows the device."""
        name = self._device_name()
        d = self.state.device(name) if name else None
        if d is None:
            return
        served = self.state.device_state(d.name).models
        wanted = {self.url_edit: d.url, self.metrics_edit: self.state.metrics_url(d.name) or "",
                  self.model_edit: (self.model_name if self.model_name in served else served[0]) if served else None}
        for edit, value in wanted.items():
            if value is None:
                continue
            current = edit.text().strip()
            if current in ("", self._filled.get(edit, ""), DEFAULT_URL) and current != value:
                edit.setText(value)
            self._filled[edit] = value

    def _add_target_from_fields(self) -> None:
        try:
            self.add_target(self.url_edit.text().strip(), self.model_edit.text().strip())
        except StudioError as exc:
            self._problem(exc)

    def add_target(self, url: str, model: str) -> None:
        from studio.telemetry.kserve import Endpoint

        if not model:
            raise InputError("no model name", offending="Model", hint="type the model's name on the server")
        Endpoint.parse(url)
        if (url, model) not in self.targets:
            self.targets.append((url, model))
            self.targets_list.addItem(f"{model} @ {url}")
            item = self.targets_list.item(self.targets_list.count() - 1)
            item.setForeground(pg.mkColor(TARGET_COLORS[(len(self.targets) - 1) % len(TARGET_COLORS)]))

    def _config(self, url: str, model: str) -> Any:
        from studio.telemetry.loadgen import LoadConfig

        text = self.level_edit.text().strip()
        try:
            if self.mode.currentText() == "rate":
                rate, conc = float(text), [1]
            else:
                rate, conc = None, [int(x) for x in text.split(",") if x.strip()]
        except ValueError as exc:
            raise InputError(f"cannot read levels {text!r}", offending="Levels / rate",
                             hint="concurrency: 1,2,4 — rate: requests per second, e.g. 100") from exc
        dur = float(self.duration.value())
        cfg = LoadConfig(url=url, model=model, concurrency=conc, rate=rate, duration_s=dur,
                         warmup_s=min(2.0, dur / 4), window_s=min(2.0, dur), tick_s=0.25, stability=False)
        cfg.validate()
        return cfg

    def _sla(self) -> Any:
        from studio.telemetry.bench import SlaSpec
        from studio.telemetry.sla import LatencyBudget

        tier = self.tier.currentText()
        p95, p99 = self.p95.value() or None, self.p99.value() or None
        for key, val in (("p95", p95), ("p99", p99)):
            self.thresholds[key].setVisible(val is not None)
            if val is not None:
                self.thresholds[key].setValue(val)
        return None if tier == "(none)" else SlaSpec(tier, LatencyBudget(p95, p99))

    def start_runs(self) -> None:
        """Start one load job per target (the fields' target when none was added)."""
        try:
            if not self.targets:
                self.add_target(self.url_edit.text().strip(), self.model_edit.text().strip())
            sla = self._sla()
            configs = [self._config(u, m) for u, m in self.targets]
        except StudioError as exc:
            self._problem(exc)
            return
        self.stop_replay()
        self.store.clear()
        self._clear_curves()
        self.t0 = time.time()
        record = self.record_edit.text().strip() if self.record_box.isChecked() else ""
        metrics = self.metrics_edit.text().strip() or None
        for i, cfg in enumerate(configs):
            path = None
            if record:
                p = Path(record)
                path = p if len(configs) == 1 else p.with_name(f"{p.stem}-{i + 1}{p.suffix or '.sqlite'}")
            self._start_one(cfg, sla, path, metrics if len(configs) == 1 else None)
        self.stop_btn.setEnabled(True)
        self.verdict_label.setText("running…")

    def _start_one(self, cfg: Any, sla: Any, record: Path | None, metrics: str | None) -> None:
        from studio.telemetry.bench import default_collectors, run_bench

        store, sig = self.store, self.sig_window

        def work(job: Any) -> Any:
            collectors = default_collectors(cfg, metrics)
            rep = run_bench(cfg, job, sla=sla, collectors=collectors, sink=store.push, record=record)
            return rep

        def verdict_sink(rep: Any) -> None:
            sig.emit(rep)

        assert self.jobs is not None
        handle = self.jobs.start(f"dashboards:{cfg.target}", f"Load {cfg.target}", work,
                                 on_done=verdict_sink, on_failed=self._run_failed)
        self.handles[cfg.target] = handle
        self.sig_log.emit(f"load run started on {cfg.target}")

    def stop_runs(self) -> None:
        if self.jobs is not None:
            for h in self.handles.values():
                if h.status == "running":
                    self.jobs.cancel(h.id)
        self.stop_replay()

    def running(self) -> bool:
        return any(h.status == "running" for h in self.handles.values()) or bool(
            self._replay_thread and self._replay_thread.is_alive())

    def _run_failed(self, err: StudioError) -> None:
        self._problem(err)
        self._update_buttons()

    def _on_verdict(self, rep: Any) -> None:
        """A run finished (GUI thread): show its SLA outcome and shade its failing windows."""
        self.reports[rep.target] = rep
        for v in rep.verdicts:
            if v.verdict == "fail":
                self._shades.append((v.start, v.end))
        self._shade_version += 1
        lines = []
        for tgt, r in self.reports.items():
            lv = r.levels[-1] if r.levels else None
            head = f"<b>{tgt}</b>: "
            if lv is not None:
                head += f"{lv.throughput_rps:.0f} req/s, p99 {lv.latency.p99_ms or 0:.2f} ms, errors {lv.error_count}"
                if lv.aborted:
                    head += f" — {lv.aborted}"
            if r.sla is not None:
                pct = "n/a" if r.sla.compliance_pct is None else f"{r.sla.compliance_pct:.0f}%"
                color = "#2a7a2a" if r.sla.verdict == "pass" else "#c62828"
                head += f"<br><span style='color:{color}'>SLA {r.sla.tier} {r.sla.verdict} ({pct})</span>"
            if r.recording:
                head += f"<br>recorded: {r.recording}"
            lines.append(head)
        self.verdict_label.setText("<br>".join(lines))
        self._update_buttons()

    def _update_buttons(self) -> None:
        self.stop_btn.setEnabled(self.running())

    def _problem(self, err: StudioError) -> None:
        self.sig_problem.emit(Problem("error", err.message, source=self.title, page=self.page_id,
                                      location=err.offending, hint=err.hint))
        self.verdict_label.setText(f"<span style='color:#c62828'>{err.message}</span>"
                                   + (f"<br>{err.hint}" if err.hint else ""))

    # -- replay --------------------------------------------------------------------------------------
    def _choose_replay(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Replay recording", start_dir(None, self.workspace, "recordings"), "Recordings (*.sqlite *.db)")
        if path:
            self.replay(Path(path))

    def replay(self, path: Path, speed: float = 0.0) -> None:
        """Feed a recording through the same buffers as a live run (background thread; 0 = as fast as possible)."""
        from studio.telemetry.recording import Recording

        try:
            rec = Recording(path)
        except StudioError as exc:
            self._problem(exc)
            return
        verdicts = rec.verdicts()
        rec.close()
        self.stop_replay()
        self.store.clear()
        self._clear_curves()
        self._shades.clear()
        self._shades.extend((v["start"], v["end"]) for v in verdicts if v.get("verdict") == "fail")
        self._shade_version += 1
        self.t0 = None
        self._replay_stop = stop = threading.Event()
        store = self.store

        def work() -> None:
            with Recording(path) as r:
                r.replay(store.push, speed=speed, stop=stop.is_set)

        self._replay_thread = threading.Thread(target=work, name="dashboard-replay", daemon=True)
        self._replay_thread.start()
        self.verdict_label.setText(f"replaying {path.name}")
        self.stop_btn.setEnabled(True)

    def stop_replay(self) -> None:
        self._replay_stop.set()
        if self._replay_thread is not None:
            self._replay_thread.join(timeout=5)
            self._replay_thread = None

    # -- drawing -------------------------------------------------------------------------------------
    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        self.pause_btn.setText("Resume" if paused else "Pause")

    def reset_view(self) -> None:
        """Back to the live view: redraw() fits x to the data and y with some head room."""
        self.follow = True
        self._yrange.clear()
        self._xrange = None
        self._drawn.clear()

    def _user_zoomed(self, *args: Any) -> None:
        self.follow = False

    def _clear_curves(self) -> None:
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
            short = SHORT_NAMES.get(series) or series.split(".", 1)[1].removesuffix("_ms")
            name = f"{short} {target}" if len(targets) > 1 else short
            c = self.plots[pid].plot([], [], pen=pg.mkPen(color, width=1), name=name)
            c.setSkipFiniteCheck(True)
            self._curves[key] = c
        return c

    def redraw(self) -> None:
        """GUI-thread timer: redraw only series whose buffers changed, min/max-decimated to the plot's pixel
        columns over the visible time range; ranges set once per frame (so cost does not grow with run
        length or with the number of curves re-ranging linked plots)."""
        if self.paused:
            return
        if self.stop_btn.isEnabled():
            self._update_buttons()
        keys = self.store.keys()
        targets = sorted({k[0] for k in keys})
        if self.t0 is None:
            firsts = [b.t[0] if b.n < b.capacity else b.t[b.head] for b in self.store.buffers.values() if b.n]
            if firsts:
                self.t0 = min(firsts)
        t0 = self.t0 or 0.0
        width = int(self.plots["sla"].getViewBox().width())
        max_points = max(MIN_POINTS, int(self.points_per_px * width)) if width > 0 else MAX_POINTS
        vis = None
        if not self.follow:
            (x0, x1), _ = self.plots["sla"].getViewBox().viewRange()
            vis = (x0 + t0, x1 + t0)
        x_lo, x_hi = np.inf, -np.inf
        for pid, _title, _unit, series_list in PLOTS:
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
                "not available" + (f": {sorted(set(notes))[0]}" if notes else "") if targets else "")
            if txt.toPlainText() != text:
                txt.setText(text)
            if not have and text:
                vb = self.plots[pid].getViewBox()
                (x0, x1), (y0, y1) = vb.viewRange()
                txt.setPos((x0 + x1) / 2, (y0 + y1) / 2)
        if self.follow and x_lo < x_hi:
            self._fit_x(x_lo, x_hi)
        if self._shade_drawn != self._shade_version:
            self._draw_shades(t0)
        if self.frames % 5 == 0:
            self._refresh_sources(keys)
        self.frames += 1

    def _fit_x(self, lo: float, hi: float) -> None:
        """Follow mode's time range, paged: 10% head room on the right, moved only when the data reaches
        it (or no longer fills 80% of the view). A range change re-lays out the time axis and propagates
        through the x-linked plots; paging does that a few times a second instead of on every frame."""
        cur = self._xrange
        if cur is not None and cur[0] <= lo and hi <= cur[1] and (hi - lo) >= 0.8 * (cur[1] - cur[0]):
            return
        self._xrange = (lo, hi + 0.1 * (hi - lo))
        self.plots["sla"].getViewBox().setXRange(*self._xrange, padding=0)  # the others are x-linked

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

    def _refresh_sources(self, keys: list[tuple[str, str]]) -> None:
        rows = [(k, self.store.latest.get(k), self.store.sources.get(k, ""), self.store.notes.get(k))
                for k in keys]
        self.sources_table.setRowCount(len(rows))
        many = len({k[0] for k in keys}) > 1
        for i, ((target, series), latest, source, note) in enumerate(rows):
            label = f"{series} ({target})" if many else series
            value = S.NOT_AVAILABLE if latest is None else f"{latest:.4g} {S.UNITS.get(series, '')}".strip()
            for j, text in enumerate((label, value, source if latest is not None else f"{source}: {note or ''}")):
                item = self.sources_table.item(i, j)
                if item is None:
                    item = QTableWidgetItem()
                    self.sources_table.setItem(i, j, item)
                if item.text() != text:
                    item.setText(text)
                    item.setToolTip(text)

    def _mouse_moved(self, evt: Any) -> None:
        pos = evt[0]
        for pid, p in self.plots.items():
            if p.sceneBoundingRect().contains(pos):
                x = p.getViewBox().mapSceneToView(pos).x()
                for vl in self.vlines:
                    vl.setPos(x)
                self.cross_label.setText(self._values_at(x, pid))
                return

    def _values_at(self, x: float, pid: str) -> str:
        parts = [f"t = {x:.2f} s"]
        for (p, target, series), curve in self._curves.items():
            if p != pid:
                continue
            xs, ys = curve.getData()
            if xs is None or not len(xs):
                continue
            i = int(np.clip(np.searchsorted(xs, x), 0, len(xs) - 1))
            parts.append(f"{series.split('.', 1)[1]} [{target}] = {ys[i]:.4g}")
        return "   ".join(parts)

    # -- export ----------------------------------------------------------------------------------------
    def _choose_png(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export plots as PNG", start_dir(None, self.workspace, "recordings", "dashboard.png"), "PNG (*.png)")
        if path:
            self.export_png(Path(path))

    def _choose_csv(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export data as CSV", start_dir(None, self.workspace, "recordings", "dashboard.csv"), "CSV (*.csv)")
        if path:
            self.export_csv(Path(path))

    def export_png(self, path: Path) -> Path:
        with atomic_path(path) as tmp:
            if not self.glw.grab().save(str(tmp.with_suffix(".png")), "PNG"):
                raise StudioError(f"could not write {path}", offending=str(path))
            tmp.with_suffix(".png").replace(tmp)
        return path

    def export_csv(self, path: Path) -> Path:
        """Every buffered point: time, target, series, value, source (the full recording is the SQLite file)."""
        with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["t", "target", "series", "value", "unit", "source"])
            for target, series, t, v, source in self.store.to_csv_rows():
                w.writerow([f"{t:.6f}", target, series, v, S.UNITS.get(series, ""), source])
        return path

    def shutdown(self) -> None:
        """Called by the main window on close: stop redraws, load runs and replay."""
        self.timer.stop()
        self.stop_runs()

    def closeEvent(self, event: Any) -> None:  # noqa: N802  (a page shown on its own, e.g. in tests)
        self.shutdown()
        super().closeEvent(event)
