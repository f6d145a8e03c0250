"""The Devices page's test-inference form: a ready model, text / image / audio inputs, the tokenizer and
processor, and the result of one request as pictures (studio.gui.devices.result_view: the input image and the
model's view of it, a zero-shot model's label scores, an audio input's waveform and log-mel, times in ms) above
its raw outputs. For a model that outputs logits_per_image (CLIP-class) the Text field holds the labels to score,
separated by commas.

What the studio already knows is filled in (DESIGN convention 10): the tokenizer and processor the current
model's export wrote, and the workspace's sample image / audio when the current model takes one (its
``sample_image`` / ``sample_audio`` artifact, else the first such file in WORKSPACE/samples/). Only empty
fields are filled; a sample the form put there itself is taken out again when the model no longer takes it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from studio.core.processor_files import find_processor_file
from studio.core.sample_inputs import SAMPLES_DIR
from studio.core.state import StudioState
from studio.core.workspace import Workspace
from studio.gui.devices.result_view import ResultView
from studio.gui.devices.server_poll import ServerSpec
from studio.gui.file_dialogs import start_dir

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp")
AUDIO_SUFFIXES = (".wav", ".npy")
MAX_SIGNATURE_BYTES = 64 * 2**20  # ONNX files read for their inputs on the GUI thread (larger: config only)
# input-name words when an input is not one of the export's known names
_NAME_HINTS = {"vision": ("pixel", "image"), "audio": ("audio", "wave", "mel", "input_features", "input_values")}

translate = QCoreApplication.translate


class PathEdit(QWidget):
    """A file path field with a Browse button (the dialog starts in the workspace)."""

    def __init__(self, placeholder: str, filt: str) -> None:
        super().__init__()
        self.workspace: Workspace | None = None
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.edit = QLineEdit()
        self.edit.setPlaceholderText(placeholder)
        b = QPushButton(self.tr("Browse..."))
        b.clicked.connect(lambda: self._browse(filt))
        lay.addWidget(self.edit, 1)
        lay.addWidget(b)

    def _browse(self, filt: str) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self.tr("Choose a file"), start_dir(self.path(), self.workspace), filt)
        if path:
            self.edit.setText(path)

    def path(self) -> str | None:
        return self.edit.text().strip() or None


def _modalities_of_inputs(names: list[str]) -> set[str]:
    from studio.export.signatures import KNOWN_INPUTS

    out = set()
    for n in names:
        known = KNOWN_INPUTS.get(n)
        if known is not None:
            out.add(known[0])
            continue
        low = n.lower()
        out |= {m for m, words in _NAME_HINTS.items() if any(w in low for w in words)}
    return out


def _modalities_of_config(config: Path) -> set[str]:
    from studio.export.signatures import RECIPES

    try:
        cfg = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    recipe = RECIPES.get(str(cfg.get("model_type", "")))
    if recipe is not None:
        return {m for m, _name in recipe.inputs}
    return ({"vision"} if "vision_config" in cfg else set()) | (
        {"audio"} if "audio_config" in cfg or "num_mel_bins" in cfg else set())


def model_modalities(state: StudioState) -> set[str]:
    """What the current model takes ("text", "vision", "audio"): its export's parts, the inputs of its ONNX
    file, or its HF config's model type."""
    arts = state.artifacts()
    found = {m for m in (arts.get("parts") or {}) if m in ("text", "vision", "audio")}
    path = state.model_path()
    if path is None:
        return found
    if path.suffix == ".onnx":
        onnx: Path | None = path
    else:
        onnx = next(iter(sorted(path.glob("*.onnx"))), None) if path.is_dir() else None
    if onnx is not None and onnx.is_file() and onnx.stat().st_size <= MAX_SIGNATURE_BYTES:
        from studio.core.errors import StudioError
        from studio.triton.onnx_io import read_signature

        try:
            found |= _modalities_of_inputs([t.name for t in read_signature(onnx).inputs])
        except StudioError:
            pass
    config = (path if path.is_dir() else path.parent) / "config.json"
    if config.is_file():
        found |= _modalities_of_config(config)
    return found


