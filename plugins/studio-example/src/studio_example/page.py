"""The plugin's sidebar page: runs the example verifier on the workspace's current model."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from studio.gui.page import Page


class ExamplePage(Page):
    page_id = "example-npu"
    title = "Example NPU"

    def __init__(self, jobs=None, parent: QWidget | None = None) -> None:  # type: ignore[no-untyped-def]
        super().__init__(jobs, parent)
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel("<b>Example NPU</b> (from the studio-example plugin)"))
        self.status = QLabel("Pick a model in the toolbar, then check it against the example NPU.")
        self.status.setWordWrap(True)
        self.check_btn = QPushButton("Check current model")
        self.check_btn.clicked.connect(self.check_current)
        lay.addWidget(self.status)
        lay.addWidget(self.check_btn)
        lay.addStretch(1)

    def model_file(self) -> Path | None:
        """The current model's .onnx (the entry itself, or the first one in its folder)."""
        entry = self.workspace.model(self.model_name) if self.workspace is not None else None
        if entry is None:
            return None
        path = self.workspace.resolve(entry)
        if path.is_file():
            return path
        found = sorted(path.glob("*.onnx")) if path.is_dir() else []
        return found[0] if found else None

    def context_changed(self) -> None:
        model = self.model_file()
        self.check_btn.setEnabled(model is not None)

    def check_current(self) -> None:
        from studio_example.verifier import ExampleVerifier

        model = self.model_file()
        if model is None:
            self.status.setText("No ONNX file for the current model.")
            return
        result = ExampleVerifier().verify(model)
        on_npu = sum(1 for n in result.nodes if n.placement == "accelerator")
        self.status.setText(f"{model.name}: {on_npu} of {len(result.nodes)} nodes on the example NPU")
