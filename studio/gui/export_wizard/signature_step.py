"""Step 2: the input signature (modality:name, dynamic axes), pre-filled from infer_signature and editable."""

from __future__ import annotations

import re

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, Signal
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from studio.export.api import MODALITIES, InputSpec
from studio.gui.export_wizard.common import Step, command_label
from studio.gui.theme import colors, set_role
from studio.gui.widgets.field_error import FieldError
from studio.gui.widgets.flow import ElidedLabel

COLS = (QT_TRANSLATE_NOOP("Columns", "Use"), QT_TRANSLATE_NOOP("Columns", "Modality"), QT_TRANSLATE_NOOP("Columns", "Input name"), QT_TRANSLATE_NOOP("Columns", "dtype"), QT_TRANSLATE_NOOP("Columns", "Example shape"), QT_TRANSLATE_NOOP("Columns", "Dynamic axes"))
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


def format_axes(axes: dict[int, str]) -> str:
    return ", ".join(f"{k}:{v}" for k, v in sorted(axes.items()))


def parse_axes(text: str) -> dict[int, str]:
    """``"0:batch, 1:sequence"`` -> {0: "batch", 1: "sequence"}; raises ValueError naming the bad part."""
    out: dict[int, str] = {}
    for part in [p.strip() for p in text.split(",") if p.strip()]:
        idx, sep, name = part.partition(":")
        if not sep or not idx.strip().isdigit() or not _NAME.match(name.strip()):
            raise ValueError(QCoreApplication.translate("SignatureStep", "'{part}' is not axis:name (for example "
                                                                         "0:batch)").format(part=part))
        if int(idx) in out:
            raise ValueError(QCoreApplication.translate("SignatureStep", "axis {axis} is given twice").format(
                axis=idx.strip()))
        out[int(idx)] = name.strip()
    return out


