"""Step 3: export options (output, opset, dynamic axes, exporter, split, KV cache and precision, tolerances) and
the equivalent command."""

from __future__ import annotations

import shlex
from pathlib import Path

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from studio.export.api import ExportOptions, InputSpec
from studio.gui.export_wizard.common import Step, command_label, muted
from studio.gui.export_wizard.generation_box import GenerationBox
from studio.gui.file_dialogs import start_dir
from studio.gui.widgets.field_error import FieldError

# exporter names (not translated) and their notes (translated where shown, context "OptionsStep")
EXPORTERS = {"torchscript": ("TorchScript", QT_TRANSLATE_NOOP("OptionsStep", "torch.onnx.export tracing: fast; fails on "
                                                                             "some newer attention ops (GQA "
                                                                             "scaled_dot_product_attention)")),
             "dynamo": ("Dynamo", QT_TRANSLATE_NOOP("OptionsStep", "torch.export based: slower, handles newer models "
                                                                   "such as Qwen2-VL"))}
MIN_OPSET, MAX_OPSET = 9, 23


def _field_with_error(widget: QWidget, *extra: QWidget) -> tuple[QWidget, FieldError]:
    box = QWidget()
    lay = QVBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(3)
    row = QHBoxLayout()
    row.setContentsMargins(0, 0, 0, 0)
    fixed = widget.maximumWidth() < 10000  # a narrow field (opset, tolerances) stays left-aligned
    row.addWidget(widget, 0 if fixed else 1)
    for w in extra:
        row.addWidget(w)
    if fixed:
        row.addStretch(1)
    lay.addLayout(row)
    err = FieldError()
    lay.addWidget(err)
    return box, err


def _form_box(title: str) -> tuple[QGroupBox, QFormLayout]:
    """A titled group with a form: labels right-aligned beside their fields, the step's spacing."""
    box = QGroupBox(title)
    form = QFormLayout(box)
    form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    form.setHorizontalSpacing(14)
    form.setVerticalSpacing(8)
    return box, form


