"""Test inference's results as pictures: the input image beside the model's view of it, a zero-shot model's label
scores as bars, an audio input's waveform and log-mel, the times in ms. Drawn from a ``Previews``
(studio.gui.devices.previews, computed on the job's thread); the raw arrays stay in the Outputs text below."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QGridLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from studio.gui.devices.previews import Previews, waveform_envelope

THUMB = 168  # the side of the image and model-view pictures, px
_RAMP = np.array([[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]], dtype=np.float64)


def to_pixmap(rgb: np.ndarray, side: int = THUMB, smooth: bool = False) -> QPixmap:
    """An HxWx3 uint8 array as a pixmap fitting ``side`` px (a tiny model input scaled up with sharp pixels)."""
    a = np.ascontiguousarray(rgb, dtype=np.uint8)
    h, w = a.shape[:2]
    img = QImage(a.data, w, h, 3 * w, QImage.Format.Format_RGB888).copy()
    mode = Qt.TransformationMode.SmoothTransformation if smooth else Qt.TransformationMode.FastTransformation
    return QPixmap.fromImage(img.scaled(QSize(side, side), Qt.AspectRatioMode.KeepAspectRatio, mode))


def heat_rgb(values: np.ndarray) -> np.ndarray:
    """A 2-D array as a viridis-like picture (low rows at the bottom, as spectrograms are drawn)."""
    v = np.asarray(values, dtype=np.float64)
    lo, hi = float(np.nanmin(v)), float(np.nanmax(v))
    t = (v - lo) / (hi - lo) if hi > lo else np.zeros_like(v)
    pos = t * (len(_RAMP) - 1)
    i = np.clip(np.floor(pos).astype(int), 0, len(_RAMP) - 2)
    f = (pos - i)[..., None]
    rgb = _RAMP[i] * (1 - f) + _RAMP[i + 1] * f
    return np.ascontiguousarray(rgb[::-1].astype(np.uint8))


class LabelScores(QWidget):
    """One bar per label, longest for the best, with its share in %: the zero-shot answer at a glance."""

    ROW = 22

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, float]] = []
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def set_scores(self, labels: list[str], scores: list[float]) -> None:
        self.rows = sorted(zip(labels, scores, strict=True), key=lambda r: -r[1])
        self.setFixedHeight(self.ROW * len(self.rows) + 4)
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(360, self.ROW * max(1, len(self.rows)) + 4)

    def paintEvent(self, event: object) -> None:  # noqa: N802
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        fm = self.fontMetrics()
        name_w = min(max((fm.horizontalAdvance(n) for n, _ in self.rows), default=0) + 10, self.width() // 2)
        bar_w = max(20, self.width() - name_w - 64)
        for k, (name, score) in enumerate(self.rows):
            y = 2 + k * self.ROW
            p.setPen(self.palette().text().color())
            p.drawText(QRectF(0, y, name_w - 6, self.ROW - 4), Qt.AlignmentFlag.AlignRight
                       | Qt.AlignmentFlag.AlignVCenter, fm.elidedText(name, Qt.TextElideMode.ElideRight, name_w - 6))
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor("#e8ecf1"))
            p.drawRoundedRect(QRectF(name_w, y + 3, bar_w, self.ROW - 10), 3, 3)
            p.setBrush(QColor("#2f6fde" if k == 0 else "#8fb3ef"))
            p.drawRoundedRect(QRectF(name_w, y + 3, max(2.0, bar_w * score), self.ROW - 10), 3, 3)
            p.setPen(self.palette().text().color())
            p.drawText(QRectF(name_w + bar_w + 6, y, 58, self.ROW - 4),
                       Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, f"{100 * score:.1f} %")
        p.end()


class Waveform(QWidget):
    """The audio as its min / max envelope per pixel column, with its duration."""

    def __init__(self) -> None:
        super().__init__()
        self.wave: np.ndarray | None = None
        self.setMinimumHeight(70)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def set_wave(self, wave: np.ndarray | None) -> None:
        self.wave = wave
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(360, 70)

    def paintEvent(self, event: object) -> None:  # noqa: N802
        p = QPainter(self)
        r = self.rect().adjusted(1, 1, -1, -1)
        p.fillRect(r, QColor("#f4f6f9"))
        if self.wave is not None and len(self.wave):
            lo, hi = waveform_envelope(self.wave, r.width())
            peak = max(float(np.abs(self.wave).max()), 1e-9)
            mid, half = r.center().y(), r.height() / 2 - 2
            p.setPen(QPen(QColor("#2f6fde"), 1))
            for x, (a, b) in enumerate(zip(lo, hi, strict=True)):
                px = r.left() + x * r.width() / len(lo)
                p.drawLine(QPointF(px, mid - b / peak * half), QPointF(px, mid - a / peak * half))
        p.end()


def _caption(text: str = "") -> QLabel:
    lab = QLabel(text)
    lab.setWordWrap(True)
    lab.setProperty("role", "muted")
    return lab


class ResultView(QWidget):
    """The pictures of the last request; empty (hidden parts) until one is shown."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.headline = QLabel("")
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.headline.setWordWrap(True)
        lay.addWidget(self.headline)
        self.images = QWidget()
        grid = QGridLayout(self.images)
        grid.setContentsMargins(0, 0, 0, 0)
        self.image_label, self.view_label = QLabel(), QLabel()
        for lab in (self.image_label, self.view_label):
            lab.setFixedSize(THUMB, THUMB)
            lab.setAlignment(Qt.AlignmentFlag.AlignCenter)
            lab.setStyleSheet("QLabel { background: #f4f6f9; border: 1px solid #d8dde5; }")
        self.image_caption, self.view_caption = _caption(), _caption()
        grid.addWidget(self.image_label, 0, 0)
        grid.addWidget(self.view_label, 0, 1)
        grid.addWidget(self.image_caption, 1, 0)
        grid.addWidget(self.view_caption, 1, 1)
        grid.setColumnStretch(2, 1)
        lay.addWidget(self.images)
        self.scores_caption = _caption()
        self.scores = LabelScores()
        lay.addWidget(self.scores_caption)
        lay.addWidget(self.scores)
        self.audio = QWidget()
        al = QVBoxLayout(self.audio)
        al.setContentsMargins(0, 0, 0, 0)
        self.waveform = Waveform()
        self.waveform_caption = _caption()
        self.mel_label = QLabel()
        self.mel_label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.mel_caption = _caption()
        for w in (self.waveform, self.waveform_caption, self.mel_label, self.mel_caption):
            al.addWidget(w)
        lay.addWidget(self.audio)
        self.notes = _caption()
        lay.addWidget(self.notes)
        self.previews: Previews | None = None
        self.show_previews(None)

    def show_previews(self, pv: Previews | None, headline: str = "") -> None:
        self.previews = pv
        self.headline.setText(headline)
        self.headline.setVisible(bool(headline))
        have_images = pv is not None and (pv.image is not None or pv.model_view is not None)
        self.images.setVisible(have_images)
        if have_images:
            assert pv is not None
            for lab, cap, arr, note, smooth in ((self.image_label, self.image_caption, pv.image, pv.image_note, True),
                                                (self.view_label, self.view_caption, pv.model_view,
                                                 pv.model_view_note, False)):
                lab.setPixmap(to_pixmap(arr, THUMB, smooth) if arr is not None else QPixmap())
                lab.setVisible(arr is not None)
                cap.setText(note)
                cap.setVisible(arr is not None)
        has_scores = pv is not None and bool(pv.scores)
        self.scores.setVisible(has_scores)
        self.scores_caption.setVisible(has_scores)
        if has_scores:
            assert pv is not None
            self.scores.set_scores(pv.labels, pv.scores)
            best = max(range(len(pv.scores)), key=lambda i: pv.scores[i])
            self.scores_caption.setText(self.tr("Zero-shot: <b>{value}</b> ({value2:.1f} %) "
                                                "— {scores_note}").format(value=pv.labels[best], value2=100 * pv.scores[best], scores_note=pv.scores_note))
        has_audio = pv is not None and pv.waveform is not None
        self.audio.setVisible(has_audio)
        if has_audio:
            assert pv is not None
            self.waveform.set_wave(pv.waveform)
            self.waveform_caption.setText(pv.waveform_note)
            if pv.log_mel is not None:
                pix = QPixmap.fromImage(self._mel_image(pv.log_mel))
                self.mel_label.setPixmap(pix)
                self.mel_label.setFixedHeight(pix.height())
            self.mel_label.setVisible(pv.log_mel is not None)
            self.mel_caption.setText(pv.log_mel_note)
            self.mel_caption.setVisible(pv.log_mel is not None)
        notes = pv.notes if pv is not None else []
        self.notes.setText("\n".join(notes))
        self.notes.setVisible(bool(notes))

    @staticmethod
    def _mel_image(mel: np.ndarray) -> QImage:
        rgb = heat_rgb(mel)
        h, w = rgb.shape[:2]
        img = QImage(rgb.data, w, h, 3 * w, QImage.Format.Format_RGB888).copy()
        return img.scaled(QSize(min(max(w, 360), 720), max(h, 80)), Qt.AspectRatioMode.IgnoreAspectRatio,
                          Qt.TransformationMode.SmoothTransformation)


__all__ = ["LabelScores", "ResultView", "Waveform", "heat_rgb", "to_pixmap"]
