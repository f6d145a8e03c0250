"""Diff: two models side by side, what was added, removed or changed coloured in both, and the list of changes.

The comparison is studio.diff's (``diff_models``, the same report `studio diff` prints); this page reads the
two graphs for drawing, shows the report and links the views: a row of the table, or a node clicked in one
view, selects the node and its counterpart in the other. Model A follows the current model until the user
types; B is chosen here (a fix output, an int8 copy, another export).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from studio.core.errors import JobCancelled, Problem, StudioError
from studio.gui.diff.changes_table import STATUS_COLOUR, ChangesModel
from studio.gui.file_dialogs import start_dir
from studio.gui.graph.view import GraphView
from studio.gui.page import Page
from studio.gui.widgets.field_error import FieldError

DIFF_WORDS = {"unsupported": "removed", "risky": "changed", "supported": "added"}


def _diff_job(a: Path, b: Path, target: str | None, job: Any) -> tuple[Any, Any, Any]:
    """Worker side: both graphs for drawing and the diff report."""
    from studio.diff.api import diff_models
    from studio.gui.inspector.model_loading import load_graph_job

    report = diff_models(a, b, target=target, job=job)
    return load_graph_job(a, job), load_graph_job(b, job), report


class DiffPage(Page):
    page_id = "diff"
    title = "Diff"

    def __init__(self, jobs: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(jobs, parent)
        self.report: Any | None = None
        self._typed_a = False
        self._linking = False
        self._build()

    def _build(self) -> None:
        root = QVBoxLayout(self)
        head = QLabel("<h2>Diff</h2>")
        root.addWidget(head)
        form = QGridLayout()
        self.a_edit, self.b_edit = QLineEdit(), QLineEdit()
        self.a_edit.setPlaceholderText("model A (.onnx): the current model")
        self.b_edit.setPlaceholderText("model B (.onnx): e.g. the output of a fix, an int8 copy, another export")
        self.a_edit.textEdited.connect(lambda _t: setattr(self, "_typed_a", True))
        for row, (label, edit) in enumerate((("Model A", self.a_edit), ("Model B", self.b_edit))):
            form.addWidget(QLabel(label), row, 0)
            form.addWidget(edit, row, 1)
            browse = QPushButton("Browse…")
            browse.clicked.connect(lambda _c=False, e=edit: self._choose(e))
            form.addWidget(browse, row, 2)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Verdicts for"))
        self.target_combo = QComboBox()
        self.target_combo.addItem("(structure only)", None)
        from studio.inspect.profiles import BUILTIN_IDS

        for tid in BUILTIN_IDS:
            self.target_combo.addItem(tid, tid)
        self.target_combo.setToolTip("also compare each node's verdict for this target (runs the inspector on "
                                     "both models)")
        bar.addWidget(self.target_combo)
        self.compare_btn = QPushButton("Compare")
        self.compare_btn.setDefault(True)
        self.compare_btn.clicked.connect(self.compare)
        bar.addWidget(self.compare_btn)
        bar.addStretch(1)
        form.addLayout(bar, 2, 1, 1, 2)
        root.addLayout(form)
        self.error = FieldError()
        root.addWidget(self.error)
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        root.addWidget(self.summary)

        split = QSplitter(Qt.Orientation.Vertical)
        views = QSplitter(Qt.Orientation.Horizontal)
        self.view_a, self.view_b = GraphView(), GraphView()
        for title, view in (("A", self.view_a), ("B", self.view_b)):
            box = QWidget()
            lay = QVBoxLayout(box)
            lay.setContentsMargins(0, 0, 0, 0)
            label = QLabel(title)
            label.setProperty("role", "muted")
            lay.addWidget(label)
            lay.addWidget(view, 1)
            view.set_rollup_words(DIFF_WORDS)
            views.addWidget(box)
        self.label_a, self.label_b = (views.widget(i).findChild(QLabel) for i in (0, 1))
        self.view_a.sig_node_selected.connect(lambda name: self._linked(name, "a"))
        self.view_b.sig_node_selected.connect(lambda name: self._linked(name, "b"))
        split.addWidget(views)
        self.changes = ChangesModel()
        self.table = QTableView()
        self.table.setModel(self.changes)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().setVisible(False)
        self.table.selectionModel().selectionChanged.connect(self._row_chosen)
        split.addWidget(self.table)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        root.addWidget(split, 1)

    # ---- context ---------------------------------------------------------------------------------------
    def context_changed(self) -> None:
        """Model A follows the current model (its ONNX file) until the user types another one."""
        if self._typed_a:
            return
        onnx = self.state.artifact("onnx") if self.state is not None else None
        path = onnx or self.state.model_path()
        if path is not None and str(path).endswith(".onnx"):
            self.a_edit.setText(str(path))

    def open_payload(self, payload: object) -> None:
        """{"a": path, "b": path} (e.g. the inspector's "Compare with…" after a fix); both given: compare."""
        if isinstance(payload, dict):
            if payload.get("a"):
                self.a_edit.setText(str(payload["a"]))
                self._typed_a = True
            if payload.get("b"):
                self.b_edit.setText(str(payload["b"]))
            if payload.get("a") and payload.get("b"):
                self.compare()

    def _choose(self, edit: QLineEdit) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "ONNX model", start_dir(edit.text() or None, self.workspace,
                                                                            "models"),
                                              "ONNX models (*.onnx);;All files (*)")
        if path:
            edit.setText(path)
            if edit is self.a_edit:
                self._typed_a = True

    # ---- running ---------------------------------------------------------------------------------------
    def compare(self) -> None:
        self.error.clear_error()
        paths = []
        for edit, name in ((self.a_edit, "Model A"), (self.b_edit, "Model B")):
            text = edit.text().strip()
            if not text:
                self.error.show_error(f"{name} is empty", edit, hint="choose an .onnx file with Browse…")
                return
            p = Path(text).expanduser()
            if not p.is_file():
                self.error.show_error(f"{name}: no such file: {p}", edit, hint="check the path, or Browse…")
                return
            paths.append(p)
        a, b = paths
        target = self.target_combo.currentData()
        self.summary.setText("comparing…")
        self.compare_btn.setEnabled(False)
        self.jobs.start("diff", f"diff {a.name} {b.name}", lambda job: _diff_job(a, b, target, job),
                        on_done=self._show, on_failed=self._failed)

    def _failed(self, err: StudioError) -> None:
        self.compare_btn.setEnabled(True)
        self.summary.setText("")
        if isinstance(err, JobCancelled):
            return
        text = err.message if not err.offending or err.offending in err.message else f"{err.offending}: {err.message}"
        self.error.show_error(text, hint=err.hint)
        self.sig_problem.emit(Problem("error", text, source=self.title, page=self.page_id, hint=err.hint or ""))

    def _show(self, result: tuple[Any, Any, Any]) -> None:
        graph_a, graph_b, report = result
        self.compare_btn.setEnabled(True)
        self.report = report
        s = report.summary
        self.label_a.setText(f"A: {Path(report.model_a).name} ({s.nodes_a:,} nodes)")
        self.label_b.setText(f"B: {Path(report.model_b).name} ({s.nodes_b:,} nodes)")
        self.summary.setText(summary_html(report))
        self.changes.set_report(report)
        self.table.resizeColumnsToContents()
        marks_a = {n.a: STATUS_COLOUR[n.status] for n in report.nodes if n.a}
        marks_b = {n.b: STATUS_COLOUR[n.status] for n in report.nodes if n.b}
        self.view_a.set_verdicts(marks_a)
        self.view_b.set_verdicts(marks_b)
        self.view_a.set_graph(graph_a)
        self.view_b.set_graph(graph_b)
        self._pair_a = {a: b for a, b, _how in report.pairs()}
        self._pair_b = {b: a for a, b, _how in report.pairs()}
        self.sig_log.emit(f"diff: {s.changed} changed, {s.removed} removed, {s.added} added")

    # ---- linking ---------------------------------------------------------------------------------------
    def _row_chosen(self, *_args: Any) -> None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return
        a, b = self.changes.nodes_of(rows[0].row())
        self._select(a, b)

    def _linked(self, name: str, side: str) -> None:
        """A node clicked in one view selects its counterpart in the other (when it has one)."""
        if self._linking or not name or self.report is None:
            return
        other = (self._pair_a if side == "a" else self._pair_b).get(name)
        self._select(name if side == "a" else other, other if side == "a" else name)

    def _select(self, a: str | None, b: str | None) -> None:
        self._linking = True
        try:
            for view, name in ((self.view_a, a), (self.view_b, b)):
                if name and view.graph is not None:
                    view.select(name, animate=False)
        finally:
            self._linking = False



def summary_html(report: Any) -> str:
    """One line a reader takes in at once, then the kinds of change and any note."""
    s = report.summary
    if s.unrelated:
        return f"<b>Nothing matched.</b> {s.message}"
    if not report.has_changes:
        return f"<b>No change</b>: {s.matched:,} nodes matched ({s.matched_by_name:,} by name)."
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(s.changed_by_kind.items(), key=lambda kv: -kv[1]))
    text = (f"<b>{s.changed:,} changed</b> ({kinds or 'no detail'}), <b>{s.removed:,} removed</b>, "
            f"<b>{s.added:,} added</b>; {s.matched:,} of {s.nodes_a:,} / {s.nodes_b:,} nodes matched "
            f"({s.matched_by_name:,} by name, {s.matched_by_structure:,} by structure).")
    for note in report.notes:
        text += f"<br><span style='color:gray'>{note}</span>"
    return text


__all__ = ["DiffPage", "summary_html"]
