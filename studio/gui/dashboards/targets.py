"""The Dashboards page's load targets: picked from Devices (the shared StudioState's Triton servers and agents)
or typed into the form, and what each one's collectors watch.

A target from Devices holds only the device's name and the model: its URL, kind, metrics URL and, for a local
server the studio started, its pid are read from the StudioState when a run starts (``resolve``), so the page
never keeps its own copy of device data and a restarted server's new pid is the one watched.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QListWidget, QPushButton, QSizePolicy, QWidget

from studio.core.errors import InputError
from studio.core.state import StudioState
from studio.gui.dashboards.plots import TARGET_COLORS

translate = QCoreApplication.translate


@dataclass(frozen=True)
class LoadTarget:
    """One target of the load runs: a Devices entry by name, or a URL typed into the form."""

    url: str
    model: str
    device: str | None = None  # the Devices entry: URL, kind, metrics URL and pid come from the state
    metrics_url: str | None = None  # typed into the form (a target not from Devices)

    @property
    def key(self) -> tuple[str, str]:
        return self.url.rstrip("/"), self.model


@dataclass(frozen=True)
class TargetSources:
    """What one load run is given: where to send load and where its collectors read from."""

    url: str
    model: str
    device: str | None
    kind: str | None  # "triton" | "agent" when Devices knows it
    metrics_url: str | None
    server_pid: int | None  # a local server the studio started: its memory and CPU, never the GUI's


def resolve(target: LoadTarget, state: StudioState) -> TargetSources:
    """The target as its run sees it now, read from the shared state."""
    d = state.device(target.device) if target.device else None
    if d is None:  # typed, or a device removed since: what was typed, and a local pid the state knows
        dev = state.device(target.url)
        return TargetSources(target.url, target.model, dev.name if dev else None, dev.kind if dev else None,
                             target.metrics_url or (state.metrics_url(dev.name) if dev else None),
                             state.server_pid(target.url))
    return TargetSources(d.url, target.model, d.name, d.kind, state.metrics_url(d.name), state.server_pid(d.url))


def served_model(state: StudioState, name: str, preferred: str | None) -> str | None:
    """The model to load on a device: the workspace's current one when the device serves it, else the first it
    serves; None while it lists none (not polled yet, or down)."""
    served = state.device_state(name).models
    if not served:
        return None
    return preferred if preferred in served else served[0]


def device_target(state: StudioState, name: str, preferred: str | None) -> LoadTarget:
    """A target for the Devices entry ``name`` (InputError when it is unknown or lists no model yet)."""
    d = state.device(name)
    if d is None:
        raise InputError(translate("DeviceTargetPicker", "no device named '{name}'").format(name=name),
                         offending=translate("DashboardsPage", "Targets from Devices"),
                         hint=translate("DeviceTargetPicker", "add it on the Devices page"))
    model = served_model(state, d.name, preferred)
    if model is None:
        st = state.device_state(d.name)
        raise InputError(translate("DeviceTargetPicker", "{name} lists no model to load ({state})").format(
            name=d.name, state=st.state), offending=translate("DashboardsPage", "Targets from Devices"),
            hint=translate("DeviceTargetPicker", "wait until Devices has connected to it, or type its URL and model "
                                                 "above"))
    return LoadTarget(d.url, model, device=d.name)


def typed_target(state: StudioState, url: str, model: str, metrics_url: str | None = None) -> LoadTarget:
    """A target typed into the form. At a device's URL with that device's metrics URL (or none typed) it is
    that device's, so its metrics URL and pid come from the state; otherwise what was typed."""
    from studio.telemetry.kserve import Endpoint

    if not model:
        raise InputError(translate("DeviceTargetPicker", "no model name"), offending=translate("DashboardsPage", "Model"),
                         hint=translate("DeviceTargetPicker", "type the model's name on the server"))
    Endpoint.parse(url)
    d = state.device(url) or state.device(url.rstrip("/"))
    if d is not None and metrics_url in (None, state.metrics_url(d.name)):
        return LoadTarget(d.url, model, device=d.name)
    return LoadTarget(url, model, metrics_url=metrics_url)


def connected_targets(state: StudioState, preferred: str | None) -> list[LoadTarget]:
    """One target per device Devices reports connected that lists a model."""
    return [device_target(state, d.name, preferred) for d in state.devices()
            if state.device_state(d.name).ok and served_model(state, d.name, preferred)]


