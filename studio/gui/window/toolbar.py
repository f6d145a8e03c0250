"""The context toolbar: workspace, current model and target, search, and the devices count.

It only shows what the window (and the shared state behind it) holds; choosing in a combo is reported back
through the window's slots, so there is one place that changes the workspace.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QStringListModel, Qt
from PySide6.QtWidgets import QComboBox, QCompleter, QLabel, QLineEdit, QMenu, QSizePolicy, QToolBar, QWidget

OPEN_OTHER = "__open_other__"


def devices_text(total: int, ok: int, down: int) -> str:
    """The toolbar's device count (studio.core.state.DevicesSummary.label, in the current language)."""
    translate = QCoreApplication.translate
    if not total:
        return translate("ContextToolbar", "devices: none")
    if down:
        return translate("ContextToolbar", "devices: {ok} ok, {down} down of {total}").format(ok=ok, down=down, total=total)
    return translate("ContextToolbar", "devices: {ok} ok of {total}").format(ok=ok, total=total)


class ContextToolbar(QToolBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("main-toolbar")
        self.setMovable(False)
        self.ws_combo = QComboBox()
        self.ws_combo.setMinimumWidth(150)
        self.model_combo = QComboBox()
        self.model_combo.setMinimumWidth(170)
        self.model_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.target_combo = QComboBox()
        self.target_combo.setMinimumWidth(110)
        self.search = QLineEdit()
        self.search.setClearButtonEnabled(True)
        self.search.setMinimumWidth(230)
        self.search.setMaximumWidth(420)
        self.search_model = QStringListModel(self)
        self.completer = QCompleter(self.search_model, self)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.search.setCompleter(self.completer)
        self.devices_label = QLabel(devices_text(0, 0, 0))
        self.labels = [QLabel(), QLabel(), QLabel()]
        for label, w in zip(self.labels, (self.ws_combo, self.model_combo, self.target_combo), strict=True):
            self.addWidget(label)
            self.addWidget(w)
        self.addSeparator()
        self.addWidget(self.search)
        spacer = QWidget()
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.addWidget(spacer)
        self.addWidget(self.devices_label)
        self.retranslate()

    def retranslate(self) -> None:
        """The labels and tips in the current language (the combos' items: ``fill_*``, called again)."""
        self.setWindowTitle(self.tr("Main toolbar"))
        for label, text in zip(self.labels, (self.tr("Workspace"), self.tr("Model"), self.tr("Target")), strict=True):
            label.setText(text)
        self.ws_combo.setToolTip(self.tr("Workspace: recent workspaces (File > Open workspace for another)"))
        self.model_combo.setToolTip(self.tr("Current model: every page acts on it"))
        self.target_combo.setToolTip(self.tr("Current target accelerator"))
        self.search.setPlaceholderText(self.tr("Search pages, models, targets"))
        self.search.setToolTip(self.tr("Jump to a page, model or target (Ctrl+F)"))
        self.devices_label.setToolTip(self.tr("Triton servers and edge agents of the workspace"))

    def fill_workspaces(self, recent: list[str], current: str | None, menu: QMenu, open_fn: Any) -> None:
        """Recent workspaces in the combo (and the File > Recent menu), the open one selected."""
        combo = self.ws_combo
        combo.blockSignals(True)
        combo.clear()
        paths = list(recent)
        if current and current not in paths:
            paths.insert(0, current)
        for p in paths:
            combo.addItem(Path(p).name or p, p)
            combo.setItemData(combo.count() - 1, p, Qt.ItemDataRole.ToolTipRole)
        if current is None:
            combo.insertItem(0, self.tr("(no workspace)"), None)
        combo.addItem(self.tr("Open another workspace…"), OPEN_OTHER)
        combo.setCurrentIndex(max(0, combo.findData(current)) if current else 0)
        combo.blockSignals(False)
        menu.clear()
        for p in recent:
            menu.addAction(p, lambda p=p: open_fn(p))
        menu.setEnabled(bool(recent))

    def fill_models(self, ws: Any) -> str | None:
        """The workspace's models, its current one selected; returns the model shown as current."""
        combo = self.model_combo
        combo.blockSignals(True)
        combo.clear()
        if ws is None or not ws.models:
            combo.addItem(self.tr("(no models)") if ws is not None else self.tr("(no workspace)"), None)
            combo.setEnabled(False)
        else:
            combo.setEnabled(True)
            for m in ws.models:
                combo.addItem(f"{m.name}  [{m.kind}]", m.name)
                combo.setItemData(combo.count() - 1, f"{ws.resolve(m)}\n{m.source}".strip(),
                                  Qt.ItemDataRole.ToolTipRole)
            combo.setCurrentIndex(max(combo.findData(ws.current_model), 0))
        combo.blockSignals(False)
        return combo.currentData()

    def fill_targets(self, ids: list[str]) -> None:
        self.target_combo.blockSignals(True)
        self.target_combo.clear()
        for t in ids:
            self.target_combo.addItem(t, t)
        self.target_combo.blockSignals(False)

    def show_target(self, target: str | None) -> str | None:
        """Select ``target`` without reporting a change (the first one if unknown); returns what is shown."""
        idx = self.target_combo.findData(target)
        self.target_combo.blockSignals(True)
        self.target_combo.setCurrentIndex(idx if idx >= 0 else 0)
        self.target_combo.blockSignals(False)
        return self.target_combo.currentData()

    def targets(self) -> list[str]:
        return [self.target_combo.itemData(i) for i in range(self.target_combo.count())]
