"""The options step's "Generation and precision" group: the KV cache (auto / on / off) and its dtype, and each
modality's precision. What the export will do with them is asked of the core (``resolve_with_past`` over the
options as they stand, ``precision.check_kv_dtype``), never decided here: the note under the controls is the
core's own answer, so a choice that cannot be honoured says why before the export starts."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt, Signal
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QWidget

from studio.core.errors import StudioError
from studio.gui.export_wizard.common import muted

# English labels and tips, translated where they are shown (context "GenerationBox")
KV_CHOICES = (("auto", QT_TRANSLATE_NOOP("GenerationBox", "Auto (on for decoders)"), None),
              ("on", QT_TRANSLATE_NOOP("GenerationBox", "On"), True),
              ("off", QT_TRANSLATE_NOOP("GenerationBox", "Off"), False))
PRECISION_TIPS = {"fp32": QT_TRANSLATE_NOOP("GenerationBox", "as exported"),
                  "fp16": QT_TRANSLATE_NOOP("GenerationBox", "half precision, judged against the FP32 part"),
                  "int8": QT_TRANSLATE_NOOP("GenerationBox", "static INT8, calibrated on images from the model's "
                                                             "processor"),
                  "int8-dynamic": QT_TRANSLATE_NOOP("GenerationBox", "dynamic INT8 (no calibration)")}


class GenerationBox(QGroupBox):
    """KV cache, its dtype and per-modality precision; ``sig_changed`` when any of them changes."""

    sig_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(self.tr("Generation and precision"), parent)
        from studio.export.precision import KV_CACHE_DTYPES

        form = QFormLayout(self)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.kv = QComboBox()
        self.kv.setObjectName("kv_cache")
        for key, text, _value in KV_CHOICES:
            self.kv.addItem(self.tr(text), key)
        self.kv.setToolTip(self.tr("past_key_values inputs and present outputs: one graph serves prefill and each "
                                   "decode step, validated token by token against HF generate()"))
        self.kv_dtype = QComboBox()
        self.kv_dtype.setObjectName("kv_cache_dtype")
        for d in KV_CACHE_DTYPES:
            self.kv_dtype.addItem(d, d)
        self.kv_dtype.setToolTip(self.tr("float16 halves the cache's memory; the decoder's outputs are judged against "
                                         "the float32 cache"))
        kv_row = QHBoxLayout()
        kv_row.addWidget(self.kv)
        kv_row.addWidget(QLabel(self.tr("cache dtype")))
        kv_row.addWidget(self.kv_dtype)
        kv_row.addStretch(1)
        form.addRow(self.tr("KV cache"), kv_row)
        self.kv_note = muted("")
        self.kv_note.setObjectName("kv_cache_note")
        form.addRow("", self.kv_note)
        self.precision_row = QHBoxLayout()
        form.addRow(self.tr("Precision"), self.precision_row)
        self.precision_note = muted(self.tr("Each part converted is judged against its FP32 self and falls back to FP32 "
                                            "alone when it misses its tolerance (the report says so)."))
        form.addRow("", self.precision_note)
        self.precisions: dict[str, QComboBox] = {}
        self.config: dict[str, Any] = {}
        self.kv.currentIndexChanged.connect(lambda _i: self.sig_changed.emit())
        self.kv_dtype.currentIndexChanged.connect(lambda _i: self.sig_changed.emit())

    def set_model(self, config: dict[str, Any], modalities: list[str]) -> None:
        """The model's config (what decides the cache) and the signature's modalities (one precision each)."""
        from studio.export.precision import PRECISIONS

        self.config = dict(config or {})
        old = {k: c.currentData() for k, c in self.precisions.items()}
        while self.precision_row.count():
            item = self.precision_row.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.precisions = {}
        for m in sorted(set(modalities)) or ["model"]:
            combo = QComboBox()
            combo.setObjectName(f"precision_{m}")
            for p in PRECISIONS:
                combo.addItem(p, p)
                combo.setItemData(combo.count() - 1, self.tr(PRECISION_TIPS[p]) if p in PRECISION_TIPS else "",
                                  Qt.ItemDataRole.ToolTipRole)
            combo.setCurrentIndex(max(0, combo.findData(old.get(m, "fp32"))))
            combo.currentIndexChanged.connect(lambda _i: self.sig_changed.emit())
            self.precision_row.addWidget(QLabel(m))
            self.precision_row.addWidget(combo)
            self.precisions[m] = combo
        self.precision_row.addStretch(1)

    def with_past(self) -> bool | None:
        return next(v for k, _t, v in KV_CHOICES if k == self.kv.currentData())

    def precision(self) -> dict[str, str] | None:
        """{modality: precision} for what is not FP32; None when everything stays FP32."""
        chosen = {m: c.currentData() for m, c in self.precisions.items() if c.currentData() != "fp32"}
        return chosen or None

    def kv_cache_dtype(self) -> str:
        return str(self.kv_dtype.currentData())

    def explain(self, options: Any) -> bool:
        """Show what the core will do with ``options`` (ExportOptions); False when it refuses them (the reason
        shown in place)."""
        from studio.export.precision import check_kv_dtype
        from studio.export.stages.past import resolve_with_past

        try:
            on, why = resolve_with_past(options, self.config)
            check_kv_dtype(options.kv_cache_dtype, on)
        except StudioError as exc:
            self.kv_note.setText(f"✖ {exc.message}" + (f" ({exc.hint})" if exc.hint else ""))
            self.kv_note.setProperty("role", "error")
            self._repolish()
            return False
        self.kv_dtype.setEnabled(on)
        self.kv_note.setProperty("role", "muted")
        if on:
            self.kv_note.setText(self.tr("on: the graph takes and returns the KV cache; the export is validated by greedy "
                                         "generation against HF generate(), and Try it / `studio generate` can run it"))
        else:
            self.kv_note.setText(why or self.tr("off: a single pass over the whole sequence (no generation)"))
        self._repolish()
        return True

    def _repolish(self) -> None:
        self.kv_note.style().unpolish(self.kv_note)
        self.kv_note.style().polish(self.kv_note)
