"""Fix buttons of the inspector page: the buttons, the make-static dialog, the job function that calls
studio.optimize, and ``FixFlow``, which runs a fix for the page and shows its outcome.

The page never rewrites a model itself: ``run_fix`` (run on a JobRunner worker) calls the optimize API,
which writes the fixed model next to the source; the page then opens and re-inspects it and shows the
before/after difference.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication
from PySide6.QtWidgets import (
    QLabel,
    QPushButton,
    QWidget,
)

from studio.core.errors import InputError, StudioError
from studio.gui.inspector import details
from studio.gui.inspector.dims_dialog import DimsDialog

translate = QCoreApplication.translate

if TYPE_CHECKING:
    from studio.gui.pages.inspect_page import InspectPage

FIX_SUFFIX = {"static": "static", "simplify": "simplified", "fp16": "fp16", "int8": "int8"}
FIX_BUTTONS = (("static", QT_TRANSLATE_NOOP("Inspector", "Static dims…"), QT_TRANSLATE_NOOP("Inspector", "fix chosen dims (batch=1, sequence=64) and re-infer shapes")),
               ("simplify", QT_TRANSLATE_NOOP("Inspector", "Simplify"), QT_TRANSLATE_NOOP("Inspector", "fold constants and simplify with onnxslim")),
               ("fp16", "FP16", QT_TRANSLATE_NOOP("Inspector", "convert weights and compute to float16 (parity checked)")),
               ("int8", "INT8", QT_TRANSLATE_NOOP("Inspector", "dynamic INT8 quantization (parity checked)")))


@dataclass
class FixOutcome:
    kind: str
    source: Path
    path: Path  # the fixed model
    report: Any = None  # studio.optimize.api.FixReport (parity and before/after diff per written file)

    @property
    def main(self) -> Any:
        return self.report.files[0] if self.report is not None and self.report.files else None


def symbolic_dims(report: Any) -> list[str]:
    """Named dims of the graph inputs (batch, sequence, ...) in first-seen order."""
    out: list[str] = []
    for shape in (report.dynamic.dynamic_inputs or {}).values():
        for d in shape or []:
            if isinstance(d, str) and d and d not in out:
                out.append(d)
    for info in (report.stats.inputs or {}).values():
        for d in info.get("shape") or []:
            if isinstance(d, str) and d and d not in out:
                out.append(d)
    return out


_DEFAULTS = {"batch": 1, "batch_size": 1, "n": 1, "sequence": 64, "sequence_length": 64, "seq": 64,
             "seq_len": 64, "height": 224, "width": 224}


class StaticDimsDialog(DimsDialog):
    """dim = value for every symbolic input dim; an empty value leaves that dim dynamic."""

    def __init__(self, report: Any, parent: QWidget | None = None) -> None:
        dims = symbolic_dims(report)
        super().__init__(self.tr("Make dims static"), 360,
                         self.tr("Fix symbolic dims of the model inputs to concrete values. Shapes are re-inferred and the "
                                 "model is re-inspected afterwards. Leave a field empty to keep that dim dynamic."),
                         [(d, str(_DEFAULTS.get(d.lower(), 1))) for d in dims], optional=True, parent=parent)
        if not dims:
            self.form.addRow(QLabel(self.tr("The inputs have no named dynamic dims.")))

    def dims(self) -> dict[str, int]:
        return self.values()


def output_path(source: Path, kind: str) -> Path:
    """model.onnx -> model.static.onnx (never overwrites the source)."""
    return source.with_name(f"{source.stem}.{FIX_SUFFIX[kind]}.onnx")


def run_fix(kind: str, source: Path, params: dict[str, Any], job: Any,
            profile_dirs: list[Path] | None = None) -> FixOutcome:
    """Worker side of a fix button: studio.optimize.fix_model writes the fixed copy, checks parity against
    the original and diffs the inspection of both."""
    if kind not in FIX_SUFFIX:
        raise InputError(f"unknown fix {kind!r}", hint=f"one of {', '.join(FIX_SUFFIX)}")
    try:
        from studio.optimize.api import fix_model
    except ImportError as exc:
        raise StudioError(translate("FixFlow", "the optimizer (studio.optimize) is not available in this installation"),
                          hint=translate("FixFlow", "install the optimize extra: {command}").format(
                              command="pip install 'deployment-studio[optimize]'")) from exc
    options: dict[str, Any] = {
        "static": {"static": dict(params.get("dims") or {})},
        "simplify": {"simplify": True},
        "fp16": {"fp16": True},
        "int8": {"int8": True},
    }[kind]
    if kind == "static" and not options["static"]:
        raise InputError(translate("FixFlow", "no dims to make static"),
                         hint=translate("FixFlow", "enter a value for at least one dim, e.g. batch=1"))
    out = output_path(source, kind)
    report = fix_model(source, out, job=job, profile_dirs=profile_dirs, **options)
    return FixOutcome(kind=kind, source=source, path=Path(report.output or out), report=report)


def make_fix_buttons(on_fix: Callable[[str], Any]) -> dict[str, QPushButton]:
    """Kind -> button, disabled until there is a report to fix; a click calls ``on_fix(kind)``."""
    buttons: dict[str, QPushButton] = {}
    for kind, label, tip in FIX_BUTTONS:
        b = QPushButton(QCoreApplication.translate("Inspector", label))
        b.setToolTip(QCoreApplication.translate("Inspector", tip))
        b.setEnabled(False)
        b.clicked.connect(lambda _c=False, k=kind: on_fix(k))
        buttons[kind] = b
    return buttons


class FixFlow:
    """A fix of the page's model as a job; when it is done, its changes, the workspace entry and the fixed
    model shown (the page keeps the outcome in ``last_fix`` for the profile comparison)."""

    def __init__(self, page: InspectPage) -> None:
        self.page = page

    def request(self, kind: str, params: dict[str, Any] | None = None) -> None:
        """Run a studio.optimize fix as a job, then re-inspect the result and show the difference."""
        page = self.page
        if page.model_path is None or page.report is None:
            return
        if kind == "static" and params is None:
            dlg = StaticDimsDialog(page.report, page)
            if dlg.exec() != StaticDimsDialog.DialogCode.Accepted:
                return
            params = {"dims": dlg.dims()}
        src = page.model_path
        before = page.report
        page.status_label.setText(translate("FixFlow", "running fix: {kind}…").format(kind=kind))
        self._enable(False)
        dirs = page.target_profile_dirs()
        page.jobs.start("inspect.fix", translate("FixFlow", "fix {kind}: {name}").format(kind=kind, name=src.name),
                        lambda job: run_fix(kind, src, params or {}, job, dirs),
                        on_done=lambda out, b=before: self._done(out, b),
                        on_failed=self._failed)

    def _enable(self, on: bool) -> None:
        for b in self.page.fix_buttons.values():
            b.setEnabled(on)

    def link(self, url: Any) -> None:
        """The Changes tab's link: the last fix's source and output on the Diff page."""
        fix = getattr(self.page, "last_fix", None)
        if url.toString() == "studio:diff" and fix is not None:
            self.page.sig_open_page.emit("diff", {"a": str(fix.source), "b": str(fix.path)})

    def _failed(self, err: StudioError) -> None:
        self._enable(self.page.report is not None)
        self.page.job_failed(err)

    def _done(self, outcome: FixOutcome, before: Any) -> None:
        """Show what the fix changed (optimize's parity + inspection diff), then open the fixed model."""
        page = self.page
        page.sig_log.emit(f"fix {outcome.kind}: wrote {outcome.path}")
        page.session.set_fix(outcome)
        main = outcome.main
        if main is not None and main.diff is not None:
            page.changes_panel.setHtml(details.changes_html(
                f"{outcome.source.name} → {outcome.path.name}", main.diff, page.theme, main.steps, main.parity)
                + translate("FixFlow", "<p><a href='studio:diff'>Compare the two graphs side by side (Diff page)</a></p>"))
        if page.workspace is not None:
            try:
                entry = page.workspace.add_model(outcome.path, kind="onnx",
                                                 source=f"{outcome.kind} fix of {before.model}")
                page.workspace.save()
                if page.state.workspace is page.workspace:  # Diff opens on the original (A) and this (B)
                    page.state.record_artifact("fix_source", outcome.source, entry.name)
                page.sig_workspace_changed.emit()
            except Exception as exc:  # the fixed file exists either way; the workspace is a convenience
                page.sig_log.emit(translate("FixFlow", "could not add {path} to the workspace: {error}").format(
                    path=outcome.path, error=exc))
        page.open_model(outcome.path)
        page.profiler.update_compare_button()
        page.side.setCurrentWidget(page.changes_panel)


__all__ = ["FixOutcome", "FixFlow", "StaticDimsDialog", "make_fix_buttons", "run_fix", "output_path",
           "symbolic_dims"]
