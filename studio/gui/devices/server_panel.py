"""The Devices page's view of the selected server: health line, models (actions, config), statistics and
Prometheus metrics. It only shows snapshots; the page polls and runs the actions as jobs."""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from studio.gui.devices.reasons import down_reason
from studio.gui.devices.server_poll import ServerSnapshot, ServerSpec
from studio.gui.theme import set_role
from studio.gui.widgets.tables import fill_table, readonly_table

ACTIONS = (("load", QT_TRANSLATE_NOOP("Devices", "Load")), ("unload", QT_TRANSLATE_NOOP("Devices", "Unload")), ("reload", QT_TRANSLATE_NOOP("Devices", "Reload")), ("upload", QT_TRANSLATE_NOOP("Devices", "Upload version...")),
           ("config", QT_TRANSLATE_NOOP("Devices", "Show config")))


def detail_table(headers: list[str]) -> QTableWidget:
    """A read-only table sized to its contents, one row selectable."""
    t = readonly_table(headers)
    t.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
    t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    t.horizontalHeader().setStretchLastSection(True)
    return t


class ServerPanel(QWidget):
    """Status labels over ``detail_tabs``: Models (with ``action_buttons``) and Statistics and metrics."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        rl = QVBoxLayout(self)
        rl.setContentsMargins(4, 0, 0, 0)
        self.status_label = QLabel(self.tr("add a server to watch it"))
        self.status_label.setProperty("role", "subheading")
        self.info_label = QLabel("")
        self.info_label.setProperty("role", "muted")
        for label in (self.status_label, self.info_label):  # a long error wraps: it never widens the window
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.ext_label = QLabel("")
        self.ext_label.setProperty("role", "muted")
        self.ext_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        rl.addWidget(self.status_label)
        rl.addWidget(self.info_label)
        rl.addWidget(self.ext_label)
        self.detail_tabs = QTabWidget()
        rl.addWidget(self.detail_tabs, 1)

        models_w = QWidget()
        ml = QVBoxLayout(models_w)
        self.models_table = detail_table([QT_TRANSLATE_NOOP("Columns", "model"), QT_TRANSLATE_NOOP("Columns", "version"), QT_TRANSLATE_NOOP("Columns", "state"), QT_TRANSLATE_NOOP("Columns", "reason")])
        ml.addWidget(self.models_table, 1)
        mb = QHBoxLayout()
        self.action_buttons: dict[str, QPushButton] = {}
        for action, label in ACTIONS:
            b = QPushButton(QCoreApplication.translate("Devices", label))
            self.action_buttons[action] = b
            mb.addWidget(b)
        mb.addStretch(1)
        ml.addLayout(mb)
        self.config_view = QPlainTextEdit()
        self.config_view.setReadOnly(True)
        self.config_view.setProperty("role", "log")
        self.config_view.setPlaceholderText(self.tr("select a model and press Show config"))
        ml.addWidget(self.config_view, 1)
        self.detail_tabs.addTab(models_w, self.tr("Models"))

        stats_w = QWidget()
        sl = QVBoxLayout(stats_w)
        self.stats_table = detail_table([QT_TRANSLATE_NOOP("Columns", "model"), QT_TRANSLATE_NOOP("Columns", "ver"), QT_TRANSLATE_NOOP("Columns", "inferences"), QT_TRANSLATE_NOOP("Columns", "executions"), QT_TRANSLATE_NOOP("Columns", "success"), QT_TRANSLATE_NOOP("Columns", "fail"), QT_TRANSLATE_NOOP("Columns", "queue us"),
                                         QT_TRANSLATE_NOOP("Columns", "input us"), QT_TRANSLATE_NOOP("Columns", "infer us"), QT_TRANSLATE_NOOP("Columns", "output us"), QT_TRANSLATE_NOOP("Columns", "batch sizes")])
        sl.addWidget(self.stats_table, 2)
        self.metrics_table = detail_table([QT_TRANSLATE_NOOP("Columns", "metric"), QT_TRANSLATE_NOOP("Columns", "value")])
        sl.addWidget(QLabel(self.tr("Server metrics (Prometheus)")))
        sl.addWidget(self.metrics_table, 1)
        self.detail_tabs.addTab(stats_w, self.tr("Statistics and metrics"))

    def show_none(self) -> None:
        self.status_label.setText(self.tr("add a server to watch it"))
        self.info_label.setText("")

    def show_connecting(self, name: str) -> None:
        self.status_label.setText(self.tr("{name}: connecting...").format(name=name))

    def show_snapshot(self, snap: ServerSnapshot, spec: ServerSpec, state: str, retry_s: float) -> None:
        """Health, models, statistics and metrics of one poll; ``state`` is the device's failure name."""
        if not snap.connected:
            self.status_label.setText(self.tr("✖ {name}: disconnected ({down_reason})").format(name=snap.name, down_reason=down_reason(state, snap.error)))
            self.info_label.setText(self.tr("{url}: {error}\nretrying every {retry_s:.0f} s").format(url=spec.url, error=snap.error, retry_s=retry_s))
            self.ext_label.setText("")
            set_role(self.status_label, "fail")
            return
        self.status_label.setText(self.tr("● {name}: live {value}, "
                                          "ready {value2}  -  {server} {version}").format(name=snap.name, value=self.tr("yes") if snap.live else self.tr("no"),
                                                            value2=self.tr("yes") if snap.ready else self.tr("no"), server=snap.server, version=snap.version))
        set_role(self.status_label, "ok" if snap.ready else "warn")
        self.info_label.setText(f"{spec.url}  ({spec.protocol or 'auto'}{', TLS' if spec.ssl else ''})")
        ext = self.tr("{n} extensions: {names}").format(n=len(snap.extensions), names=", ".join(snap.extensions))
        width = max(200, self.detail_tabs.width())
        self.ext_label.setText(self.ext_label.fontMetrics().elidedText(ext, Qt.TextElideMode.ElideRight, width))
        self.ext_label.setToolTip(ext)
        selected = self.selected_model()
        fill_table(self.models_table, [[m.name, m.version or "-", m.state or self.tr("not loaded"), m.reason]
                                       for m in snap.models])
        if selected:
            for r in range(self.models_table.rowCount()):
                if self.models_table.item(r, 0).text() == selected:
                    self.models_table.blockSignals(True)
                    self.models_table.selectRow(r)
                    self.models_table.blockSignals(False)
                    break
        fill_table(self.stats_table, [[s.name, s.version, s.inference_count, s.execution_count, s.success_count,
                                       s.fail_count, f"{s.avg_queue_us:.0f}", f"{s.avg_compute_input_us:.0f}",
                                       f"{s.avg_compute_infer_us:.0f}", f"{s.avg_compute_output_us:.0f}",
                                       ", ".join(f"{b}x{n}" for b, n in sorted(s.batch_sizes.items()))]
                                      for s in snap.stats])
        metric_rows = [[k, v] for k, v in snap.metrics.items()] or [[self.tr("metrics"), snap.metrics_error or self.tr("not available")]]
        fill_table(self.metrics_table, metric_rows)

    def selected_model(self) -> str | None:
        rows = self.models_table.selectionModel().selectedRows()
        return self.models_table.item(rows[0].row(), 0).text() if rows else None
