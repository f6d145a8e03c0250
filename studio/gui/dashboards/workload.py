"""The Dashboards form's workload fields: KServe v2 inference, or generation on the generate endpoints (a
prompt and a token budget; the run then measures time to first token, inter-token latency and tokens/s)."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QFormLayout, QLineEdit, QSpinBox

from studio.gui.widgets.layout import form_column

INFERENCE, GENERATION = "inference", "generation"


class WorkloadFields:
    """Three form rows (Workload, Prompt, Max tokens); the prompt rows are enabled for generation only."""

    def __init__(self) -> None:
        self.workload = QComboBox()
        self.workload.addItems([INFERENCE, GENERATION])
        self.workload.setToolTip("inference: KServe v2 /infer; generation: /generate_stream (time to first token, "
                                 "inter-token latency, output tokens/s)")
        self.prompt_edit = QLineEdit("Describe what you see.")
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(1, 4096)
        self.max_tokens.setValue(16)
        self.workload.currentTextChanged.connect(self._changed)
        self._changed(self.workload.currentText())

    def column(self) -> QFormLayout:
        return form_column(("Workload", self.workload), ("Prompt", self.prompt_edit), ("Max tokens", self.max_tokens))

    def _changed(self, workload: str) -> None:
        for w in (self.prompt_edit, self.max_tokens):
            w.setEnabled(workload == GENERATION)

    def prompt(self) -> str | None:
        """The prompt when the workload is generation, else None (inference)."""
        return self.prompt_edit.text() if self.workload.currentText() == GENERATION else None