class SignatureStep(Step):
    title = QT_TRANSLATE_NOOP("Step", "Signature and modalities")
    nav_title = QT_TRANSLATE_NOOP("Step", "Signature")
    sig_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(self.tr("The model's inputs, inferred from its class and processor. Set each input's modality "
                                 "(used to split the graph per encoder), rename it, or change which axes stay dynamic."),
                         parent)
        self.inferred: list[InputSpec] = []
        self.model_label = ElidedLabel("")  # names the model folder: elided, full in the tooltip
        set_role(self.model_label, "muted")
        self.body.addWidget(self.model_label)
        self.table = QTableWidget(0, len(COLS))
        self.table.setHorizontalHeaderLabels([QCoreApplication.translate("Columns", c) for c in COLS])
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        hh = self.table.horizontalHeader()
        for col, mode in enumerate([QHeaderView.ResizeMode.ResizeToContents, QHeaderView.ResizeMode.Fixed,
                                    QHeaderView.ResizeMode.Stretch, QHeaderView.ResizeMode.ResizeToContents,
                                    QHeaderView.ResizeMode.ResizeToContents, QHeaderView.ResizeMode.Stretch]):
            hh.setSectionResizeMode(col, mode)
        self.table.setColumnWidth(1, 110)
        self.table.verticalHeader().setDefaultSectionSize(32)
        self.table.itemChanged.connect(lambda _i: self._changed())
        self.body.addWidget(self.table, 1)
        row = QHBoxLayout()
        add = QPushButton(self.tr("Add input"))
        add.clicked.connect(lambda: self.add_row(InputSpec("text", "", {})))
        rem = QPushButton(self.tr("Remove selected"))
        rem.clicked.connect(self.remove_selected)
        reset = QPushButton(self.tr("Reset to inferred"))
        reset.clicked.connect(lambda: self.set_signature(self.inferred))
        row.addWidget(add)
        row.addWidget(rem)
        row.addWidget(reset)
        row.addStretch(1)
        self.body.addLayout(row)
        self.error = FieldError()
        self.body.addWidget(self.error)
        self.cli = command_label(self.tr("As a command-line flag:"), self.body)

    def set_model_info(self, text: str) -> None:
        self.model_label.setText(text)

    def set_signature(self, specs: list[InputSpec], *, inferred: bool = False) -> None:
        if inferred:
            self.inferred = [InputSpec(s.modality, s.name, dict(s.dynamic_axes), s.dtype, list(s.example_shape))
                             for s in specs]
        self.table.blockSignals(True)
        self.table.setRowCount(0)
        self.table.blockSignals(False)
        for s in specs:
            self.add_row(s)
        self.error.clear_error()
        self._changed()

    def add_row(self, spec: InputSpec) -> None:
        t = self.table
        t.blockSignals(True)
        r = t.rowCount()
        t.insertRow(r)
        use = QTableWidgetItem()
        use.setFlags(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
        use.setCheckState(Qt.CheckState.Checked)
        t.setItem(r, 0, use)
        combo = QComboBox()
        combo.addItems(list(MODALITIES))
        if spec.modality in MODALITIES:
            combo.setCurrentText(spec.modality)
        combo.currentIndexChanged.connect(lambda _i: self._changed())
        t.setCellWidget(r, 1, combo)
        t.setItem(r, 2, QTableWidgetItem(spec.name))
        for col, text in ((3, spec.dtype or "-"), (4, "x".join(str(d) for d in spec.example_shape) or "-")):
            item = QTableWidgetItem(text)
            item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
            if col == 4:  # read-only text; the dims themselves travel as data, never parsed back from it
                item.setData(Qt.ItemDataRole.UserRole, list(spec.example_shape))
            t.setItem(r, col, item)
        t.setItem(r, 5, QTableWidgetItem(format_axes(spec.dynamic_axes)))
        t.blockSignals(False)
        self._changed()

    def remove_selected(self) -> None:
        for r in sorted({i.row() for i in self.table.selectedIndexes()}, reverse=True):
            self.table.removeRow(r)
        self._changed()

    def _row_spec(self, r: int) -> tuple[InputSpec, str | None]:
        t = self.table
        combo = t.cellWidget(r, 1)
        modality = combo.currentText() if isinstance(combo, QComboBox) else "text"
        name = (t.item(r, 2).text() if t.item(r, 2) else "").strip()
        dtype = t.item(r, 3).text() if t.item(r, 3) else ""
        shape = [int(d) for d in (t.item(r, 4).data(Qt.ItemDataRole.UserRole) or [])] if t.item(r, 4) else []
        problem = None
        try:
            axes = parse_axes(t.item(r, 5).text() if t.item(r, 5) else "")
        except ValueError as exc:
            axes, problem = {}, str(exc)
        return InputSpec(modality, name, axes, "" if dtype == "-" else dtype, shape), problem

    def _used(self, r: int) -> bool:
        item = self.table.item(r, 0)
        return item is not None and item.checkState() == Qt.CheckState.Checked

    def signature(self) -> list[InputSpec]:
        return [self._row_spec(r)[0] for r in range(self.table.rowCount()) if self._used(r)]

    def edited(self) -> bool:
        """Whether the user changed the inferred signature (inputs, modalities, dtypes or dynamic axes)."""
        def key(specs: list[InputSpec]) -> list[tuple]:
            return [(s.modality, s.name, sorted(s.dynamic_axes.items()), s.dtype) for s in specs]
        return key(self.signature()) != key(self.inferred)

    def axis_names(self) -> list[str]:
        names: list[str] = []
        for s in self.signature():
            for v in s.dynamic_axes.values():
                if v not in names:
                    names.append(v)
        return names

    def _changed(self) -> None:
        specs = [s for s in self.signature() if s.name]
        self.cli.setText("--input-signature " + ",".join(f"{s.modality}:{s.name}" for s in specs) if specs
                         else self.tr("(no inputs)"))
        self.sig_changed.emit()

    def _mark(self, r: int, col: int) -> None:
        item = self.table.item(r, col)
        if item is not None:
            item.setBackground(QBrush(colors()["focus"]))
        self.table.setCurrentCell(r, col)

    def validate(self) -> bool:
        self.error.clear_error()
        for r in range(self.table.rowCount()):
            for col in (2, 5):
                item = self.table.item(r, col)
                if item is not None:
                    item.setBackground(QBrush())
        used = [r for r in range(self.table.rowCount()) if self._used(r)]
        if not used:
            self.error.show_error(self.tr("the signature is empty: tick at least one input"), self.table)
            return False
        seen: set[str] = set()
        for r in used:
            spec, problem = self._row_spec(r)
            if not spec.name:
                self._mark(r, 2)
                self.error.show_error(self.tr("row {value}: the input name is empty").format(value=r + 1), self.table)
                return False
            if not _NAME.match(spec.name):
                self._mark(r, 2)
                self.error.show_error(self.tr("row {value}: '{name}' is not a valid input name").format(value=r + 1, name=spec.name), self.table,
                                      hint=self.tr("use the forward() argument name, e.g. pixel_values"))
                return False
            if spec.name in seen:
                self._mark(r, 2)
                self.error.show_error(self.tr("row {value}: input '{name}' appears twice").format(value=r + 1, name=spec.name), self.table)
                return False
            seen.add(spec.name)
            if problem:
                self._mark(r, 5)
                self.error.show_error(self.tr("row {value} ({name}): {problem}").format(value=r + 1, name=spec.name, problem=problem), self.table,
                                      hint=self.tr("write dynamic axes as 0:batch, 1:sequence (empty = all static)"))
                return False
        return True

    def show_error(self, message: str, offending: str | None = None, hint: str | None = None) -> None:
        """Show an export-time input error (unknown input name, bad modality) next to the row it names."""
        for r in range(self.table.rowCount()):
            item = self.table.item(r, 2)
            if offending and item is not None and item.text().strip() in offending:
                self._mark(r, 2)
                break
        self.error.show_error(message, self.table, hint=hint)
