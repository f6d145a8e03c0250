"""The Triton page's "Local server" tab: model control mode, Serve / Stop / Open in Devices, the server's state
and URLs, a note, and the tail of tritonserver's log.

Only widgets: the page owns the LocalTritonServer and its jobs and tells this panel what to show
(``show_state``, ``show_log``), so the buttons always agree with the one server state the page keeps.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from studio.gui.theme import set_role
from studio.gui.widgets.flow import FlowLayout
from studio.gui.widgets.layout import muted_label

STATE_TEXTS = {"starting": QT_TRANSLATE_NOOP("TritonServer", "Starting tritonserver…"), "running": QT_TRANSLATE_NOOP("TritonServer", "● Running"), "stopping": QT_TRANSLATE_NOOP("TritonServer", "Stopping…"),
               "stopped": QT_TRANSLATE_NOOP("TritonServer", "Not running."), "exited": QT_TRANSLATE_NOOP("TritonServer", "✖ Exited"), "failed": QT_TRANSLATE_NOOP("TritonServer", "✖ Failed to start")}


class ServerPanel(QWidget):
    """Controls and read-outs of the local tritonserver (states: stopped | starting | running | stopping |
    exited | failed)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        row = FlowLayout(spacing=6)
        row.addWidget(QLabel(self.tr("Model control")))
        self.mode_combo = QComboBox()
        self.mode_combo.addItem(self.tr("explicit (load every model at start)"), "explicit")
        self.mode_combo.addItem(self.tr("poll (pick up new versions)"), "poll")
        row.addWidget(self.mode_combo)
        self.serve_btn = QPushButton(self.tr("Serve locally"))
        set_role(self.serve_btn, "primary")
        self.serve_btn.setToolTip(self.tr("start the bundled CPU tritonserver on free loopback ports"))
        self.stop_btn = QPushButton(self.tr("Stop"))
        self.devices_btn = QPushButton(self.tr("Open in Devices"))
        self.devices_btn.setToolTip(self.tr("add this server to the workspace's devices and watch it there"))
        row.addWidget(self.serve_btn)
        row.addWidget(self.stop_btn)
        row.addWidget(self.devices_btn)
        lay.addLayout(row)
        self.server_label = QLabel(self.tr("Not running."))
        set_role(self.server_label, "subheading")
        self.server_label.setWordWrap(True)
        lay.addWidget(self.server_label)
        grid = QGridLayout()
        grid.setHorizontalSpacing(14)
        self.url_labels: dict[str, QLabel] = {}
        for i, (key, title) in enumerate((("http", "HTTP"), ("grpc", "gRPC"), ("metrics", self.tr("Metrics")))):
            k = QLabel(title)
            set_role(k, "muted")
            v = QLabel("-")
            v.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            grid.addWidget(k, i, 0)
            grid.addWidget(v, i, 1)
            self.url_labels[key] = v
        grid.setColumnStretch(1, 1)
        lay.addLayout(grid)
        self.server_note = muted_label("")
        lay.addWidget(self.server_note)
        lay.addWidget(QLabel(self.tr("Server log")))
        self.log_view = QPlainTextEdit()
        self.log_view.setReadOnly(True)
        self.log_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.log_view.setMaximumBlockCount(2000)
        set_role(self.log_view, "log")
        self.log_view.setPlaceholderText(self.tr("tritonserver's log appears here while it runs"))
        lay.addWidget(self.log_view, 1)
        self.sync_buttons("stopped")

    def mode(self) -> str:
        """The model control mode the next Serve uses: "explicit" or "poll"."""
        return str(self.mode_combo.currentData())

    def show_state(self, state: str, srv: Any) -> None:
        """Label, URLs (while the server is up or on its way) and buttons for ``state``."""
        running = state == "running"
        self.server_label.setText(QCoreApplication.translate("TritonServer", STATE_TEXTS[state]) if state in STATE_TEXTS else state)
        set_role(self.server_label, "ok" if running else "fail" if state in ("exited", "failed") else "subheading")
        show_urls = srv is not None and state in ("starting", "running", "stopping")
        for key, url in (("http", getattr(srv, "http_url", "")), ("grpc", getattr(srv, "grpc_url", "")),
                         ("metrics", getattr(srv, "metrics_url", ""))):
            self.url_labels[key].setText(url if show_urls else "-")
        if state == "starting":
            self.server_note.setText("")
        self.sync_buttons(state)

    def sync_buttons(self, state: str) -> None:
        """Only what the state allows: Serve when none runs, Stop while one starts or runs, Devices when up."""
        self.serve_btn.setEnabled(state in ("stopped", "exited", "failed"))
        self.stop_btn.setEnabled(state in ("starting", "running", "exited"))
        self.devices_btn.setEnabled(state == "running")
        self.mode_combo.setEnabled(state in ("stopped", "exited", "failed"))

    def show_log(self, tail: str) -> None:
        """Replace the log view's text with ``tail`` when it changed, scrolled to the end."""
        if tail != self.log_view.toPlainText():
            self.log_view.setPlainText(tail)
            bar = self.log_view.verticalScrollBar()
            bar.setValue(bar.maximum())
