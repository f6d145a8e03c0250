"""The export result's "Try it": run the exported parts locally on a prompt (and an image for a vision-language
export, a WAV clip for a speech one) and stream the answer as it is generated, with time to first token and
tokens/s. The work is ``studio.generate.api.generate`` (what `studio generate` runs) in a job; text pieces come
back to the GUI thread by a queued signal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QObject, Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from studio.core.errors import StudioError
from studio.gui.hints import gui_hint
from studio.gui.widgets.field_error import FieldError
from studio.gui.widgets.layout import browse_row, form_column

# (label, file filter) of the media field per generation kind; translated where shown (context "TryItPanel")
MEDIA = {"vlm": (QT_TRANSLATE_NOOP("TryItPanel", "Image"),
                 QT_TRANSLATE_NOOP("TryItPanel", "Images (*.png *.jpg *.jpeg *.bmp *.webp)")),
         "encoder-decoder": (QT_TRANSLATE_NOOP("TryItPanel", "Audio"), "WAV (*.wav)")}


class _Pieces(QObject):
    sig_text = Signal(str)


def generation_kind(folder: Path) -> str:
    """The export's generation kind ("decoder-only", "vlm", "encoder-decoder"), "" when it cannot generate."""
    from studio.generate.config import GENERATION_FILE, export_kind

    return export_kind(folder) if (folder / GENERATION_FILE).is_file() else ""


class TryItPanel(QGroupBox):
    """Prompt (+ media) in, the answer streamed out; hidden for exports without generation.json."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(self.tr("Try it: generate with the exported parts on this machine"), parent)
        self.jobs: Any = None  # the page's JobRunner (set by the export page)
        self.folder: Path | None = None
        self.kind = ""
        self.result: Any = None
        self._pieces = _Pieces(self)
        self._pieces.sig_text.connect(self._append, Qt.ConnectionType.QueuedConnection)
        self.sig_piece = self._pieces.sig_text  # each text piece as it streams (queued to the GUI thread)
        lay = QVBoxLayout(self)
        self.prompt_edit = QLineEdit("Describe what you see.")
        self.media_edit = QLineEdit()
        self.media_label = QLabel(self.tr("Image"))
        self.media_row = QWidget()
        self.media_row.setLayout(browse_row(self.media_edit, self._choose_media))
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(1, 4096)
        self.max_tokens.setValue(32)
        self.form = form_column((self.tr("Prompt"), self.prompt_edit), (self.tr("Image"), self.media_row),
                                (self.tr("Max new tokens"), self.max_tokens))
        lay.addLayout(self.form)
        bar = QHBoxLayout()
        self.run_btn = QPushButton(self.tr("Generate"))
        self.run_btn.clicked.connect(self.run)
        self.stats = QLabel("")
        self.stats.setWordWrap(True)
        bar.addWidget(self.run_btn)
        bar.addWidget(self.stats, 1)
        lay.addLayout(bar)
        self.field_error = FieldError()
        lay.addWidget(self.field_error)
        self.answer = QPlainTextEdit()
        self.answer.setReadOnly(True)
        self.answer.setPlaceholderText(self.tr("the answer streams here"))
        self.answer.setMaximumHeight(140)
        lay.addWidget(self.answer)
        self.setVisible(False)

    def set_export(self, model: Path | None) -> None:
        """Show the panel for an export folder that can generate, with the media field its kind needs."""
        folder = (model.parent if model is not None and model.suffix == ".onnx" else model)
        self.folder = folder if folder is not None and folder.is_dir() else None
        self.kind = generation_kind(self.folder) if self.folder is not None else ""
        self.setVisible(bool(self.kind))
        media = MEDIA.get(self.kind)
        self.media_row.setVisible(media is not None)
        label = self.form.labelForField(self.media_row)
        if label is not None:
            label.setVisible(media is not None)
            if media:
                label.setText(self.tr(media[0]))  # type: ignore[attr-defined]
        self.prompt_edit.setText("" if self.kind == "encoder-decoder" else self.prompt_edit.text())
        self.prompt_edit.setPlaceholderText(self.tr("optional for a transcript") if self.kind == "encoder-decoder"
                                            else "")
        self.answer.clear()
        self.stats.setText("")
        self.field_error.clear_error()

    def _choose_media(self) -> None:
        title, filt = MEDIA.get(self.kind, (QT_TRANSLATE_NOOP("TryItPanel", "File"), "*"))
        path, _ = QFileDialog.getOpenFileName(self, self.tr("{title} to try").format(title=self.tr(title)),
                                              str(self.folder or Path.home()), self.tr(filt))
        if path:
            self.media_edit.setText(path)

    def run(self) -> None:
        if self.folder is None or self.jobs is None:
            return
        from studio.generate.api import generate

        folder, kind = self.folder, self.kind
        prompt = self.prompt_edit.text() or None
        media = self.media_edit.text().strip() or None
        kw: dict[str, Any] = {"image": media} if kind == "vlm" else {"audio": media} if kind == "encoder-decoder" \
            else {}
        n = self.max_tokens.value()
        emit = self._pieces.sig_text.emit
        self.answer.clear()
        self.field_error.clear_error()
        self.stats.setText(self.tr("generating…"))
        self.run_btn.setEnabled(False)

        def work(job: Any) -> Any:
            job.set_status(QCoreApplication.translate("TryItPanel", "generating with {name}").format(name=folder.name))
            return generate(folder, prompt, max_new_tokens=n, on_text=emit, **kw)

        self.jobs.start("try-it", self.tr("Try {name}").format(name=folder.name), work, on_done=self._done, on_failed=self._failed)

    def _append(self, text: str) -> None:
        self.answer.moveCursor(self.answer.textCursor().MoveOperation.End)
        self.answer.insertPlainText(text)

    def _done(self, result: Any) -> None:
        self.result = result
        self.run_btn.setEnabled(True)
        if self.answer.toPlainText() != result.text:  # the whole answer decoded at once is the reference (a
            self.answer.setPlainText(result.text)  # byte-level piece can change once the next token arrives)
        self.stats.setText(self.tr("{n} tokens ({finish_reason}) · TTFT {ttft_ms:.1f} ms · "
                                   "{tokens_per_s:.1f} tokens/s · {runtime}").format(n=len(result.token_ids), finish_reason=result.finish_reason, ttft_ms=result.ttft_ms, tokens_per_s=result.tokens_per_s, runtime=result.runtime))

    def _failed(self, err: StudioError) -> None:
        self.run_btn.setEnabled(True)
        self.stats.setText("")
        where = {"--prompt": self.prompt_edit, "--image": self.media_edit, "--audio": self.media_edit,
                 "--max-new-tokens": self.max_tokens}.get(err.offending or "")
        self.field_error.show_error(gui_hint(err.message, "try-it", values=False) or err.message, *([where] if where else []),
                                    hint=gui_hint(err.hint, "try-it"))
