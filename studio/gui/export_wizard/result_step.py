"""Step 5: the export's outcome: banner, validation table, outputs, or a readable failure diagnosis."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.core.units import human_bytes
from studio.export.api import ExportReport
from studio.gui.export_wizard.common import Step, muted
from studio.gui.export_wizard.try_it import TryItPanel
from studio.gui.theme import colors, set_role
from studio.gui.widgets.flow import FlowLayout
from studio.gui.widgets.graph_snippet import GraphSnippetView
from studio.gui.widgets.tables import readonly_table

STAGES = {"load": QT_TRANSLATE_NOOP("ExportStages", "loading the model"), "trace": QT_TRANSLATE_NOOP("ExportStages", "tracing the model"), "export": QT_TRANSLATE_NOOP("ExportStages", "ONNX export"),
          "checker": "onnx.checker", "shape_inference": QT_TRANSLATE_NOOP("ExportStages", "shape inference"), "ort_load": QT_TRANSLATE_NOOP("ExportStages", "ONNX Runtime load"),
          "parity": QT_TRANSLATE_NOOP("ExportStages", "parity with PyTorch"), "tokenizer": QT_TRANSLATE_NOOP("ExportStages", "tokenizer check"), "split": QT_TRANSLATE_NOOP("ExportStages", "modality split")}
ERROR_CLASSES = {"unsupported_op_at_opset": QT_TRANSLATE_NOOP("ExportStages", "Operator not supported at this opset"),
                 "data_dependent_control_flow": QT_TRANSLATE_NOOP("ExportStages", "Data-dependent control flow"),
                 "shape_not_dynamic": QT_TRANSLATE_NOOP("ExportStages", "Shape not declared dynamic"), "dtype": QT_TRANSLATE_NOOP("ExportStages", "Data type mismatch"),
                 "tokenizer_mismatch": QT_TRANSLATE_NOOP("ExportStages", "Tokenizer mismatch"), "parity": QT_TRANSLATE_NOOP("ExportStages", "Outputs diverge from PyTorch"),
                 "parity_mismatch": QT_TRANSLATE_NOOP("ExportStages", "Outputs diverge from PyTorch")}


def _stage_word(stage: str) -> str:
    """An export stage id (studio.export's Diagnosis.stage) in words, in the current language."""
    return QCoreApplication.translate("ExportStages", STAGES[stage]) if stage in STAGES else stage


def _class_word(error_class: str, default: str) -> str:
    return QCoreApplication.translate("ExportStages", ERROR_CLASSES[error_class]) \
        if error_class in ERROR_CLASSES else default


def _label(text: str, role: str | None = None, selectable: bool = False) -> QLabel:
    lab = QLabel(text)
    lab.setWordWrap(True)
    if role:
        set_role(lab, role)
    if selectable:
        lab.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return lab


def _table(headers: list[str]) -> QTableWidget:
    t = readonly_table(headers, alternating=True)
    t.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
    return t


def _fit_height(t: QTableWidget, max_rows: int = 14) -> None:
    """Tables show all their rows (up to a cap) so the page scrolls as one, not table by table."""
    rows = min(t.rowCount(), max_rows)
    h = t.horizontalHeader().height() + sum(t.rowHeight(r) for r in range(rows)) + 2 * t.frameWidth() + 2
    t.setMinimumHeight(h)
    t.setMaximumHeight(h if t.rowCount() <= max_rows else h + 2)


class ResultStep(Step):
    title = QT_TRANSLATE_NOOP("Step", "Result")
    nav_title = QT_TRANSLATE_NOOP("Step", "Result")
    sig_open_inspector = Signal(str)
    sig_open_report = Signal(str)
    sig_open_page = Signal(str, object)  # page id, payload: the one-click links to Triton, Package, Compile

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("", parent)
        self.intro.setVisible(False)
        self.heading.setVisible(False)
        self.report: ExportReport | None = None
        self.job_log: list[str] = []
        # no scroll area of its own: the wizard's steps already scroll (two nested vertical scroll bars, and
        # content cut at the right between them, is what a 1366x768 screen showed)
        inner = QWidget()
        lay = QVBoxLayout(inner)
        lay.setContentsMargins(0, 0, 8, 0)
        lay.setSpacing(12)
        self.body.addWidget(inner, 1)

        self.banner = QFrame()
        b = QVBoxLayout(self.banner)
        b.setContentsMargins(16, 12, 16, 12)
        self.banner_title = _label("", "subheading")
        self.banner_detail = _label("", selectable=True)
        b.addWidget(self.banner_title)
        b.addWidget(self.banner_detail)
        lay.addWidget(self.banner)

        actions = FlowLayout()  # the six actions wrap on a narrow window instead of running off it
        self.btn_report = QPushButton(self.tr("Open report"))
        self.btn_report.clicked.connect(self._open_report)
        self.btn_inspect = QPushButton(self.tr("Open in inspector"))
        set_role(self.btn_inspect, "primary")
        self.btn_inspect.clicked.connect(self._open_inspector)
        self.btn_folder = QPushButton(self.tr("Show output folder"))
        self.btn_folder.clicked.connect(self._open_folder)
        self.btn_triton = QPushButton(self.tr("Serve on Triton"))
        self.btn_triton.setToolTip(self.tr("build a Triton model repository from this export and serve it locally"))
        self.btn_triton.clicked.connect(self._open_triton)
        self.btn_package = QPushButton(self.tr("Package for a board"))
        self.btn_package.setToolTip(self.tr("sign this export as an edge bundle for a board and deploy it to an agent"))
        self.btn_package.clicked.connect(self._open_package)
        self.btn_compile = QPushButton(self.tr("Compile"))
        self.btn_compile.setToolTip(self.tr("compile the model with TVM Relax for a board or this host"))
        self.btn_compile.clicked.connect(self._open_compile)
        actions.addWidget(self.btn_inspect)
        actions.addWidget(self.btn_triton)
        actions.addWidget(self.btn_package)
        actions.addWidget(self.btn_compile)
        actions.addWidget(self.btn_report)
        actions.addWidget(self.btn_folder)
        lay.addLayout(actions)
        self.try_it = TryItPanel()  # generation exports: run the parts locally, the answer streamed
        lay.addWidget(self.try_it)

        # failure diagnosis
        self.diag_box = QGroupBox(self.tr("What went wrong"))
        d = QVBoxLayout(self.diag_box)
        d.setSpacing(10)
        grid = QGridLayout()
        grid.setHorizontalSpacing(16)
        grid.setVerticalSpacing(6)
        self.diag_fields: dict[str, QLabel] = {}
        for i, (key, title) in enumerate([("stage", self.tr("Stage")), ("error_class", self.tr("Error class")), ("node", self.tr("ONNX node")),
                                          ("op_type", self.tr("Operator")), ("module", self.tr("PyTorch module"))]):
            k = _label(title, "muted")
            v = _label("", selectable=True)
            grid.addWidget(k, i, 0, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(v, i, 1)
            self.diag_fields[key] = v
            self.diag_fields[key + "_key"] = k
        grid.setColumnStretch(1, 1)
        d.addLayout(grid)
        self.diag_message = _label("", "code", selectable=True)
        d.addWidget(self.diag_message)
        self.fix_frame = QFrame()
        set_role(self.fix_frame, "fix")
        f = QVBoxLayout(self.fix_frame)
        f.setContentsMargins(12, 8, 12, 8)
        f.addWidget(_label(self.tr("Suggested fix"), "ok"))
        self.diag_fix = _label("", selectable=True)
        f.addWidget(self.diag_fix)
        d.addWidget(self.fix_frame)
        self.snippet_title = muted(self.tr("Graph around the failing node (highlighted):"))
        d.addWidget(self.snippet_title)
        self.snippet = GraphSnippetView()
        self.snippet.setMinimumHeight(340)
        d.addWidget(self.snippet)
        raw_row = QHBoxLayout()
        self.btn_raw = QPushButton(self.tr("Show raw log"))
        self.btn_raw.setCheckable(True)
        self.btn_raw.toggled.connect(self._toggle_raw)
        raw_row.addWidget(self.btn_raw)
        raw_row.addStretch(1)
        d.addLayout(raw_row)
        self.raw_log = QPlainTextEdit()
        self.raw_log.setReadOnly(True)
        self.raw_log.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        set_role(self.raw_log, "log")
        self.raw_log.setMinimumHeight(220)
        self.raw_log.setVisible(False)
        d.addWidget(self.raw_log)
        lay.addWidget(self.diag_box)

        # summary
        self.summary_box = QGroupBox(self.tr("Model"))
        sg = QGridLayout(self.summary_box)
        sg.setHorizontalSpacing(16)
        sg.setVerticalSpacing(6)
        self.summary: dict[str, QLabel] = {}
        rows = [("model", self.tr("Model")), ("tokenizer", self.tr("Tokenizer")), ("export", self.tr("Export")), ("checks", self.tr("Checks")),
                ("time", self.tr("Time"))]
        for i, (key, title) in enumerate(rows):
            sg.addWidget(_label(title, "muted"), i, 0, Qt.AlignmentFlag.AlignTop)
            v = _label("", selectable=True)
            sg.addWidget(v, i, 1)
            self.summary[key] = v
        sg.setColumnStretch(1, 1)
        self.warnings = _label("", "warn", selectable=True)
        sg.addWidget(self.warnings, len(rows), 0, 1, 2)
        lay.addWidget(self.summary_box)

        self.val_box = QGroupBox(self.tr("Validation: ONNX Runtime against PyTorch"))
        v = QVBoxLayout(self.val_box)
        self.tolerance = muted("")
        v.addWidget(self.tolerance)
        self.val_table = _table([QT_TRANSLATE_NOOP("Columns", "Case"), QT_TRANSLATE_NOOP("Columns", "Graph"), QT_TRANSLATE_NOOP("Columns", "Input shapes"), QT_TRANSLATE_NOOP("Columns", "Output"), QT_TRANSLATE_NOOP("Columns", "Max abs"), QT_TRANSLATE_NOOP("Columns", "Max rel"), QT_TRANSLATE_NOOP("Columns", "Result")])
        hh = self.val_table.horizontalHeader()
        for col in range(7):
            hh.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        v.addWidget(self.val_table)
        lay.addWidget(self.val_box)

        self.out_box = QGroupBox(self.tr("Files written"))
        o = QVBoxLayout(self.out_box)
        self.out_table = _table([QT_TRANSLATE_NOOP("Columns", "File"), QT_TRANSLATE_NOOP("Columns", "Kind"), QT_TRANSLATE_NOOP("Columns", "Modality"), QT_TRANSLATE_NOOP("Columns", "Size")])
        oh = self.out_table.horizontalHeader()
        oh.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in (1, 2, 3):
            oh.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        o.addWidget(self.out_table)
        lay.addWidget(self.out_box)
        lay.addStretch(1)

    # -- filling ---------------------------------------------------------------------------------------
    def show_report(self, report: ExportReport, job_log: list[str] | None = None) -> None:
        self.report = report
        self.job_log = list(job_log or [])
        ok = report.status == "succeeded"
        model = Path(report.options.get("output", "")) if report.options.get("output") else None
        cases = report.validation.cases
        if ok:
            set_role(self.banner, "banner-ok")
            set_role(self.banner_title, "ok")
            self.banner_title.setText(self.tr("Export succeeded and validated"))
            worst = max((o.max_abs for c in cases for o in c.outputs), default=0.0)
            gen = report.generation
            said = ""
            if gen is not None and gen.status != "not run":
                n_ok = sum(bool(p.get("match")) for p in gen.prompts)
                said = " " + (self.tr("KV cache ({dtype}): greedy generation token-exact with HF generate() on {ok} of "
                                      "{n} prompt(s): Try it below.") if gen.status == "passed" else
                              self.tr("KV cache ({dtype}): greedy generation differs from HF generate() on {ok} of "
                                      "{n} prompt(s): Try it below.")).format(
                    dtype=gen.cache.get("dtype", "float32"), ok=n_ok, n=len(gen.prompts))
            self.banner_detail.setText(self.tr("{value} passed onnx.checker, shape inference and "
                                               "ONNX Runtime parity on {n} case(s) (worst max abs error "
                                               "{worst:.2e}).{said} It was added to the workspace.").format(value=model or 'model.onnx', n=len(cases), worst=worst, said=said))
        elif report.status == "cancelled":
            set_role(self.banner, "banner-info")
            set_role(self.banner_title, "warn")
            self.banner_title.setText(self.tr("Export cancelled"))
            self.banner_detail.setText(self.tr("Nothing was left at the output path."))
        else:
            set_role(self.banner, "banner-fail")
            set_role(self.banner_title, "fail")
            dg = report.diagnosis
            stage = _stage_word(dg.stage) if dg else self.tr("an unknown stage")
            cls = _class_word(dg.error_class, dg.error_class.replace("_", " ")) if dg else ""
            self.banner_title.setText(self.tr("Export failed at {stage}").format(stage=stage)
                                      + (f": {cls.lower()}" if cls else ""))
            self.banner_detail.setText(self.tr("Nothing was written at the output path. The diagnosis below says "
                                               "where it broke and what to change."))
        self.btn_inspect.setEnabled(ok and model is not None)
        for b in (self.btn_triton, self.btn_package, self.btn_compile):
            b.setEnabled(ok and model is not None)
        self.btn_report.setEnabled(self._report_path() is not None)
        self.try_it.set_export(model if ok else None)
        self.btn_folder.setEnabled(model is not None and model.parent.is_dir())
        self._fill_diagnosis(report)
        self._fill_summary(report)
        self._fill_validation(report)
        self._fill_outputs(report)
        area = self.parentWidget()
        while area is not None and not isinstance(area, QScrollArea):
            area = area.parentWidget()
        if area is not None:  # a new result starts at its top
            area.verticalScrollBar().setValue(0)

    def _fill_diagnosis(self, report: ExportReport) -> None:
        dg = report.diagnosis
        self.diag_box.setVisible(dg is not None)
        self.btn_raw.setChecked(False)
        if dg is None:
            return
        values = {"stage": _stage_word(dg.stage) + f"  ({dg.stage})",
                  "error_class": _class_word(dg.error_class, dg.error_class.replace("_", " ").capitalize())
                  + f"  ({dg.error_class})",
                  "node": dg.node or "", "op_type": dg.op_type or "", "module": dg.module or ""}
        for key, text in values.items():
            self.diag_fields[key].setText(text)
            self.diag_fields[key].setVisible(bool(text))
            self.diag_fields[key + "_key"].setVisible(bool(text))
        self.diag_message.setText(dg.message)
        self.diag_fix.setText(dg.fix or self.tr("no fix is known for this failure; the raw log has the details"))
        has_snippet = bool(dg.snippet and dg.snippet.get("nodes"))
        self.snippet_title.setVisible(has_snippet)
        self.snippet.setVisible(has_snippet)
        self.snippet.set_snippet(dg.snippet if has_snippet else None)
        raw = dg.raw_log or ""
        if self.job_log:
            raw = (raw + "\n\n--- " + self.tr("job log") + " ---\n" if raw else "") + "\n".join(self.job_log)
        self.raw_log.setPlainText(raw or self.tr("(the exporter produced no log)"))

    def _fill_summary(self, report: ExportReport) -> None:
        opts = report.options or {}
        self.summary["model"].setText(self.tr("{value}  ({value2})  "
                                              "from {model_dir}").format(value=report.model_class or '?', value2=report.model_type or 'unknown type', model_dir=report.model_dir))
        tok = report.tokenizer_class or self.tr("none found")
        if report.expected_tokenizer_class and report.expected_tokenizer_class != report.tokenizer_class:
            tok += "  " + self.tr("(the model type expects {cls})").format(cls=report.expected_tokenizer_class)
        self.summary["tokenizer"].setText(tok)
        bits = [self.tr("exporter {name}").format(name=opts.get("exporter", "?")), f"opset {opts.get('opset', '?')}"]
        if opts.get("dynamic"):
            dyn = opts["dynamic"]
            bits.append(self.tr("dynamic {axes}").format(axes=", ".join(dyn) if isinstance(dyn, list) else str(dyn)))
        if opts.get("split_modalities"):
            bits.append(self.tr("split into {n} part(s)").format(n=len(report.parts)))
        self.summary["export"].setText(" · ".join(bits))
        val = report.validation
        self.summary["checks"].setText(self.tr("checker: {checker} · shape inference: {shape_inference} · "
                                               "ORT load: {ort_load}").format(checker=val.checker, shape_inference=val.shape_inference, ort_load=val.ort_load))
        total = sum(report.timings.values())
        detail = ", ".join(f"{k} {v:.1f}s" for k, v in report.timings.items())
        self.summary["time"].setText(f"{total:.1f} s  ({detail})" if report.timings else "-")
        self.warnings.setText("\n".join(f"⚠ {w}" for w in report.warnings))
        self.warnings.setVisible(bool(report.warnings))

    def _fill_validation(self, report: ExportReport) -> None:
        val = report.validation
        t = self.val_table
        t.setRowCount(0)
        c = colors()
        for case in val.cases:
            shapes = ", ".join(f"{k} {'x'.join(map(str, v))}" for k, v in case.input_shapes.items())
            checks = case.outputs or [None]
            for chk in checks:
                r = t.rowCount()
                t.insertRow(r)
                if chk is None:
                    cells = [case.name, case.graph, shapes, "-", "-", "-", "error" if case.error else "-"]
                    passed = case.passed
                else:
                    cells = [case.name, case.graph, shapes, chk.output, f"{chk.max_abs:.2e}", f"{chk.max_rel:.2e}",
                             "pass" if chk.passed else "FAIL"]
                    passed = chk.passed
                for col, text in enumerate(cells):
                    item = QTableWidgetItem(text)
                    if col in (4, 5):
                        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    if col == 6:
                        item.setForeground(c["ok"] if passed else c["fail"])
                        font = item.font()
                        font.setBold(True)
                        item.setFont(font)
                    if case.error:
                        item.setToolTip(case.error)
                    elif col == 2:
                        item.setToolTip(shapes)
                    t.setItem(r, col, item)
        self.tolerance.setText(self.tr("Each output must satisfy |onnx - torch| <= atol + rtol·|torch| "
                                       "(atol {atol:g}, rtol {rtol:g}).").format(atol=val.atol, rtol=val.rtol))
        self.val_box.setVisible(bool(val.cases))
        _fit_height(t)

    def _fill_outputs(self, report: ExportReport) -> None:
        t = self.out_table
        t.setRowCount(0)
        for out in report.outputs:
            r = t.rowCount()
            t.insertRow(r)
            for col, text in enumerate([out.path, out.kind, out.modality or "-", human_bytes(out.size_bytes)]):
                item = QTableWidgetItem(text)
                if col == 3:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                t.setItem(r, col, item)
        self.out_box.setVisible(bool(report.outputs))
        _fit_height(t, max_rows=12)

    # -- actions ---------------------------------------------------------------------------------------
    def _toggle_raw(self, on: bool) -> None:
        self.raw_log.setVisible(on)
        self.btn_raw.setText(self.tr("Hide raw log") if on else self.tr("Show raw log"))

    def _report_path(self) -> Path | None:
        if self.report is None:
            return None
        for out in self.report.outputs:
            if out.kind == "report" and Path(out.path).is_file():
                return Path(out.path)
        rp = self.report.options.get("report") if self.report.options else None
        return Path(rp) if rp and Path(rp).is_file() else None

    def model_path(self) -> Path | None:
        if self.report is None or not self.report.options.get("output"):
            return None
        return Path(self.report.options["output"])

    def _open_report(self) -> None:
        p = self._report_path()
        if p is not None:
            self.sig_open_report.emit(str(p))

    def _open_inspector(self) -> None:
        p = self.model_path()
        if p is not None:
            self.sig_open_inspector.emit(str(p))

    def serve_payload(self) -> str | None:
        """What "Serve on Triton" hands over: the export folder of a split export (parts + router), else the file."""
        p = self.model_path()
        if p is None or self.report is None:
            return None
        return str(p.parent if self.report.parts else p)

    def _open_triton(self) -> None:
        payload = self.serve_payload()
        if payload is not None:
            self.sig_open_page.emit("triton", payload)

    def _open_package(self) -> None:
        p = self.model_path()
        if p is not None:  # the folder: the bundle carries the tokenizer / processor files beside the model
            self.sig_open_page.emit("package", str(p.parent))

    def _open_compile(self) -> None:
        p = self.model_path()
        if p is not None:
            self.sig_open_page.emit("compile", {"model": str(p)})

    def _open_folder(self) -> None:
        p = self.model_path()
        if p is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(p.parent)))
