"""The Triton page's left column: model, repository, batching and preprocessing -> BuildOptions.

The source, repository and name fields follow the workspace's current model until the user types into them
(a programmatic ``setText`` does not fire ``textEdited``, so only the user's own edits stop the following).
Input errors are shown beside the field (FieldError), never in a dialog; ``widgets_for`` maps what a core
error names (a CLI flag, a path) back to the control that sets it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from studio.gui.file_dialogs import start_dir
from studio.gui.theme import set_role
from studio.gui.widgets.field_error import FieldError
from studio.gui.widgets.layout import add_heading, muted_label, progress_and_status


def _tool_button(text: str, on_click: Callable[[], object], tip: str = "") -> QToolButton:
    b = QToolButton()
    b.setText(text)
    if tip:
        b.setToolTip(tip)
    b.clicked.connect(on_click)
    return b


def _edit_row(edit: QLineEdit, *buttons: QToolButton) -> QHBoxLayout:
    """``edit`` stretched beside its browse buttons."""
    row = QHBoxLayout()
    row.addWidget(edit, 1)
    for b in buttons:
        row.addWidget(b)
    return row


def model_name_for(path: Path) -> str:
    """A valid Triton model name from a model path: the export folder for ``.../NAME-onnx/model.onnx``."""
    p = Path(path)
    stem = (p.parent.name if p.stem == "model" else p.stem) if p.suffix == ".onnx" else p.name
    stem = re.sub(r"[-_]onnx$", "", stem)
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", stem).strip("._-")
    return name or "model"


def existing_versions(model_dir: Path) -> list[int]:
    """The numbered version folders a model already has (so 'next' can say which one it writes)."""
    if not model_dir.is_dir():
        return []
    return sorted(int(p.name) for p in model_dir.iterdir() if p.is_dir() and p.name.isdigit())


def _set_text(edit: QLineEdit, text: str) -> None:
    """Programmatic text (textEdited, which marks a field as the user's own, does not fire)."""
    edit.setText(text)


class RepoForm(QWidget):
    """The build form plus its Build / Check buttons, progress and status line (the page starts the jobs)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.workspace: Any = None  # studio.core.workspace.Workspace, set by the page
        self.auto_source = True
        self.auto_repo = True
        self.auto_name = True
        self._ctx: tuple[Any, Any] = (None, None)
        ll = QVBoxLayout(self)
        ll.setContentsMargins(8, 4, 8, 4)
        add_heading(ll, self.tr("Serve on Triton"),
                    self.tr("Model repository from the model's real inputs and outputs, checked before any server sees "
                            "it, then served by the local CPU tritonserver. Same as `studio triton build-repo`, "
                            "`check` and `serve-local`."))
        ll.addWidget(self._source_box())
        ll.addWidget(self._batching_box())
        ll.addWidget(self._preprocessing_box())
        self.error = FieldError(self)
        ll.addWidget(self.error)
        brow = QHBoxLayout()
        self.build_btn = QPushButton(self.tr("Build"))
        set_role(self.build_btn, "primary")
        self.build_btn.setToolTip(self.tr("write (a new version of) the model into the repository, then check it"))
        self.check_btn = QPushButton(self.tr("Check"))
        self.check_btn.setToolTip(self.tr("check every config in the repository against its ONNX model"))
        brow.addWidget(self.build_btn)
        brow.addWidget(self.check_btn)
        brow.addStretch(1)
        ll.addLayout(brow)
        self.progress, self.status_label = progress_and_status(ll, self.tr("Choose a model, then Build."))
        ll.addStretch(1)
        self._sync_enabled()

    # -- layout ----------------------------------------------------------------------------------------
    def _source_box(self) -> QGroupBox:
        box = QGroupBox(self.tr("Model and repository"))
        form = QFormLayout(box)
        self.source_edit = QLineEdit()
        self.source_edit.setPlaceholderText(self.tr(".onnx file or export folder (split exports too)"))
        self.source_edit.textEdited.connect(self._source_edited)
        self.source_edit.editingFinished.connect(self.source_changed)
        form.addRow(self.tr("Model"), _edit_row(
            self.source_edit, _tool_button(self.tr("File…"), self._browse_file, self.tr("choose an .onnx file")),
            _tool_button(self.tr("Folder…"), self._browse_folder,
                         self.tr("choose an export folder (model.onnx, or modality parts for a split export)"))))
        self.source_info = muted_label("")
        form.addRow("", self.source_info)
        self.repo_edit = QLineEdit()
        self.repo_edit.setPlaceholderText("WORKSPACE/triton-repo")  # a path pattern, as the CLI writes it
        self.repo_edit.textEdited.connect(self._repo_edited)
        form.addRow(self.tr("Repository"), _edit_row(self.repo_edit, _tool_button("…", self._browse_repo)))
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText(self.tr("model name in the repository"))
        self.name_edit.textEdited.connect(self._name_edited)
        form.addRow(self.tr("Name"), self.name_edit)
        self.flavor_combo = QComboBox()
        self.flavor_combo.addItem(self.tr("onnxruntime_onnx (production Triton)"), "onnxruntime")  # backend ids
        self.flavor_combo.addItem(self.tr("Python backend + ONNX Runtime"), "python")
        self.flavor_combo.setItemData(0, self.tr("platform: \"onnxruntime_onnx\": Triton's ONNX Runtime backend. The "
                                                 "local CPU server serves it through a generated Python-backend copy."),
                                      Qt.ItemDataRole.ToolTipRole)
        self.flavor_combo.setItemData(1, self.tr("backend: \"python\" running the same ONNX with onnxruntime (for "
                                                 "servers without the ONNX Runtime backend)"),
                                      Qt.ItemDataRole.ToolTipRole)
        self.flavor_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.flavor_combo.setMinimumContentsLength(16)
        form.addRow(self.tr("Flavour"), self.flavor_combo)
        vrow = QHBoxLayout()
        self.version_spin = QSpinBox()
        self.version_spin.setRange(0, 99_999)
        self.version_spin.setSpecialValueText(self.tr("next"))
        self.version_spin.setToolTip(self.tr("version folder to write; 'next' is one past the highest (older are kept)"))
        self.policy_edit = QLineEdit("latest:1")
        self.policy_edit.setToolTip(self.tr("version_policy: latest:N, all or specific:1,2"))
        vrow.addWidget(self.version_spin)
        vrow.addWidget(QLabel(self.tr("Policy")))
        vrow.addWidget(self.policy_edit, 1)
        form.addRow(self.tr("Version"), vrow)
        self.versions_label = muted_label("")
        form.addRow("", self.versions_label)
        return box

    def _batching_box(self) -> QGroupBox:
        sched = QGroupBox(self.tr("Batching and instances"))
        sf = QFormLayout(sched)
        self.batch_spin = QSpinBox()
        self.batch_spin.setRange(-1, 4096)
        self.batch_spin.setSpecialValueText(self.tr("auto"))
        self.batch_spin.setValue(-1)
        self.batch_spin.setToolTip(self.tr("auto: 8 when every tensor has a dynamic first dim, else 0 (no batching)"))
        sf.addRow(self.tr("Max batch size"), self.batch_spin)
        self.dyn_check = QCheckBox(self.tr("Dynamic batching"))
        self.dyn_check.toggled.connect(self._sync_enabled)
        sf.addRow("", self.dyn_check)
        drow = QHBoxLayout()
        self.preferred_edit = QLineEdit()
        self.preferred_edit.setPlaceholderText(self.tr("preferred sizes, e.g. 4, 8"))
        self.delay_spin = QSpinBox()
        self.delay_spin.setRange(0, 1_000_000)
        self.delay_spin.setSingleStep(100)
        self.delay_spin.setSuffix(" µs")
        self.delay_spin.setToolTip("max_queue_delay_microseconds")  # the config.pbtxt field: not translated
        drow.addWidget(self.preferred_edit, 1)
        drow.addWidget(QLabel(self.tr("delay")))
        drow.addWidget(self.delay_spin)
        sf.addRow("", drow)
        irow = QHBoxLayout()
        self.kind_combo = QComboBox()
        for k in ("cpu", "gpu", "auto", "model"):
            self.kind_combo.addItem(k.upper(), k)
            self.kind_combo.setItemData(self.kind_combo.count() - 1,
                                        self.tr("instance_group kind: {kind}").format(kind=f"KIND_{k.upper()}"),
                                        Qt.ItemDataRole.ToolTipRole)
        self.kind_combo.currentIndexChanged.connect(self._sync_enabled)
        self.count_spin = QSpinBox()
        self.count_spin.setRange(1, 64)
        self.count_spin.setPrefix("× ")
        self.gpus_edit = QLineEdit()
        self.gpus_edit.setPlaceholderText(self.tr("GPU ids: 0,1"))
        irow.addWidget(self.kind_combo)
        irow.addWidget(self.count_spin)
        irow.addWidget(self.gpus_edit, 1)
        sf.addRow(self.tr("Instances"), irow)
        self.warmup_check = QCheckBox(self.tr("Warm-up request (batch 1) at load"))
        sf.addRow("", self.warmup_check)
        return sched

    def _preprocessing_box(self) -> QGroupBox:
        pre = QGroupBox(self.tr("Preprocessing"))
        pf = QFormLayout(pre)
        self.tokenizer_edit = QLineEdit()
        self.tokenizer_edit.setPlaceholderText(self.tr("tokenizer.json or its folder (optional)"))
        self.tokenizer_edit.setToolTip(self.tr("adds NAME_tokenizer (text -> token ids) and the NAME_pipeline ensemble"))
        pf.addRow(self.tr("Tokenizer"), _edit_row(self.tokenizer_edit, _tool_button("…", self._browse_tokenizer)))
        return pre

    def _sync_enabled(self) -> None:
        dyn = self.dyn_check.isChecked()
        self.preferred_edit.setEnabled(dyn)
        self.delay_spin.setEnabled(dyn)
        self.gpus_edit.setEnabled(self.kind_combo.currentData() == "gpu")

    # -- following the workspace and payloads ----------------------------------------------------------
    def follow_context(self, workspace: Any, model_name: str | None) -> None:
        """The toolbar's model becomes the source when it changes (or while the source still follows it)."""
        self.workspace = workspace
        if workspace is not None and self.auto_repo:
            _set_text(self.repo_edit, str(workspace.root / "triton-repo"))
        changed = (workspace, model_name) != self._ctx
        self._ctx = (workspace, model_name)
        if workspace is not None and model_name and (changed or self.auto_source):
            entry = workspace.model(model_name)
            if entry is not None and entry.kind == "onnx":
                path = workspace.resolve(entry)
                if path.is_file() and entry.artifacts.get("parts"):  # a split export: its folder, so the
                    path = path.parent  # repository gets the part models and the BLS router, not one model
                self.set_source(path, auto=True)
        self.update_versions()

    def set_source(self, path: Path, auto: bool = False) -> None:
        """Use ``path`` as the model; the name follows it until the user types one."""
        self.auto_source = auto
        _set_text(self.source_edit, str(path))
        self.source_changed()

    def set_repo(self, path: str) -> None:
        """A repository chosen elsewhere (a payload, the folder dialog): the workspace no longer moves it."""
        self.auto_repo = False
        _set_text(self.repo_edit, path)

    def set_name(self, name: str) -> None:
        """A name chosen elsewhere (a payload): the source no longer renames it."""
        self.auto_name = False
        _set_text(self.name_edit, name)

    def _source_edited(self, _text: str) -> None:
        self.auto_source = False

    def _repo_edited(self, _text: str) -> None:
        self.auto_repo = False
        self.update_versions()

    def _name_edited(self, text: str) -> None:
        self.auto_name = not text.strip()
        self.update_versions()

    def source_changed(self) -> None:
        """Describe the source (one model, an export folder, a split export) and derive name and repository."""
        from studio.triton.repo_builder import find_parts

        text = self.source_edit.text().strip()
        if not text:
            self.source_info.setText("")
            return
        p = Path(text).expanduser()
        if self.auto_name or not self.name_edit.text().strip():
            self.auto_name = True
            _set_text(self.name_edit, model_name_for(p))
        if self.workspace is None and self.auto_repo and not self.repo_edit.text().strip():
            _set_text(self.repo_edit, str(p.parent / "triton-repo"))
        name = self.name_edit.text().strip() or "NAME"
        if not p.exists():
            self.source_info.setText(self.tr("{p} does not exist").format(p=p))
        elif p.is_dir():
            parts = find_parts(p)
            tok = (p / "tokenizer.json").is_file()
            if len(parts) >= 2:
                mods = ", ".join(pt.modality for pt in parts)
                self.source_info.setText(
                    self.tr("split export ({modalities}): builds {parts} and the BLS router {name}, which runs only "
                            "the parts a request carries").format(
                        modalities=mods, parts=", ".join(f"{name}_{pt.modality}" for pt in parts), name=name)
                    + (self.tr("; tokenizer.json found: adds a text pipeline") if tok else ""))
            else:
                onnx = sorted(p.glob("*.onnx"))
                self.source_info.setText(self.tr("export folder with {n} .onnx file(s)").format(n=len(onnx))
                                         + (self.tr("; tokenizer.json found: adds NAME_tokenizer + NAME_pipeline")
                                            if tok else ""))
        else:
            self.source_info.setText(self.tr("{name}: one model").format(name=p.name))
        self.update_versions()

    def update_versions(self) -> None:
        """Say which version 'next' writes, so a rebuild never surprises anyone by replacing one."""
        repo, name = self.repo_edit.text().strip(), self.name_edit.text().strip()
        if not repo or not name:
            self.versions_label.setText("")
            return
        have = existing_versions(Path(repo) / name)
        if have:
            self.versions_label.setText(self.tr("{name} has version(s) {join} in the repository; "
                                                "'next' writes {value}, older versions are kept").format(name=name, join=', '.join(map(str, have)), value=have[-1] + 1))
        else:
            self.versions_label.setText(self.tr("{name} is not in the repository yet: Build writes version 1").format(name=name))

    # -- browsing --------------------------------------------------------------------------------------
    def _browse_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self.tr("ONNX model"),
                                              start_dir(self.source_edit.text(), self.workspace, "models"),
                                              self.tr("ONNX models (*.onnx)"))
        if path:
            self.set_source(Path(path))

    def _browse_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, self.tr("Export folder (model.onnx or modality parts)"),
                                                start_dir(self.source_edit.text(), self.workspace, "models"))
        if path:
            self.set_source(Path(path))

    def _browse_repo(self) -> None:
        path = QFileDialog.getExistingDirectory(self, self.tr("Model repository folder"),
                                                start_dir(self.repo_edit.text(), self.workspace))
        if path:
            self.auto_repo = False
            self.repo_edit.setText(path)
            self.update_versions()

    def _browse_tokenizer(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "tokenizer.json",
                                              start_dir(self.tokenizer_edit.text() or self.source_edit.text(),
                                                        self.workspace, "models"),
                                              self.tr("Tokenizer (tokenizer.json *.json)"))
        if path:
            self.tokenizer_edit.setText(path)

    # -- options ---------------------------------------------------------------------------------------
    def options(self) -> Any:
        """BuildOptions from the form, or None after showing what is wrong next to the field."""
        from studio.triton.repo_builder import BuildOptions

        self.error.clear_error()
        src, repo, name = (self.source_edit.text().strip(), self.repo_edit.text().strip(),
                           self.name_edit.text().strip())
        if not src:
            self.error.show_error(self.tr("choose a model: an .onnx file or an export folder"), self.source_edit)
            return None
        if not repo:
            self.error.show_error(self.tr("choose a repository folder"), self.repo_edit, hint=self.tr("it is created if missing"))
            return None
        try:
            preferred = [int(x) for x in self.preferred_edit.text().replace(",", " ").split()] \
                if self.dyn_check.isChecked() else []
        except ValueError:
            self.error.show_error(self.tr("preferred batch sizes '{text}' are not whole numbers").format(text=self.preferred_edit.text()),
                                  self.preferred_edit, hint="e.g. 4, 8")
            return None
        try:
            gpus = [int(x) for x in self.gpus_edit.text().replace(",", " ").split()] \
                if self.kind_combo.currentData() == "gpu" else []
        except ValueError:
            self.error.show_error(self.tr("GPU ids '{text}' are not whole numbers").format(text=self.gpus_edit.text()), self.gpus_edit,
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

    def widgets_for(self, offending: str) -> list[QWidget]:
        """The controls a core error's ``offending`` names: a build flag, the tokenizer, repository or model."""
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
