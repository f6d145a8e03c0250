"""The inspector's "Verify with the real toolchain": every usable verifier (a real ORT session, TVM import,
OpenVINO query, plugins' tools) run on the model shown as a job, and the Verify tab that lists, per target and
verifier, the tool and its version beside the profile and its source, and the nodes where they disagree.

The work is ``studio.verify`` (``verify_report`` and ``fold``), exactly what ``studio inspect MODEL --verify
[--fold-into-profile WORKSPACE]`` runs; this module only starts the job and renders ``report.verification``.
A verifier that cannot run is a line with its reason, never an error dialog: inspection does not need it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.core.catalogue import _ as core_text
from studio.core.errors import StudioError

translate = QCoreApplication.translate

if TYPE_CHECKING:
    from studio.gui.pages.inspect_page import InspectPage

VERIFY_JOB = "inspect:verify"  # "inspect:" so Esc on the page cancels it
CLI_VERIFY = "studio inspect MODEL --verify"
CLI_FOLD = "studio inspect MODEL --verify --fold-into-profile WORKSPACE"
NODE_ROLE = Qt.ItemDataRole.UserRole + 1
COLUMNS = (QT_TRANSLATE_NOOP("Columns", "Target · node"), QT_TRANSLATE_NOOP("Columns", "Agree"), QT_TRANSLATE_NOOP("Columns", "Tool says"), QT_TRANSLATE_NOOP("Columns", "Profile says"))
TOOL_COL, PROFILE_COL = 2, 3


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def sources_html(v: dict[str, Any], report: Any) -> str:
    """Which verifiers ran (tool + version) and which could not, with why (missing tool, broken plugin)."""
    lines = []
    for e in v.get("verifiers", []):
        where = translate("VerifyPanel", " for {target}").format(target=_esc(e["target"])) if e["target"] else ""
        if e["ok"]:
            lines.append(f"<b>{_esc(e['name'])}</b>{where}: {_esc(core_text(e['reason']))}")
        else:
            lines.append(f"<b>{_esc(e['name'])}</b>{where}: <i>" + translate("VerifyPanel", "unavailable")
                         + f"</i>: {_esc(core_text(e['reason']))}")
    for p in v.get("broken_plugins", []):
        lines.append(translate("VerifyPanel", "plugin {name}: failed to load: {error}").format(
            name=f"<b>{_esc(p['plugin'])}</b>", error=_esc(p["error"])))
    return "<br>".join(lines)


def list_source(report: Any, target: str) -> str:
    """Where a target's verdicts come from when no tool checks them: its profile's name and source."""
    s = report.targets.get(target) if report is not None else None
    return f"{s.name}: {s.source}" if s is not None else target


class VerifyPanel(QWidget):
    """The Verify tab: sources, one tree row per target/verifier with its disagreeing nodes, and the fold row.

    ``sig_node_chosen`` carries the node of a clicked node row; ``sig_fold_requested`` the target to fold.
    """

    sig_node_chosen = Signal(str)
    sig_fold_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea()  # the side panel is short beside the graph at 1366x768: scroll, never overlap
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        content = QWidget()
        scroll.setWidget(content)
        outer.addWidget(scroll)
        lay = QVBoxLayout(content)
        lay.setContentsMargins(8, 8, 8, 8)
        lay.setSpacing(6)
        self.status_label = QLabel(self.tr("Press “Verify with the real toolchain” (CLI: {CLI_VERIFY}) to ask the real "
                                           "tools and compare them with the static profiles.").format(CLI_VERIFY=CLI_VERIFY))
        self.status_label.setWordWrap(True)
        self.status_label.setProperty("role", "muted")
        lay.addWidget(self.status_label)
        self.sources_label = QLabel("")
        self.sources_label.setWordWrap(True)
        self.sources_label.setTextFormat(Qt.TextFormat.RichText)
        self.sources_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        sources = QScrollArea()  # one line per tool: scrolls rather than squeezing the node tree away
        sources.setWidget(self.sources_label)
        sources.setWidgetResizable(True)
        sources.setFrameShape(QFrame.Shape.NoFrame)
        sources.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        sources.setMaximumHeight(96)
        lay.addWidget(sources)
        srow = QVBoxLayout()  # stacked: the side panel is narrow beside the graph on a 1366 px screen
        srow.setSpacing(2)
        shapes_label = QLabel(self.tr("Static shapes (tools that build at fixed sizes: rknn)"))
        shapes_label.setWordWrap(True)
        srow.addWidget(shapes_label)
        self.shapes_edit = QLineEdit()
        self.shapes_edit.setPlaceholderText(self.tr("all input dims are static"))
        self.shapes_edit.setToolTip(self.tr("the input shapes the tools build at (rknn-toolkit2 builds static graphs "
                                            "only): NAME=D,D,..., several separated by ';'\nCLI: --shape NAME=D,D,..."))
        srow.addWidget(self.shapes_edit)
        lay.addLayout(srow)
        self.shapes_error = QLabel("")
        self.shapes_error.setWordWrap(True)
        self.shapes_error.setProperty("role", "error")
        self.shapes_error.hide()
        lay.addWidget(self.shapes_error)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels([QCoreApplication.translate("Columns", c) for c in COLUMNS])
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        self.tree.header().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.tree.header().setStretchLastSection(True)
        self.tree.itemClicked.connect(self._on_item)
        self.tree.setMinimumHeight(140)
        lay.addWidget(self.tree, 1)
        row = QVBoxLayout()
        self.fold_target = QComboBox()
        self.fold_target.setMinimumWidth(90)
        self.fold_target.currentIndexChanged.connect(lambda _i: self._update_fold())
        self.fold_button = QPushButton(self.tr("Fold into workspace profile"))
        self.fold_button.setToolTip(self.tr("write the tool's answer for the disagreeing ops as WORKSPACE/targets/<target>"
                                            ".yaml, then re-inspect with it\nCLI: {CLI_FOLD}").format(CLI_FOLD=CLI_FOLD))
        self.fold_button.setEnabled(False)
        self.fold_button.clicked.connect(lambda: self.sig_fold_requested.emit(self.fold_target.currentData() or ""))
        row.addWidget(self.fold_target)
        row.addWidget(self.fold_button)
        lay.addLayout(row)
        self.fold_label = QLabel(self.tr("CLI: {command}").format(command=CLI_FOLD))
        self.fold_label.setWordWrap(True)
        self.fold_label.setProperty("role", "muted")
        self.fold_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.fold_label)
        self.has_workspace = False
        self._disagreeing: set[str] = set()

    def clear(self, status: str = "") -> None:
        self.tree.clear()
        self.sources_label.clear()
        self.fold_target.clear()
        self._disagreeing = set()
        if status:
            self.status_label.setText(status)
        self._update_fold()

    def show_verification(self, v: dict[str, Any], report: Any) -> None:
        """Render a ``report.verification`` dict: every verdict with where it came from."""
        self.clear()
        self.sources_label.setText(sources_html(v, report))
        comps = v.get("comparisons", [])
        n = sum(len(c["disagreements"]) for c in comps)
        self.status_label.setText(self.tr("{runs} tool run(s); {n} node(s) where the tool and the profile disagree "
                                          "(the tool wins: it ran the model)").format(runs=len(comps), n=n) if comps else
                                  self.tr("no verifier could run for these targets (see why below)"))
        for c in comps:
            self._add_comparison(c)
        for t in v.get("unverified_targets", []):
            src = list_source(report, t)
            item = QTreeWidgetItem([self.tr("{target} · no verifier").format(target=t), self.tr("list only"),
                                    self.tr("no tool ran"), src])
            item.setToolTip(0, self.tr("{t}: no verifier; verdicts are from the list ({src})").format(t=t, src=src))
            item.setToolTip(PROFILE_COL, src)
            self.tree.addTopLevelItem(item)
        self.tree.expandAll()
        for col in range(len(COLUMNS) - 1):
            self.tree.resizeColumnToContents(col)
            self.tree.setColumnWidth(col, min(self.tree.columnWidth(col), 240))
        self._disagreeing = {c["target"] for c in comps if c["ran"] and c["disagreements"]}
        for t in sorted(self._disagreeing):
            self.fold_target.addItem(t, t)
        self._update_fold()

    def _add_comparison(self, c: dict[str, Any]) -> None:
        """One verifier's row: the panel's words Qt's, a verifier's error, notes and the verdict words the core's
        catalogue's (a plugin's: its own), so a zh_CN panel shows no English note; a tool's own message as it came."""
        tool_model = c.get("tool_model") or {}
        error = core_text(c["error"]) if c["error"] else ""
        if c.get("tool_crashed"):  # the tool's own fault: never shown as the model refused
            said = self.tr("crashed (a fault of the tool, not a verdict on the model): {error}").format(
                error=error[:300])
            agree = "—"
        elif not c["ran"]:
            said, agree = self.tr("could not run: {error}").format(error=error[:300]), "—"
        else:
            said = self.tr("refuses the model") if c["tool_fails"] else self.tr("accepts the model")
            if tool_model.get("host_nodes"):
                said += self.tr(", {n} node(s) on the host").format(n=len(tool_model["host_nodes"]))
            agree = self.tr("agrees") if c["agrees"] and not c["disagreements"] else self.tr("DISAGREES")
        profile = self.tr("fail") if c["static_fails"] else self.tr("no failure")
        top = QTreeWidgetItem([f"{c['target']} · {c['verifier']}", agree, f"{c['tool']}: {said}", profile])
        top.setToolTip(0, self.tr("tool: {value}\nprofile: {value2}").format(value=c['tool'], value2=c['profile_source']))
        top.setToolTip(TOOL_COL, f"{c['tool']}: {said}" + (f"\n{error}" if error else ""))
        top.setToolTip(PROFILE_COL, self.tr("{profile}; profile {value}").format(profile=profile, value=c['profile_source']))
        self.tree.addTopLevelItem(top)
        src = QTreeWidgetItem([self.tr("sources"), "", c["tool"], c["profile_source"]])
        src.setToolTip(TOOL_COL, self.tr("tool: {value}").format(value=c['tool']))
        src.setToolTip(PROFILE_COL, self.tr("profile: {value}").format(value=c['profile_source']))
        top.addChild(src)
        for d in c["disagreements"]:
            tool = core_text(d["tool_verdict"]) + (f": {d['tool_message']}" if d["tool_message"] else "")
            stat = core_text(d["static_verdict"]) + (f" ({core_text(d['static_reason'])})" if d["static_reason"] else "")
            item = QTreeWidgetItem([f"{d['node']} ({d['op_type']})", self.tr("disagree"), tool[:200], stat[:200]])
            item.setData(0, NODE_ROLE, d["node"])
            item.setToolTip(TOOL_COL, f"{c['tool']}: {tool}")
            item.setToolTip(PROFILE_COL, f"{c['profile_source']}: {stat}")
            top.addChild(item)
        for note in map(core_text, c.get("notes", [])):
            note_item = QTreeWidgetItem([self.tr("note: {note}").format(note=note), "", "", ""])
            note_item.setToolTip(0, note)
            top.addChild(note_item)

    def node_rows(self) -> list[QTreeWidgetItem]:
        """The rows that name a disagreeing node, in order."""
        out = []
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            out += [top.child(j) for j in range(top.childCount()) if top.child(j).data(0, NODE_ROLE)]
        return out

    def _on_item(self, item: QTreeWidgetItem, _col: int) -> None:
        node = item.data(0, NODE_ROLE)
        if node:
            self.sig_node_chosen.emit(str(node))

    def _update_fold(self) -> None:
        ok = bool(self.fold_target.currentData()) and self.has_workspace
        self.fold_button.setEnabled(ok)
        if not self._disagreeing:
            self.fold_button.setToolTip(self.tr("nothing to fold: no tool disagrees with its profile\nCLI: {CLI_FOLD}").format(CLI_FOLD=CLI_FOLD))
        elif not self.has_workspace:
            self.fold_button.setToolTip(self.tr("open a workspace to fold into (its targets/ folder)\nCLI: {CLI_FOLD}").format(CLI_FOLD=CLI_FOLD))
        else:
            self.fold_button.setToolTip(self.tr("write the tool's answer for the disagreeing ops as WORKSPACE/targets/"
                                                "<target>.yaml, then re-inspect with it\nCLI: {CLI_FOLD}").format(CLI_FOLD=CLI_FOLD))


