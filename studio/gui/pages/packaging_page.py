"""Packaging page: export + board + key -> signed bundle, verified, deployed to an edge agent with progress;
the agents' versions beside it, with rollback. Every step is a core call run as a job (no logic here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from studio.core.errors import Problem, StudioError
from studio.gui.file_dialogs import start_dir
from studio.gui.page import Page
from studio.gui.screen_fit import AdaptiveSplitter
from studio.gui.theme import set_role
from studio.gui.widgets.agents_panel import AgentsPanel
from studio.gui.widgets.bundle_actions import (
    PublicKeyDialog,
    choose_bundle,
    fill_files_table,
    package_result_text,
    verify_existing,
)
from studio.gui.widgets.field_error import FieldError
from studio.gui.widgets.fixed_lines import FixedLinesLabel
from studio.gui.widgets.flow import FlowLayout, keep_wrapped_height
from studio.gui.widgets.layout import add_heading, browse_row
from studio.gui.widgets.openssf_box import OpenSSFBox
from studio.gui.widgets.source_info import board_text, compiled_source_text, read_compiled_source
from studio.gui.widgets.tables import readonly_table


class PackagingPage(Page):
    page_id = "package"
    title = "Package"

    def __init__(self, jobs: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(jobs, parent)
        self.bundle_path: Path | None = None
        self.package_report: Any = None
        self.verify_report: Any = None
        self.deploy_report: Any = None
        self._auto_source = ""  # what the page itself put in the Export field (it follows the current model)
        self._auto_board: str | None = None  # likewise the board (it follows the target and the agents)
        self._boards: dict[str, Any] = {}  # filled by reload_boards once the form exists
        self._build()
        self.reload_boards()
        self.reload_keys()

    # -- layout ----------------------------------------------------------------------------------------
    def _build(self) -> None:
        outer = QHBoxLayout(self)
        split = AdaptiveSplitter()  # build form beside the agents, or above them on a narrow window
        outer.addWidget(split)
        left = QWidget()
        ll = QVBoxLayout(left)
        add_heading(ll, self.tr("Package for an edge board"),
                    self.tr("Signed bundle (Ed25519 over SHA-256 digests), checked against the board's accelerator, "
                            "verified, then pushed to an agent that verifies again before it activates."))

        box = QGroupBox(self.tr("Build"))
        form = QFormLayout(box)
        self.source_edit = QLineEdit()
        self.source_edit.setPlaceholderText(self.tr(".onnx file, export folder or `studio compile` folder"))
        form.addRow(self.tr("Export"), browse_row(self.source_edit, self._browse_source))
        # a compiled folder: runtime tvm, its parity figures, the arch check; the same height for any source, so
        # the buttons below never move
        self.source_info = FixedLinesLabel(3)
        form.addRow("", self.source_info)
        self.source_edit.textChanged.connect(self._source_changed)
        self.board_combo = QComboBox()
        self.board_combo.currentIndexChanged.connect(self._board_changed)
        form.addRow(self.tr("Board"), self.board_combo)
        self.board_info = FixedLinesLabel(2)
        form.addRow("", self.board_info)
        krow = QHBoxLayout()
        self.key_combo = QComboBox()
        self.new_key_btn = QPushButton(self.tr("New key"))
        self.new_key_btn.setToolTip(self.tr("create an Ed25519 key pair, encrypted with the passphrase below"))
        self.new_key_btn.clicked.connect(self._new_key)
        self.pub_btn = QPushButton(self.tr("Public key…"))
        self.pub_btn.setToolTip(self.tr("the key agents must trust: copy it or save it as NAME.pub"))
        self.pub_btn.clicked.connect(self.show_public_key)
        krow.addWidget(self.key_combo, 1)
        krow.addWidget(self.new_key_btn)
        krow.addWidget(self.pub_btn)
        form.addRow(self.tr("Signing key"), krow)
        self.key_name_edit = QLineEdit()
        self.key_name_edit.setPlaceholderText(self.tr("name for a new key"))
        form.addRow("", self.key_name_edit)
        self.pass_edit = QLineEdit()
        self.pass_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.pass_edit.setPlaceholderText(self.tr("key passphrase (never stored)"))
        form.addRow(self.tr("Passphrase"), self.pass_edit)
        nrow = QHBoxLayout()
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText(self.tr("default: model file stem"))
        self.version_edit = QLineEdit()
        self.version_edit.setPlaceholderText(self.tr("default: timestamp"))
        nrow.addWidget(self.name_edit, 2)
        nrow.addWidget(QLabel(self.tr("Version")))
        nrow.addWidget(self.version_edit, 1)
        form.addRow(self.tr("Name"), nrow)
        self.out_edit = QLineEdit()
        self.out_edit.setPlaceholderText(self.tr("default: WORKSPACE/bundles/NAME-VERSION.tar"))
        form.addRow(self.tr("Output"), browse_row(self.out_edit, self._browse_out, "…"))
        self.force_check = QCheckBox(self.tr("Package even if the board check fails"))
        self.force_check.setToolTip(self.tr("Package even if the model fails the board's target or CPU architecture; "
                                            "the override is recorded in the signed manifest"))
        form.addRow("", self.force_check)
        box.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)  # never squeezed: buttons stay
        ll.addWidget(box)
        self.openssf = OpenSSFBox(self.jobs)  # the source's OpenSSF signature, and the key that signs model/
        self.openssf.sig_log.connect(self.sig_log.emit)
        ll.addWidget(self.openssf)
        self.error = FieldError(self)
        ll.addWidget(self.error)

        actions = FlowLayout(spacing=6)
        self.build_btn = QPushButton(self.tr("Build && verify"))
        set_role(self.build_btn, "primary")
        self.build_btn.clicked.connect(self.build)
        actions.addWidget(self.build_btn)
        actions.addWidget(QLabel(self.tr("   Deploy to")))
        self.agent_combo = QComboBox()
        self.agent_combo.setMinimumWidth(200)
        actions.addWidget(self.agent_combo)
        self.deploy_btn = QPushButton(self.tr("Deploy"))
        set_role(self.deploy_btn, "primary")
        self.deploy_btn.setEnabled(False)
        self.deploy_btn.clicked.connect(self.deploy)
        actions.addWidget(self.deploy_btn)
        self.open_bundle_btn = QPushButton(self.tr("Deploy existing…"))
        self.open_bundle_btn.setToolTip(self.tr("pick a bundle (.tar) built before: verified, then deployable"))
        self.open_bundle_btn.clicked.connect(lambda: self.open_bundle())
        actions.addWidget(self.open_bundle_btn)
        ll.addLayout(actions)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setValue(0)
        self.status_label = FixedLinesLabel(2)  # a deploy's long line never widens the page nor clips
        self.status_label.setText(self.tr("Choose an export, a board and a key, then build."))
        ll.addWidget(self.progress)
        ll.addWidget(self.status_label)

        self.result_card = QFrame()
        set_role(self.result_card, "banner-info")
        self.result_card.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)  # never clipped
        rl = QVBoxLayout(self.result_card)
        self.result_title = QLabel(self.tr("No bundle yet"))
        set_role(self.result_title, "subheading")
        self.result_text = QLabel("")
        self.result_text.setWordWrap(True)
        self.result_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        rl.addWidget(self.result_title)
        rl.addWidget(self.result_text)
        ll.addWidget(self.result_card)
        self.files = readonly_table([QT_TRANSLATE_NOOP("Columns", "File"), QT_TRANSLATE_NOOP("Columns", "Size"), QT_TRANSLATE_NOOP("Columns", "SHA-256")])
        for col, mode in enumerate((QHeaderView.ResizeMode.Stretch, *[QHeaderView.ResizeMode.ResizeToContents] * 2)):
            self.files.horizontalHeader().setSectionResizeMode(col, mode)
        ll.addWidget(self.files, 1)
        split.addWidget(keep_wrapped_height(left))

        self.agents = AgentsPanel(self.jobs)
        self.agents.bind_state(self.state, self.state_signals)
        self.agents.sig_agents_changed.connect(self._fill_agents)
        self.agents.sig_log.connect(self.sig_log.emit)
        self.agents.sig_log.connect(self.status_label.setText)
        split.addWidget(self.agents)
        split.setSizes([620, 560])
        for sig in (self.jobs.sig_progress,):
            sig.connect(self._on_progress)
        self.jobs.sig_status.connect(self._on_status)

    # -- choices ---------------------------------------------------------------------------------------
    def reload_boards(self) -> None:
        from studio.package.boards import list_boards

        self.board_combo.clear()
        self._boards = {b.id: b for b in list_boards()}
        # nothing preselected until the workspace says which board (the first one alphabetically, atlas-310p,
        # read as a choice with a tvm-relax or qnn-htp target)
        self.board_combo.addItem(self.tr("choose a board…"), None)
        for b in self._boards.values():
            self.board_combo.addItem(f"{b.id}  ({b.name})", b.id)
        self._auto_board = self.board_combo.currentData()  # the page's pick, until the workspace says better
        self._board_changed()

    def reload_keys(self, select: str | None = None) -> None:
        from studio.package.keys import KeyStore

        self.key_combo.clear()
        for info in KeyStore().list():
            if info.private_path:
                self.key_combo.addItem(f"{info.name}  ({info.key_id})", info.name)
        if select:
            self.key_combo.setCurrentIndex(max(0, self.key_combo.findData(select)))

    def _board_changed(self) -> None:
        data = self.board_combo.currentData()
        if data is None or data in self._boards:
            self.board_info.setText(board_text(self._boards.get(data) if data else None, self.target))
        self._source_changed()  # the board's CPU check of a compiled source

    def _compiled_source(self) -> Any:
        """The CompiledSource when the chosen source is a `studio compile` folder, else None."""
        return read_compiled_source(self.source_edit.text().strip())

    def _source_changed(self) -> None:
        self.openssf.set_source(self.source_edit.text().strip() or None)
        c, b = self._compiled_source(), self._boards.get(self.board_combo.currentData())
        text, mismatch = compiled_source_text(c, b) if c is not None else (
            self.tr("A `studio compile` folder as the export shows its runtime, parity and CPU check here."), False)
        set_role(self.source_info, "banner-fail" if mismatch else "muted")
        margin = 6 if mismatch else 0
        self.source_info.setContentsMargins(margin, margin // 3, margin, margin // 3)
        self.source_info.setText(text)
        self._follow_board(c)  # the folder read once per change

    def _follow_board(self, compiled: Any = False) -> None:
        """The board follows the workspace (compiled source, current target, agents' boards: ``default_board``)
        while the combo shows what the page chose: a user's own pick stays."""
        from studio.package.boards import default_board

        c = self._compiled_source() if compiled is False else compiled  # False: not read yet
        states = [self.state.device_state(d.name) for d in self.state.devices("agent")]
        board = default_board(self.target, c.meta.get("board") if c else None, tuple(s.board for s in states))
        if board != self.board_combo.currentData() == self._auto_board:
            self._auto_board = board  # what the page itself shows; a user's pick differs from it and stays
            # nothing says (a target no board carries): back to "choose a board…", not the last target's board
            self.board_combo.setCurrentIndex(max(0, self.board_combo.findData(board)) if board else 0)

    def _fill_agents(self) -> None:
        cur = self.agent_combo.currentData()
        self.agent_combo.clear()
        for a in self.agents.managed_agents():
            self.agent_combo.addItem(f"{a.name}  {a.url}", a.url)
        if cur:
            self.agent_combo.setCurrentIndex(max(0, self.agent_combo.findData(cur)))
        self._update_buttons()

    def _browse_source(self) -> None:
        path = QFileDialog.getExistingDirectory(self, self.tr("Export folder"), start_dir(self.source_edit.text(), self.workspace, "models"))
        if path:
            self.source_edit.setText(path)

    def _browse_out(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, self.tr("Bundle"), start_dir(self.out_edit.text(), self.workspace, "bundles"),
                                              filter=self.tr("Bundles (*.tar)"))
        if path:
            self.out_edit.setText(path)

    def state_bound(self) -> None:
        self.agents.bind_state(self.state, self.state_signals)

    def context_changed(self) -> None:
        if self.workspace is not None:
            self._follow_model()
            self.agents.set_workspace(self.workspace)
            self._fill_agents()
        self._follow_board()

    def state_changed(self, topic: str, payload: object) -> None:
        if topic == "device_state":  # an agent's board is known once it answers
            self._follow_board()

    def _follow_model(self) -> None:
        """The current model becomes the Export field while the field still shows what the page put there
        (an ONNX model: its export folder when it has parts, so they travel together)."""
        entry = self.workspace.model() if self.workspace is not None else None
        if entry is None:
            return
        path = self.workspace.resolve(entry)
        if entry.kind == "onnx" and path.is_file() and entry.artifacts.get("parts"):
            path = path.parent
        elif entry.kind != "onnx" and self.source_edit.text():
            return  # an HF folder is no bundle source: keep what is there
        current = self.source_edit.text().strip()
        if current in ("", self._auto_source) and current != str(path):
            self.source_edit.setText(str(path))
        self._auto_source = str(path)

    def open_payload(self, payload: object) -> None:
        """An .onnx file or export folder (the export result's "Package for a board"), or
        {"model": path, "board"?: id, "name"?: str}."""
        spec = payload if isinstance(payload, dict) else {"model": payload} if isinstance(payload, (str, Path)) \
            else {}
        model = spec.get("model") or spec.get("source") or spec.get("path")
        if model:
            self.source_edit.setText(str(model))
            self.name_edit.setText(str(spec.get("name") or ""))
            self.bundle_path = None
            self._update_buttons()
        if spec.get("board"):
            idx = self.board_combo.findData(str(spec["board"]))
            if idx >= 0:
                self.board_combo.setCurrentIndex(idx)

    def focus_problem(self, problem: Problem) -> None:
        """Show the failure in place, at the field it concerns; the form's values stay as they are."""
        field = self.agent_combo if problem.source == "deploy" else self.source_edit
        self.error.show_error(problem.message, field, hint=problem.hint)
        field.setFocus()

    def _update_buttons(self) -> None:
        self.deploy_btn.setEnabled(self.bundle_path is not None and self.agent_combo.count() > 0)

    # -- actions ---------------------------------------------------------------------------------------
    def _new_key(self) -> None:
        from studio.package.keys import KeyStore

        self.error.clear_error()
        name = self.key_name_edit.text().strip()
        if not name:
            self.error.show_error(self.tr("name the new key"), self.key_name_edit, hint=self.tr("e.g. release-2026"))
            return
        try:
            KeyStore().generate(name, self.pass_edit.text())
        except StudioError as exc:
            self.error.show_error(exc.message, self.key_name_edit if "name" in exc.message else self.pass_edit,
                                  hint=exc.hint)
            return
        self.key_name_edit.clear()
        self.reload_keys(select=name)
        self.sig_log.emit(self.tr("created signing key {name}").format(name=name))

    def _default_out(self, name: str, version: str) -> Path:
        base = self.workspace.root / "bundles" if self.workspace else Path.cwd()
        return base / f"{name}-{version}.tar"

    def build(self) -> None:
        import time

        from studio.edge.trust import load_trusted_keys
        from studio.edge.verify import verify_bundle
        from studio.package.bundle import build_bundle, collect_source
        from studio.package.keys import KeyStore

        self.error.clear_error()
        src = self.source_edit.text().strip()
        if not src:
            self.error.show_error(self.tr("choose an export (an .onnx file or an export folder)"), self.source_edit)
            return
        key = self.key_combo.currentData()
        if not key:
            self.error.show_error(self.tr("no signing key: create one (name + passphrase, then New key)"),
                                  self.key_combo, hint=self.tr("or `studio keys generate NAME` in a terminal"))
            return
        board = self.board_combo.currentData()
        if not board:
            self.error.show_error(self.tr("choose the board the bundle is for"), self.board_combo,
                                  hint=self.tr("no board's accelerator is the current target; pick one in Board"))
            return
        passphrase = self.pass_edit.text()
        force = self.force_check.isChecked()
        try:
            compiled = self._compiled_source()
            name = self.name_edit.text().strip() or (compiled.stem if compiled else collect_source(Path(src)).stem)
            ssf_trust, ssf_key = self.openssf.trust(), self.openssf.signing_key()
        except StudioError as exc:
            self.error.show_error(exc.message, self.source_edit, hint=exc.hint)
            return
        version = self.version_edit.text().strip() or time.strftime("%Y%m%d.%H%M%S")
        out = Path(self.out_edit.text().strip()) if self.out_edit.text().strip() else self._default_out(name, version)
        store = KeyStore()

        def work(job: Any) -> Any:
            sk = store.load_signing_key(key, passphrase)
            rep = build_bundle(src, board, sk, out, name=name, version=version, force=force, job=job,
                               openssf_key=ssf_key, openssf_trust=ssf_trust)
            job.set_status(self.tr("verifying the bundle offline"))
            ver = verify_bundle(out, load_trusted_keys(bytes(sk.verify_key)), job)
            return rep, ver

        self.bundle_path = None
        self.files.setRowCount(0)
        set_role(self.result_card, "banner-info")
        self.result_title.setText(self.tr("Building {name} {version} for {board}…").format(name=name, version=version, board=board))
        self.result_text.setText("")
        self._update_buttons()
        self.build_btn.setEnabled(False)
        self.jobs.start("package", self.tr("Package {name} {version} for {board}").format(name=name, version=version, board=board), work, self._built, self._build_failed)

    def _built(self, res: Any) -> None:
        rep, ver = res
        self.package_report, self.verify_report = rep, ver
        self.bundle_path = Path(rep.bundle)
        if self.state.workspace is not None and self.state.model_name:
            try:  # the current model's newest bundle: what Fleet rolls out by default
                self.state.record_artifact("bundle", self.bundle_path)
            except StudioError as exc:
                self.sig_log.emit(self.tr("the bundle was not recorded for {model}: {error}").format(
                    model=self.state.model_name, error=exc.message))
        self.build_btn.setEnabled(True)
        self.progress.setValue(100)
        set_role(self.result_card, "banner-ok" if rep.verdict != "fail" else "banner-fail")
        self.result_title.setText(self.tr("✔ {name} {version} for {board}: signed and verified").format(name=rep.name, version=rep.version, board=rep.board))
        self.result_text.setText(package_result_text(rep, ver))
        fill_files_table(self.files, self.bundle_path)
        self.status_label.setText(self.tr("Bundle ready: choose an agent and deploy."))
        self.sig_log.emit(rep.render())
        self._update_buttons()

    def open_bundle(self, path: Path | None = None) -> None:
        """Deploy an existing .tar: verified against the studio's keys first (a tampered one is refused here)."""
        if (path := path or choose_bundle(self, self.workspace)) is None:
            return
        self.error.clear_error()
        self.jobs.start("package:verify", self.tr("Verify {name}").format(name=path.name), lambda job: verify_existing(path, job),
                        lambda ver, p=path: self._opened(p, ver), self._build_failed)

    def _opened(self, path: Path, ver: Any) -> None:
        self.bundle_path, self.verify_report, self.package_report = path, ver, None
        set_role(self.result_card, "banner-ok")
        self.result_title.setText(self.tr("✔ {name} {version} for {board}: verified").format(name=ver.name, version=ver.version, board=ver.board))
        self.result_text.setText(ver.render())
        fill_files_table(self.files, self.bundle_path)
        self._update_buttons()

    def _build_failed(self, err: StudioError) -> None:
        self.build_btn.setEnabled(True)
        self.progress.setValue(0)
        self.files.setRowCount(0)
        self.status_label.setText(self.tr("Packaging failed: see the message above."))
        target = (self.pass_edit if "passphrase" in err.message else self.force_check if "fails the" in err.message
                  else self.version_edit if "version" in err.message else self.name_edit if "name" in err.message
                  else self.source_edit)
        self.error.show_error(err.message, target, hint=err.hint)
        set_role(self.result_card, "banner-fail")
        self.result_title.setText(self.tr("✘ Packaging failed"))
        self.result_text.setText(err.message)
        self.sig_problem.emit(Problem("error", err.message, source="package", page=self.page_id,
                                      location=err.offending, hint=err.hint))

    def show_public_key(self) -> PublicKeyDialog | None:
        """The chosen signing key's public line: copy, save, or push to one of the managed agents."""
        if not (name := self.key_combo.currentData()):
            return None
        dlg = PublicKeyDialog(name, self, self.workspace, agents=self.agents.managed_agents(), jobs=self.jobs)
        dlg.open()
        return dlg

    def deploy(self) -> None:
        from studio.package.client import deploy_bundle, read_token_file

        url = self.agent_combo.currentData()
        agent = self.agents.agents.get(url)
        if self.bundle_path is None or agent is None:
            return
        self.error.clear_error()
        bundle = self.bundle_path

        def work(job: Any) -> Any:
            verify_existing(bundle, job)  # again right before upload: the file may have changed since
            return deploy_bundle(bundle, agent.url, read_token_file(agent.token_file), job)

        self.deploy_btn.setEnabled(False)
        self.jobs.start("deploy", self.tr("Deploy {name} to {name2}").format(name=bundle.name, name2=agent.name), work, self._deployed, self._deploy_failed)

    def _deployed(self, rep: Any) -> None:
        self.deploy_report = rep
        self.progress.setValue(100)
        self.status_label.setText(rep.render())
        self.sig_log.emit(rep.render())
        self.agents.refresh(rep.agent)
        if self.state.device(rep.agent) is not None:  # the next step (Devices, Dashboards) acts on this agent
            self.state.select_device(rep.agent)
        self._update_buttons()

    def _deploy_failed(self, err: StudioError) -> None:
        self.error.show_error(self.tr("deploy failed: {message}").format(message=err.message), self.agent_combo, hint=err.hint)
        self.sig_problem.emit(Problem("error", err.message, source="deploy", page=self.page_id,
                                      location=err.offending, hint=err.hint))
        self.agents.refresh()
        self._update_buttons()

    def _on_progress(self, handle: Any, pct: float) -> None:
        if handle.kind in ("package", "deploy"):
            self.progress.setValue(int(pct))

    def _on_status(self, handle: Any, text: str) -> None:
        if handle.kind in ("package", "deploy"):
            self.status_label.setText(text)
