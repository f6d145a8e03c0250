"""The Package page's bundle actions that are not building one: deploy an existing .tar (verified first, and
again right before upload) and the public key an agent must trust (shown, copied, saved, or pushed to an
agent's trust store over its management API where the agent allows it).

Kept apart from packaging_page.py so the page stays a layout over small pieces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.errors import BundleError, StudioError
from studio.gui.file_dialogs import start_dir

translate = QCoreApplication.translate


def studio_trust() -> Any:
    """The public keys this studio holds (its own signing keys): what an existing bundle is checked against."""
    from studio.edge.trust import TrustedKeys, load_trusted_keys
    from studio.package.keys import KeyStore

    store = KeyStore()
    pubs = [store.public_path(n) for n in store.names() if store.public_path(n).is_file()]
    return load_trusted_keys(*pubs) if pubs else TrustedKeys()


def verify_existing(bundle: Path, job: Any = None) -> Any:
    """Verify a bundle picked from disk against the studio's keys; a BundleError names what is wrong."""
    from studio.edge.verify import verify_bundle

    trust = studio_trust()
    if not trust.ids():
        raise BundleError(translate("bundle_actions", "cannot check {name}: this studio holds no signing keys").format(
            name=bundle.name), offending=str(bundle),
                          hint=translate("bundle_actions", "create or import the key that signed it (Signing key > New key, or copy its "
                                                           ".key/.pub into the studio's keys folder)"))
    return verify_bundle(bundle, trust, job)  # raises BundleError: untrusted signer, tampered file, extras


def package_result_text(rep: Any, ver: Any) -> str:
    """The Package page's result card: where the bundle is, the board verdict, signatures, runtime, warnings."""
    forced = translate("bundle_actions", "  (FORCED)") if rep.forced else ""
    text = f"{rep.bundle}\n" + translate(
        "bundle_actions", "target {target}: {verdict}{forced}; {files} files, {size} MB; signer {signer}; verified in "
                          "{seconds} s; serves {models}").format(
        target=rep.target, verdict=rep.verdict, forced=forced, files=rep.files, size=f"{rep.total_bytes / 1e6:.2f}",
        signer=rep.signer_key_id, seconds=f"{ver.seconds:.2f}", models=", ".join(rep.served_models))
    if rep.compiled:
        text += "\n" + translate("bundle_actions", "runtime: tvm {version} ({library}, {kind}); parity {status}").format(
            version=rep.compiled.get("version"), library=rep.compiled.get("library"),
            kind=rep.compiled.get("library_kind"), status=rep.compiled.get("parity", {}).get("status"))
    if rep.openssf_source:
        text += "\n" + translate("bundle_actions", "source: OpenSSF signature by {signer} verified").format(
            signer=rep.openssf_source.get("signer"))
    if rep.openssf:
        text += "\n" + translate("bundle_actions", "OpenSSF: model/ signed by {signer} ({file})").format(
            signer=rep.openssf.get("signer"), file=rep.openssf.get("file"))
    return text + "".join("\n" + translate("bundle_actions", "warning: {warning}").format(warning=w)
                          for w in rep.warnings)


def fill_files_table(table: Any, bundle: Path | None) -> None:
    """The bundle's files (path, size, SHA-256) from its manifest."""
    import tarfile

    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QTableWidgetItem

    from studio.edge.manifest import Manifest

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
    path, _ = QFileDialog.getOpenFileName(parent, translate("bundle_actions", "Deploy an existing bundle"), start_dir(None, workspace, "bundles"),
                                          translate("bundle_actions", "Bundles (*.tar)"))
    return Path(path) if path else None


