"""Compile page: an ONNX model + a board or TVM target -> a verified TVM Relax library, or with the RKNN
backend (plugins/studio-rknn) a .rknn for a Rockchip NPU; or the failing nodes.

Everything is one core call (studio.compile.api.compile_model) run as a job; this page only collects the
options, and studio.gui.compile.report_view renders the CompileReport: artifacts, parity against ONNX Runtime,
latency, the failing nodes (one click from the inspector's graph), an int8 build's per-layer error.
"""

from __future__ import annotations

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
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from studio.core.errors import Problem, StudioError
from studio.gui.compile.backends import (
    Backend,
    backends,
    board_for_report,
    compile_target_for,
    default_output,
)
from studio.gui.compile.report_view import CompileReportView
from studio.gui.file_dialogs import start_dir
from studio.gui.page import Page
from studio.gui.theme import set_role
from studio.gui.widgets.fixed_lines import FixedLinesLabel
from studio.gui.widgets.flow import keep_wrapped_height
from studio.gui.widgets.layout import add_heading, browse_row, progress_and_status


class CompilePage(Page):
    page_id = "compile"
    title = "Compile"

    def __init__(self, jobs: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(jobs, parent)
        self.report: Any = None
        self._handle: Any = None
        self.backends: dict[str, Backend] = {}
        self._followed_target: str | None = None  # the current target the choices were last set from
        self._build()
        self.reload_backends()
        self.refresh_availability()

    # -- layout ----------------------------------------------------------------------------------------
    def _build(self) -> None:
        outer = QHBoxLayout(self)
        split = QSplitter(Qt.Orientation.Horizontal)
        outer.addWidget(split)

        left = QWidget()
        ll = QVBoxLayout(left)
        add_heading(ll, self.tr("Compile for a board"),
                    self.tr("ONNX -> TVM Relax (a library for the board's CPU or GPU) or, with the RKNN backend, a .rknn "
                            "for a Rockchip NPU; checked against ONNX Runtime on random inputs. When TVM fails, the graph "
                            "is bisected to the failing nodes."))

        box = QGroupBox(self.tr("Build"))
        form = QFormLayout(box)
        self.model_edit = QLineEdit()
        self.model_edit.setPlaceholderText(self.tr("model.onnx (or a part, e.g. the vision encoder)"))
        form.addRow(self.tr("Model"), browse_row(self.model_edit, self._browse_model))
        self.backend_combo = QComboBox()
        self.backend_combo.currentIndexChanged.connect(self._backend_changed)
        form.addRow(self.tr("Backend"), self.backend_combo)
        self.precision_combo = QComboBox()
        self.precision_combo.addItem(self.tr("fp16 (float)"), "")
        self.precision_combo.addItem(self.tr("int8 (calibrated, per-layer error)"), "int8")
        self.precision_combo.currentIndexChanged.connect(self._precision_changed)
        form.addRow(self.tr("Precision"), self.precision_combo)
        self.calibration_edit = QLineEdit()
        self.calibration_edit.setPlaceholderText(self.tr("folder of .npz samples (default: 8 seeded samples)"))
        self.calibration_row = browse_row(self.calibration_edit, self._browse_calibration, "…")
        form.addRow(self.tr("Calibration"), self.calibration_row)
        self.target_combo = QComboBox()
        self.target_combo.currentIndexChanged.connect(self._target_changed)
        form.addRow(self.tr("Target"), self.target_combo)
        self.target_info = FixedLinesLabel(3)  # a long description never moves the buttons below
        form.addRow("", self.target_info)
        self.shapes_edit = QLineEdit()
        self.shapes_edit.setPlaceholderText(self.tr("for dynamic dims: pixel_values=1,3,224,224; input_ids=1,64"))
        self.shapes_edit.setToolTip(self.tr("NAME=D,D,... with sizes >= 1, several separated by ';'\n"
                                            "CLI: --shape NAME=D,D,..."))
        self.shapes_note = QLabel("")  # an old spelling, told in place (the compile goes ahead)
        self.shapes_note.setWordWrap(True)
        set_role(self.shapes_note, "warn")
        self.shapes_note.hide()
        shapes_box = QWidget()
        sl = QVBoxLayout(shapes_box)
        sl.setContentsMargins(0, 0, 0, 0)
        sl.setSpacing(2)
        sl.addWidget(self.shapes_edit)
        sl.addWidget(self.shapes_note)
        form.addRow(self.tr("Shapes"), shapes_box)
        self.out_edit = QLineEdit()
        self.out_edit.setPlaceholderText(self.tr("default: WORKSPACE/compiled/MODEL-TARGET (never the export folder)"))
        self.out_edit.setToolTip(self.tr("where the compiled module goes; never inside an export folder (a bundle made "
                                         "from that folder would carry it)"))
        self.model_edit.textChanged.connect(self._update_out_placeholder)
        form.addRow(self.tr("Output"), browse_row(self.out_edit, self._browse_out, "…"))
        self.verify_check = QCheckBox(self.tr("Verify against ONNX Runtime (parity + latency)"))
        self.verify_check.setChecked(True)
        self.simplify_check = QCheckBox(self.tr("Fold shape arithmetic first (onnxslim)"))
        self.force_check = QCheckBox(self.tr("Replace an existing output folder"))
        for cb in (self.verify_check, self.simplify_check, self.force_check):
            form.addRow("", cb)
        # never squeezed below its size when the Toolchain text under the buttons grows: the buttons stay put
        box.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        ll.addWidget(box)

        brow = QHBoxLayout()
        self.compile_btn = QPushButton(self.tr("Compile"))
        set_role(self.compile_btn, "primary")
        self.compile_btn.clicked.connect(self.start_compile)
        self.cancel_btn = QPushButton(self.tr("Cancel"))
        self.cancel_btn.setEnabled(False)
        self.cancel_btn.clicked.connect(self._cancel)
        self.package_btn = QPushButton(self.tr("Package for a board"))
        self.package_btn.setToolTip(self.tr("open Packaging with this compiled module (a signed bundle served with TVM)"))
        self.package_btn.setEnabled(False)
        self.package_btn.clicked.connect(self.package_for_board)
        brow.addWidget(self.compile_btn)
        brow.addWidget(self.cancel_btn)
        brow.addStretch(1)
        brow.addWidget(self.package_btn)
        ll.addLayout(brow)
        self.progress, self.status_label = progress_and_status(ll)
        self.error_label = QLabel("")
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        set_role(self.error_label, "error")
        self.error_label.hide()
        ll.addWidget(self.error_label)

        tools = QGroupBox(self.tr("Toolchain"))
        tl = QVBoxLayout(tools)
        self.tvm_label = QLabel("")
        self.tvm_label.setWordWrap(True)
        self.cc_label = QLabel("")
        self.cc_label.setWordWrap(True)
        self.mlc_label = QLabel("")
        self.mlc_label.setWordWrap(True)
        self.mlc_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        for w in (self.tvm_label, self.cc_label, self.mlc_label):
            tl.addWidget(w)
        ll.addWidget(tools)
        ll.addStretch(1)
        split.addWidget(keep_wrapped_height(left))

        right = CompileReportView()
        right.sig_show_node.connect(self.show_node_in_inspector)
        right.sig_layer_heat.connect(self.show_layer_error)
        self.view = right
        # the tables tests and hints refer to, owned by the view
        self.banner, self.artifacts_table, self.parity_table = right.banner, right.artifacts_table, right.parity_table
        self.parity_label, self.latency_label, self.failure_label = (right.parity_label, right.latency_label,
                                                                     right.failure_label)
        self.nodes_table, self.show_node_btn = right.nodes_table, right.show_node_btn
        split.addWidget(keep_wrapped_height(right))
        split.setSizes([460, 740])

    # -- context ---------------------------------------------------------------------------------------
    def context_changed(self) -> None:
        self._update_out_placeholder()  # the workspace decides where an empty Output field compiles to
        self._follow_target()
        if self.workspace is None or not self.model_name:
            return
        entry = self.workspace.model(self.model_name)
        if entry is None:
            return
        path = self.workspace.resolve(entry)
        if path.is_dir():
            cands = [path / "model.onnx", *sorted(path.glob("*.onnx"))]
            path = next((c for c in cands if c.is_file()), path)
        self.model_edit.setText(str(path))

    def _follow_target(self) -> None:
        """A new current target picks the compiler that builds for it (a plugin's NPU target, else TVM) and its
        board or host target; the same target again leaves the user's own choices alone."""
        t = self.target
        if not t or t == self._followed_target:
            return
        self._followed_target = t
        npu = next((b for b in self.backends.values() if t in b.targets), None)
        self.select_backend(npu.id if npu is not None else "tvm")
        self.select_target(t)

    def open_payload(self, payload: object) -> None:
        """A model path, or {"model": path, "target": id, "backend"?: id} from the inspector or packaging page."""
        if isinstance(payload, dict):
            if payload.get("model"):
                self.model_edit.setText(str(payload["model"]))
            if payload.get("backend"):
                self.select_backend(str(payload["backend"]))
            if payload.get("target"):
                self.select_target(str(payload["target"]))
        elif payload:
            self.model_edit.setText(str(payload))

    def reload_backends(self) -> None:
        """TVM and every plugin compiler; an unavailable one is listed with its reason (Toolchain says it)."""
        self.backends = {b.id: b for b in backends()}
        self.backend_combo.blockSignals(True)
        self.backend_combo.clear()
        for b in self.backends.values():
            label = self.tr("TVM Relax (built in)") if b.id == "tvm" else b.label  # plugins' labels as they come
            self.backend_combo.addItem(label if b.available else self.tr("{backend} — unavailable").format(
                backend=label), b.id)
            self.backend_combo.setItemData(self.backend_combo.count() - 1, b.reason, Qt.ItemDataRole.ToolTipRole)
        self.backend_combo.blockSignals(False)
        self._backend_changed()

    @property
    def backend(self) -> Backend:
        return self.backends.get(self.backend_combo.currentData()) or Backend("tvm", "TVM Relax (built in)")

    def select_backend(self, backend_id: str) -> None:
        idx = self.backend_combo.findData(backend_id)
        if idx >= 0:
            self.backend_combo.setCurrentIndex(idx)

    def _backend_changed(self) -> None:
        b = self.backend
        rknn_like = bool(b.precisions)
        for w in (self.precision_combo, self.calibration_row):
            w.setEnabled(rknn_like)
        self.simplify_check.setEnabled(b.id == "tvm")
        self._precision_changed()
        self.reload_targets()
        if hasattr(self, "tvm_label"):
            self.refresh_availability()

    def _precision_changed(self) -> None:
        self.calibration_row.setEnabled(bool(self.backend.precisions) and self.precision_combo.currentData() == "int8")

    def reload_targets(self) -> None:
        from studio.compile.api import list_targets

        keep = self.target_combo.currentData()
        self.target_combo.blockSignals(True)
        self.target_combo.clear()
        if self.backend.targets:
            for tid in self.backend.targets:
                self.target_combo.addItem(f"{tid}  (npu)", tid)  # an id and a device kind: not translated
        else:
            for t in list_targets():
                label = f"{t['id']}  ({t['device']})" if t["device"] else t["id"]
                self.target_combo.addItem(label, t["id"])
                self.target_combo.setItemData(self.target_combo.count() - 1, t["description"],
                                              Qt.ItemDataRole.ToolTipRole)
        idx = self.target_combo.findData(keep)
        if idx >= 0:
            self.target_combo.setCurrentIndex(idx)
        self.target_combo.blockSignals(False)
        self._target_changed()

    def select_target(self, target_id: str) -> None:
        """A compile target id; an inspector target (from the Inspect page) picks the board that runs it."""
        idx = self.target_combo.findData(target_id)
        if idx < 0:
            idx = self.target_combo.findData(compile_target_for(target_id))
        if idx >= 0:
            self.target_combo.setCurrentIndex(idx)

    def _target_changed(self) -> None:
        tid = self.target_combo.currentData()
        if not tid:
            return
        if self.backend.id != "tvm":
            self.target_info.setText(self.tr("{tid} NPU via {label}: static shapes only (give dynamic dims "
                                             "under Shapes); parity in the toolkit's simulator").format(tid=tid, label=self.backend.label))
            self._update_out_placeholder()
            return
        try:
            import json

            from studio.compile.targets import resolve_target

            t = resolve_target(tid)
            note = " ".join(t.notes)
            self.target_info.setText(self.tr("{description}. TVM target {tvm}").format(
                description=t.description, tvm=json.dumps(t.tvm)) + (f". {note}" if note else ""))
        except StudioError as err:
            self.target_info.setText(err.render())
        self._update_out_placeholder()

    def default_output(self) -> Path | None:
        """Where an empty Output field compiles to (``compile.backends.default_output``); None without a model."""
        return default_output(self.model_edit.text().strip(), self.target_combo.currentData(), self.backend.id,
                              self.workspace.root if self.workspace is not None else None)

    def _update_out_placeholder(self) -> None:
        out = self.default_output()
        self.out_edit.setPlaceholderText(self.tr("default: {out}").format(out=out) if out is not None else
                                         self.tr("default: WORKSPACE/compiled/MODEL-TARGET (never the export folder)"))

    def refresh_availability(self) -> None:
        from studio.compile.api import availability

        st = availability()
        tvm = st["tvm"]
        self.tvm_available = bool(tvm["available"])
        self.tvm_label.setText(self.tr("apache-tvm: {value}").format(value=tvm['version']) if tvm["available"]
                               else self.tr("apache-tvm: not installed. {value}").format(value=tvm['message']))
        set_role(self.tvm_label, "" if tvm["available"] else "error")
        self.cc_label.setText(self.tr("aarch64 cross compiler: {value}").format(value=st['aarch64_cc']) if st["aarch64_cc"] else
                              self.tr("aarch64 cross compiler: not installed; board builds write model.tar (objects) "
                                      "only (`make cross-toolchain` installs Debian's gcc-aarch64-linux-gnu)"))
        mlc = st["mlc_llm"]
        self.mlc_label.setText(self.tr("mlc_llm (language models): {value}").format(value=mlc['version'] or 'installed') if mlc["available"]
                               else self.tr("mlc_llm (language models): {value}").format(value=mlc['message']))
        set_role(self.mlc_label, "" if mlc["available"] else "muted")
        b = self.backend
        if b.id != "tvm":
            self.tvm_label.setText(f"{b.label}: {b.reason}")
            set_role(self.tvm_label, "" if b.available else "error")
        self.compile_btn.setEnabled(self.can_compile)
        self.compile_btn.setToolTip("" if self.can_compile else
                                    self.tr("install the backend's toolchain first (see Toolchain)"))

    @property
    def can_compile(self) -> bool:
        b = self.backend
        return bool(getattr(self, "tvm_available", False)) if b.id == "tvm" else b.available

    # -- actions ---------------------------------------------------------------------------------------
    def _browse_model(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self.tr("ONNX model"), start_dir(self.model_edit.text(), self.workspace, "models"), "ONNX (*.onnx)")
        if path:
            self.model_edit.setText(path)

    def _browse_calibration(self) -> None:
        path = QFileDialog.getExistingDirectory(self, self.tr("Calibration samples (.npz)"),
                                                start_dir(self.calibration_edit.text(), self.workspace))
        if path:
            self.calibration_edit.setText(path)

    def _browse_out(self) -> None:
        path = QFileDialog.getExistingDirectory(self, self.tr("Output folder"), start_dir(self.out_edit.text(), self.workspace, "compiled"))
        if path:
            self.out_edit.setText(path)

    def options(self) -> Any:
        """The CompileOptions the form describes; StudioError naming the bad field."""
        from studio.compile.api import CompileOptions
        from studio.core.errors import InputError
        from studio.core.shapes import read_shapes

        model = self.model_edit.text().strip()
        if not model:
            raise InputError(self.tr("no model chosen"), offending=self.tr("Model"), hint=self.tr("choose an .onnx file"))
        self.shapes_note.hide()
        parsed = read_shapes(self.shapes_edit.text(), field="Shapes", min_size=1)
        self.shapes_note.setText("\n".join(self.tr("warning: {note}").format(note=n) for n in parsed.notes))
        self.shapes_note.setVisible(bool(parsed.notes))
        shapes = parsed.shapes
        out = self.out_edit.text().strip()
        default = None if out else self.default_output()
        reports = None
        if self.workspace is not None:
            reports = self.workspace.reports_dir / f"{Path(model).stem}-{self.target_combo.currentData()}-failing.onnx"
        return CompileOptions(model=Path(model), target=str(self.target_combo.currentData()),
                              out=Path(out) if out else default, shapes=shapes, verify=self.verify_check.isChecked(),
                              simplify=self.simplify_check.isChecked() and self.backend.id == "tvm",
                              force=self.force_check.isChecked(), save_failing_subgraph=reports,
                              backend=self.backend.id,
                              quantize=str(self.precision_combo.currentData() or "") if self.backend.precisions else "",
                              calibration=Path(cal) if (cal := self.calibration_edit.text().strip())
                              and self.calibration_row.isEnabled() else None)

    def start_compile(self) -> None:
        self.error_label.hide()
        try:
            opts = self.options()
        except StudioError as err:
            self._show_error(err)
            return
        from studio.compile.api import compile_model

        self.compile_btn.setEnabled(False)
        self.cancel_btn.setEnabled(True)
        self.progress.setValue(0)
        self.status_label.setText(self.tr("starting…"))
        self._handle = self.jobs.start("compile", self.tr("compile {name} for {target}").format(name=opts.model.name, target=opts.target),
                                       lambda job: compile_model(opts, job), self._done, self._failed)
        self.jobs.sig_progress.connect(self._on_progress)
        self.jobs.sig_status.connect(self._on_status)

    def _on_progress(self, handle: Any, pct: float) -> None:
        if handle is self._handle:
            self.progress.setValue(int(pct))

    def _on_status(self, handle: Any, text: str) -> None:
        if handle is self._handle:
            self.status_label.setText(text)

    def _cancel(self) -> None:
        if self._handle is not None:
            self.jobs.cancel(self._handle.id)

    def _job_over(self) -> None:
        self.compile_btn.setEnabled(self.can_compile)
        self.cancel_btn.setEnabled(False)
        try:
            self.jobs.sig_progress.disconnect(self._on_progress)
            self.jobs.sig_status.disconnect(self._on_status)
        except (RuntimeError, TypeError):
            pass

    def _done(self, report: Any) -> None:
        self._job_over()
        self.show_report(report)
        if report.status == "succeeded" and report.out_dir and self.state.workspace is not None:
            try:  # the compiled module is one of the current model's artifacts (Package offers it next)
                if self.state.model() is not None:
                    self.state.record_artifact("compiled", Path(report.out_dir))
            except StudioError as exc:
                self.sig_log.emit(self.tr("compiled module not recorded in the workspace: {error}").format(
                    error=exc.message))

    def _failed(self, err: StudioError) -> None:
        self._job_over()
        self.progress.setValue(0)
        self._show_error(err)

    def _show_error(self, err: StudioError) -> None:
        self.error_label.setText(err.render())
        self.error_label.show()
        self.status_label.setText("")
        self.sig_problem.emit(Problem(severity="error", message=err.message, source="compile", page=self.page_id,
                                      location=err.offending, hint=err.hint))

    # -- rendering -------------------------------------------------------------------------------------
    def show_report(self, rep: Any) -> None:
        """Render a CompileReport (also used to reopen a past compile)."""
        self.report = rep
        self.view.render(rep)
        d = rep.diagnosis
        if d is not None:
            self.sig_problem.emit(Problem(severity="error", message=d.message, source="compile", page="inspect",
                                          location=d.culprit or (d.nodes[-1] if d.nodes else None), hint=d.hint,
                                          extra={"model": rep.model}))
        self.status_label.setText(self.tr("{status} in {get:.1f} s").format(status=rep.status, get=rep.timings.get('total', 0)))
        self.package_btn.setEnabled(rep.status == "succeeded")

    def show_layer_error(self) -> None:
        """The inspector on the compiled model, coloured by the toolkit's per-layer error (1 - cosine)."""
        rep = self.report
        if rep is None or not getattr(rep, "layer_errors", None):
            return
        from studio.inspect.layer_errors import node_error_heat

        heat = node_error_heat(rep.model, rep.layer_errors)
        worst = max(heat, key=heat.get) if heat else None  # centred on the worst layer
        self.sig_open_page.emit("inspect", {"model": rep.model, "heat": heat, "node": worst,
                                            "target": rep.toolchain.get("platform") or None,
                                            "heat_label": self.tr("{dtype} error (1 - cosine, rknn "
                                                                  "accuracy_analysis)").format(
                                                dtype=rep.toolchain.get("dtype", "int8"))})

    def package_for_board(self) -> None:
        """Open Packaging on the compiled folder, with the board it was compiled for (or the generic board of
        its CPU architecture)."""
        rep = self.report
        if rep is None or rep.status != "succeeded":
            return
        self.sig_open_page.emit("package", {"model": rep.out_dir, "board": board_for_report(rep)})

    def show_node_in_inspector(self, row: int | None) -> None:
        """Open the inspector's graph on a failing node (the selected one, else the culprit)."""
        if self.report is None or self.report.diagnosis is None or not self.report.diagnosis.nodes:
            return
        nodes = self.report.diagnosis.nodes
        if row is None:
            row = self.view.selected_node_row()
            row = len(nodes) - 1 if row is None else row
        rknn = getattr(self.report, "toolchain", {}).get("platform")
        self.sig_open_page.emit("inspect", {"model": self.report.model, "node": nodes[row],
                                            "target": rknn or "tvm-relax"})
