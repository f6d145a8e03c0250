"""Export page: the HF -> ONNX wizard (source -> signature -> options -> run -> result).

Every step calls the export contract (studio.export.api) and nothing else: the wizard only collects
ExportOptions, runs ``export_model`` as a job through the window's JobRunner, and renders the ExportReport.
Input errors appear beside the offending field; a failed export shows its Diagnosis as a page.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.errors import JobCancelled, Problem, StudioError
from studio.core.settings import Settings
from studio.export.api import Diagnosis, ExportOptions, ExportReport, InputSpec
from studio.gui.export_wizard.options_step import OptionsStep
from studio.gui.export_wizard.result_step import ResultStep
from studio.gui.export_wizard.run_step import RunStep
from studio.gui.export_wizard.signature_step import SignatureStep
from studio.gui.export_wizard.source_step import SourceChoice, SourceStep
from studio.gui.jobs_qt import JobHandle, JobRunner
from studio.gui.page import Page
from studio.gui.screen_fit import CurrentPageStack, PageScroller
from studio.gui.theme import set_role
from studio.gui.widgets.layout import add_heading

SOURCE, SIGNATURE, OPTIONS, RUN, RESULT = range(5)


def _prepare(choice: SourceChoice, job: Any, workspace_root: Path | None = None) -> dict[str, Any]:
    """Worker side of "Next" on the source step: write the sample (and the workspace's sample inputs) if
    needed, then infer the signature."""
    from studio.export.api import infer_signature, write_sample

    if choice.sample:
        job.set_status(QCoreApplication.translate("ExportPage", "writing sample model {sample} to {folder}").format(
            sample=choice.sample, folder=choice.model_dir))
        job.set_progress(10, force=True)
        write_sample(choice.sample, choice.model_dir)
        if workspace_root is not None:  # an image and an audio clip for test inference later
            from studio.core.sample_inputs import write_sample_inputs

            write_sample_inputs(workspace_root)
    job.check_cancelled()
    job.set_status(QCoreApplication.translate("ExportPage", "reading the model's signature"))
    job.set_progress(60, force=True)
    specs = infer_signature(choice.model_dir)
    try:
        config = json.loads((choice.model_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = {}
    job.set_progress(100)
    return {"signature": specs, "model_type": config.get("model_type", ""),
            "architectures": config.get("architectures") or [], "config": config}


def export_artifacts(report: ExportReport, output: Path) -> dict[str, Any]:
    """What an export wrote, as workspace artifacts: the model, its parts by name, tokenizer and processor
    (their folder: the files sit beside the model), the report."""
    arts: dict[str, Any] = {"onnx": output}
    parts = {name: Path(info["path"]) for name, info in report.parts.items() if info.get("path")}
    if parts:
        arts["parts"] = parts
    for o in report.outputs:
        if o.kind in ("tokenizer", "processor") and o.kind not in arts:
            arts[o.kind] = Path(o.path).parent
        elif o.kind == "report" and "export_report" not in arts:
            arts["export_report"] = Path(o.path)
    return arts


class ExportPage(Page):
    page_id = "export"
    title = "Export"
    scrolls_itself = True  # the steps scroll; Back / Next stay in view

    def __init__(self, jobs: JobRunner | None = None, parent: QWidget | None = None) -> None:
        super().__init__(jobs, parent)
        self.handle: JobHandle | None = None
        self.prepare_handle: JobHandle | None = None
        self.choice: SourceChoice | None = None
        self.report: ExportReport | None = None
        self.options_used: ExportOptions | None = None
        self.model_config: dict[str, Any] = {}  # the chosen model's config.json (the KV cache depends on it)
        settings = Settings.load()

        outer = QVBoxLayout(self)
        outer.setContentsMargins(24, 18, 24, 16)
        outer.setSpacing(10)
        add_heading(outer, self.tr("Export to ONNX"),
                    self.tr("HuggingFace model → validated ONNX graph, with tokenizer files and a report. "
                            "Same as `studio export`."))

        self.source = SourceStep()
        self.signature = SignatureStep()
        self.options = OptionsStep()
        self.options.set_defaults(settings.default_opset, settings.default_exporter)
        self.run = RunStep()
        self.result = ResultStep()
        self.result.try_it.jobs = self.jobs
        self.steps = [self.source, self.signature, self.options, self.run, self.result]

        crumbs = QHBoxLayout()
        crumbs.setSpacing(0)
        self.crumbs: list[QLabel] = []
        for i, step in enumerate(self.steps):
            lab = QLabel(f"{i + 1}  {QCoreApplication.translate('Step', step.nav_title)}")
            self.crumbs.append(lab)
            crumbs.addWidget(lab)
            if i < len(self.steps) - 1:
                arrow = QLabel("›")
                set_role(arrow, "muted")
                crumbs.addWidget(arrow)
        crumbs.addStretch(1)
        outer.addLayout(crumbs)

        self.stack = CurrentPageStack()  # as tall as the step shown: a short step has no scroll bar
        for step in self.steps:
            self.stack.addWidget(step)
        self.scroller = PageScroller(self.stack)
        outer.addWidget(self.scroller, 1)  # the steps scroll, Back / Next below stay in view

        nav = QHBoxLayout()
        self.back_btn = QPushButton(self.tr("Back"))
        self.next_btn = QPushButton(self.tr("Next"))
        set_role(self.next_btn, "primary")
        self.next_btn.setMinimumWidth(150)
        self.back_btn.setMinimumWidth(110)
        self.back_btn.clicked.connect(self.go_back)
        self.next_btn.clicked.connect(self.go_next)
        nav.addWidget(self.back_btn)
        nav.addStretch(1)
        nav.addWidget(self.next_btn)
        outer.addLayout(nav)

        self.run.sig_cancel.connect(self.cancel)
        self.result.sig_open_inspector.connect(lambda p: self.sig_open_page.emit("inspect", p))
        self.result.sig_open_page.connect(self.sig_open_page)
        self.result.sig_open_report.connect(self._open_report)
        self.jobs.sig_progress.connect(self._job_progress)
        self.jobs.sig_status.connect(self._job_status)
        self.jobs.sig_log.connect(self._job_log)
        self._load_samples()
        self.set_step(SOURCE)

    # -- context ---------------------------------------------------------------------------------------
    def context_changed(self) -> None:
        self.source.set_workspace(self.workspace, self.model_name)

    def open_payload(self, payload: object) -> None:
        """A model folder opens on the source step; the failing node of the last diagnosis opens the result."""
        dg = self.report.diagnosis if self.report is not None else None
        if dg is not None and payload in (dg.node, dg.module, dg.stage):
            self.set_step(RESULT)
            return
        if isinstance(payload, (str, Path)) and Path(payload).is_dir() and not self.busy():
            self.source.set_folder(Path(payload))
            self.set_step(SOURCE)

    def opened_path(self) -> str | None:
        return self.source.folder.text() or None

    def _load_samples(self) -> None:
        try:
            from studio.export.api import list_samples

            names = list_samples()
        except Exception as exc:  # the export extra may be missing: keep the built-in names, say why on use
            self.sig_log.emit(self.tr("sample list unavailable: {error}").format(error=exc))
            return
        self.source.set_samples(names)

    # -- navigation ------------------------------------------------------------------------------------
    def busy(self) -> bool:
        return any(h is not None and h.status == "running" for h in (self.handle, self.prepare_handle))

    def current_step(self) -> int:
        return self.stack.currentIndex()

    def set_step(self, index: int) -> None:
        if index != self.stack.currentIndex():
            self.scroller.verticalScrollBar().setValue(0)  # a step opens at its top, never mid-way
        self.stack.setCurrentIndex(index)
        for i, lab in enumerate(self.crumbs):
            set_role(lab, "step-current" if i == index else "step-done" if i < index else "step")
        self._sync_nav()

    def _sync_nav(self) -> None:
        i = self.current_step()
        running = self.busy()
        self.back_btn.setVisible(i != SOURCE)
        self.back_btn.setEnabled(not running)
        self.back_btn.setText({RESULT: self.tr("Change options")}.get(i, self.tr("Back")))
        self.next_btn.setVisible(i != RUN)
        self.next_btn.setEnabled(not running)
        self.next_btn.setText({SOURCE: self.tr("Next: signature"), SIGNATURE: self.tr("Next: options"), OPTIONS: self.tr("Export"),
                               RESULT: self.tr("New export")}.get(i, self.tr("Next")))

    def go_back(self) -> None:
        i = self.current_step()
        self.set_step({RESULT: OPTIONS}.get(i, max(SOURCE, i - 1)))

    def go_next(self) -> None:
        i = self.current_step()
        if i == SOURCE:
            self.prepare_source()
        elif i == SIGNATURE:
            if self.signature.validate():
                self._fill_options()
                self.set_step(OPTIONS)
        elif i == OPTIONS:
            self.start_export()
        elif i == RESULT:
            self.set_step(SOURCE)

    # -- step 1 -> 2 -----------------------------------------------------------------------------------
    def prepare_source(self) -> JobHandle | None:
        choice = self.source.choice()
        if choice is None:
            return None
        self.source.mark_touched()
        self.source.busy.setText(self.tr("writing the sample model and reading its signature…") if choice.sample
                                 else self.tr("reading the model's signature…"))
        root = self.workspace.root if self.workspace is not None else None
        self.prepare_handle = self.jobs.start(
            "export:prepare", self.tr("Read signature of {label}").format(label=choice.label), lambda job: _prepare(choice, job, root),
            on_done=lambda res, c=choice: self._prepared(c, res), on_failed=self._prepare_failed)
        self._sync_nav()
        return self.prepare_handle

    def _prepared(self, choice: SourceChoice, res: dict[str, Any]) -> None:
        self.source.busy.setText("")
        self.choice = choice
        self.model_config = dict(res.get("config") or {})
        specs: list[InputSpec] = res["signature"]
        self.signature.set_signature(specs, inferred=True)
        arch = ", ".join(res.get("architectures") or []) or self.tr("unknown class")
        self.signature.set_model_info(self.tr("{label}: {arch} (model_type {type}) in {folder}").format(
            label=choice.label, arch=arch, type=res.get("model_type") or "?", folder=choice.model_dir))
        if choice.sample and self.workspace is not None and self.workspace.model(choice.label) is None:
            try:
                self.workspace.add_model(choice.model_dir, name=choice.label, kind="hf",
                                         source=f"sample:{choice.sample}", make_current=False)
                self.sig_workspace_changed.emit()
            except StudioError as exc:
                self.sig_log.emit(self.tr("could not add {name} to the workspace: {error}").format(
                    name=choice.label, error=exc.message))
        choice.sample = None  # written now
        self.set_step(SIGNATURE)

    def _prepare_failed(self, err: StudioError) -> None:
        self.source.busy.setText("")
        self._sync_nav()
        if isinstance(err, JobCancelled):
            return
        self.source.show_error(err.message, hint=err.hint)

    # -- step 2 -> 3 -----------------------------------------------------------------------------------
    def _default_output(self, label: str) -> Path:
        if self.workspace is not None:
            return self.workspace.models_dir / f"{label}-onnx" / "model.onnx"
        assert self.choice is not None
        return self.choice.model_dir.parent / f"{label}-onnx" / "model.onnx"

    def _fill_options(self) -> None:
        assert self.choice is not None
        self.options.set_source(self.choice.model_dir, self.choice.label, self.signature.signature(),
                                self._default_output(self.choice.label), edited=self.signature.edited(),
                                config=self.model_config)

    # -- step 3 -> 4 -> 5 ------------------------------------------------------------------------------
    def _report_path(self, output: Path) -> Path:
        if self.workspace is not None and self.choice is not None:
            return self.workspace.reports_dir / f"export-{self.choice.label}.json"
        return output.with_name(output.stem + ".export-report.json")

    def start_export(self) -> JobHandle | None:
        if self.choice is None or not self.signature.validate():
            self.set_step(SIGNATURE if self.choice is not None else SOURCE)
            return None
        opts = self.options.options()
        if opts is None:
            return None
        opts.report = self._report_path(opts.output)
        self.options_used = opts
        label = self.choice.label
        self.run.start(f"{label}  →  {opts.output}")
        self.set_step(RUN)

        def work(job: Any) -> ExportReport:
            from studio.export.api import export_model

            return export_model(opts, job)

        self.handle = self.jobs.start("export", self.tr("Export {label}").format(label=label), work, on_done=self._export_done,
                                      on_failed=self._export_failed)
        self._sync_nav()
        return self.handle

    def cancel(self) -> None:
        if self.handle is not None and self.handle.status == "running":
            self.jobs.cancel(self.handle.id)
            self.run.cancelling()
        if self.prepare_handle is not None and self.prepare_handle.status == "running":
            self.jobs.cancel(self.prepare_handle.id)

    def _job_progress(self, h: JobHandle, pct: float) -> None:
        if self.handle is not None and h.id == self.handle.id:
            self.run.set_progress(pct)

    def _job_status(self, h: JobHandle, text: str) -> None:
        if self.handle is not None and h.id == self.handle.id:
            self.run.set_status(text)

    def _job_log(self, h: JobHandle, line: str) -> None:
        if self.handle is not None and h.id == self.handle.id:
            self.run.append_log(line)

    def _export_done(self, report: ExportReport) -> None:
        self.run.stop(f"export {report.status}")
        self.show_report(report)
        if report.status == "succeeded":
            self._add_to_workspace(report)
        elif report.diagnosis is not None:
            dg = report.diagnosis
            self.sig_problem.emit(Problem(
                "error", self.tr("export of {name} failed at {stage}: {message}").format(
                    name=self.choice.label if self.choice else report.model_dir, stage=dg.stage,
                    message=dg.message.splitlines()[0] if dg.message else dg.error_class),
                source="Export", page=self.page_id, location=dg.node or dg.module or dg.stage, hint=dg.fix))
        for w in report.warnings:
            self.sig_problem.emit(Problem("warning", w, source="Export", page=self.page_id))

    def _export_failed(self, err: StudioError) -> None:
        opts = self.options_used
        options = {"output": str(opts.output), "opset": opts.opset, "exporter": opts.exporter} if opts else {}
        if isinstance(err, JobCancelled):
            self.run.stop("cancelled")
            self.show_report(ExportReport(status="cancelled", model_dir=str(opts.model_dir) if opts else "",
                                          options=options))
            return
        self.run.stop("failed")
        if err.kind == "input":  # bad input found by the core: back to the step that holds the field
            names = [s.name for s in self.signature.signature()]
            text = f"{err.message} {err.offending or ''}"
            if any(n and n in text for n in names) or "modality" in text or "signature" in text:
                self.set_step(SIGNATURE)
                self.signature.show_error(err.message, err.offending, err.hint)
            elif err.offending and opts is not None and Path(err.offending) == opts.output:
                self.set_step(OPTIONS)
                self.options.output_error.show_error(err.message, self.options.output, hint=err.hint)
            else:
                self.set_step(SOURCE)
                self.source.show_error(err.message, hint=err.hint)
            return
        tb = err.details.get("traceback", "") if isinstance(err.details, dict) else ""
        self.show_report(ExportReport(status="failed", model_dir=str(opts.model_dir) if opts else "",
                                      options=options,
                                      diagnosis=Diagnosis(stage="export", error_class=err.kind,
                                                          message=err.message, fix=err.hint or "",
                                                          raw_log=tb)))

    def show_report(self, report: ExportReport) -> None:
        self.report = report
        log = list(self.handle.log) if self.handle is not None else []
        self.result.show_report(report, job_log=log)
        self.set_step(RESULT)

    def _add_to_workspace(self, report: ExportReport) -> None:
        if self.workspace is None or self.options_used is None or self.choice is None:
            return
        out = self.options_used.output
        if not out.is_file():
            return
        try:
            add = self.state.add_model if self.state.workspace is self.workspace else self.workspace.add_model
            entry = add(out, name=f"{self.choice.label}-onnx", kind="onnx", source=f"export of {self.choice.label}",
                        report=str(self.options_used.report) if self.options_used.report else None,
                        make_current=True)
            if self.state.workspace is self.workspace:
                for kind, value in export_artifacts(report, out).items():
                    self.state.record_artifact(kind, value, entry.name)
        except StudioError as exc:
            self.sig_problem.emit(Problem("warning", self.tr("could not add the export to the workspace: {error}").format(
                error=exc.message),
                                          source="Export", hint=exc.hint))
            return
        self.sig_log.emit(self.tr("added {name} ({path}) to the workspace").format(name=f"{self.choice.label}-onnx",
                                                                                   path=out))
        self.sig_workspace_changed.emit()

    def _open_report(self, path: str) -> None:
        from studio.gui.dialogs import ReportDialog

        dlg = ReportDialog(Path(path), self)
        dlg.show()
        self._report_dialog = dlg
