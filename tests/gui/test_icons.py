"""The shipped PNG icons are the SVG rendered at each size: rendered again here with Qt and compared pixel by
pixel (`make icons` writes them)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6.QtSvg")
pytest.importorskip("pytestqt")

from studio.desktop.icons import SIZES, png_path, render_pngs  # noqa: E402

pytestmark = [pytest.mark.gui]


def test_shipped_pngs_are_the_svg_rendered(tmp_path: Path, qapp) -> None:  # noqa: ANN001 (pytest-qt's QApplication first)
    from PySide6.QtGui import QImage

    render_pngs(tmp_path)
    for size in SIZES:
        shipped, fresh = QImage(str(png_path(size))), QImage(str(png_path(size, tmp_path)))
        assert shipped.width() == shipped.height() == size, size
        assert shipped.convertToFormat(QImage.Format.Format_ARGB32) == fresh.convertToFormat(
            QImage.Format.Format_ARGB32), f"{png_path(size)} is not the SVG at {size}px: run `make icons`"