def sample_files(state: StudioState) -> dict[str, Path]:
    """The workspace's sample inputs: {"vision": image, "audio": audio} for those it has."""
    ws = state.workspace
    out: dict[str, Path] = {}
    for modality, kind, suffixes in (("vision", "sample_image", IMAGE_SUFFIXES),
                                     ("audio", "sample_audio", AUDIO_SUFFIXES)):
        recorded = state.artifact(kind)
        if recorded and Path(recorded).is_file():
            out[modality] = Path(recorded)
            continue
        folder = ws.root / SAMPLES_DIR if ws is not None else None
        if folder is not None and folder.is_dir():
            files = sorted(f for f in folder.iterdir() if f.suffix.lower() in suffixes and f.is_file())
            if files:
                out[modality] = files[0]
    return out


def infer_once(spec: ServerSpec, model: str, text: str | None, image: str | None, audio: str | None,
               tokenizer: str | None, processor: str | None) -> dict[str, Any]:
    """One request built from the form's inputs (worker thread): input shapes, outputs, times in ms and the
    pictures (studio.gui.devices.previews). A zero-shot model's text is its comma-separated labels."""
    from studio.gui.devices.previews import build, split_labels, takes_labels
    from studio.triton.inputs import prepare_inputs

    with spec.client(30) as c:
        cfg = c.model_config(model)
        labels = split_labels(text) if text and takes_labels(cfg) else []
        t0 = time.perf_counter()
        feed = prepare_inputs(cfg, text=None if labels else text, texts=labels or None, image=image, audio=audio,
                              tokenizer=tokenizer, processor=processor)
        t1 = time.perf_counter()
        out = c.infer(model, feed)
        t2 = time.perf_counter()
    previews = build(feed, out, image=image, audio=audio, processor=processor, labels=labels)
    return {"model": model, "inputs": {k: (list(v.shape), str(v.dtype)) for k, v in feed.items()}, "outputs": out,
            "ms": (t2 - t1) * 1000, "prep_ms": (t1 - t0) * 1000, "previews": previews, "labels": labels}


def format_result(res: dict[str, Any]) -> str:
    lines = [translate("InferenceForm", "{ms} ms round trip").format(ms=f"{res['ms']:.1f}")
             + (translate("InferenceForm", " (inputs prepared in {ms} ms)").format(ms=f"{res['prep_ms']:.1f}")
                if "prep_ms" in res else ""), translate("InferenceForm", "inputs:")]
    shape = translate("InferenceForm", "  {name}: shape {shape} {dtype}")
    lines += [shape.format(name=k, shape=s, dtype=d) for k, (s, d) in res["inputs"].items()]
    lines.append(translate("InferenceForm", "outputs:"))
    for k, v in res["outputs"].items():
        lines.append(shape.format(name=k, shape=list(v.shape), dtype=v.dtype))
        lines.append("    " + np.array2string(v, threshold=24, precision=4).replace("\n", "\n    "))
    return "\n".join(lines)


def headline(res: dict[str, Any]) -> str:
    """``tiny-clip: 12.3 ms round trip · inputs 1.2 ms · best label "a cat" 87.1 %``."""
    from html import escape

    parts = [f"<b>{escape(str(res.get('model', '')))}</b>: "
             + translate("InferenceForm", "{ms} ms round trip").format(ms=f"{res['ms']:.1f}")]
    if "prep_ms" in res:
        parts.append(translate("InferenceForm", "inputs prepared in {ms} ms").format(ms=f"{res['prep_ms']:.1f}"))
    pv = res.get("previews")
    if pv is not None and pv.scores:
        best = max(range(len(pv.scores)), key=lambda i: pv.scores[i])
        parts.append(translate("InferenceForm", "best label “{label}” {percent} %").format(
            label=escape(pv.labels[best]), percent=f"{100 * pv.scores[best]:.1f}"))
    return " · ".join(parts)


