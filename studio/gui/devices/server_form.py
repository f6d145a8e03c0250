"""The Devices page's "Add a server" form: URL, name, protocol, TLS, extra headers, metrics URL.

It only reads what was typed (``values()``); the page adds the server to the shared state.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
)

from studio.core.errors import InputError


def parse_headers(text: str) -> dict[str, str]:
    """"Key=Value; Key2=Value2" as a dict (a proxy's auth header, say); InputError for a part without "="."""
    headers = {}
    for part in text.split(";"):
        if part.strip():
            if "=" not in part:
                raise InputError(QCoreApplication.translate("AddServerForm", "header '{part}' is not Key=Value").format(
                    part=part.strip()), offending="Headers")
            k, v = part.split("=", 1)
            headers[k.strip()] = v.strip()
    return headers


class AddServerForm(QGroupBox):
    """The fields, an error line under them, and Add / Remove selected (connected by the page)."""

    def __init__(self) -> None:
        super().__init__(self.tr("Add a server"))
        form = QFormLayout(self)
        self.url_edit = QLineEdit()
        self.url_edit.setPlaceholderText(self.tr("http://127.0.0.1:8000 or grpc://host:8001"))
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText(self.tr("(from the URL)"))
        self.protocol_combo = QComboBox()
        self.protocol_combo.addItem(self.tr("auto"), None)  # the protocol ids are the item data
        self.protocol_combo.addItem("http", "http")
        self.protocol_combo.addItem("grpc", "grpc")
        self.tls_check = QCheckBox("TLS")
        self.headers_edit = QLineEdit()
        self.headers_edit.setPlaceholderText(self.tr("Key=Value; Key2=Value2"))
        self.metrics_edit = QLineEdit()
        self.metrics_edit.setPlaceholderText("http://host:8002/metrics")
        form.addRow(self.tr("URL"), self.url_edit)
        form.addRow(self.tr("Name"), self.name_edit)
        row = QHBoxLayout()
        row.addWidget(self.protocol_combo)
        row.addWidget(self.tls_check)
        form.addRow(self.tr("Protocol"), row)
        form.addRow(self.tr("Headers"), self.headers_edit)
        form.addRow(self.tr("Metrics"), self.metrics_edit)
        self.add_error = QLabel("")
        self.add_error.setProperty("role", "error")
        self.add_error.setWordWrap(True)
        form.addRow(self.add_error)
        btns = QHBoxLayout()
        self.add_btn = QPushButton(self.tr("Add"))
        self.add_btn.setProperty("role", "primary")
        self.remove_btn = QPushButton(self.tr("Remove selected"))
        btns.addWidget(self.add_btn)
        btns.addWidget(self.remove_btn)
        form.addRow(btns)

    def values(self) -> dict[str, Any]:
        """The typed server as ``DevicesPage.add_server`` keywords; InputError for malformed headers."""
        return {"url": self.url_edit.text(), "name": self.name_edit.text().strip() or None,
                "protocol": self.protocol_combo.currentData(), "ssl": self.tls_check.isChecked(),
                "headers": parse_headers(self.headers_edit.text()),
                "metrics_url": self.metrics_edit.text().strip() or None}

    def added(self) -> None:
        """The server was added: clear the error and the per-server fields."""
        self.add_error.setText("")
        self.url_edit.clear()
        self.name_edit.clear()