class VerifyFlow:
    """Runs the verifiers as a job for the page's model, shows the answer, folds it into the workspace on request."""

    def __init__(self, page: InspectPage, panel: VerifyPanel) -> None:
        self.page = page
        self.panel = panel
        self.report: Any = None  # the InspectionReport whose ``verification`` is shown
        self.model: Path | None = None
        self.last_fold: Any = None  # studio.verify.fold.FoldResult
        self.button = QPushButton(translate("VerifyFlow", "Verify with the real toolchain"))
        self.button.setToolTip(translate("VerifyFlow", "run every available verifier (ONNX Runtime session, TVM import, OpenVINO query, "
                                                       "plugins' tools) and show where they disagree with the static profiles\n"
                                                       "CLI: {CLI_VERIFY}").format(CLI_VERIFY=CLI_VERIFY))
        self.button.setEnabled(False)
        self.button.clicked.connect(lambda: self.start())
        panel.sig_node_chosen.connect(self.on_node)
        panel.sig_fold_requested.connect(self.fold)

    def reset(self) -> None:
        """A new model is shown: the old answer no longer applies."""
        self.report, self.model = None, None
        self.button.setEnabled(self.page.model_path is not None)
        self.panel.clear(translate("VerifyFlow", "Not verified yet: press “Verify with the real toolchain”."))
        self.panel.shapes_edit.clear()

    def say_what_it_needs(self, report: Any) -> None:
        """Before any run: which tool would answer for each target (from the manifests, off the GUI thread), and
        the static shapes pre-filled for the tools that build at fixed sizes."""
        targets = list(report.targets) if report is not None else []
        if not targets:
            return

        def work(job: Any) -> Any:
            from studio.verify.registry import offers

            return offers(targets)

        self.page.jobs.start(f"{VERIFY_JOB}-offers", translate("VerifyFlow", "verifiers for these targets"), work,
                             on_done=lambda o, r=report: self._show_offers(r, o), on_failed=lambda _e: None)

    def _show_offers(self, report: Any, offers: dict[str, list[dict[str, Any]]]) -> None:
        if self.report is not None or report is not self.page.report:
            return  # verified meanwhile, or another model shown
        ready = [f"{t}: {core_text(o['reason'])}" for t, os_ in offers.items() for o in os_ if o["ok"]]
        missing = [f"{t}: {core_text(o['reason'])}" for t, os_ in offers.items() for o in os_ if not o["ok"]]
        none = [t for t in report.targets if t not in offers]
        n_shapes = len([x for x in self.panel.shapes_edit.text().split(";") if x.strip()])
        text = (translate("VerifyFlow", "Ready to verify with {n} tool(s) — {tools}.").format(
            n=len(ready), tools="; ".join(ready)) if ready
            else translate("VerifyFlow", "No tool installed can verify these targets."))
        if missing:
            text += translate("VerifyFlow", " Unavailable: {tools}.").format(tools="; ".join(missing))
        if none:
            text += translate("VerifyFlow", " No verifier for {targets}: their verdicts stay the profiles'.").format(
                targets=", ".join(none))
        if n_shapes:
            text += translate("VerifyFlow", " Tools that build at fixed sizes (rknn) use the static shapes below "
                                            "({n} input(s), pre-filled from the model: edit them before pressing "
                                            "Verify).").format(n=n_shapes)
        self.panel.status_label.setText(text)
        self.button.setEnabled(self.page.model_path is not None)

    def prefill_shapes(self, report: Any) -> None:
        """The model's dynamic dims at the page's defaults (1 for a batch), for the tools that need them static."""
        from studio.core.shapes import format_shapes
        from studio.gui.inspector.profile_data import input_dims, shapes_for

        stats_inputs = dict(report.stats.inputs or {}) if report is not None else {}
        dims = input_dims(stats_inputs)
        if not dims or self.panel.shapes_edit.text().strip():
            return
        shapes = shapes_for(stats_inputs, {label: default for label, _n, _a, default in dims})
        # every input with a dynamic dim (a dim label is listed once, at its first input, by input_dims)
        dynamic = {name for name, info in stats_inputs.items()
                   if any(not isinstance(d, int) or d <= 0 for d in (info.get("shape") or []))}
        self.panel.shapes_edit.setText(format_shapes({n: v for n, v in shapes.items() if n in dynamic}))

    def shapes(self) -> dict[str, list[int]] | None:
        """The panel's shapes (None when empty); StudioError naming the bad entry. An old spelling is accepted
        and told in place, under the field."""
        from studio.core.shapes import read_shapes

        parsed = read_shapes(self.panel.shapes_edit.text(), field="Static shapes")
        if parsed.notes:
            self._shapes_message("\n".join(translate("VerifyFlow", "warning: {note}").format(note=n)
                                           for n in parsed.notes), "warn")
        return parsed.shapes or None

    def _shapes_message(self, text: str, role: str) -> None:
        from studio.gui.theme import set_role

        set_role(self.panel.shapes_error, role)
        self.panel.shapes_error.setText(text)
        self.panel.shapes_error.show()

    def start(self) -> None:
        page = self.page
        if page.model_path is None:
            return
        path, report, dirs = page.model_path, page.report, page.target_profile_dirs()
        self.panel.shapes_error.hide()
        try:
            shapes = self.shapes()
        except StudioError as err:
            self._shapes_message(err.render(), "error")
            page.side.setCurrentWidget(self.panel)
            return

        def work(job: Any) -> Any:
            from studio.verify.registry import all_verifiers
            from studio.verify.run import verify_report

            rep = report
            if rep is None or Path(rep.model).resolve() != path.resolve():
                from studio.inspect.api import inspect_model

                rep = inspect_model(path, None, profile_dirs=dirs, job=job)
            verify_report(rep, path, shapes=shapes, entries=all_verifiers(), job=job)
            return rep

        self.button.setEnabled(False)
        self.panel.clear(translate("VerifyFlow", "verifying with the real toolchains…"))
        page.side.setCurrentWidget(self.panel)
        page.jobs.start(VERIFY_JOB, translate("VerifyFlow", "verify {name}").format(name=path.name), work, on_done=lambda rep: self._done(path, rep),
                        on_failed=self._failed)

    def _done(self, path: Path, rep: Any) -> None:
        self.button.setEnabled(True)
        if self.page.model_path is None or path.resolve() != self.page.model_path.resolve():
            return  # another model was opened meanwhile
        self.report, self.model = rep, path
        self.panel.has_workspace = self.page.workspace is not None
        self.panel.show_verification(rep.verification or {}, rep)
        # the tool wins: the session's subscribers (chips, graph colours, findings) follow its answer; the run may
        # have inspected afresh, and then the page shows what was verified
        self.page.session.set_report(rep)

    def _failed(self, err: StudioError) -> None:
        self.button.setEnabled(True)
        self.panel.clear(translate("VerifyFlow", "verification stopped"))
        self.page.job_failed(err)

    def on_node(self, name: str) -> None:
        """A node row: select it in the graph and everywhere else, keeping the Verify tab in front."""
        self.page.focus_node(name)
        self.page.side.setCurrentWidget(self.panel)

    def fold(self, target: str) -> None:
        """Write the tool's answer for ``target`` into the workspace profile, then re-inspect so the chips follow."""
        ws = self.page.workspace
        if not target or ws is None or self.report is None:
            return
        from studio.core.errors import StudioError
        from studio.verify.fold import fold

        try:
            res = fold(self.report, target, ws.root)
        except StudioError as err:
            self.page.job_failed(err)
            return
        self.last_fold = res
        if res.path is None:
            self.panel.fold_label.setText(translate("VerifyFlow", "{target}: nothing folded: {skipped}").format(target=target, skipped=res.skipped))
            return
        self.panel.fold_label.setText(
            translate("VerifyFlow", "folded {n} op(s) of {target} into {path}: {ops} — re-inspecting with it "
                                    "(CLI: {command})").format(
                n=len(res.changed), target=target, path=res.path, command=CLI_FOLD,
                ops=", ".join(f"{k} ({v.split(':')[0]})" for k, v in res.changed.items())))
        self.page.inspect_current()


__all__ = ["VerifyFlow", "VerifyPanel", "VERIFY_JOB", "list_source", "sources_html"]