def device_label(state: StudioState, name: str) -> str:
    d = state.device(name)
    if d is None:
        return name
    return f"{d.name} ({'Triton' if d.kind == 'triton' else d.kind}, {state.device_state(d.name).state})"


class DeviceTargetPicker(QWidget):
    """"Targets from Devices": every known device with its state, Add (the chosen one) and Add all connected.
    A view of the state: ``refresh(state)`` lists what it holds now."""

    sig_add = Signal(str)  # device name
    sig_add_connected = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.combo = QComboBox()
        self.combo.setToolTip(self.tr("Triton servers and edge agents the Devices page knows, with their state"))
        self.combo.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.combo.setMinimumContentsLength(12)
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.add_btn = QPushButton(self.tr("Add"))
        self.add_btn.setToolTip(self.tr("add the chosen device as a target (its URL, served model, metrics, local pid)"))
        self.add_btn.clicked.connect(self._add)
        self.all_btn = QPushButton(self.tr("Add all connected"))
        self.all_btn.setToolTip(self.tr("add every device Devices reports as connected"))
        self.all_btn.clicked.connect(self.sig_add_connected.emit)
        row.addWidget(self.combo, 1)
        row.addWidget(self.add_btn)
        row.addWidget(self.all_btn)
        self.refresh(None)

    def names(self) -> list[str]:
        """The device names listed, in order."""
        return [str(self.combo.itemData(i)) for i in range(self.combo.count()) if self.combo.itemData(i)]

    def labels(self) -> list[str]:
        return [self.combo.itemText(i) for i in range(self.combo.count())]

    def current(self) -> str | None:
        data = self.combo.currentData()
        return str(data) if data else None

    def choose(self, name: str) -> None:
        i = self.combo.findData(name)
        if i >= 0:
            self.combo.setCurrentIndex(i)

    def refresh(self, state: StudioState | None) -> None:
        keep = self.current()
        self.combo.blockSignals(True)
        self.combo.clear()
        devices = state.devices() if state is not None else []
        for d in devices:
            self.combo.addItem(device_label(state, d.name) if state is not None else d.name, d.name)
            self.combo.setItemData(self.combo.count() - 1, d.url, Qt.ItemDataRole.ToolTipRole)
        if not devices:
            self.combo.addItem(self.tr("no devices yet: add them on the Devices page"), None)
        if keep:
            self.choose(keep)
        self.combo.blockSignals(False)
        self.combo.setEnabled(bool(devices))
        self.add_btn.setEnabled(bool(devices))
        self.all_btn.setEnabled(state is not None and any(state.device_state(d.name).ok for d in devices))

    def _add(self) -> None:
        name = self.current()
        if name:
            self.sig_add.emit(name)


class TargetList:
    """The targets added so far and their list widget (one colour each, as the plots draw them)."""

    def __init__(self) -> None:
        self.items: list[LoadTarget] = []
        self.widget = QListWidget()
        self.widget.setMaximumHeight(48)
        self.widget.setFlow(QListWidget.Flow.LeftToRight)

    def add(self, target: LoadTarget, state: StudioState) -> bool:
        """Add unless the same URL and model is there already; True when added."""
        if any(t.key == target.key for t in self.items):
            return False
        self.items.append(target)
        self.widget.addItem(self._label(target))
        item = self.widget.item(self.widget.count() - 1)
        item.setForeground(pg.mkColor(TARGET_COLORS[(len(self.items) - 1) % len(TARGET_COLORS)]))
        self.refresh(state)
        return True

    def clear(self) -> None:
        self.items.clear()
        self.widget.clear()

    def refresh(self, state: StudioState) -> None:
        """Tooltips say what each run will watch, as the state knows it now."""
        for i, t in enumerate(self.items):
            src = resolve(t, state)
            item = self.widget.item(i)
            item.setText(self._label(t))
            metrics = src.metrics_url or translate("DeviceTargetPicker", "URL/metrics if it answers")
            item.setToolTip(f"{src.url}\n" + translate("DeviceTargetPicker", "metrics: {url}").format(url=metrics)
                            + ("\n" + translate("DeviceTargetPicker", "server pid {pid}").format(pid=src.server_pid)
                               if src.server_pid else ""))

    @staticmethod
    def _label(t: LoadTarget) -> str:
        return f"{t.model} @ {t.device or t.url}"
