"""Diff: two models side by side, what was added, removed or changed coloured in both, and the list of changes.

The comparison is studio.diff's (``diff_models``, the same report `studio diff` prints); this page reads the
two graphs for drawing, shows the report and links the views: a row of the table, or a node clicked in one
view, selects the node and its counterpart in the other.

A is "before" and B "after", and the page says which file each is: by default A is the original a fix was
made from and B the fix's output (studio.gui.diff.sides, from the workspace state's ``fix_source``), so
nodes a fix dropped read as removed. Nodes whose only change is their tensors' shapes (a static-dims fix
re-shapes everything downstream) are coloured and counted apart from op, attribute and wiring changes.
Until the user types a path, both fields follow the state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt
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
from studio.gui.diff.changes_table import STATUS_COLOUR, ChangesModel, status_of
from studio.gui.diff.sides import default_sides
from studio.gui.file_dialogs import start_dir
from studio.gui.graph import palette
from studio.gui.graph.view import GraphView
from studio.gui.page import Page
from studio.gui.widgets.field_error import FieldError

DIFF_WORDS = {"unsupported": QT_TRANSLATE_NOOP("GraphRollup", "removed"),
              "risky": QT_TRANSLATE_NOOP("GraphRollup", "changed"),
              "unknown": QT_TRANSLATE_NOOP("GraphRollup", "shape only"),
              "supported": QT_TRANSLATE_NOOP("GraphRollup", "added")}  # translated by expansion.rollup_text
LEGEND = (("removed", QT_TRANSLATE_NOOP("Diff", "removed (A only)")), ("changed", QT_TRANSLATE_NOOP("Diff", "op / attributes / wiring changed")),
          (QT_TRANSLATE_NOOP("Diff", "shape only"), QT_TRANSLATE_NOOP("Diff", "shapes only")), ("added", QT_TRANSLATE_NOOP("Diff", "added (B only)")))


def _diff_job(a: Path, b: Path, target: str | None, job: Any, profile_dirs: list[Path]) -> tuple[Any, Any, Any]:
    """Worker side: both graphs for drawing and the diff report."""
    from studio.diff.api import diff_models
    from studio.gui.inspector.model_loading import load_graph_job

    report = diff_models(a, b, target=target, job=job, profile_dirs=profile_dirs or None)
    return load_graph_job(a, job), load_graph_job(b, job), report


class DiffPage(Page):
    page_id = "diff"
    title = "Diff"

    def __init__(self, jobs: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(jobs, parent)
        self.report: Any | None = None
        self._typed_a = self._typed_b = False
        self._structure_only = False  # the user chose "(structure only)" here: the combo stops following
        self._linking = False
        self._build()

    def _build(self) -> None:
        root = QVBoxLayout(self)
        head = QLabel("<h2>" + self.tr("Diff") + "</h2>")
        root.addWidget(head)
        form = QGridLayout()
        self.a_edit, self.b_edit = QLineEdit(), QLineEdit()
        self.a_edit.setPlaceholderText(self.tr("model A, before (.onnx): e.g. the original a fix was made from"))
        self.b_edit.setPlaceholderText(self.tr("model B, after (.onnx): e.g. the output of a fix, an int8 copy, another export"))
        self.a_edit.textEdited.connect(lambda _t: setattr(self, "_typed_a", True))
        self.b_edit.textEdited.connect(lambda _t: setattr(self, "_typed_b", True))
        self.a_why, self.b_why = QLabel(""), QLabel("")  # what each file is (from the workspace state)
        for row, (label, edit, why) in enumerate(((self.tr("A (before)"), self.a_edit, self.a_why),
                                                  (self.tr("B (after)"), self.b_edit, self.b_why))):
            form.addWidget(QLabel(f"<b>{label}</b>"), 2 * row, 0)
            form.addWidget(edit, 2 * row, 1)
            browse = QPushButton(self.tr("Browse…"))
            browse.clicked.connect(lambda _c=False, e=edit: self._choose(e))
            form.addWidget(browse, 2 * row, 2)
            why.setProperty("role", "muted")
            why.hide()  # shown with a text (_say)
            form.addWidget(why, 2 * row + 1, 1)
        bar = QHBoxLayout()
        self.swap_btn = QPushButton(self.tr("Swap A ⇄ B"))
        self.swap_btn.setToolTip(self.tr("compare the other way round (B becomes before)"))
        self.swap_btn.clicked.connect(self.swap)
        bar.addWidget(self.swap_btn)
        bar.addWidget(QLabel(self.tr("Verdicts for")))
        self.target_combo = QComboBox()
        self.target_combo.addItem(self.tr("(structure only)"), None)
        self._fill_targets()
        self.target_combo.setToolTip(self.tr("also compare each node's verdict for this target: the workspace's current "
                                             "target (choosing another here makes it every page's), or structure only"))
        self.target_combo.activated.connect(self._target_picked)
        bar.addWidget(self.target_combo)
        self.compare_btn = QPushButton(self.tr("Compare"))
        self.compare_btn.setDefault(True)
        self.compare_btn.clicked.connect(self.compare)
        bar.addWidget(self.compare_btn)
        bar.addStretch(1)
        form.addLayout(bar, 4, 1, 1, 2)
        root.addLayout(form)
        self.error = FieldError()
        root.addWidget(self.error)
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        root.addWidget(self.summary)
        self.legend = QLabel("")  # the four colours with their counts
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        root.addWidget(self.legend)
        self._show_legend(None)

        split = QSplitter(Qt.Orientation.Vertical)
        views = QSplitter(Qt.Orientation.Horizontal)
        self.view_a, self.view_b = GraphView(), GraphView()
        for title, view in ((self.tr("A (before)"), self.view_a), (self.tr("B (after)"), self.view_b)):
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
        # graphs a reader can look at on a 1366x768 screen: the page scrolls rather than squeeze them
        views.setMinimumHeight(260)
        self.table.setMinimumHeight(110)
        split.setChildrenCollapsible(False)
        root.addWidget(split, 1)

    # ---- context ---------------------------------------------------------------------------------------
    def _fill_targets(self) -> None:
        """Every target the inspector checks: built-in, plugins' and the workspace's profiles."""
        from studio.gui.targets import target_ids

        keep = self.target_combo.currentData()
        ids = target_ids(self._profile_dirs())
        have = [self.target_combo.itemData(i) for i in range(1, self.target_combo.count())]
        if ids != have:
            self.target_combo.blockSignals(True)
            while self.target_combo.count() > 1:
                self.target_combo.removeItem(1)
            for tid in ids:
                self.target_combo.addItem(tid, tid)
            self.target_combo.setCurrentIndex(max(0, self.target_combo.findData(keep)))
            self.target_combo.blockSignals(False)

    def _profile_dirs(self) -> list[Path]:
        ws = getattr(self, "workspace", None)
        return [ws.targets_dir] if ws is not None and ws.targets_dir.is_dir() else []

    def context_changed(self) -> None:
        self._fill_targets()
        self._show_target()
        self._follow_state()

    def _show_target(self) -> None:
        """The combo shows the workspace's current target unless the user asked for structure only here."""
        if self._structure_only or not self.target:
            return
        i = self.target_combo.findData(self.target)
        if i >= 0 and i != self.target_combo.currentIndex():
            self.target_combo.setCurrentIndex(i)

    def _target_picked(self, index: int) -> None:
        """A target picked here is the workspace's target (every page follows); "(structure only)" stays local:
        it is a way to compare, not a target."""
        tid = self.target_combo.itemData(index)
        self._structure_only = tid is None
        if tid is not None:
            self.choose_target(tid)

    def state_changed(self, topic: str, payload: object) -> None:
        if topic in ("model", "artifacts", "workspace"):
            self._follow_state()

    def _follow_state(self) -> None:
        """A and B from the state (the fix's source and the fix), each until the user types or browses there."""
        if self.state is None:
            return
        a, b = default_sides(self.state)
        for typed, edit, why, side in ((self._typed_a, self.a_edit, self.a_why, a),
                                       (self._typed_b, self.b_edit, self.b_why, b)):
            if typed:
                continue
            if side.path and edit.text() != side.path:
                edit.setText(side.path)
            _say(why, side.why if side.path else "")

    def open_payload(self, payload: object) -> None:
        """{"a": path, "b": path} (e.g. the inspector's "Compare with…" after a fix: its source and output);
        both given: compare."""
        if isinstance(payload, dict):
            for key, edit, why in (("a", self.a_edit, self.a_why), ("b", self.b_edit, self.b_why)):
                if payload.get(key):
                    edit.setText(str(payload[key]))
                    _say(why, str(payload.get(f"{key}_why", "before" if key == "a" else "after")))
                    setattr(self, f"_typed_{key}", True)
            if payload.get("a") and payload.get("b"):
                self.compare()

    def swap(self) -> None:
        """B becomes before and A after (both then count as chosen)."""
        a, b = self.a_edit.text(), self.b_edit.text()
        wa, wb = self.a_why.text(), self.b_why.text()
        self.a_edit.setText(b)
        self.b_edit.setText(a)
        _say(self.a_why, wb.replace("after:", "before:", 1))
        _say(self.b_why, wa.replace("before:", "after:", 1))
        self._typed_a = self._typed_b = True

    def _choose(self, edit: QLineEdit) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self.tr("ONNX model"), start_dir(edit.text() or None, self.workspace,
                                                                            "models"),
                                              self.tr("ONNX models (*.onnx);;All files (*)"))
        if path:
            edit.setText(path)
            setattr(self, "_typed_a" if edit is self.a_edit else "_typed_b", True)
            _say(self.a_why if edit is self.a_edit else self.b_why, self.tr("chosen here"))

    # ---- running ---------------------------------------------------------------------------------------
    def compare(self) -> None:
        self.error.clear_error()
        paths = []
        for edit, name in ((self.a_edit, self.tr("Model A")), (self.b_edit, self.tr("Model B"))):
            text = edit.text().strip()
            if not text:
                self.error.show_error(self.tr("{name} is empty").format(name=name), edit, hint=self.tr("choose an .onnx file with Browse…"))
                return
            p = Path(text).expanduser()
            if not p.is_file():
                self.error.show_error(self.tr("{name}: no such file: {p}").format(name=name, p=p), edit, hint=self.tr("check the path, or Browse…"))
                return
            paths.append(p)
        a, b = paths
        target = self.target_combo.currentData()
        self.summary.setText(self.tr("comparing…"))
        self.compare_btn.setEnabled(False)
        dirs = self._profile_dirs()
        self.jobs.start("diff", self.tr("diff {name} {name2}").format(name=a.name, name2=b.name), lambda job: _diff_job(a, b, target, job, dirs),
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
        self.label_a.setText(self.tr("A (before): {name} ({nodes_a:,} nodes)").format(name=Path(report.model_a).name, nodes_a=s.nodes_a))
        self.label_b.setText(self.tr("B (after): {name} ({nodes_b:,} nodes)").format(name=Path(report.model_b).name, nodes_b=s.nodes_b))
        self.summary.setText(summary_html(report))
        self._show_legend(report)
        self.changes.set_report(report)
        self.table.resizeColumnsToContents()
        marks_a = {n.a: STATUS_COLOUR[status_of(n)] for n in report.nodes if n.a}
        marks_b = {n.b: STATUS_COLOUR[status_of(n)] for n in report.nodes if n.b}
        self.view_a.set_verdicts(marks_a)
        self.view_b.set_verdicts(marks_b)
        self.view_a.set_graph(graph_a)
        self.view_b.set_graph(graph_b)
        self._pair_a = {a: b for a, b, _how in report.pairs()}
        self._pair_b = {b: a for a, b, _how in report.pairs()}
        self.sig_log.emit(self.tr("diff {a} -> {b}: {removed} removed, {added} added, {changed} changed, "
                                  "{shape_only} in shapes only").format(
            a=Path(report.model_a).name, b=Path(report.model_b).name, removed=s.removed, added=s.added,
            changed=s.changed - s.changed_shape_only, shape_only=s.changed_shape_only))

    def _show_legend(self, report: Any | None) -> None:
        """A swatch per colour, with the report's count of each (none before a comparison)."""
        colours = palette.verdict_colors(palette.current_theme())
        s = report.summary if report is not None else None
        counts = {} if s is None else {"removed": s.removed, "added": s.added, "shape only": s.changed_shape_only,
                                       "changed": s.changed - s.changed_shape_only}
        parts = []
        for key, words in LEGEND:
            n = f" <b>{counts[key]:,}</b>" if key in counts else ""
            parts.append(f"<span style='color:{colours[STATUS_COLOUR[key]][0]}; font-size:12pt'>■</span> "
                         f"{QCoreApplication.translate('Diff', words)}{n}")
        self.legend.setText("&nbsp;&nbsp;&nbsp;".join(parts))

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



def _say(label: QLabel, text: str) -> None:
    label.setText(text)
    label.setVisible(bool(text))


def summary_html(report: Any) -> str:
    """One line a reader takes in at once, read from A (before) to B (after), then the kinds of change."""
    from html import escape

    s = report.summary
    a, b = escape(Path(report.model_a).name), escape(Path(report.model_b).name)
    translate = QCoreApplication.translate
    if s.unrelated:
        return "<b>" + translate("DiffPage", "Nothing matched.") + f"</b> {escape(s.message)}"
    if not report.has_changes:
        return translate("DiffPage", "<b>No change</b> from A ({a}) to B ({b}): {matched} nodes matched ({by_name} by "
                              "name).").format(a=a, b=b, matched=f"{s.matched:,}", by_name=f"{s.matched_by_name:,}")
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(s.changed_by_kind.items(), key=lambda kv: -kv[1]))
    ops = s.changed - s.changed_shape_only
    text = (translate("DiffPage", "From A ({a}) to B ({b}): <b>{removed} removed</b> (in A only), <b>{added} added</b> "
                           "(in B only), <b>{changed} changed</b> in op, attributes or wiring, <b>{shape_only} in "
                           "shapes only</b>; {matched} of {nodes_a} / {nodes_b} nodes matched ({by_name} by name, "
                           "{by_structure} by structure).").format(
                a=a, b=b, removed=f"{s.removed:,}", added=f"{s.added:,}", changed=f"{ops:,}",
                shape_only=f"{s.changed_shape_only:,}", matched=f"{s.matched:,}", nodes_a=f"{s.nodes_a:,}",
                nodes_b=f"{s.nodes_b:,}", by_name=f"{s.matched_by_name:,}", by_structure=f"{s.matched_by_structure:,}")
            + ("<br><span style='color:gray'>" + translate("DiffPage", "changed nodes by kind: {kinds}").format(
                kinds=escape(kinds)) + "</span>" if kinds else ""))
    for note in report.notes:
        text += f"<br><span style='color:gray'>{escape(note)}</span>"
    return text


__all__ = ["DiffPage", "summary_html"]
