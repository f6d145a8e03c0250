"""Triton page: an ONNX model (or split export) -> a checked model repository -> a local tritonserver.

Every step is a core call run as a job (studio.triton.repo_builder.build_repo, repo_check.check_repo,
server.LocalTritonServer): the page collects BuildOptions, shows the config.pbtxt the builder wrote and the
repository's files, lists check findings (a click marks the file and field), and starts / stops the local
CPU server off the GUI thread. "Open in Devices" hands the running server to the Devices page.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.core.errors import JobCancelled, Problem, StudioError
from studio.gui.file_dialogs import start_dir
from studio.gui.page import Page
from studio.gui.theme import colors, set_role
from studio.gui.widgets.config_view import ConfigView
from studio.gui.widgets.field_error import FieldError
from studio.gui.widgets.flow import FlowLayout
from studio.gui.widgets.layout import add_heading

TEXT_SUFFIXES = {".pbtxt", ".py", ".json", ".txt", ".model", ".yaml", ".yml", ".md"}
MAX_TEXT_BYTES = 512 * 1024
MAX_TREE_ENTRIES = 2000
LOG_LINES = 400
DEVICE_NAME = "local-triton"
PATH_ROLE = Qt.ItemDataRole.UserRole


def model_name_for(path: Path) -> str:
    """A valid Triton model name from a model path: the export folder for ``.../NAME-onnx/model.onnx``."""
    p = Path(path)
    stem = (p.parent.name if p.stem == "model" else p.stem) if p.suffix == ".onnx" else p.name
    stem = re.sub(r"[-_]onnx$", "", stem)
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", stem).strip("._-")
    return name or "model"


def existing_versions(model_dir: Path) -> list[int]:
    if not model_dir.is_dir():
        return []
    return sorted(int(p.name) for p in model_dir.iterdir() if p.is_dir() and p.name.isdigit())


def finding_location(f: Any) -> str:
    """How a finding is named in the Problems list (and how a click on it finds its way back here)."""
    return f"{f.file} [{f.field}]"


class TritonPage(Page):
    page_id = "triton"
    title = "Triton"
    scrolls_itself = True  # splitters share the height; the page fits 1280x720 as it is
    icon_name = "triton"

    def __init__(self, jobs: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(jobs, parent)
        self.build_report: Any = None  # studio.triton.repo_builder.BuildReport
        self.check_report: Any = None  # studio.triton.repo_check.CheckReport
        self.server: Any = None  # studio.triton.server.LocalTritonServer
        self.server_state = "stopped"  # stopped | starting | running | stopping | exited | failed
        self._serve_done = threading.Event()
        self._serve_done.set()
        self._serve_handle: Any = None
        self._auto_source = True
        self._auto_repo = True
        self._auto_name = True
        self._ctx: tuple[Any, Any] = (None, None)
        self._shut = False
        self._build()
        self.log_timer = QTimer(self)
        self.log_timer.setInterval(1000)
        self.log_timer.timeout.connect(self._refresh_server)
        self.jobs.sig_progress.connect(self._on_progress)
        self.jobs.sig_status.connect(self._on_status)
        self._sync_buttons()

    # -- layout ----------------------------------------------------------------------------------------
    def _build(self) -> None:
        outer = QHBoxLayout(self)
        outer.setContentsMargins(8, 8, 8, 8)
        split = QSplitter(Qt.Orientation.Horizontal)
        outer.addWidget(split)

        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(340)
        left = QWidget()
        scroll.setWidget(left)
        ll = QVBoxLayout(left)
        ll.setContentsMargins(8, 4, 8, 4)
        add_heading(ll, "Serve on Triton",
                    "Model repository from the model's real inputs and outputs, checked before any server sees "
                    "it, then served by the local CPU tritonserver. Same as `studio triton build-repo`, "
                    "`check` and `serve-local`.")

        src_box = QGroupBox("Model and repository")
        form = QFormLayout(src_box)
        row = QHBoxLayout()
        self.source_edit = QLineEdit()
        self.source_edit.setPlaceholderText(".onnx file or export folder (split exports too)")
        self.source_edit.textEdited.connect(self._source_edited)
        self.source_edit.editingFinished.connect(self._source_changed)
        fb = QToolButton()
        fb.setText("File…")
        fb.setToolTip("choose an .onnx file")
        fb.clicked.connect(self._browse_file)
        db = QToolButton()
        db.setText("Folder…")
        db.setToolTip("choose an export folder (model.onnx, or modality parts for a split export)")
        db.clicked.connect(self._browse_folder)
        row.addWidget(self.source_edit, 1)
        row.addWidget(fb)
        row.addWidget(db)
        form.addRow("Model", row)
        self.source_info = QLabel("")
        self.source_info.setWordWrap(True)
        set_role(self.source_info, "muted")
        form.addRow("", self.source_info)
        rrow = QHBoxLayout()
        self.repo_edit = QLineEdit()
        self.repo_edit.setPlaceholderText("WORKSPACE/triton-repo")
        self.repo_edit.textEdited.connect(self._repo_edited)
        rb = QToolButton()
        rb.setText("…")
        rb.clicked.connect(self._browse_repo)
        rrow.addWidget(self.repo_edit, 1)
        rrow.addWidget(rb)
        form.addRow("Repository", rrow)
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("model name in the repository")
        self.name_edit.textEdited.connect(self._name_edited)
        form.addRow("Name", self.name_edit)
        self.flavor_combo = QComboBox()
        self.flavor_combo.addItem("onnxruntime_onnx (production Triton)", "onnxruntime")
        self.flavor_combo.addItem("Python backend + ONNX Runtime", "python")
        self.flavor_combo.setItemData(0, "platform: \"onnxruntime_onnx\": Triton's ONNX Runtime backend. The local "
                                      "CPU server serves it through a generated Python-backend copy.",
                                      Qt.ItemDataRole.ToolTipRole)
        self.flavor_combo.setItemData(1, "backend: \"python\" running the same ONNX with onnxruntime (for servers "
                                      "without the ONNX Runtime backend)", Qt.ItemDataRole.ToolTipRole)
        self.flavor_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.flavor_combo.setMinimumContentsLength(16)
        form.addRow("Flavour", self.flavor_combo)
        vrow = QHBoxLayout()
        self.version_spin = QSpinBox()
        self.version_spin.setRange(0, 99_999)
        self.version_spin.setSpecialValueText("next")
        self.version_spin.setToolTip("version folder to write; 'next' is one past the highest (older are kept)")
        self.policy_edit = QLineEdit("latest:1")
        self.policy_edit.setToolTip("version_policy: latest:N, all or specific:1,2")
        vrow.addWidget(self.version_spin)
        vrow.addWidget(QLabel("Policy"))
        vrow.addWidget(self.policy_edit, 1)
        form.addRow("Version", vrow)
        self.versions_label = QLabel("")
        self.versions_label.setWordWrap(True)
        set_role(self.versions_label, "muted")
        form.addRow("", self.versions_label)
        ll.addWidget(src_box)

        sched = QGroupBox("Batching and instances")
        sf = QFormLayout(sched)
        self.batch_spin = QSpinBox()
        self.batch_spin.setRange(-1, 4096)
        self.batch_spin.setSpecialValueText("auto")
        self.batch_spin.setValue(-1)
        self.batch_spin.setToolTip("auto: 8 when every tensor has a dynamic first dim, else 0 (no batching)")
        sf.addRow("Max batch size", self.batch_spin)
        self.dyn_check = QCheckBox("Dynamic batching")
        self.dyn_check.toggled.connect(self._sync_buttons)
        sf.addRow("", self.dyn_check)
        drow = QHBoxLayout()
        self.preferred_edit = QLineEdit()
        self.preferred_edit.setPlaceholderText("preferred sizes, e.g. 4, 8")
        self.delay_spin = QSpinBox()
        self.delay_spin.setRange(0, 1_000_000)
        self.delay_spin.setSingleStep(100)
        self.delay_spin.setSuffix(" µs")
        self.delay_spin.setToolTip("max_queue_delay_microseconds")
        drow.addWidget(self.preferred_edit, 1)
        drow.addWidget(QLabel("delay"))
        drow.addWidget(self.delay_spin)
        sf.addRow("", drow)
        irow = QHBoxLayout()
        self.kind_combo = QComboBox()
        for k in ("cpu", "gpu", "auto", "model"):
            self.kind_combo.addItem(k.upper(), k)
            self.kind_combo.setItemData(self.kind_combo.count() - 1, f"instance_group kind: KIND_{k.upper()}",
                                        Qt.ItemDataRole.ToolTipRole)
        self.kind_combo.currentIndexChanged.connect(self._sync_buttons)
        self.count_spin = QSpinBox()
        self.count_spin.setRange(1, 64)
        self.count_spin.setPrefix("× ")
        self.gpus_edit = QLineEdit()
        self.gpus_edit.setPlaceholderText("GPU ids: 0,1")
        irow.addWidget(self.kind_combo)
        irow.addWidget(self.count_spin)
        irow.addWidget(self.gpus_edit, 1)
        sf.addRow("Instances", irow)
        self.warmup_check = QCheckBox("Warm-up request (batch 1) at load")
        sf.addRow("", self.warmup_check)
        ll.addWidget(sched)

        pre = QGroupBox("Preprocessing")
        pf = QFormLayout(pre)
        trow = QHBoxLayout()
        self.tokenizer_edit = QLineEdit()
        self.tokenizer_edit.setPlaceholderText("tokenizer.json or its folder (optional)")
        self.tokenizer_edit.setToolTip("adds NAME_tokenizer (text -> token ids) and the NAME_pipeline ensemble")
        tb = QToolButton()
        tb.setText("…")
        tb.clicked.connect(self._browse_tokenizer)
        trow.addWidget(self.tokenizer_edit, 1)
        trow.addWidget(tb)
        pf.addRow("Tokenizer", trow)
        ll.addWidget(pre)

        self.error = FieldError(self)
        ll.addWidget(self.error)
        brow = QHBoxLayout()
        self.build_btn = QPushButton("Build")
        set_role(self.build_btn, "primary")
        self.build_btn.setToolTip("write (a new version of) the model into the repository, then check it")
        self.build_btn.clicked.connect(self.build)
        self.check_btn = QPushButton("Check")
        self.check_btn.setToolTip("check every config in the repository against its ONNX model")
        self.check_btn.clicked.connect(self.check)
        brow.addWidget(self.build_btn)
        brow.addWidget(self.check_btn)
        brow.addStretch(1)
        ll.addLayout(brow)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setValue(0)
        ll.addWidget(self.progress)
        self.status_label = QLabel("Choose a model, then Build.")
        self.status_label.setWordWrap(True)
        set_role(self.status_label, "muted")
        ll.addWidget(self.status_label)
        ll.addStretch(1)
        split.addWidget(scroll)

        self.tabs = QTabWidget()
        self.tabs.addTab(self._repo_tab(), "Repository")
        self.tabs.addTab(self._server_tab(), "Local server")
        split.addWidget(self.tabs)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setSizes([430, 800])

    def _repo_tab(self) -> QWidget:
        w = QWidget()
        lay = QVBoxLayout(w)
        lay.setContentsMargins(6, 6, 6, 6)
        self.repo_label = QLabel("No repository yet: Build writes one.")
        set_role(self.repo_label, "subheading")
        lay.addWidget(self.repo_label)
        vsplit = QSplitter(Qt.Orientation.Vertical)
        top = QSplitter(Qt.Orientation.Horizontal)
        self.tree = QTreeWidget()
        self.tree.setMinimumWidth(200)
        self.tree.setHeaderLabels(["File", "Size"])
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setStretchLastSection(False)
        self.tree.currentItemChanged.connect(self._tree_current_changed)
        top.addWidget(self.tree)
        cw = QWidget()
        cl = QVBoxLayout(cw)
        cl.setContentsMargins(0, 0, 0, 0)
        self.config_label = QLabel("config.pbtxt")
        set_role(self.config_label, "muted")
        self.config_view = ConfigView()
        self.config_view.setPlaceholderText("the generated config.pbtxt appears here after Build")
        cl.addWidget(self.config_label)
        cl.addWidget(self.config_view, 1)
        top.addWidget(cw)
        top.setStretchFactor(0, 0)
        top.setStretchFactor(1, 1)
        top.setSizes([230, 520])
        vsplit.addWidget(top)

        fw = QWidget()
        fl = QVBoxLayout(fw)
        fl.setContentsMargins(0, 4, 0, 0)
        self.findings_label = QLabel("Check: not run yet")
        set_role(self.findings_label, "subheading")
        fl.addWidget(self.findings_label)
        self.findings_table = QTableWidget(0, 5)
        self.findings_table.setHorizontalHeaderLabels(["Severity", "File", "Field", "Message", "Hint"])
        self.findings_table.verticalHeader().setVisible(False)
        self.findings_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.findings_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.findings_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.findings_table.setWordWrap(False)
        hh = self.findings_table.horizontalHeader()
        for c in range(3):
            hh.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        hh.setSectionResizeMode(4, QHeaderView.ResizeMode.Interactive)
        hh.resizeSection(4, 180)
        hh.setStretchLastSection(False)
        self.findings_table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.findings_table.itemSelectionChanged.connect(self._finding_selected)
        fl.addWidget(self.findings_table, 1)
        self.finding_detail = QLabel("")
        self.finding_detail.setWordWrap(True)
        self.finding_detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.finding_detail.setMinimumHeight(self.finding_detail.fontMetrics().lineSpacing() * 3 + 4)
        self.finding_detail.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        fl.addWidget(self.finding_detail)
        vsplit.addWidget(fw)
        vsplit.setSizes([430, 230])
        lay.addWidget(vsplit, 1)
        return w

    def _server_tab(self) -> QWidget:
        w = QWidget()
        lay = QVBoxLayout(w)
        lay.setContentsMargins(6, 6, 6, 6)
        row = FlowLayout(spacing=6)
        row.addWidget(QLabel("Model control"))
        self.mode_combo = QComboBox()
        self.mode_combo.addItem("explicit (load every model at start)", "explicit")
        self.mode_combo.addItem("poll (pick up new versions)", "poll")
        row.addWidget(self.mode_combo)
        self.serve_btn = QPushButton("Serve locally")
        set_role(self.serve_btn, "primary")
        self.serve_btn.setToolTip("start the bundled CPU tritonserver on free loopback ports")
        self.serve_btn.clicked.connect(self.serve)
        self.stop_btn = QPushButton("Stop")
        self.stop_btn.clicked.connect(self.stop_server)
        self.devices_btn = QPushButton("Open in Devices")
        self.devices_btn.setToolTip("add this server to the workspace's devices and watch it there")
        self.devices_btn.clicked.connect(self.open_in_devices)
        row.addWidget(self.serve_btn)
        row.addWidget(self.stop_btn)
        row.addWidget(self.devices_btn)
        lay.addLayout(row)
        self.server_label = QLabel("Not running.")
        set_role(self.server_label, "subheading")
        self.server_label.setWordWrap(True)
        lay.addWidget(self.server_label)
        grid = QGridLayout()
        grid.setHorizontalSpacing(14)
        self.url_labels: dict[str, QLabel] = {}
        for i, (key, title) in enumerate((("http", "HTTP"), ("grpc", "gRPC"), ("metrics", "Metrics"))):
            k = QLabel(title)
            set_role(k, "muted")
            v = QLabel("-")
            v.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            grid.addWidget(k, i, 0)
            grid.addWidget(v, i, 1)
            self.url_labels[key] = v
        grid.setColumnStretch(1, 1)
        lay.addLayout(grid)
        self.server_note = QLabel("")
        self.server_note.setWordWrap(True)
        set_role(self.server_note, "muted")
        lay.addWidget(self.server_note)
        lay.addWidget(QLabel("Server log"))
        self.log_view = QPlainTextEdit()
        self.log_view.setReadOnly(True)
        self.log_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.log_view.setMaximumBlockCount(2000)
        set_role(self.log_view, "log")
        self.log_view.setPlaceholderText("tritonserver's log appears here while it runs")
        lay.addWidget(self.log_view, 1)
        return w

    # -- context and payloads --------------------------------------------------------------------------
    def context_changed(self) -> None:
        """The toolbar's model becomes the source when it changes (or while the source still follows it)."""
        if self.workspace is not None and self._auto_repo:
            self._set_text(self.repo_edit, str(self.workspace.root / "triton-repo"))
        changed = (self.workspace, self.model_name) != self._ctx
        self._ctx = (self.workspace, self.model_name)
        if self.workspace is not None and self.model_name and (changed or self._auto_source):
            entry = self.workspace.model(self.model_name)
            if entry is not None and entry.kind == "onnx":
                self.set_source(self.workspace.resolve(entry), auto=True)
        self._update_versions()

    def open_payload(self, payload: object) -> None:
        """A model path or export folder, {"model": path, "name"?, "repo"?}, or what a Problem names: a check
        finding's location, a file in the repository, or a build option (``--name``) of a failed build."""
        if isinstance(payload, str) and self._open_location(payload):
            return
        if isinstance(payload, dict):
            model = payload.get("model") or payload.get("path")
            if payload.get("repo"):
                self._auto_repo = False
                self._set_text(self.repo_edit, str(payload["repo"]))
            if model:
                self.set_source(Path(str(model)))
            if payload.get("name"):
                self._auto_name = False
                self._set_text(self.name_edit, str(payload["name"]))
        elif isinstance(payload, (str, Path)) and str(payload):
            p = Path(payload)
            if p.suffix == ".onnx" or p.is_dir():  # anything else (a tensor, a flag) only brings the page up
                self.set_source(p)
        self.tabs.setCurrentIndex(0)
        self._update_versions()

    def _open_location(self, text: str) -> bool:
        if self.check_report is not None:
            for i, f in enumerate(self.check_report.findings):
                if finding_location(f) == text:
                    self.tabs.setCurrentIndex(0)
                    self.findings_table.selectRow(i)
                    return True
        if text.startswith("--"):
            for w in self._widgets_for(text):
                w.setFocus()
            return True
        repo = self.repo_edit.text().strip()
        p = Path(text)
        if repo and p.exists() and (p == Path(repo) or Path(repo) in p.parents):
            self.tabs.setCurrentIndex(0)
            self.show_repo(Path(repo), select=p if p.is_file() else None)
            item = self._tree_item(p)
            if item is not None:
                self.tree.setCurrentItem(item)
            return True
        return False

    def set_source(self, path: Path, auto: bool = False) -> None:
        """Use ``path`` as the model; the name follows it until the user types one."""
        self._auto_source = auto
        self._set_text(self.source_edit, str(path))
        self._source_changed()

    @staticmethod
    def _set_text(edit: QLineEdit, text: str) -> None:
        """Programmatic text (textEdited, which marks a field as the user's own, does not fire)."""
        edit.setText(text)

    def _source_edited(self, _text: str) -> None:
        self._auto_source = False

    def _repo_edited(self, _text: str) -> None:
        self._auto_repo = False
        self._update_versions()

    def _name_edited(self, text: str) -> None:
        self._auto_name = not text.strip()
        self._update_versions()

    def _source_changed(self) -> None:
        from studio.triton.repo_builder import find_parts

        text = self.source_edit.text().strip()
        if not text:
            self.source_info.setText("")
            return
        p = Path(text).expanduser()
        if self._auto_name or not self.name_edit.text().strip():
            self._auto_name = True
            self._set_text(self.name_edit, model_name_for(p))
        if self.workspace is None and self._auto_repo and not self.repo_edit.text().strip():
            self._set_text(self.repo_edit, str(p.parent / "triton-repo"))
        name = self.name_edit.text().strip() or "NAME"
        if not p.exists():
            self.source_info.setText(f"{p} does not exist")
        elif p.is_dir():
            parts = find_parts(p)
            tok = (p / "tokenizer.json").is_file()
            if len(parts) >= 2:
                mods = ", ".join(pt.modality for pt in parts)
                self.source_info.setText(
                    f"split export ({mods}): builds {', '.join(f'{name}_{pt.modality}' for pt in parts)} and the "
                    f"BLS router {name}, which runs only the parts a request carries"
                    + ("; tokenizer.json found: adds a text pipeline" if tok else ""))
            else:
                onnx = sorted(p.glob("*.onnx"))
                self.source_info.setText(f"export folder with {len(onnx)} .onnx file(s)"
                                         + ("; tokenizer.json found: adds NAME_tokenizer + NAME_pipeline"
                                            if tok else ""))
        else:
            self.source_info.setText(f"{p.name}: one model")
        self._update_versions()

    def _update_versions(self) -> None:
        repo, name = self.repo_edit.text().strip(), self.name_edit.text().strip()
        if not repo or not name:
            self.versions_label.setText("")
            return
        have = existing_versions(Path(repo) / name)
        if have:
            self.versions_label.setText(f"{name} has version(s) {', '.join(map(str, have))} in the repository; "
                                        f"'next' writes {have[-1] + 1}, older versions are kept")
        else:
            self.versions_label.setText(f"{name} is not in the repository yet: Build writes version 1")

    # -- browsing --------------------------------------------------------------------------------------
    def _browse_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "ONNX model", start_dir(self.source_edit.text(), self.workspace, "models"), "ONNX models (*.onnx)")
        if path:
            self.set_source(Path(path))

    def _browse_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Export folder (model.onnx or modality parts)",
                                                start_dir(self.source_edit.text(), self.workspace, "models"))
        if path:
            self.set_source(Path(path))

    def _browse_repo(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Model repository folder",
                                                start_dir(self.repo_edit.text(), self.workspace))
        if path:
            self._auto_repo = False
            self.repo_edit.setText(path)
            self._update_versions()

    def _browse_tokenizer(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "tokenizer.json", start_dir(self.tokenizer_edit.text() or self.source_edit.text(), self.workspace, "models"), "Tokenizer (tokenizer.json *.json)")
        if path:
            self.tokenizer_edit.setText(path)

    # -- build and check -------------------------------------------------------------------------------
    def options(self) -> Any:
        """BuildOptions from the form, or None after showing what is wrong next to the field."""
        from studio.triton.repo_builder import BuildOptions

        self.error.clear_error()
        src, repo, name = (self.source_edit.text().strip(), self.repo_edit.text().strip(),
                           self.name_edit.text().strip())
        if not src:
            self.error.show_error("choose a model: an .onnx file or an export folder", self.source_edit)
            return None
        if not repo:
            self.error.show_error("choose a repository folder", self.repo_edit, hint="it is created if missing")
            return None
        try:
            preferred = [int(x) for x in self.preferred_edit.text().replace(",", " ").split()] \
                if self.dyn_check.isChecked() else []
        except ValueError:
            self.error.show_error(f"preferred batch sizes '{self.preferred_edit.text()}' are not whole numbers",
                                  self.preferred_edit, hint="e.g. 4, 8")
            return None
        try:
            gpus = [int(x) for x in self.gpus_edit.text().replace(",", " ").split()] \
                if self.kind_combo.currentData() == "gpu" else []
        except ValueError:
            self.error.show_error(f"GPU ids '{self.gpus_edit.text()}' are not whole numbers", self.gpus_edit,
                                  hint="e.g. 0,1")
            return None
        tok = self.tokenizer_edit.text().strip()
        return BuildOptions(
            model=Path(src).expanduser(), repo=Path(repo).expanduser(), name=name,
            flavor=self.flavor_combo.currentData(),
            max_batch_size=None if self.batch_spin.value() < 0 else self.batch_spin.value(),
            dynamic_batching=self.dyn_check.isChecked(), preferred_batch_sizes=preferred,
            max_queue_delay_us=self.delay_spin.value() if self.dyn_check.isChecked() else 0,
            instance_kind=self.kind_combo.currentData(), instance_count=self.count_spin.value(), gpus=gpus,
            warmup=self.warmup_check.isChecked(), version=self.version_spin.value() or None,
            version_policy=self.policy_edit.text().strip() or "latest:1",
            tokenizer=Path(tok).expanduser() if tok else None)

    def build(self) -> Any:
        """Start the build job (build_repo, then check_repo on the result); returns its JobHandle."""
        opts = self.options()
        if opts is None:
            return None

        def work(job: Any) -> Any:
            from studio.triton.repo_builder import build_repo
            from studio.triton.repo_check import check_repo

            report = build_repo(opts, job)
            job.set_status("checking the repository")
            return report, check_repo(opts.repo)

        self.build_btn.setEnabled(False)
        self.progress.setValue(0)
        self.status_label.setText(f"building {opts.name} into {opts.repo}…")
        return self.jobs.start(f"{self.page_id}:build", f"Build Triton repo {opts.name}", work, self._built,
                               self._build_failed)

    def _built(self, res: Any) -> None:
        report, check = res
        self.build_report = report
        self.build_btn.setEnabled(True)
        self.progress.setValue(100)
        built = ", ".join(f"{m.name} v{m.version} ({m.kind}, {m.flavor})" for m in report.models)
        self.status_label.setText(f"built {built}; clients call '{report.entry_model}'"
                                  + "".join(f"\nnote: {w}" for w in report.warnings))
        self.sig_log.emit(f"built Triton repository {report.repo}: {built}")
        self._show_check(check)
        entry = Path(report.repo) / report.entry_model / "config.pbtxt"
        self.show_repo(Path(report.repo), select=entry if entry.is_file() else None)
        self._update_versions()
        self._sync_buttons()

    def _build_failed(self, err: StudioError) -> None:
        self.build_btn.setEnabled(True)
        self.progress.setValue(0)
        if isinstance(err, JobCancelled):
            self.status_label.setText("build cancelled")
            return
        self.status_label.setText("Build failed: see the message above.")
        self.error.show_error(err.message, *self._widgets_for(err.offending or ""), hint=err.hint)

    def _widgets_for(self, offending: str) -> list[QWidget]:
        flags = {"--name": self.name_edit, "--flavor": self.flavor_combo, "--max-batch-size": self.batch_spin,
                 "--dynamic-batching": self.dyn_check, "--preferred-batch-size": self.preferred_edit,
                 "--instance-kind": self.kind_combo, "--instance-count": self.count_spin, "--gpus": self.gpus_edit,
                 "--version-policy": self.policy_edit, "--version": self.version_spin}
        if offending in flags:
            return [flags[offending]]
        src, repo, tok = (self.source_edit.text().strip(), self.repo_edit.text().strip(),
                          self.tokenizer_edit.text().strip())
        if tok and offending.startswith(tok):
            return [self.tokenizer_edit]
        if repo and offending.startswith(repo):
            return [self.version_spin] if offending.rstrip("/").split("/")[-1].isdigit() else [self.repo_edit]
        if (src and offending.startswith(src)) or ":" in offending:
            return [self.source_edit]
        return []

    def check(self) -> Any:
        repo = self.repo_edit.text().strip()
        self.error.clear_error()
        if not repo:
            self.error.show_error("choose a repository folder to check", self.repo_edit)
            return None

        def work(job: Any) -> Any:
            from studio.triton.repo_check import check_repo

            job.set_status(f"checking {repo}")
            return check_repo(repo)

        self.check_btn.setEnabled(False)
        return self.jobs.start(f"{self.page_id}:check", f"Check Triton repo {Path(repo).name}", work,
                               self._checked, self._check_failed)

    def _checked(self, report: Any) -> None:
        self.check_btn.setEnabled(True)
        self.status_label.setText(f"checked {Path(report.repo).name}: {len(report.errors)} error(s)")
        self._show_check(report)
        selected = self.config_view.path
        self.show_repo(Path(report.repo), select=Path(selected) if selected else None)
        for f in report.errors:
            self.sig_problem.emit(Problem("error", f"{f.model or 'repository'}: {f.message}", source="triton check",
                                          page=self.page_id, location=finding_location(f), hint=f.hint or None))

    def _check_failed(self, err: StudioError) -> None:
        self.check_btn.setEnabled(True)
        if not isinstance(err, JobCancelled):
            self.error.show_error(err.message, self.repo_edit, hint=err.hint)

    def _show_check(self, report: Any) -> None:
        self.check_report = report
        c = colors()
        t = self.findings_table
        t.blockSignals(True)
        t.setRowCount(len(report.findings))
        repo = Path(report.repo)
        for r, f in enumerate(report.findings):
            try:
                shown = str(Path(f.file).relative_to(repo))
            except ValueError:
                shown = f.file
            cells = [f.severity, shown, f.field, f.message, f.hint]
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(f"{f.message}\n\nhint: {f.hint}" if f.hint else f.message)
                if col == 0:
                    item.setForeground(c["fail"] if f.severity == "error" else c["warn"] if f.severity == "warning"
                                       else c["muted"])
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                t.setItem(r, col, item)
        t.blockSignals(False)
        n_err = len(report.errors)
        n_warn = sum(1 for f in report.findings if f.severity == "warning")
        models = ", ".join(f"{m.name} v{','.join(map(str, m.versions)) or '-'}" for m in report.models)
        self.findings_label.setText(f"Check: {'OK' if report.ok else 'FAILED'}: {n_err} error(s), "
                                    f"{n_warn} warning(s)  ·  {models or 'no models'}")
        set_role(self.findings_label, "ok" if report.ok else "fail")
        self.finding_detail.setText("" if report.findings else "No findings: every config matches its model.")

    def _finding_selected(self) -> None:
        rows = self.findings_table.selectionModel().selectedRows()
        if not rows or self.check_report is None:
            return
        f = self.check_report.findings[rows[0].row()]
        self.finding_detail.setText(f"{f.severity}: {f.message}" + (f"\nhint: {f.hint}" if f.hint else ""))
        path = Path(f.file)
        cfg = path if path.name == "config.pbtxt" else None
        if cfg is None and path.is_dir() and (path / "config.pbtxt").is_file() and path.name == f.model:
            cfg = path / "config.pbtxt"
        item = self._tree_item(cfg or path)
        if item is None and cfg is None:  # a missing file: its folder, else the model's config
            item = self._tree_item(path.parent)
            cfg = Path(self.check_report.repo) / f.model / "config.pbtxt" if f.model else None
        if item is not None:
            self.tree.setCurrentItem(item)
            self.tree.scrollToItem(item)
        if cfg is not None and cfg.is_file():
            self.show_file(cfg)
            self.config_view.highlight_field(f.field, f.severity)

    # -- repository view -------------------------------------------------------------------------------
    def show_repo(self, repo: Path, select: Path | None = None) -> None:
        """Fill the file tree from ``repo`` and show ``select`` (a config.pbtxt) in the viewer."""
        self.tree.blockSignals(True)
        self.tree.clear()
        count = 0

        def add(parent: QTreeWidgetItem | QTreeWidget, folder: Path, depth: int) -> None:
            nonlocal count
            try:
                entries = sorted(folder.iterdir(), key=lambda p: (not p.is_dir(), int(p.name) if p.name.isdigit()
                                                                  else 0, p.name))
            except OSError:
                return
            for p in entries:
                if p.name.startswith(".") or count >= MAX_TREE_ENTRIES:
                    continue
                count += 1
                size = "" if p.is_dir() else _human(p.stat().st_size) if p.exists() else "?"
                item = QTreeWidgetItem(parent, [p.name + ("/" if p.is_dir() else ""), size])
                item.setData(0, PATH_ROLE, str(p))
                item.setToolTip(0, str(p))
                if p.is_dir() and not p.is_symlink() and depth < 4:
                    add(item, p, depth + 1)

        add(self.tree, repo, 0)
        self.tree.expandAll()
        self.tree.blockSignals(False)
        self.repo_label.setText(f"Repository {repo.name}/  ·  {count} files and folders")
        self.repo_label.setToolTip(str(repo))
        if select is not None:
            item = self._tree_item(select)
            if item is not None:
                self.tree.setCurrentItem(item)
                self.tree.scrollToItem(item)
            self.show_file(select)

    def _tree_item(self, path: Path) -> QTreeWidgetItem | None:
        want = str(path)
        stack = [self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount())]
        while stack:
            item = stack.pop()
            if item.data(0, PATH_ROLE) == want:
                return item
            stack += [item.child(i) for i in range(item.childCount())]
        return None

    def _tree_current_changed(self, item: QTreeWidgetItem | None, _prev: QTreeWidgetItem | None) -> None:
        if item is None:
            return
        p = Path(item.data(0, PATH_ROLE))
        if p.is_dir() and (p / "config.pbtxt").is_file():
            p = p / "config.pbtxt"
        if p.is_file():
            self.show_file(p)

    def show_file(self, path: Path) -> None:
        path = Path(path)
        if not path.is_file():
            self.config_label.setText(f"{path} does not exist")
            self.config_view.show_text("", str(path))
            return
        size = path.stat().st_size
        if path.suffix in TEXT_SUFFIXES and size <= MAX_TEXT_BYTES:
            text = path.read_text(encoding="utf-8", errors="replace")
        elif path.suffix == ".onnx":
            text = f"ONNX model, {_human(size)} (inspect it on the Inspect page)"
        else:
            text = f"{_human(size)} binary file"
        try:
            shown = str(path.relative_to(Path(self.repo_edit.text().strip()).expanduser()))
        except ValueError:
            shown = str(path)
        self.config_label.setText(shown)
        self.config_label.setToolTip(str(path))
        self.config_view.show_text(text, str(path))

    # -- local server ----------------------------------------------------------------------------------
    def serve(self) -> Any:
        """Start a LocalTritonServer on free ports in a job; never blocks the GUI."""
        from studio.triton.repo_builder import repo_models
        from studio.triton.server import LocalTritonServer

        if self.server is not None and self.server_state in ("starting", "running", "stopping"):
            return None
        repo = self.repo_edit.text().strip()
        self.error.clear_error()
        if not repo or not Path(repo).is_dir():
            self.error.show_error("build a repository first (or choose an existing one)", self.repo_edit)
            return None
        mode = self.mode_combo.currentData()
        try:
            srv = LocalTritonServer(repo, model_control_mode=mode,
                                    load_models=repo_models(repo) if mode == "explicit" else ())
        except StudioError as exc:
            self.error.show_error(exc.message, self.repo_edit, hint=exc.hint)
            return None
        old = self.server
        if old is not None:  # an exited or failed one: reap its stray processes and temp folder
            old.stop(timeout=5)
            old.cleanup()
        self.server = srv
        done = threading.Event()
        self._serve_done = done

        def work(job: Any) -> Any:
            stop_watch = threading.Event()

            def watch() -> None:  # a cancel (Jobs panel, window close) ends a start-up in progress
                while not stop_watch.wait(0.2):
                    if job.cancel_requested:
                        srv.stop(timeout=5)
                        return

            threading.Thread(target=watch, name="triton-serve-cancel", daemon=True).start()
            try:
                job.set_status(f"starting tritonserver on {srv.http_url} ({mode} mode)")
                try:
                    srv.start()
                except StudioError:
                    if job.cancel_requested:  # the watcher killed it: a cancel, not a failure
                        raise JobCancelled("server start cancelled") from None
                    raise
                if job.cancel_requested:
                    srv.stop(timeout=5)
                    raise JobCancelled("server start cancelled")
                return srv
            finally:
                stop_watch.set()
                done.set()

        self._set_server_state("starting")
        self.log_view.clear()
        self.tabs.setCurrentIndex(1)
        self.log_timer.start()
        self._serve_handle = self.jobs.start(f"{self.page_id}:serve", f"Serve {Path(repo).name} locally", work,
                                             self._served, self._serve_failed)
        return self._serve_handle

    def _served(self, srv: Any) -> None:
        if srv is not self.server:
            return
        self._set_server_state("running")
        note = f"repository {srv.source_repo}"
        if srv.converted:
            note += (f"; this CPU server has no ONNX Runtime backend, so {', '.join(srv.converted)} "
                     f"{'is' if len(srv.converted) == 1 else 'are'} served through a generated Python-backend "
                     "copy (same ONNX file, run by onnxruntime)")
        self.server_note.setText(note)
        self.sig_log.emit(f"local tritonserver ready: HTTP {srv.http_url}, gRPC {srv.grpc_url}, "
                          f"metrics {srv.metrics_url}")
        self._refresh_server()

    def _serve_failed(self, err: StudioError) -> None:
        srv = self.server
        self._refresh_server()
        if srv is not None:
            srv.cleanup()
        if isinstance(err, JobCancelled) or self._shut:
            self._set_server_state("stopped")
            return
        self._set_server_state("failed")  # the window lists the failed job in Problems (its log is shown here)
        self.server_note.setText(err.message)

    def stop_server(self) -> Any:
        """Stop the server in a job (SIGTERM, then SIGKILL of its process group)."""
        srv = self.server
        if srv is None or self.server_state not in ("starting", "running", "exited"):
            return None
        if self.server_state == "starting" and self._serve_handle is not None:
            self.jobs.cancel(self._serve_handle.id)
            return None

        def work(job: Any) -> Any:
            job.set_status("stopping tritonserver")
            rc = srv.stop()
            srv.cleanup()
            return rc

        self._set_server_state("stopping")
        return self.jobs.start(f"{self.page_id}:stop", "Stop local tritonserver", work, self._stopped,
                               self._stopped)

    def _stopped(self, rc: Any) -> None:
        self.log_timer.stop()
        self._set_server_state("stopped")
        self.sig_log.emit(f"local tritonserver stopped (exit code {rc})" if not isinstance(rc, StudioError)
                          else f"stopping tritonserver: {rc.message}")

    def open_in_devices(self) -> None:
        srv = self.server
        if srv is None or self.server_state != "running":
            return
        self.sig_open_page.emit("devices", {"url": srv.http_url, "name": DEVICE_NAME,
                                            "metrics_url": srv.metrics_url})

    def _refresh_server(self) -> None:
        srv = self.server
        if srv is None:
            return
        tail = srv.log_tail(LOG_LINES)
        if tail != self.log_view.toPlainText():
            self.log_view.setPlainText(tail)
            bar = self.log_view.verticalScrollBar()
            bar.setValue(bar.maximum())
        if self.server_state == "running" and not srv.is_running():
            code = srv.proc.returncode if srv.proc is not None else None
            self._set_server_state("exited")
            self.server_note.setText(f"tritonserver exited unexpectedly (code {code}); its last log lines are below")
            self.sig_problem.emit(Problem("error", f"local tritonserver exited (code {code})", source="triton serve",
                                          page=self.page_id, hint="see the server log on the Triton page"))

    def _set_server_state(self, state: str) -> None:
        self.server_state = state
        srv = self.server
        running = state == "running"
        texts = {"starting": "Starting tritonserver…", "running": "● Running", "stopping": "Stopping…",
                 "stopped": "Not running.", "exited": "✖ Exited", "failed": "✖ Failed to start"}
        self.server_label.setText(texts.get(state, state))
        set_role(self.server_label, "ok" if running else "fail" if state in ("exited", "failed") else "subheading")
        show_urls = srv is not None and state in ("starting", "running", "stopping")
        for key, url in (("http", getattr(srv, "http_url", "")), ("grpc", getattr(srv, "grpc_url", "")),
                         ("metrics", getattr(srv, "metrics_url", ""))):
            self.url_labels[key].setText(url if show_urls else "-")
        if state == "starting":
            self.server_note.setText("")
        self._sync_buttons()

    def _sync_buttons(self) -> None:
        dyn = self.dyn_check.isChecked()
        self.preferred_edit.setEnabled(dyn)
        self.delay_spin.setEnabled(dyn)
        self.gpus_edit.setEnabled(self.kind_combo.currentData() == "gpu")
        state = self.server_state
        self.serve_btn.setEnabled(state in ("stopped", "exited", "failed"))
        self.stop_btn.setEnabled(state in ("starting", "running", "exited"))
        self.devices_btn.setEnabled(state == "running")
        self.mode_combo.setEnabled(state in ("stopped", "exited", "failed"))

    def shutdown(self) -> None:
        """Window closing: end a start-up in progress and stop the server (blocks until it is gone)."""
        self._shut = True
        self.log_timer.stop()
        srv = self.server
        if srv is None:
            return
        if self._serve_handle is not None and self._serve_handle.status == "running":
            self.jobs.cancel(self._serve_handle.id)
        for _ in range(300):  # the start-up job sees the cancel within ~0.2 s; wait for it at most 60 s
            if self._serve_done.wait(0.2):
                break
            srv.stop(timeout=5)
        srv.stop()
        srv.cleanup()
        self.server_state = "stopped"

    # -- jobs ------------------------------------------------------------------------------------------
    def _on_progress(self, handle: Any, pct: float) -> None:
        if handle.kind == f"{self.page_id}:build":
            self.progress.setValue(int(pct))

    def _on_status(self, handle: Any, text: str) -> None:
        if handle.kind in (f"{self.page_id}:build", f"{self.page_id}:check"):
            self.status_label.setText(text)
        elif handle.kind == f"{self.page_id}:serve":
            self.server_note.setText(text)


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"