class OptionsStep(Step):
    title = QT_TRANSLATE_NOOP("Step", "Export options")
    nav_title = QT_TRANSLATE_NOOP("Step", "Options")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(self.tr("Where to write the model and how to export it. Every export is validated: full "
                                 "onnx.checker, shape inference and ONNX Runtime parity against PyTorch on random "
                                 "inputs, one of them with batch and sequence lengths different from the traced ones."),
                         parent)
        self.model_dir: Path | None = None
        self.signature: list[InputSpec] = []
        self.signature_edited = False  # the user changed the inferred signature: it is passed as given
        self.output_touched = False

        out_box, form = _form_box(self.tr("Output"))
        self.output = QLineEdit()
        self.output.textEdited.connect(self._output_edited)
        browse = QPushButton(self.tr("Browse…"))
        browse.clicked.connect(self._browse)
        out_field, self.output_error = _field_with_error(self.output, browse)
        form.addRow(self.tr("ONNX file"), out_field)
        self.output_note = muted(self.tr("Tokenizer, processor and config files, per-modality parts and the report are "
                                         "written next to it."))
        form.addRow("", self.output_note)

        exp_box, eform = _form_box(self.tr("Exporter"))
        self.exporter = QComboBox()
        self.exporter.setMaximumWidth(260)
        for key, (text, tip) in EXPORTERS.items():
            self.exporter.addItem(text, key)
            self.exporter.setItemData(self.exporter.count() - 1, self.tr(tip), Qt.ItemDataRole.ToolTipRole)
        self.exporter_note = muted("")
        self.exporter.currentIndexChanged.connect(
            lambda _i: self.exporter_note.setText(self.tr(EXPORTERS[self.exporter.currentData()][1])))
        self.exporter_note.setText(self.tr(EXPORTERS["torchscript"][1]))
        self.opset = QSpinBox()
        self.opset.setRange(MIN_OPSET, MAX_OPSET)
        self.opset.setValue(17)
        self.opset.setMaximumWidth(140)
        self.opset.setToolTip(self.tr("ONNX opset of the exported graph; targets constrain it (see Inspect)"))
        opset_field, self.opset_error = _field_with_error(self.opset)
        self.dynamic_box = QWidget()
        self.dynamic_lay = QHBoxLayout(self.dynamic_box)
        self.dynamic_lay.setContentsMargins(0, 0, 0, 0)
        self.dynamic_checks: dict[str, QCheckBox] = {}
        self.split = QCheckBox(self.tr("Split modalities"))
        self.split_note = muted(self.tr("Separate vision / text / audio encoder graphs plus the fusion part, each valid "
                                        "on its own, so a server can skip encoders a request does not need."))
        eform.addRow(self.tr("Exporter"), self.exporter)
        eform.addRow("", self.exporter_note)
        eform.addRow(self.tr("Opset"), opset_field)
        eform.addRow(self.tr("Dynamic axes"), self.dynamic_box)
        eform.addRow("", self.split)
        eform.addRow("", self.split_note)

        val_box, vform = _form_box(self.tr("Validation"))
        self.atol = QLineEdit("1e-4")
        self.rtol = QLineEdit("1e-3")
        for w in (self.atol, self.rtol):
            w.setMaximumWidth(140)
        atol_field, self.atol_error = _field_with_error(self.atol)
        rtol_field, self.rtol_error = _field_with_error(self.rtol)
        self.cases = QSpinBox()
        self.cases.setRange(2, 20)
        self.cases.setValue(3)
        self.cases.setMaximumWidth(140)
        vform.addRow(self.tr("Absolute tolerance"), atol_field)
        vform.addRow(self.tr("Relative tolerance"), rtol_field)
        vform.addRow(self.tr("Random input cases"), self.cases)

        self.body.addWidget(out_box)
        row = QHBoxLayout()
        row.setSpacing(12)
        row.addWidget(exp_box, 3)
        right = QVBoxLayout()
        right.addWidget(val_box)
        right.addStretch(1)
        row.addLayout(right, 2)
        self.body.addLayout(row)
        self.generation = GenerationBox()
        self.generation.sig_changed.connect(self._update_command)
        self.body.addWidget(self.generation)
        self.command = command_label(self.tr("Equivalent command:"), self.body)
        self.body.addStretch(1)
        for sig in (self.output.textChanged, self.atol.textChanged, self.rtol.textChanged):
            sig.connect(lambda _t: self._update_command())
        for sig in (self.opset.valueChanged, self.cases.valueChanged, self.exporter.currentIndexChanged):
            sig.connect(lambda _v: self._update_command())
        self.split.toggled.connect(lambda _b: self._update_command())

    # -- context ---------------------------------------------------------------------------------------
    def set_defaults(self, opset: int, exporter: str) -> None:
        self.opset.setValue(max(MIN_OPSET, min(MAX_OPSET, opset)))
        idx = self.exporter.findData(exporter)
        if idx >= 0:
            self.exporter.setCurrentIndex(idx)

    def set_source(self, model_dir: Path, label: str, signature: list[InputSpec], default_output: Path,
                   edited: bool = False, config: dict | None = None) -> None:
        """``edited``: the signature is not the inferred one (then it is passed to the export, which turns the
        default KV cache off); ``config``: the model's config.json (what decides the KV cache)."""
        self.model_dir = model_dir
        self.signature = signature
        self.signature_edited = edited
        self.generation.set_model(config or {}, [s.modality for s in signature])
        if not self.output_touched or not self.output.text().strip():
            self.output.setText(str(default_output))
        names: list[str] = []
        for s in signature:
            for v in s.dynamic_axes.values():
                if v not in names:
                    names.append(v)
        old = {k: cb.isChecked() for k, cb in self.dynamic_checks.items()}
        while self.dynamic_lay.count():
            item = self.dynamic_lay.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.dynamic_checks = {}
        for n in names:
            cb = QCheckBox(n)
            cb.setChecked(old.get(n, True))
            cb.toggled.connect(lambda _b: self._update_command())
            self.dynamic_lay.addWidget(cb)
            self.dynamic_checks[n] = cb
        if not names:
            self.dynamic_lay.addWidget(muted(self.tr("all input shapes are static in the signature")))
        self.dynamic_lay.addStretch(1)
        modalities = {s.modality for s in signature}
        self.split.setEnabled(len(modalities) > 1)
        if len(modalities) <= 1:
            self.split.setChecked(False)
        self.split.setToolTip("" if len(modalities) > 1 else self.tr("needs inputs of more than one modality"))
        self._update_command()

    def _output_edited(self, _text: str) -> None:
        self.output_touched = True

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, self.tr("Export to"), start_dir(self.output.text(), None, name="model.onnx"),
                                              self.tr("ONNX models (*.onnx)"))
        if path:
            self.output.setText(path if path.endswith(".onnx") else path + ".onnx")
            self.output_touched = True

    # -- result ----------------------------------------------------------------------------------------
    def dynamic(self) -> list[str] | None:
        if not self.dynamic_checks:
            return None
        return [n for n, cb in self.dynamic_checks.items() if cb.isChecked()]

    def _float(self, edit: QLineEdit, err: FieldError, what: str) -> float | None:
        try:
            value = float(edit.text().strip())
        except ValueError:
            err.show_error(self.tr("{what} must be a number, like 1e-4").format(what=what), edit)
            return None
        if not value > 0 or value >= 1:
            err.show_error(self.tr("{what} must be between 0 and 1 (exclusive)").format(what=what), edit)
            return None
        return value

    def validate(self) -> bool:
        return self.options() is not None

    def options(self, report: Path | None = None) -> ExportOptions | None:
        """The ExportOptions the fields describe, or None with the errors shown beside the fields."""
        for e in (self.output_error, self.atol_error, self.rtol_error, self.opset_error):
            e.clear_error()
        ok = True
        text = self.output.text().strip()
        out = Path(text).expanduser() if text else None
        if out is None:
            self.output_error.show_error(self.tr("enter where to write the model"), self.output)
            ok = False
        elif out.suffix.lower() != ".onnx":
            self.output_error.show_error(self.tr("'{name}' must end in .onnx").format(name=out.name), self.output)
            ok = False
        elif out.is_dir():
            self.output_error.show_error(self.tr("{out} is a folder").format(out=out), self.output, hint=self.tr("name a file such as model.onnx"))
            ok = False
        elif self.model_dir is not None and out.resolve().parent == self.model_dir.resolve():
            self.output_error.show_error(self.tr("the output would be written into the source model folder"), self.output,
                                         hint=self.tr("choose another folder; the export writes tokenizer files too"))
            ok = False
        atol = self._float(self.atol, self.atol_error, self.tr("absolute tolerance"))
        rtol = self._float(self.rtol, self.rtol_error, self.tr("relative tolerance"))
        if atol is None or rtol is None or not ok or self.model_dir is None:
            return None
        if out.exists():
            self.output_error.setText(self.tr("{name} exists and is replaced only when the new export succeeds").format(name=out.name))
            self.output_error.setVisible(True)
        opts = self._options_from_fields(out, atol, rtol, report)
        return opts if self.generation.explain(opts) else None

    def _options_from_fields(self, out: Path, atol: float = 1e-4, rtol: float = 1e-3,
                             report: Path | None = None) -> ExportOptions:
        assert self.model_dir is not None
        return ExportOptions(model_dir=self.model_dir, output=out,
                             input_signature=list(self.signature) if self.signature_edited else None,
                             opset=self.opset.value(), dynamic=self.dynamic(),
                             exporter=self.exporter.currentData(), split_modalities=self.split.isChecked(),
                             atol=atol, rtol=rtol, report=report, validation_cases=self.cases.value(),
                             with_past=self.generation.with_past(), precision=self.generation.precision(),
                             kv_cache_dtype=self.generation.kv_cache_dtype())

    def _update_command(self) -> None:
        if self.model_dir is None:
            self.command.setText("")
            return
        parts = ["studio", "export", str(self.model_dir), "--output", self.output.text().strip() or "model.onnx",
                 "--opset", str(self.opset.value()), "--exporter", str(self.exporter.currentData())]
        if self.signature and self.signature_edited:
            parts += ["--input-signature", ",".join(f"{s.modality}:{s.name}" for s in self.signature)]
        self.generation.explain(self._options_from_fields(Path(self.output.text().strip() or "model.onnx")))
        past = self.generation.with_past()
        if past is not None:
            parts.append("--with-past" if past else "--no-with-past")
        if self.generation.kv_cache_dtype() != "float32":
            parts += ["--kv-cache-dtype", self.generation.kv_cache_dtype()]
        prec = self.generation.precision()
        if prec:
            parts += ["--precision", ",".join(f"{k}={v}" for k, v in prec.items())]
        dyn = self.dynamic()
        if dyn:
            parts += ["--dynamic", ",".join(dyn)]
        if self.split.isChecked():
            parts.append("--split-modalities")
        parts += ["--atol", self.atol.text().strip(), "--rtol", self.rtol.text().strip()]
        self.command.setText(" ".join(shlex.quote(p) for p in parts))
