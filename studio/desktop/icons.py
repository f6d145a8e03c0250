"""The studio's icon: one SVG (studio/resources/desktop/deployment-studio.svg) and PNG sizes rendered from it
with Qt's SVG renderer, shipped as package data for desktops that do not scale SVG icons.

`make icons` (``python -m studio.desktop.icons``) writes the PNGs; tests/desktop/test_icons.py renders them
again and compares, so the shipped PNGs are always the SVG's.
"""

from __future__ import annotations

import sys
from pathlib import Path

APP_ID = "deployment-studio"
SIZES = (16, 24, 32, 48, 64, 128, 256)


def desktop_resources() -> Path:
    from studio.core.paths import resource_folder

    return resource_folder("desktop", "*.svg")


def svg_path() -> Path:
    return desktop_resources() / f"{APP_ID}.svg"


def png_path(size: int, root: Path | None = None) -> Path:
    return (root or desktop_resources()) / "icons" / f"{size}x{size}" / f"{APP_ID}.png"


def render_pngs(out_root: Path, svg: Path | None = None, sizes: tuple[int, ...] = SIZES) -> list[Path]:
    """Render the SVG at each size into ``out_root/icons/NxN/deployment-studio.png`` (needs PySide6)."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication(["studio-icons", "-platform", "offscreen"])
    renderer = QSvgRenderer(str(svg or svg_path()))
    if not renderer.isValid():
        from studio.core.errors import InstallError

        raise InstallError(f"the icon {svg or svg_path()} is not a valid SVG", offending=str(svg or svg_path()),
                           hint="restore it from the repository")
    out = []
    for size in sizes:
        image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        path = png_path(size, out_root)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not image.save(str(path), "PNG"):
            raise OSError(f"could not write {path}")
        out.append(path)
    return out


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1] / "resources" / "desktop"
    for p in render_pngs(root, root / f"{APP_ID}.svg"):
        print(p)
    sys.exit(0)
