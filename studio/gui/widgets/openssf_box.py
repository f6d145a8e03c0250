"""The Package page's OpenSSF model signing box: the signature the chosen source folder arrived with (who signed
it, checked against a trusted public key or CA certificate as a job), and the ECDSA key that also signs the
bundle's model/ (`studio package --openssf-trust / --openssf-key`). The checks are studio.edge.openssf's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from studio.core.errors import StudioError
from studio.gui.theme import set_role
from studio.gui.widgets.layout import browse_row

PEM_FILTER = QT_TRANSLATE_NOOP("OpenSSFBox", "PEM files (*.pem *.pub *.crt);;All files (*)")


class OpenSSFBox(QGroupBox):
    sig_log = Signal(str)

    def __init__(self, jobs: Any, parent: QWidget | None = None) -> None:
        super().__init__(self.tr("OpenSSF model signing (optional)"), parent)
        self.jobs = jobs
        self.source: Path | None = None
        self.check_result: Any = None
        form = QFormLayout(self)
        row = QHBoxLayout()
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.check_btn = QPushButton(self.tr("Check"))
        self.check_btn.setToolTip(self.tr("verify the source folder's OpenSSF signature against the trusted key"))
        self.check_btn.clicked.connect(self.check)
        row.addWidget(self.status, 1)
        row.addWidget(self.check_btn)
        form.addRow(self.tr("Source"), row)
        self.trust_edit = QLineEdit()
        self.trust_edit.setPlaceholderText(self.tr("publisher's public key or CA certificate (PEM)"))
        self.trust_edit.setToolTip(self.tr("a source arriving with an OpenSSF signature is checked against this before "
                                           "it is packaged; a mismatch stops the build and names the file"))
        form.addRow(self.tr("Trusted"), browse_row(self.trust_edit, lambda: self._browse(self.trust_edit, self.tr("Trusted key"))))
        self.key_edit = QLineEdit()
        self.key_edit.setPlaceholderText(self.tr("ECDSA private key (PEM) to also sign model/ (model.sig)"))
        self.key_edit.setToolTip(self.tr("`model_signing verify key` accepts the bundle's model/ with its public half; "
                                         "an encrypted key reads STUDIO_OPENSSF_KEY_PASSWORD"))
        form.addRow(self.tr("Sign with"), browse_row(self.key_edit, lambda: self._browse(self.key_edit, self.tr("Signing key"))))
        self.set_source(None)

    def _browse(self, edit: QLineEdit, title: str) -> None:
        path, _ = QFileDialog.getOpenFileName(self, title, edit.text() or str(Path.home()), self.tr(PEM_FILTER))
        if path:
            edit.setText(path)

    def _say(self, text: str, role: str) -> None:
        set_role(self.status, role)
        self.status.setText(text)

    def set_source(self, source: Path | str | None) -> None:
        """Say what the source arrived with (read from the signature file: nothing is hashed yet)."""
        from studio.edge.openssf import find_signature, read_signature

        self.source = Path(source) if source else None
        self.check_result = None
        sig = find_signature(self.source) if self.source is not None and self.source.is_dir() else None
        self.check_btn.setEnabled(sig is not None)
        if sig is None:
            self._say(self.tr("no OpenSSF signature with this source") if self.source is not None else "", "muted")
            return
        try:
            info = read_signature(sig)
        except StudioError as exc:
            self._say(f"✘ {exc.message}", "fail")
            return
        self._say(self.tr("{name}: {n} files signed by {signer}; not checked yet").format(name=sig.name, n=len(info.files), signer=info.signer()), "warn")

    def trust(self) -> Any:
        """The OpenSSFTrust of the Trusted field (None when empty); InputError names a bad file."""
        from studio.edge.openssf import OpenSSFTrust

        text = self.trust_edit.text().strip()
        return OpenSSFTrust.from_files([text]) if text else None

    def signing_key(self) -> Path | None:
        text = self.key_edit.text().strip()
        return Path(text) if text else None

    def check(self) -> None:
        from studio.edge.openssf import verify_folder

        if self.source is None:
            return
        try:
            trust = self.trust()
        except StudioError as exc:
            self._say(f"✘ {exc.message}", "fail")
            return
        if trust is None:
            self._say(self.tr("choose the publisher's public key (or CA certificate) under Trusted, then Check"), "warn")
            return
        source = self.source
        self.check_btn.setEnabled(False)
        self._say(self.tr("checking…"), "muted")
        self.jobs.start("package:openssf", self.tr("Check the OpenSSF signature of {name}").format(name=source.name),
                        lambda job: verify_folder(source, trust), self._checked, self._failed)

    def _checked(self, check: Any) -> None:
        self.check_result = check
        self.check_btn.setEnabled(True)
        self._say(self.tr("✔ {files} files signed by {signer} (trusted: {name})").format(files=check.files, signer=check.signer, name=Path(check.trusted_by).name),
                  "ok")
        self.sig_log.emit(check.render())

    def _failed(self, err: StudioError) -> None:
        self.check_btn.setEnabled(True)
        self._say(f"✘ {err.message}", "fail")
        self.sig_log.emit(err.render())
