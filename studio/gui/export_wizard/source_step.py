"""Step 1: which HuggingFace model to export (a workspace model, a folder, or a built-in sample)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QT_TRANSLATE_NOOP, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QWidget,
)

from studio.core.workspace import Workspace
from studio.export.demo import DEMO_SAMPLES
from studio.gui.export_wizard.common import Step, muted
from studio.gui.file_dialogs import start_dir
from studio.gui.theme import set_role
from studio.gui.widgets.field_error import FieldError


@dataclass
class SourceChoice:
    """What the source step resolved to: the model folder and, for a sample not yet written, its name."""

    model_dir: Path
    label: str  # short name for titles and the workspace entry
    sample: str | None = None  # write this sample into model_dir first


class SourceStep(Step):
    title = QT_TRANSLATE_NOOP("Step", "Choose the model")
    nav_title = QT_TRANSLATE_NOOP("Step", "Source")
    sig_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(self.tr("Pick a HuggingFace model saved with save_pretrained: one already in the workspace, "
                                 "any model folder on disk, or a built-in tiny sample (random weights, no download)."),
                         parent)
        self.workspace: Workspace | None = None
        box = QGroupBox(self.tr("Source"))
        grid = QGridLayout(box)
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(8)
        grid.setColumnStretch(1, 1)
        self.group = QButtonGroup(self)
        self.rb_workspace = QRadioButton(self.tr("Workspace model"))
        self.rb_folder = QRadioButton(self.tr("Model folder"))
        self.rb_sample = QRadioButton(self.tr("Built-in sample"))
        for i, rb in enumerate((self.rb_workspace, self.rb_folder, self.rb_sample)):
            self.group.addButton(rb, i)
        self.ws_combo = QComboBox()
        self.ws_combo.setMinimumWidth(320)
        self.folder = QLineEdit()
        self.folder.setPlaceholderText(self.tr("/path/to/hf-model  (holds config.json and the weights)"))
        browse = QPushButton(self.tr("Browse…"))
        browse.clicked.connect(self._browse)
        folder_row = QHBoxLayout()
        folder_row.addWidget(self.folder, 1)
        folder_row.addWidget(browse)
        self.sample_combo = QComboBox()
        self.sample_combo.addItems(list(DEMO_SAMPLES))
        self.sample_dest = muted("")
        grid.addWidget(self.rb_workspace, 0, 0)
        grid.addWidget(self.ws_combo, 0, 1)
        grid.addWidget(self.rb_folder, 1, 0)
        grid.addLayout(folder_row, 1, 1)
        grid.addWidget(self.rb_sample, 2, 0)
        grid.addWidget(self.sample_combo, 2, 1)
        grid.addWidget(self.sample_dest, 3, 1)
        self.error = FieldError()
        grid.addWidget(self.error, 4, 0, 1, 2)
        self.body.addWidget(box)
        self.busy = QLabel("")
        set_role(self.busy, "muted")
        self.body.addWidget(self.busy)
        self.body.addStretch(1)
        self.rb_sample.setChecked(True)
        self.group.idToggled.connect(lambda *_: self._sync())
        self.folder.textEdited.connect(lambda _t: self.rb_folder.setChecked(True))
        self.ws_combo.activated.connect(lambda _i: self.rb_workspace.setChecked(True))
        self.sample_combo.activated.connect(lambda _i: self.rb_sample.setChecked(True))
        self.sample_combo.currentIndexChanged.connect(lambda _i: self._sync())
        self.touched = False
        self._sync()

    # -- context ---------------------------------------------------------------------------------------
    def set_workspace(self, ws: Workspace | None, current_model: str | None) -> None:
        """Refill the workspace combo; follow the toolbar's model until the user picks a source."""
        self.workspace = ws
        keep = self.ws_combo.currentData()
        self.ws_combo.clear()
        hf = [m for m in (ws.models if ws else []) if m.kind == "hf"]
        for m in hf:
            self.ws_combo.addItem(f"{m.name}   ({m.source or m.path})", m.name)
        self.rb_workspace.setEnabled(bool(hf))
        self.ws_combo.setEnabled(bool(hf))
        if not hf:
            self.ws_combo.addItem(self.tr("(no HuggingFace models in the workspace)"), None)
        cur = ws.origin(current_model) if ws and current_model else None  # an export's own HF model
        pick = cur.name if cur is not None and not self.touched else keep
        idx = self.ws_combo.findData(pick)
        if idx >= 0:
            self.ws_combo.setCurrentIndex(idx)
        if not self.touched and cur is not None:
            self.rb_workspace.setChecked(True)
        elif not hf and self.rb_workspace.isChecked():
            self.rb_sample.setChecked(True)
        self._sync()

    def set_samples(self, names: list[str]) -> None:
        keep = self.sample_combo.currentText()
        self.sample_combo.blockSignals(True)
        self.sample_combo.clear()
        self.sample_combo.addItems(names)
        if keep in names:
            self.sample_combo.setCurrentText(keep)
        self.sample_combo.blockSignals(False)
        self._sync()

    def set_folder(self, path: Path | str) -> None:
        self.folder.setText(str(path))
        self.rb_folder.setChecked(True)
        self.touched = True

    def _browse(self) -> None:
        path = QFileDialog.getExistingDirectory(self, self.tr("HuggingFace model folder"), start_dir(self.folder.text(), self.workspace, "models"))
        if path:
            self.set_folder(path)

    def _sample_dir(self, name: str) -> Path:
        if self.workspace is not None:
            return self.workspace.models_dir / name
        return Path(tempfile.gettempdir()) / "deployment-studio-samples" / name

    def _sync(self) -> None:
        name = self.sample_combo.currentText()
        if name:
            dest = self._sample_dir(name)
            state = self.tr("already written") if (dest / "config.json").is_file() else self.tr("will be written")
            self.sample_dest.setText(self.tr("{state} to {dest}").format(state=state, dest=dest))
        self.error.clear_error()
        self.sig_changed.emit()

    # -- result ----------------------------------------------------------------------------------------
    def mark_touched(self) -> None:
        self.touched = True

    def choice(self) -> SourceChoice | None:
        """Validate and resolve the chosen source; errors appear under the fields."""
        self.error.clear_error()
        if self.rb_workspace.isChecked():
            name = self.ws_combo.currentData()
            entry = self.workspace.model(name) if self.workspace and name else None
            if entry is None:
                self.error.show_error(self.tr("choose a model of the workspace"), self.ws_combo)
                return None
            path = self.workspace.resolve(entry)
            return self._check_dir(path, entry.name, self.ws_combo)
        if self.rb_folder.isChecked():
            text = self.folder.text().strip()
            if not text:
                self.error.show_error(self.tr("enter the model folder"), self.folder,
                                      hint=self.tr("a folder written by save_pretrained (config.json and weights)"))
                return None
            path = Path(text).expanduser()
            return self._check_dir(path, path.name, self.folder)
        name = self.sample_combo.currentText()
        if not name:
            self.error.show_error(self.tr("no sample models are available"), self.sample_combo)
            return None
        dest = self._sample_dir(name)
        return SourceChoice(dest, name, sample=None if (dest / "config.json").is_file() else name)

    def _check_dir(self, path: Path, label: str, widget: QWidget) -> SourceChoice | None:
        if not path.exists():
            self.error.show_error(self.tr("{path} does not exist").format(path=path), widget, hint=self.tr("check the path"))
            return None
        if not path.is_dir():
            self.error.show_error(self.tr("{path} is a file, not a model folder").format(path=path), widget,
                                  hint=self.tr("choose the folder that holds config.json"))
            return None
        if not (path / "config.json").is_file():
            self.error.show_error(self.tr("{path} has no config.json: not a HuggingFace model folder").format(path=path), widget,
                                  hint=self.tr("choose a folder written by save_pretrained"))
            return None
        return SourceChoice(path, label)

    def show_error(self, message: str, hint: str | None = None) -> None:
        widget = {0: self.ws_combo, 1: self.folder, 2: self.sample_combo}.get(self.group.checkedId(), self.folder)
        self.error.show_error(message, widget, hint=hint)