class InferenceForm(QWidget):
    """Model, inputs, Run inference (or Generate, streamed), outputs; the page runs the request as a job."""

    sig_piece = Signal(str)  # a generated text piece (emitted on the job's thread, shown on the GUI thread)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea()  # the pictures and the raw outputs scroll under the form on a short screen
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QWidget()
        scroll.setWidget(body)
        outer.addWidget(scroll)
        il = QFormLayout(body)
        self.model = QComboBox()
        self.text = QLineEdit()
        self.text.setPlaceholderText(self.tr("text (tokenised with the tokenizer below, or sent as BYTES); a zero-shot model "
                                             "(CLIP, SigLIP): the labels, separated by commas"))
        self.text.setToolTip(self.tr("For a model that outputs logits_per_image (CLIP-class), each comma-separated label is "
                                     "one text of the request and the result shows their scores (softmax) as bars."))
        self.image = PathEdit(self.tr("image file"), self.tr("Images (*.png *.jpg *.jpeg *.bmp)"))
        self.audio = PathEdit(self.tr("audio file"), self.tr("Audio (*.wav *.npy)"))
        self.tokenizer = PathEdit(self.tr("tokenizer.json (for models taking token ids)"), "tokenizer.json (*.json)")
        self.processor = PathEdit(self.tr("preprocessor_config.json / processor_config.json (image mean/std)"),
                                  "JSON (*.json)")
        self.run_btn = QPushButton(self.tr("Run inference"))
        self.run_btn.setProperty("role", "primary")
        self.gen_btn = QPushButton(self.tr("Generate (stream)"))
        self.gen_btn.setToolTip(self.tr("the generate extension (generate_stream): the Text field is the prompt, the image "
                                        "or audio goes with it; the answer streams in with its tokens/s"))
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(1, 4096)
        self.max_tokens.setValue(32)
        self.max_tokens.setPrefix(self.tr("max tokens "))
        self.sig_piece.connect(self._append_piece)
        self.result = ResultView()  # the pictures of the last request
        self.out = QPlainTextEdit()
        self.out.setReadOnly(True)
        self.out.setProperty("role", "log")
        self.out.setMinimumHeight(140)
        il.addRow(self.tr("Model"), self.model)
        il.addRow(self.tr("Text"), self.text)
        il.addRow(self.tr("Image"), self.image)
        il.addRow(self.tr("Audio"), self.audio)
        il.addRow(self.tr("Tokenizer"), self.tokenizer)
        il.addRow(self.tr("Processor"), self.processor)
        buttons = QHBoxLayout()
        for w in (self.run_btn, self.gen_btn, self.max_tokens):
            buttons.addWidget(w)
        buttons.addStretch(1)
        il.addRow(buttons)
        il.addRow(self.tr("Result"), self.result)
        il.addRow(self.tr("Outputs"), self.out)
        self._filled: dict[PathEdit, str] = {}  # sample paths the form itself put in
        self._generates: dict[str, bool] = {}  # the server's ready models -> take generate requests
        self._gen_tip = self.gen_btn.toolTip()
        self.model.currentTextChanged.connect(self._update_generate)
        self._update_generate()  # no server yet: nothing to generate with

    def set_models(self, names: list[str]) -> None:
        """The server's ready models; the current choice is kept when it is still there."""
        if names != [self.model.itemText(i) for i in range(self.model.count())]:
            cur = self.model.currentText()
            self.model.clear()
            self.model.addItems(names)
            if cur in names:
                self.model.setCurrentText(cur)

    def set_generates(self, generates: dict[str, bool]) -> None:
        """Which of the server's models answer generate (from the poll): Generate is enabled for those only."""
        self._generates = dict(generates)
        self._update_generate()

    def _update_generate(self) -> None:
        m = self.model.currentText()
        ok = bool(m) and self._generates.get(m, False)
        self.gen_btn.setEnabled(ok)
        self.gen_btn.setToolTip(self._gen_tip if ok or not m else
                                self.tr("'{model}' is not a generation model: use Run inference.\n(Its metadata "
                                        "lists no generate loop; a decoder exported with its KV cache has one.)"
                                        ).format(model=m))

    def fill_from_state(self, state: StudioState) -> None:
        """Prefill from what the workspace knows about the current model: its tokenizer and processor files, the
        sample image / audio when it takes one. A field the form filled follows the model (a Qwen export never
        keeps CLIP's tokenizer); one the user typed into stays theirs."""
        for edit in (self.image, self.audio, self.tokenizer, self.processor):
            edit.workspace = state.workspace
        wanted: dict[PathEdit, str] = {}
        for kind, edit in (("tokenizer", self.tokenizer), ("processor", self.processor)):
            folder = state.artifact(kind)
            found = (find_processor_file(folder) if kind == "processor" else Path(folder) / "tokenizer.json"
                     ) if folder else None
            wanted[edit] = str(found) if found is not None and found.is_file() else ""
        takes = model_modalities(state) if state.model() is not None else set()
        samples = sample_files(state)
        for modality, edit in (("vision", self.image), ("audio", self.audio)):
            wanted[edit] = str(samples[modality]) if modality in takes and modality in samples else ""
        for edit, value in wanted.items():
            current, ours = edit.edit.text().strip(), self._filled.get(edit)
            if current == "" or (ours is not None and current == ours):
                if current != value:
                    edit.edit.setText(value)
                self._filled[edit] = value
            else:
                self._filled.pop(edit, None)  # the user's path: theirs from now on

    def show_result(self, res: dict[str, Any]) -> None:
        self.result.show_previews(res.get("previews"), headline(res))
        self.out.setPlainText(format_result(res))

    def generation_request(self) -> dict[str, Any]:
        """The generate body from the form (text, image / audio as base64, max tokens)."""
        from studio.triton.generate_client import generate_body

        return generate_body(self.text.text(), image=self.image.path(), audio=self.audio.path(),
                             max_tokens=self.max_tokens.value())

    def start_stream(self) -> None:
        """A generation starts: the image / audio sent with the prompt drawn (the audio as the agent's front end
        hears it), the answer streams into Outputs."""
        from studio.gui.devices.previews import build
        from studio.triton.inputs import Feed

        image, audio = self.image.path(), self.audio.path()
        pv = build(Feed(), {}, image=image, audio=audio, processor=self.processor.path(), labels=[]) \
            if image or audio else None
        self.result.show_previews(pv, self.tr("<b>Generating</b>: the answer streams into Outputs"))
        self.out.setPlainText("")

    def _append_piece(self, text: str) -> None:
        self.out.moveCursor(self.out.textCursor().MoveOperation.End)
        self.out.insertPlainText(text)

    def show_answer(self, answer: Any) -> None:
        ttft = "-" if answer.ttft_ms is None else f"{answer.ttft_ms:.1f} ms"
        self.result.headline.setText(self.tr("<b>{tokens} tokens</b> ({value}) · time to "
                                             "first token {ttft} · {tokens_per_s:.1f} tokens/s · "
                                             "{total_ms:.0f} ms in all").format(tokens=answer.tokens, value=answer.finish_reason or self.tr("done"), ttft=ttft, tokens_per_s=answer.tokens_per_s, total_ms=answer.total_ms))
        self.result.headline.show()
        self.out.appendPlainText("\n\n" + self.tr("{tokens} tokens ({reason}) · TTFT {ttft} · {rate} tokens/s · "
                                                  "{total} ms in all").format(
            tokens=answer.tokens, reason=answer.finish_reason or self.tr("done"), ttft=ttft,
            rate=f"{answer.tokens_per_s:.1f}", total=f"{answer.total_ms:.0f}"))
