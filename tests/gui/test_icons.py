"""The shipped PNG icons are the SVG rendered at each size: rendered again here with Qt and compared pixel by
pixel (`make icons` writes them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6.QtSvg")
pytest.importorskip("pytestqt")

from studio.desktop.icons import SIZES, png_path, render_pngs  # noqa: E402

pytestmark = [pytest.mark.gui]


def _argb(image: object) -> np.ndarray:
    from PySide6.QtGui import QImage

    im = image.convertToFormat(QImage.Format.Format_ARGB32)  # type: ignore[attr-defined]
    rows = np.frombuffer(im.constBits(), dtype=np.uint8, count=im.sizeInBytes()).reshape(im.height(), im.bytesPerLine())
    return rows[:, : im.width() * 4].astype(np.int16)


def test_shipped_pngs_are_the_svg_rendered(tmp_path: Path, qapp) -> None:  # noqa: ANN001 (pytest-qt's QApplication first)
    """Equal within one step of a channel: Qt's raster engine takes the SIMD path the CPU offers, and an
    antialiased edge pixel can round one step apart between machines (a clean-clone run failed on an AVX-512 Xeon,
    same PySide6 6.11.3: 1 to 9 channel values per size, each one step apart). An edited SVG moves far more."""
    from PySide6.QtGui import QImage

    render_pngs(tmp_path)
    for size in SIZES:
        shipped, fresh = QImage(str(png_path(size))), QImage(str(png_path(size, tmp_path)))
        assert shipped.width() == shipped.height() == size, size
        diff = np.abs(_argb(shipped) - _argb(fresh))
        assert diff.max() <= 1, f"{png_path(size)} is not the SVG at {size}px ({int((diff > 1).sum())} channel " \
                                f"values more than one step apart): run `make icons`"
