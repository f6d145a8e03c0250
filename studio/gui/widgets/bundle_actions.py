"""The Package page's bundle actions that are not building one: deploy an existing .tar (verified first, and
again right before upload) and the public key an agent must trust (shown, copied, saved).

Kept apart from packaging_page.py so the page stays a layout over small pieces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.errors import BundleError, StudioError
from studio.gui.file_dialogs import start_dir


def studio_trust() -> Any:
    """The public keys this studio holds (its own signing keys): what an existing bundle is checked against."""
    from studio.package.keys import KeyStore, TrustedKeys, load_trusted_keys

    store = KeyStore()
    pubs = [store.public_path(n) for n in store.names() if store.public_path(n).is_file()]
    return load_trusted_keys(*pubs) if pubs else TrustedKeys()


def verify_existing(bundle: Path, job: Any = None) -> Any:
    """Verify a bundle picked from disk against the studio's keys; a BundleError names what is wrong."""
    from studio.package.verify import verify_bundle

    trust = studio_trust()
    if not trust.ids():
        raise BundleError(f"cannot check {bundle.name}: this studio holds no signing keys", offending=str(bundle),
                          hint="create or import the key that signed it (Signing key > New key, or copy its "
                               ".key/.pub into the studio's keys folder)")
    return verify_bundle(bundle, trust, job)  # raises BundleError: untrusted signer, tampered file, extras


def fill_files_table(table: Any, bundle: Path | None) -> None:
    """The bundle's files (path, size, SHA-256) from its manifest."""
    import tarfile

    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QTableWidgetItem

    from studio.package.manifest import Manifest

    table.setRowCount(0)
    if bundle is None:
        return
    with tarfile.open(bundle) as tf:
        f = tf.extractfile("manifest.json")
        m = Manifest.parse(f.read() if f else b"")
    for e in m.files:
        r = table.rowCount()
        table.insertRow(r)
        for c, text in enumerate([e.path, f"{e.size:,}", e.sha256[:16] + "…"]):
            it = QTableWidgetItem(text)
            it.setFlags(it.flags() & ~Qt.ItemFlag.ItemIsEditable)
            if c == 2:
                it.setToolTip(e.sha256)
            table.setItem(r, c, it)


def choose_bundle(parent: QWidget, workspace: Any) -> Path | None:
    path, _ = QFileDialog.getOpenFileName(parent, "Deploy an existing bundle", start_dir(None, workspace, "bundles"),
                                          "Bundles (*.tar)")
    return Path(path) if path else None


class PublicKeyDialog(QDialog):
    """The key line an agent needs in its trust store (install-agent.sh --trust FILE, /etc/studio-agent/trusted)."""

    def __init__(self, name: str, parent: QWidget | None = None, workspace: Any = None) -> None:
        super().__init__(parent)
        from studio.package.keys import KeyStore

        self.setWindowTitle(f"Public key: {name}")
        self.name, self._workspace = name, workspace
        self.text = KeyStore().export_public(name)
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel("Agents verify bundles against this key. Put it in the board's trust store:\n"
                             "install-agent.sh --trust FILE, or /etc/studio-agent/trusted/NAME.pub"))
        self.view = QPlainTextEdit(self.text)
        self.view.setReadOnly(True)
        self.view.setMaximumHeight(80)
        lay.addWidget(self.view)
        self.status = QLabel("")
        lay.addWidget(self.status)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy_btn = QPushButton("Copy")
        self.save_btn = QPushButton("Save…")
        buttons.addButton(self.copy_btn, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.save_btn, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.copy_btn.clicked.connect(self.copy)
        self.save_btn.clicked.connect(self._save_dialog)
        lay.addWidget(buttons)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text)
        self.status.setText("copied to the clipboard")

    def save(self, path: Path) -> Path:
        from studio.core.atomic import write_text_atomic

        try:
            write_text_atomic(path, self.text + ("" if self.text.endswith("\n") else "\n"))
        except OSError as exc:
            raise StudioError(f"could not write {path}: {exc}", offending=str(path)) from exc
        self.status.setText(f"saved to {path}")
        return path

    def _save_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save public key",
                                              start_dir(None, self._workspace, "", f"{self.name}.pub"),
                                              "Public keys (*.pub)")
        if path:
            try:
                self.save(Path(path))
            except StudioError as exc:
                self.status.setText(exc.message)
