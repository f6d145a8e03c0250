"""Dashboards page: live latency / throughput / memory / power / SLA plots for one or several KServe v2
targets, driven by load runs started here, recorded to SQLite and replayable.

Workers (load runs, replay) only push Samples into a locked SeriesStore of bounded ring buffers; a GUI-thread
QTimer redraws what changed, decimated to a fixed point count, so redraw cost does not grow with run length.
The plots live in studio.gui.dashboards.plots (PlotGrid), the runs and replay in studio.gui.dashboards.runs,
the targets (from Devices or typed) in studio.gui.dashboards.targets; this module holds the form, the sources
table and the exports.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.core.atomic import atomic_path
from studio.core.errors import InputError, Problem, StudioError
from studio.gui.dashboards.plots import (
    MAX_POINTS,
    MAX_SHADES,
    MIN_POINTS,
    PLOTS,
    SERIES_COLORS,
    SHORT_NAMES,
    TARGET_COLORS,
    CurveKey,
    PlotGrid,
)
from studio.gui.dashboards.runs import (
    LoadRuns,
    failing_windows,
    load_config,
    record_paths,
    sla_spec,
    verdict_html,
)
from studio.gui.dashboards.targets import (
    DeviceTargetPicker,
    LoadTarget,
    TargetList,
    TargetSources,
    connected_targets,
    device_target,
    resolve,
    served_model,
    typed_target,
)
from studio.gui.dashboards.values import format_measure
from studio.gui.dashboards.workload import WorkloadFields
from studio.gui.file_dialogs import start_dir
from studio.gui.jobs_qt import JobRunner
from studio.gui.page import Page
from studio.gui.screen_fit import AdaptiveSplitter
from studio.gui.widgets.flow import FlowLayout
from studio.gui.widgets.layout import add_heading, form_column
from studio.telemetry import samples as S
from studio.telemetry.ringbuffer import SeriesStore

# the page's module-level names before the split, still importable from here
__all__ = ["DEFAULT_URL", "MAX_POINTS", "MAX_SHADES", "MIN_POINTS", "PLOTS", "SERIES_COLORS", "SHORT_NAMES",
           "TARGET_COLORS", "DashboardsPage"]

DEFAULT_URL = "http://127.0.0.1:8000"  # only until a device is known: then the device's URL


class DashboardsPage(Page):
    page_id = "dashboards"
    title = "Dashboards"

    sig_window = Signal(object)  # internal: a verdict crossed from a worker (queued to the GUI thread)

    def __init__(self, jobs: JobRunner | None = None, parent: QWidget | None = None,
                 capacity: int = 50_000) -> None:
        super().__init__(jobs, parent)
        self.store = SeriesStore(capacity)
        self.runs = LoadRuns(self.store)
        self.handles = self.runs.handles  # target -> its load job
        self.reports = self.runs.reports  # target -> its finished BenchReport
        self.target_list = TargetList()
        self.targets = self.target_list.items  # LoadTarget: a Devices entry by name, or a typed URL
        self.paused = False
        self.frames = 0
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
        add_heading(root, self.tr("Dashboards — live load, latency, resources and SLA verdicts"))

        form = QHBoxLayout()
        self._filled: dict[QLineEdit, str] = {}  # what the page itself put into a field (follows the device)
        self.url_edit = QLineEdit(DEFAULT_URL)
        self.model_edit = QLineEdit()
        self.model_edit.setPlaceholderText(self.tr("model name on the server"))
        self.metrics_edit = QLineEdit()
        self.metrics_edit.setPlaceholderText(self.tr("optional: http://HOST:8002/metrics (default URL/metrics)"))
        form.addLayout(form_column((self.tr("Server URL"), self.url_edit), (self.tr("Model"), self.model_edit),
                                   (self.tr("Metrics"), self.metrics_edit)), 3)

        self.mode = QComboBox()
        self.mode.addItem(self.tr("concurrency"), "concurrency")  # the load generator's mode ids are the data
        self.mode.addItem(self.tr("rate"), "rate")
        self.level_edit = QLineEdit("1,2,4")
        self.level_edit.setToolTip(self.tr("concurrency levels (1,2,4) or requests per second (rate mode)"))
        self.mode.currentIndexChanged.connect(
            lambda _i: self.level_edit.setText("1,2,4" if self.mode.currentData() == "concurrency" else "100"))
        self.duration = QDoubleSpinBox()
        self.duration.setRange(0.5, 86400)
        self.duration.setValue(10)
        self.duration.setSuffix(" s")
        form.addLayout(form_column((self.tr("Mode"), self.mode), (self.tr("Levels / rate"), self.level_edit),
                                   (self.tr("Duration per level"), self.duration)), 2)

        self.tier = QComboBox()
        self.tier.addItem(self.tr("(none)"), "(none)")  # the tier ids are the data
        for tier in ("L1", "L2", "L3"):
            self.tier.addItem(tier, tier)
        self.p95 = QDoubleSpinBox()
        self.p99 = QDoubleSpinBox()
        for sp in (self.p95, self.p99):
            sp.setRange(0, 1e6)
            sp.setDecimals(2)
            sp.setSuffix(" ms")
            sp.setSpecialValueText(self.tr("no budget"))
        form.addLayout(form_column((self.tr("SLA tier"), self.tier), (self.tr("p95 budget"), self.p95), (self.tr("p99 budget"), self.p99)), 2)
        self.workload_fields = WorkloadFields()  # inference, or generation with a prompt (TTFT, inter-token)
        self.workload = self.workload_fields.workload
        root.addLayout(form)
        root.addLayout(self.workload_fields.row())
        picker_row = QHBoxLayout()
        picker_row.addWidget(QLabel(self.tr("Targets from Devices")))
        self.device_picker = DeviceTargetPicker()
        self.device_picker.sig_add.connect(self._add_device_target)
        self.device_picker.sig_add_connected.connect(self._add_connected)
        picker_row.addWidget(self.device_picker, 1)
        root.addLayout(picker_row)

        bar = FlowLayout(spacing=6)
        self.add_btn = QPushButton(self.tr("Add target"))
        self.add_btn.setToolTip(self.tr("add the URL and model above; several targets run side by side, one colour each"))
        self.add_btn.clicked.connect(self._add_target_from_fields)
        self.start_btn = QPushButton(self.tr("Start load"))
        self.start_btn.clicked.connect(self.start_runs)
        self.stop_btn = QPushButton(self.tr("Stop"))
        self.stop_btn.clicked.connect(self.stop_runs)
        self.stop_btn.setEnabled(False)
        self.record_box = QCheckBox(self.tr("Record to"))
        self.record_edit = QLineEdit()
        self.record_edit.setPlaceholderText("run.sqlite")  # a file name: not translated
        self.record_edit.setMaximumWidth(120)  # the run bar stays one line at 1366 px with the docks open
        self.pause_btn = QPushButton(self.tr("Pause"))
        self.pause_btn.setCheckable(True)
        self.pause_btn.toggled.connect(self.set_paused)
        self.follow_btn = QPushButton(self.tr("Follow"))
        self.follow_btn.setToolTip(self.tr("zoom with the mouse wheel or a drag; Follow returns to the live view"))
        self.follow_btn.clicked.connect(self.reset_view)
        self.replay_btn = QPushButton(self.tr("Replay…"))
        self.replay_btn.clicked.connect(self._choose_replay)
        self.png_btn = QPushButton(self.tr("Export PNG…"))
        self.png_btn.clicked.connect(self._choose_png)
        self.csv_btn = QPushButton(self.tr("Export CSV…"))
        self.csv_btn.clicked.connect(self._choose_csv)
        for w in (self.start_btn, self.stop_btn, self.record_box, self.record_edit, self.pause_btn,
                  self.follow_btn, self.replay_btn, self.png_btn, self.csv_btn):
            bar.addWidget(w)
        self.targets_list = self.target_list.widget
        self.clear_btn = QPushButton(self.tr("Clear targets"))
        self.clear_btn.clicked.connect(self.clear_targets)
        row = QHBoxLayout()  # the targets: add the form's, see them, clear them
        row.addWidget(self.add_btn, 0, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.targets_list, 1)
        row.addWidget(self.clear_btn, 0, Qt.AlignmentFlag.AlignTop)
        root.addLayout(row)
        root.addLayout(bar)

        # the run's outcome first (throughput, SLA verdict with its budget and what broke it), then the plots
        self.verdict_label = QLabel(self.tr("No run yet. Start a load against a KServe v2 server, or replay a recording."))
        self.verdict_label.setWordWrap(True)
        self.verdict_label.setTextFormat(Qt.TextFormat.RichText)
        self.verdict_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        root.addWidget(self.verdict_label)

        split = AdaptiveSplitter()  # the sources beside the plots on a wide page, under them on a narrow one
        self.grid = PlotGrid(self.store)
        self.grid.setMinimumWidth(480)
        # the grid's widgets under the names they had on the page
        self.glw, self.plots, self.na_text = self.grid.glw, self.grid.plots, self.grid.na_text
        self.vlines, self.thresholds, self.cross_label = self.grid.vlines, self.grid.thresholds, self.grid.cross_label
        split.addWidget(self.grid)

        self.sources_table = QTableWidget(0, 3)
        self.sources_table.setHorizontalHeaderLabels([QCoreApplication.translate("Columns", h) for h in [QT_TRANSLATE_NOOP("Columns", "series"), QT_TRANSLATE_NOOP("Columns", "latest"), QT_TRANSLATE_NOOP("Columns", "source")]])
        self.sources_table.verticalHeader().setVisible(False)
        head = self.sources_table.horizontalHeader()
        # values are never cut: the first two columns fit their text, the source takes the rest (tooltips hold it)
        head.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        head.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        head.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.sources_table.setMinimumWidth(400)
        self.sources_table.setMinimumHeight(220)
        split.addWidget(self.sources_table)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        root.addWidget(split, 1)

    # -- what is on screen -------------------------------------------------------------------------
    def plotted_series(self) -> dict[CurveKey, int]:
        """Every curve drawn so far, (plot id, target, series) -> the points it shows now."""
        return self.grid.plotted_series()

    def shaded_windows(self) -> list[tuple[float, float]]:
        """The SLA-violation bands on screen, (start, end) in plot seconds."""
        return self.grid.shaded_windows()

    @property
    def follow(self) -> bool:
        """True while the plots follow the live data (False once the user zoomed or panned)."""
        return self.grid.follow

    @property
    def t0(self) -> float | None:
        """The time axis' zero (epoch seconds), None until the first point arrives."""
        return self.grid.t0

    # -- targets -----------------------------------------------------------------------------------
    def context_changed(self) -> None:
        self._follow_device()  # the Model field: a model the selected device serves, never the workspace's name
        self._show_devices()

    def state_bound(self) -> None:
        self._show_devices()

    def state_changed(self, topic: str, payload: object) -> None:
        if topic in ("selection", "workspace") or (topic == "device_state" and self._device_name() == payload):
            self._follow_device()
        if topic in ("devices", "device_state", "workspace"):
            self._show_devices()

    def _show_devices(self) -> None:
        """The devices choice and the targets' tooltips, from the shared state as it is now."""
        self.device_picker.refresh(self.state)
        self.target_list.refresh(self.state)

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
        wanted = {self.url_edit: d.url, self.metrics_edit: self.state.metrics_url(d.name) or "",
                  self.model_edit: served_model(self.state, d.name, self.model_name)}
        for edit, value in wanted.items():
            if value is None:
                continue
            current = edit.text().strip()
            if current in ("", self._filled.get(edit, ""), DEFAULT_URL) and current != value:
                edit.setText(value)
            self._filled[edit] = value

    def _add_target_from_fields(self) -> None:
        try:
            self.add_target(self.url_edit.text().strip(), self.model_edit.text().strip(),
                            self.metrics_edit.text().strip() or None)
        except StudioError as exc:
            self._problem(exc)

    def add_target(self, url: str, model: str, metrics_url: str | None = None) -> bool:
        """A typed target; one at a device's URL with that device's metrics (or none typed) is that device's,
        so its metrics URL and pid come from the state. True when added (not there yet)."""
        return self._add(typed_target(self.state, url, model, metrics_url))

    def add_device_target(self, name: str) -> bool:
        """The Devices entry ``name`` as a target: its URL, the model it serves (the current one if it serves
        it), its metrics URL and local pid. InputError when it lists no model yet."""
        return self._add(device_target(self.state, name, self.model_name))

    def add_connected_targets(self) -> int:
        """Every device Devices reports connected; returns how many were added."""
        return sum(self._add(t) for t in connected_targets(self.state, self.model_name))

    def clear_targets(self) -> None:
        self.target_list.clear()

    def target_sources(self) -> list[TargetSources]:
        """What each target's run is given now: URL, model, kind, metrics URL, local server pid (from the state)."""
        return [resolve(t, self.state) for t in self.targets]

    def _add(self, target: LoadTarget) -> bool:
        added = self.target_list.add(target, self.state)
        if added:
            self.sig_log.emit(f"dashboards: target {target.model} @ {target.device or target.url}")
        return added

    def _add_device_target(self, name: str) -> None:
        try:
            self.add_device_target(name)
        except StudioError as exc:
            self._problem(exc)

    def _add_connected(self) -> None:
        if not self.add_connected_targets() and not self.targets:
            self._problem(InputError(self.tr("no connected device serves a model"),
                                     offending=self.tr("Targets from Devices"),
                                     hint=self.tr("connect a Triton server or agent on the Devices page")))

    # -- runs (studio.gui.dashboards.runs) ---------------------------------------------------------
    def _config(self, src: TargetSources) -> Any:
        w = self.workload_fields
        return load_config(src.url, src.model, self.mode.currentData(), self.level_edit.text(),
                           self.duration.value(), prompt=w.prompt(), max_tokens=w.max_tokens.value())

    def _sla(self) -> Any:
        p95, p99 = self.p95.value() or None, self.p99.value() or None
        self.grid.set_budgets(p95, p99)
        return sla_spec(self.tier.currentData(), p95, p99)

    def start_runs(self) -> None:
        """Start one load job per target (the fields' target when none was added)."""
        try:
            if not self.targets:
                self.add_target(self.url_edit.text().strip(), self.model_edit.text().strip(),
                                self.metrics_edit.text().strip() or None)
            sla = self._sla()
            sources = self.target_sources()
            configs = [self._config(src) for src in sources]
        except StudioError as exc:
            self._problem(exc)
            return
        self.stop_replay()
        self.store.clear()
        self.grid.clear_curves()
        self.grid.t0 = time.time()
        record = self.record_edit.text().strip() if self.record_box.isChecked() else ""
        assert self.jobs is not None
        for src, cfg, path in zip(sources, configs, record_paths(record, len(configs)), strict=True):
            self.runs.start(self.jobs, cfg, sla, path, src.metrics_url, on_done=self.sig_window.emit,
                            on_failed=self._run_failed, server_pid=src.server_pid, kind=src.kind)
            self.sig_log.emit(self.tr("load run started on {target}").format(target=cfg.target))
        self.stop_btn.setEnabled(True)
        self.verdict_label.setText(self.tr("running…"))

    def stop_runs(self) -> None:
        self.runs.cancel(self.jobs)

    def running(self) -> bool:
        return self.runs.running()

    def _run_failed(self, err: StudioError) -> None:
        self._problem(err)
        self._update_buttons()

    def _on_verdict(self, rep: Any) -> None:
        """A run finished (GUI thread): show its SLA outcome and shade its failing windows."""
        self.reports[rep.target] = rep
        self.grid.add_shades((v.start, v.end) for v in rep.verdicts if v.verdict == "fail")
        self.verdict_label.setText(verdict_html(self.reports))
        self._update_buttons()

    def _update_buttons(self) -> None:
        self.stop_btn.setEnabled(self.running())

    def _problem(self, err: StudioError) -> None:
        self.sig_problem.emit(Problem("error", err.message, source=self.title, page=self.page_id,
                                      location=err.offending, hint=err.hint))
        self.verdict_label.setText(f"<span style='color:#c62828'>{err.message}</span>"
                                   + (f"<br>{err.hint}" if err.hint else ""))

    def _choose_replay(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self.tr("Replay recording"), start_dir(None, self.workspace, "recordings"),
                                              self.tr("Recordings (*.sqlite *.db)"))
        if path:
            self.replay(Path(path))

    def replay(self, path: Path, speed: float = 0.0) -> None:
        """Feed a recording through the same buffers as a live run (background thread; 0 = as fast as possible)."""
        try:
            fails = failing_windows(path)
        except StudioError as exc:
            self._problem(exc)
            return
        self.stop_replay()
        self.store.clear()
        self.grid.clear_curves()
        self.grid.set_shades(fails)
        self.grid.t0 = None
        self.runs.start_replay(path, speed)
        self.verdict_label.setText(self.tr("replaying {name}").format(name=path.name))
        self.stop_btn.setEnabled(True)

    def stop_replay(self) -> None:
        self.runs.stop_replay()

    # -- drawing (studio.gui.dashboards.plots) -----------------------------------------------------
    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        self.pause_btn.setText(self.tr("Resume") if paused else self.tr("Pause"))

    def reset_view(self) -> None:
        """Back to the live view: redraw() fits x to the data and y with some head room."""
        self.grid.reset_view()

    def redraw(self) -> None:
        """GUI-thread timer: the plots redraw what changed; the sources table every fifth frame."""
        if self.paused:
            return
        if self.stop_btn.isEnabled():
            self._update_buttons()
        keys = self.grid.redraw()
        if self.frames % 5 == 0:
            self._refresh_sources(keys)
        self.frames += 1

    def _refresh_sources(self, keys: list[tuple[str, str]]) -> None:
        rows = [(k, self.store.latest.get(k), self.store.sources.get(k, ""), self.store.notes.get(k))
                for k in keys]
        self.sources_table.setRowCount(len(rows))
        many = len({k[0] for k in keys}) > 1
        for i, ((target, series), latest, source, note) in enumerate(rows):
            label = f"{series} ({target})" if many else series
            value = format_measure(latest, S.UNITS.get(series, ""))  # None: "not available", translated
            for j, text in enumerate((label, value, source if latest is not None else f"{source}: {note or ''}")):
                item = self.sources_table.item(i, j)
                if item is None:
                    item = QTableWidgetItem()
                    self.sources_table.setItem(i, j, item)
                if item.text() != text:
                    item.setText(text)
                    item.setToolTip(text)

    # -- export ----------------------------------------------------------------------------------------
    def _choose_png(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, self.tr("Export plots as PNG"), start_dir(None, self.workspace, "recordings", "dashboard.png"), "PNG (*.png)")
        if path:
            self.export_png(Path(path))

    def _choose_csv(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, self.tr("Export data as CSV"), start_dir(None, self.workspace, "recordings", "dashboard.csv"), "CSV (*.csv)")
        if path:
            self.export_csv(Path(path))

    def export_png(self, path: Path) -> Path:
        with atomic_path(path) as tmp:
            if not self.glw.grab().save(str(tmp.with_suffix(".png")), "PNG"):
                raise StudioError(self.tr("could not write {path}").format(path=path), offending=str(path))
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
