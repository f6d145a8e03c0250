"""The Dashboards form's workload fields: KServe v2 inference, or generation on the generate endpoints (a
prompt and a token budget; the run then measures time to first token, inter-token latency and tokens/s)."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QSpinBox

translate = QCoreApplication.translate

INFERENCE, GENERATION = "inference", "generation"


class WorkloadFields:
    """One row (Workload, Prompt, Max tokens) under the form, so the URL fields keep their width at 1366 px;
    the prompt fields are enabled for generation only."""

    def __init__(self) -> None:
        self.workload = QComboBox()
        # the workload ids are the data; the labels are translated (the tooltip keeps the ids it explains)
        self.workload.addItem(translate("WorkloadFields", "inference"), INFERENCE)
        self.workload.addItem(translate("WorkloadFields", "generation"), GENERATION)
        self.workload.setToolTip(translate("WorkloadFields", "inference: KServe v2 /infer; generation: /generate_stream (time to first token, "
                                                             "inter-token latency, output tokens/s)"))
        self.prompt_edit = QLineEdit("Describe what you see.")
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(1, 4096)
        self.max_tokens.setValue(16)
        self.workload.currentIndexChanged.connect(lambda _i: self._changed(self.workload.currentData()))
        self._changed(self.workload.currentData())

    def row(self) -> QHBoxLayout:
        row = QHBoxLayout()
        for label, w, stretch in ((translate("WorkloadFields", "Workload"), self.workload, 0), (translate("WorkloadFields", "Prompt"), self.prompt_edit, 1),
                                  (translate("WorkloadFields", "Max tokens"), self.max_tokens, 0)):
            row.addWidget(QLabel(label))
            row.addWidget(w, stretch)
        return row

    def _changed(self, workload: str) -> None:
        for w in (self.prompt_edit, self.max_tokens):
            w.setEnabled(workload == GENERATION)

    def prompt(self) -> str | None:
        """The prompt when the workload is generation, else None (inference)."""
        return self.prompt_edit.text() if self.workload.currentData() == GENERATION else None
