"""The Compile page's right side: one CompileReport shown as artifacts, parity against ONNX Runtime, latency,
the failing nodes (each one click from the inspector's graph) and, for a quantized RKNN build, the toolkit's
per-layer error (painted on the inspector's graph as a heat map). It only renders what the report holds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, Signal
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from studio.core.catalogue import _ as core_text
from studio.gui.theme import set_role
from studio.gui.widgets.tables import fill_table, readonly_table

PARITY_MODES = {"artifact": QT_TRANSLATE_NOOP("Compile", "the written library on this host"),
                "host-proxy": QT_TRANSLATE_NOOP("Compile", "a host build of the same Relax module (the target's code is not run here)"),
                "simulator": QT_TRANSLATE_NOOP("Compile", "rknn-toolkit2's x86 simulator (the NPU runs the same .rknn)")}


def _table(headers: list[str]) -> QTableWidget:
    t = readonly_table(headers)
    t.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    for i in range(1, len(headers)):
        t.horizontalHeader().setSectionResizeMode(i, QHeaderView.ResizeMode.ResizeToContents)
    return t


def _label(role: str = "") -> QLabel:
    lab = QLabel("")
    lab.setWordWrap(True)
    lab.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if role:
        set_role(lab, role)
    return lab


class CompileReportView(QWidget):
    sig_show_node = Signal(object)  # a row of the failing-nodes table, or None for the selected / the culprit
    sig_layer_heat = Signal()  # "Per-layer error on the graph"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        rl = QVBoxLayout(self)
        self.banner = QLabel(self.tr("No compile yet: choose a model and a target, then Compile."))
        self.banner.setWordWrap(True)
        self.banner.setContentsMargins(10, 6, 10, 6)
        self.banner.setMinimumHeight(34)
        self.banner.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        set_role(self.banner, "muted")
        rl.addWidget(self.banner)
        self.toolchain_label = _label("muted")
        rl.addWidget(self.toolchain_label)
        art_box = QGroupBox(self.tr("Artifacts"))
        al = QVBoxLayout(art_box)
        self.artifacts_table = _table([QT_TRANSLATE_NOOP("Columns", "file"), QT_TRANSLATE_NOOP("Columns", "kind"), QT_TRANSLATE_NOOP("Columns", "size"), QT_TRANSLATE_NOOP("Columns", "machine")])
        self.artifacts_table.setMinimumHeight(120)
        al.addWidget(self.artifacts_table)
        rl.addWidget(art_box, 3)
        par_box = QGroupBox(self.tr("Parity against ONNX Runtime"))
        pl = QVBoxLayout(par_box)
        self.parity_label = _label()
        pl.addWidget(self.parity_label)
        self.parity_table = _table([QT_TRANSLATE_NOOP("Columns", "output"), QT_TRANSLATE_NOOP("Columns", "shape"), QT_TRANSLATE_NOOP("Columns", "max abs"), QT_TRANSLATE_NOOP("Columns", "max rel"), QT_TRANSLATE_NOOP("Columns", "cosine"), QT_TRANSLATE_NOOP("Columns", "result")])
        ph = self.parity_table.horizontalHeader()
        ph.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)  # the figures stay in view
        ph.setStretchLastSection(True)
        self.parity_table.setMinimumHeight(76)  # the header and a row at least, the page scrolls for the rest
        self.parity_table.setMaximumHeight(130)
        pl.addWidget(self.parity_table)
        self.latency_label = _label()
        pl.addWidget(self.latency_label)
        lrow = QVBoxLayout()  # stacked: a row of label + button would widen the column past a 1366 px screen
        self.layer_label = _label("muted")
        self.layer_btn = QPushButton(self.tr("Per-layer error on the graph"))
        self.layer_btn.setToolTip(self.tr("open the model in the inspector, coloured by the toolkit's per-layer error "
                                          "(1 - cosine against the float model, from accuracy_analysis)"))
        self.layer_btn.clicked.connect(self.sig_layer_heat)
        self.layer_btn.hide()
        lrow.addWidget(self.layer_label)
        lrow.addWidget(self.layer_btn, 0, Qt.AlignmentFlag.AlignLeft)
        pl.addLayout(lrow)
        rl.addWidget(par_box, 2)
        fail_box = QGroupBox(self.tr("Failure localisation"))
        fl = QVBoxLayout(fail_box)
        self.failure_label = _label()
        fl.addWidget(self.failure_label)
        self.nodes_table = _table([QT_TRANSLATE_NOOP("Columns", "node"), QT_TRANSLATE_NOOP("Columns", "op")])
        self.nodes_table.cellDoubleClicked.connect(lambda r, _c: self.sig_show_node.emit(r))
        fl.addWidget(self.nodes_table)
        frow = QHBoxLayout()
        self.show_node_btn = QPushButton(self.tr("Show in inspector"))
        self.show_node_btn.setEnabled(False)
        self.show_node_btn.clicked.connect(lambda: self.sig_show_node.emit(None))
        frow.addStretch(1)
        frow.addWidget(self.show_node_btn)
        fl.addLayout(frow)
        rl.addWidget(fail_box, 2)

    def selected_node_row(self) -> int | None:
        sel = self.nodes_table.selectionModel().selectedRows()
        return sel[0].row() if sel else None

    def render(self, rep: Any) -> None:
        ok = rep.status == "succeeded"
        what = self.tr("compiled and verified") if ok and rep.parity.status == "passed" else (
            self.tr("compiled") if ok else self.tr("failed at {stage}").format(
                stage=rep.diagnosis.stage if rep.diagnosis else "?"))
        self.banner.setText(self.tr("{name} for {target}: {what}").format(name=Path(rep.model).name, target=rep.target, what=what))
        set_role(self.banner, "banner-ok" if ok else "banner-fail")
        t = getattr(rep, "toolchain", None) or {}
        self.toolchain_label.setText(self.tr("Built by {get} {get2} for {get3} "
                                             "({get4})").format(get=t.get('name'), get2=t.get('version'), get3=t.get('platform'), get4=t.get('dtype')) if t else
                                     (self.tr("Built by apache-tvm {version}").format(version=rep.tvm_version)
                                      if rep.tvm_version else ""))
        fill_table(self.artifacts_table, [[a.path, a.kind, f"{a.size_bytes:,} B" if a.size_bytes else "",
                                           ", ".join(sorted(set(a.machines.values())))] for a in rep.artifacts])
        self.artifacts_table.setColumnHidden(3, not any(a.machines for a in rep.artifacts))  # ELF machines only
        p = rep.parity
        mode = QCoreApplication.translate("Compile", PARITY_MODES[p.mode]) if p.mode in PARITY_MODES else p.mode
        tol = f"atol {p.atol:g}, rtol {p.rtol:g}" if p.atol is not None and p.rtol is not None else ""
        status = {"passed": self.tr("passed"), "failed": self.tr("failed"), "not run": self.tr("not run")}.get(
            p.status, p.status)
        if p.status.startswith("skipped: "):
            status = self.tr("skipped: {why}").format(why=p.status.removeprefix("skipped: "))
        self.parity_label.setText(status + (self.tr(" — {mode}; {tolerance}, inputs {shapes}").format(
            mode=mode, tolerance=tol, shapes=p.input_shapes) if p.outputs else ""))
        fill_table(self.parity_table, [[o.output, "x".join(map(str, o.shape)), f"{o.max_abs:.3g}", f"{o.max_rel:.3g}",
                                        "" if o.cosine is None else f"{o.cosine:.5f}",
                                        self.tr("pass") if o.passed else self.tr("FAIL")]
                                       for o in p.outputs])
        self.parity_table.setColumnHidden(4, all(o.cosine is None for o in p.outputs))
        lat = rep.latency
        if lat.tvm_ms_median is not None and lat.ort_ms_median is not None:
            self.latency_label.setText(
                self.tr("Latency, median of {runs} alternating runs: TVM {tvm_ms_median:.3f} ms, ONNX Runtime "
                        "{ort_ms_median:.3f} ms (TVM is {speedup_vs_ort:.2f}x ORT's speed)").format(runs=lat.runs, tvm_ms_median=lat.tvm_ms_median, ort_ms_median=lat.ort_ms_median, speedup_vs_ort=lat.speedup_vs_ort)
                + (f". {core_text(lat.note)}" if lat.note else ""))
        else:
            self.latency_label.setText("")
        rows = getattr(rep, "layer_errors", None) or []
        if rows:
            worst = min(rows, key=lambda r: float(r.get("entire_cos", 1.0)))
            self.layer_label.setText(self.tr("Per-layer error of the int8 build ({n} layers, accuracy_analysis): "
                                             "worst cosine {float:.5f}").format(n=len(rows), float=float(worst.get('entire_cos', 1.0))))
            self.layer_label.setToolTip(self.tr("at {get}").format(get=worst.get('tensor')))
        else:
            self.layer_label.setText("")
        self.layer_btn.setVisible(bool(rows))
        d = rep.diagnosis
        if d is None:
            warn = "; ".join(core_text(w) for w in rep.warnings)  # the core's words: its catalogue
            self.failure_label.setText(self.tr("No failure.") + (" " + self.tr("Warnings: {warn}").format(warn=warn)
                                                                  if warn else ""))
            fill_table(self.nodes_table, [])
            self.show_node_btn.setEnabled(False)
            return
        loc = d.localisation or {}
        extra = (self.tr("Bisection: {value} TVM trials, {value2} of {value3} nodes.").format(value=loc['trials'], value2=loc['node_count'], value3=loc['graph_nodes'])
                 if "trials" in loc else "")
        self.failure_label.setText(f"{core_text(d.message)}\n" + self.tr("Hint: {hint}").format(hint=core_text(d.hint))
                                   + (f"\n{extra}" if extra else ""))
        fill_table(self.nodes_table, [[n, o] for n, o in zip(d.nodes, d.op_types, strict=False)])
        if d.nodes:
            self.nodes_table.selectRow(len(d.nodes) - 1)  # the culprit
        self.show_node_btn.setEnabled(bool(d.nodes))