class PublicKeyDialog(QDialog):
    """The key line an agent needs in its trust store (install-agent.sh --trust FILE, /etc/studio-agent/trusted)."""

    def __init__(self, name: str, parent: QWidget | None = None, workspace: Any = None,
                 agents: list[Any] | None = None, jobs: Any = None) -> None:
        """``agents``: entries with ``name``, ``url`` and ``token_file`` (the Package page's managed agents);
        ``jobs``: the JobRunner a push runs on (the dialog never blocks on the network)."""
        super().__init__(parent)
        from studio.package.keys import KeyStore

        self.setWindowTitle(self.tr("Public key: {name}").format(name=name))
        self.name, self._workspace, self._jobs = name, workspace, jobs
        self.text = KeyStore().export_public(name)
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel(self.tr("Agents verify bundles against this key. Put it in the board's trust store:\n"
                                     "install-agent.sh --trust FILE, or /etc/studio-agent/trusted/NAME.pub,\n"
                                     "or push it to an agent started with --allow-trust-push.")))
        self.view = QPlainTextEdit(self.text)
        self.view.setReadOnly(True)
        self.view.setMaximumHeight(80)
        lay.addWidget(self.view)
        prow = QHBoxLayout()
        self.agent_combo = QComboBox()
        for a in agents or []:
            self.agent_combo.addItem(f"{a.name} ({a.url})", a)
        self.push_btn = QPushButton(self.tr("Push to agent"))
        self.push_btn.setToolTip(self.tr("add this key to the agent's trust store over its management API "
                                         "(same as `studio agent trust --key NAME`)"))
        self.push_btn.clicked.connect(self.push)
        self.push_btn.setEnabled(self.agent_combo.count() > 0 and jobs is not None)
        if not self.agent_combo.count():
            self.agent_combo.addItem(self.tr("no agent with a token file (add one under Agents)"))
            self.agent_combo.setEnabled(False)
        prow.addWidget(self.agent_combo, 1)
        prow.addWidget(self.push_btn)
        lay.addLayout(prow)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        lay.addWidget(self.status)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy_btn = QPushButton(self.tr("Copy"))
        self.save_btn = QPushButton(self.tr("Save…"))
        buttons.addButton(self.copy_btn, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.save_btn, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.copy_btn.clicked.connect(self.copy)
        self.save_btn.clicked.connect(self._save_dialog)
        lay.addWidget(buttons)

    def push(self) -> Any:
        """Push the key to the chosen agent (a job); the outcome, or why the agent refused, shows in place."""
        agent = self.agent_combo.currentData()
        if agent is None or self._jobs is None:
            return None
        from studio.package.client import AgentClient, read_token_file

        line = self.text

        def work(_job: Any) -> Any:
            return AgentClient(agent.url, read_token_file(agent.token_file), timeout=10).push_trust(line)

        self.push_btn.setEnabled(False)
        self.status.setText(self.tr("pushing to {url}…").format(url=agent.url))
        return self._jobs.start("trust", self.tr("Push key {key} to {agent}").format(key=self.name, agent=agent.name),
                                work, self._pushed,
                                self._push_failed)

    def _pushed(self, res: dict[str, Any]) -> None:
        self.push_btn.setEnabled(True)
        agent = self.agent_combo.currentData()
        self.status.setText(self.tr("{agent} now trusts key {key}").format(
            agent=agent.url if agent else self.tr("the agent"), key=res["key_id"])
            + ("" if res.get("new") else self.tr(" (it already did)")))

    def _push_failed(self, err: StudioError) -> None:
        self.push_btn.setEnabled(True)
        self.status.setText(err.message + (f"\n{err.hint}" if err.hint else ""))

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text)
        self.status.setText(self.tr("copied to the clipboard"))

    def save(self, path: Path) -> Path:
        from studio.core.atomic import write_text_atomic

        try:
            write_text_atomic(path, self.text + ("" if self.text.endswith("\n") else "\n"))
        except OSError as exc:
            raise StudioError(self.tr("could not write {path}: {error}").format(path=path, error=exc),
                              offending=str(path)) from exc
        self.status.setText(self.tr("saved to {path}").format(path=path))
        return path

    def _save_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, self.tr("Save public key"),
                                              start_dir(None, self._workspace, "", f"{self.name}.pub"),
                                              self.tr("Public keys (*.pub)"))
        if path:
            try:
                self.save(Path(path))
            except StudioError as exc:
                self.status.setText(exc.message)
