"""The inspector's Optimize action: `studio optimize` for the model shown, as a job in a window of its own (the
side panel is too narrow for a scatter and a table at 1366x768). The window shows the search's progress, each
candidate as it is judged (scatter: accuracy against the objective; table: every figure with its tool), Cancel,
and "Use this": the chosen variant becomes the current model (workspace entry, the inspector opens it) for
Compile and Package.

The work is ``studio.tune.search.optimize_for_target``, exactly what the CLI line under the form runs; this
module only collects the form, starts the job and renders what it publishes. Closing the window leaves the search
running (the Jobs panel shows it and cancels it; "Optimize…" shows the window again); Cancel stops it.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from studio.core.errors import JobCancelled, StudioError
from studio.gui.inspector.optimize_view import CandidateScatter, CandidateTable, fmt_acc, fmt_size

if TYPE_CHECKING:
    from studio.gui.pages.inspect_page import InspectPage

OPTIMIZE_JOB = "inspect:optimize"  # "inspect:" so the page's Esc and shutdown cancel it too
OBJECTIVES = ("npu-coverage", "size", "host-latency")


def _esc(text: Any) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def judged_targets() -> list[tuple[str, bool, str]]:
    """(target, usable, tool or why not) of every target a tool here can judge, usable first."""
    from studio.tune.evaluate_api import evaluator_targets

    return sorted(((t, ok, why) for t, (ok, why) in evaluator_targets().items()), key=lambda r: (not r[1], r[0]))


class OptimizeDialog(QDialog):
    """The form, the progress, the scatter and the table of one model's search (see the module docstring)."""

    def __init__(self, page: InspectPage, parent: QWidget | None = None) -> None:
        super().__init__(parent or page)
        self.page = page
        self.model: Path | None = None
        self.report: Any = None  # studio.tune.report.TuneReport of the last finished search
        self.handle: Any = None  # the running job's JobHandle
        self.setWindowTitle(self.tr("Optimize for a target"))
        self.resize(1080, 660)
        lay = QVBoxLayout(self)
        self.model_label = QLabel("")
        self.model_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.model_label)
        self.target_combo = QComboBox()
        self.budget_edit = QLineEdit("cosine>=0.99")
        self.budget_edit.setToolTip(self.tr("cosine>=C, max-abs<=X or top1-agree>=P against the FP32 original"))
        self.objective_combo = QComboBox()
        self.objective_combo.addItems(OBJECTIVES)
        self.cal_edit = QLineEdit()
        self.cal_edit.setPlaceholderText(self.tr("images / texts / .wav / .npz (empty: seeded synthetic samples, warned)"))
        browse = QPushButton(self.tr("Browse…"))
        browse.clicked.connect(self._browse)
        cal_row = QHBoxLayout()
        cal_row.addWidget(self.cal_edit, 1)
        cal_row.addWidget(browse)
        self.time_spin = QDoubleSpinBox()
        self.time_spin.setRange(0.1, 600.0)
        self.time_spin.setValue(10.0)
        self.time_spin.setSuffix(self.tr(" min"))
        self.out_edit = QLineEdit()
        self.out_edit.setPlaceholderText(self.tr("default: WORKSPACE/optimized/NAME-TARGET"))
        top = QHBoxLayout()
        left, right = QFormLayout(), QFormLayout()
        left.addRow(self.tr("Target"), self.target_combo)
        left.addRow(self.tr("Budget"), self.budget_edit)
        left.addRow(self.tr("Objective"), self.objective_combo)
        right.addRow(self.tr("Calibration"), cal_row)
        right.addRow(self.tr("Time limit"), self.time_spin)
        right.addRow(self.tr("Output"), self.out_edit)
        top.addLayout(left, 2)
        top.addLayout(right, 3)
        lay.addLayout(top)
        self.cli_label = QLabel("")
        self.cli_label.setProperty("role", "muted")
        self.cli_label.setWordWrap(True)
        self.cli_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.cli_label)
        for w in (self.budget_edit, self.cal_edit, self.out_edit):
            w.textChanged.connect(lambda _t: self._update_cli())
        self.target_combo.currentIndexChanged.connect(lambda _i: self._update_cli())
        self.objective_combo.currentIndexChanged.connect(lambda _i: self._update_cli())
        self.time_spin.valueChanged.connect(lambda _v: self._update_cli())
        row = QHBoxLayout()
        self.start_button = QPushButton(self.tr("Optimize"))
        self.start_button.setDefault(True)
        self.start_button.clicked.connect(self.start)
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.use_button = QPushButton(self.tr("Use this"))
        self.use_button.setEnabled(False)
        self.use_button.setToolTip(self.tr("make the chosen variant the current model (Inspect, Compile, Package)"))
        self.use_button.clicked.connect(self.use_chosen)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        row.addWidget(self.start_button)
        row.addWidget(self.cancel_button)
        row.addWidget(self.progress, 1)
        row.addWidget(self.use_button)
        lay.addLayout(row)
        self.status_label = QLabel("")
        self.status_label.setWordWrap(True)
        lay.addWidget(self.status_label)
        self.error_label = QLabel("")
        self.error_label.setProperty("role", "error")
        self.error_label.setWordWrap(True)
        self.error_label.hide()
        lay.addWidget(self.error_label)
        self.scatter = CandidateScatter()
        self.table = CandidateTable()
        self.details = QTextBrowser()
        self.details.setOpenLinks(False)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.scatter)
        split.addWidget(self.table)
        split.setSizes([300, 760])
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(split)
        body.addWidget(self.details)
        body.setSizes([330, 150])
        lay.addWidget(body, 1)
        self.scatter.sig_chosen.connect(self.select)
        self.table.sig_chosen.connect(self.select)
        if page.jobs is not None:
            page.jobs.sig_progress.connect(self._on_progress)
            page.jobs.sig_status.connect(self._on_status)
            page.jobs.sig_partial.connect(self._on_partial)

    # ---- the form ----------------------------------------------------------------------------------------
    def set_model(self, model: Path, target: str | None) -> None:
        """The model the next search optimizes, and the inspector's target when a tool here judges it."""
        self.model = Path(model)
        self.model_label.setText(self.tr("Model: {model}").format(model=model))
        self.target_combo.blockSignals(True)
        self.target_combo.clear()
        for t, ok, why in judged_targets():
            self.target_combo.addItem(t if ok else self.tr("{target} (unavailable)").format(target=t), t)
            self.target_combo.setItemData(self.target_combo.count() - 1, why, Qt.ItemDataRole.ToolTipRole)
        idx = self.target_combo.findData(target) if target else -1
        self.target_combo.setCurrentIndex(max(idx, 0))
        self.target_combo.blockSignals(False)
        self._update_cli()

    def _browse(self) -> None:
        d = QFileDialog.getExistingDirectory(self, self.tr("Calibration samples"), self.cal_edit.text() or str(Path.home()))
        if d:
            self.cal_edit.setText(d)

    def argv(self) -> list[str]:
        """The form as `studio optimize` arguments (what the CLI line shows)."""
        out = ["studio", "optimize", str(self.model or "MODEL"), "--target", self.target_combo.currentData() or "",
               "--budget", self.budget_edit.text().strip(), "--objective", self.objective_combo.currentText(),
               "--time-limit", f"{self.time_spin.value():g}"]
        if self.cal_edit.text().strip():
            out += ["--calibration", self.cal_edit.text().strip()]
        if self.out_edit.text().strip():
            out += ["--out", self.out_edit.text().strip()]
        return out

    def _update_cli(self) -> None:
        self.cli_label.setText(self.tr("CLI: {command}").format(command=" ".join(shlex.quote(a) for a in self.argv())))

    def options(self) -> Any:
        """TuneOptions from the form; an InputError names a malformed field."""
        from studio.tune.options import TuneOptions, parse_budget

        cal = self.cal_edit.text().strip()
        out = self.out_edit.text().strip()
        return TuneOptions(model=self.model or Path(""), target=self.target_combo.currentData() or "",
                           budget=parse_budget(self.budget_edit.text()), objective=self.objective_combo.currentText(),
                           calibration=Path(cal).expanduser() if cal else None,
                           time_limit_min=float(self.time_spin.value()), out=Path(out).expanduser() if out else None,
                           profile_dirs=self.page.target_profile_dirs())

    # ---- the job ----------------------------------------------------------------------------------------
    def start(self) -> None:
        if self.model is None or self.page.jobs is None:
            return
        self._show_error(None)
        try:
            opts = self.options()
        except StudioError as err:
            self._show_error(err)
            return
        from studio.tune.search import optimize_for_target

        self.report = None
        self.table.clear_rows()
        self.scatter.setup(opts.budget.metric, opts.objective, opts.budget.value)
        self.details.clear()
        self.progress.setValue(0)
        self.use_button.setEnabled(False)
        self.start_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.status_label.setText(self.tr("optimizing {name} for {target}…").format(name=self.model.name, target=opts.target))
        self.handle = self.page.jobs.start(OPTIMIZE_JOB, self.tr("optimize {name} for {target}").format(name=self.model.name, target=opts.target),
                                           lambda job: optimize_for_target(opts, job),
                                           on_done=self._done, on_failed=self._failed)

    def cancel(self) -> None:
        if self.handle is not None and self.handle.status == "running" and self.page.jobs is not None:
            self.page.jobs.cancel(self.handle.id)
            self.status_label.setText(self.tr("cancelling: stopping the workers and the tools they started…"))
            self.cancel_button.setEnabled(False)

    def running(self) -> bool:
        return self.handle is not None and self.handle.status == "running"

    def _mine(self, h: Any) -> bool:
        return self.handle is not None and h is self.handle

    def _on_progress(self, h: Any, pct: float) -> None:
        if self._mine(h):
            self.progress.setValue(int(pct))

    def _on_status(self, h: Any, text: str) -> None:
        if self._mine(h):
            self.status_label.setText(text)

    def _on_partial(self, h: Any, value: Any) -> None:
        if self._mine(h) and isinstance(value, tuple) and value and value[0] == "candidate":
            c = value[1]
            self.table.put(c, self.scatter.acc_metric)
            self.scatter.put(c)

    def _finish_buttons(self) -> None:
        self.start_button.setEnabled(True)
        self.cancel_button.setEnabled(False)

    def _failed(self, err: StudioError) -> None:
        self._finish_buttons()
        if isinstance(err, JobCancelled):
            self.status_label.setText(self.tr("cancelled: nothing written"))
            return
        self.status_label.setText("")
        self._show_error(err)

    def _done(self, rep: Any) -> None:
        self._finish_buttons()
        self.progress.setValue(100)
        self.report = rep
        metric = self.scatter.acc_metric
        self.table.clear_rows()
        for p in rep.parts:
            for c in p.candidates:
                self.table.put(c, metric)
                self.scatter.candidates[c.id] = c
        self.scatter.redraw()
        met = self.tr("budget met") if rep.met else self.tr("budget NOT met (the best candidate is written; see what "
                                                            "blocks it)")
        self.status_label.setText(f"{met}: {rep.out}" + (self.tr(" (cached result)") if rep.cached else "")
                                  + "".join("\n" + self.tr("warning: {warning}").format(warning=w) for w in rep.warnings))
        chosen = next((p.chosen for p in rep.parts if p.chosen), None)
        self.use_button.setEnabled(chosen is not None)
        if chosen:
            self.select(chosen)
        self.page.sig_log.emit(f"optimize: {met}: {rep.out}")

    def _show_error(self, err: StudioError | None) -> None:
        if err is None:
            self.error_label.hide()
            return
        text = err.message + ("\n" + self.tr("hint: {hint}").format(hint=err.hint) if getattr(err, "hint", "") else "")
        lines = text.splitlines()
        short = "\n".join(lines[:4])[:600]  # a long trace stays in the tooltip and the Jobs panel's log
        self.error_label.setText(short + (" …" if short != text else ""))
        self.error_label.setToolTip(text[:4000])
        self.error_label.show()

    # ---- selection and use --------------------------------------------------------------------------------
    def _part_of(self, cid: str) -> Any:
        for p in self.report.parts if self.report is not None else []:
            if any(c.id == cid for c in p.candidates):
                return p
        return None

    def _candidate(self, cid: str) -> Any:
        if cid in self.scatter.candidates:
            return self.scatter.candidates[cid]
        return None

    def select(self, cid: str) -> None:
        self.table.select_id(cid)
        self.scatter.select_id(cid)
        c = self._candidate(cid)
        if c is not None:
            self.details.setHtml(self.details_html(c, self._part_of(cid)))
        part = self._part_of(cid)
        if part is not None and part.chosen:
            self.use_button.setText(self.tr("Use this") if part.chosen == cid
                                    else self.tr("Use the chosen {candidate}").format(candidate=part.chosen))
            self.use_button.setToolTip(self.tr("only the chosen variant of each part is written; this candidate's "
                                               "recipe is in the details") if part.chosen != cid else
                                       self.tr("make this variant the current model (Inspect, Compile, Package)"))

    def details_html(self, c: Any, part: Any) -> str:
        j = c.judged or {}
        metric = self.scatter.acc_metric
        lines = [f"<b>{_esc(c.id)}</b> [{_esc(c.part)}] {_esc(c.label)}: <b>{_esc(c.status)}</b>"]
        if c.accuracy:
            a = c.accuracy
            lines.append(self.tr("{metric} {value} on {n} sample(s) [{by}]").format(
                metric=metric, value=fmt_acc(c.accuracy_value(metric), metric), n=a["samples"],
                by=_esc(a.get("by", ""))))
        if j.get("verdict"):
            v = j["verdict"]
            lines.append(self.tr("tool verdict: {verdict} [{by}], size {size} [{size_by}]").format(
                verdict=_esc(v.get("verdict")), by=_esc(v.get("by", "")), size=fmt_size(j.get("size_bytes")),
                size_by=_esc(j.get("size_by", ""))))
        if c.latency_ms is not None:
            lines.append(self.tr("host latency {ms} ms [{by}]").format(ms=f"{c.latency_ms:.3f}",
                                                                      by=_esc(c.latency_by)))
        if j.get("error"):
            lines.append(f"<span style='color:#c5221f'>{_esc(j['error'][:600])}</span>")
        for n in list(c.recipe.get("notes") or []) + list(j.get("steps") or [])[:6]:
            lines.append(f"· {_esc(n)}")
        if part is not None and part.chosen == c.id:
            for b in part.blocking[:8]:
                lines.append(self.tr("blocking: {node}: {rule}: {message} [{tool}]").format(
                    node=_esc(b.node or self.tr("(model)")), rule=_esc(b.rule), message=_esc(b.message[:160]),
                    tool=_esc(b.tool)))
            if part.commands:
                lines.append(self.tr("recipe:") + "<br><code>" + "<br>".join(_esc(x) for x in part.commands)
                             + "</code>")
        return "<br>".join(lines)

    def use_chosen(self) -> None:
        """The chosen variant of the selected candidate's part (else the first part) as the current model."""
        if self.report is None:
            return
        cid = self.table.selected_id()
        part = (self._part_of(cid) if cid else None) or next((p for p in self.report.parts if p.chosen), None)
        path = Path(part.files.get("model", "")) if part is not None else None
        if path is None or not path.is_file():
            self._show_error(StudioError(self.tr("the chosen variant's file is not there"), hint=str(path)))
            return
        page = self.page
        if page.workspace is not None:
            try:
                source = f"studio optimize for {self.report.target}: {part.chosen_candidate().label}"
                if page.state.workspace is page.workspace:
                    page.state.add_model(path, kind="onnx", source=source)  # current on every page
                else:
                    page.workspace.add_model(path, kind="onnx", source=source)
                page.workspace.save()
                page.sig_workspace_changed.emit()
            except Exception as exc:  # the file is there either way; the workspace is a convenience
                page.sig_log.emit(self.tr("could not add {path} to the workspace: {error}").format(path=path, error=exc))
        if page.model_path is None or page.model_path.resolve() != path.resolve():  # adding it may have opened it
            page.open_model(path)
        self.status_label.setText(self.tr("now the current model: {path}").format(path=path))



__all__ = ["OPTIMIZE_JOB", "OptimizeDialog", "judged_targets"]
