"""What a screenshot can hide: controls squeezed below the size their text needs, and a window off the screen.

Used by the walk-through (offscreen and on a real X display): every step's visible buttons, labels, line edits
and combo boxes are checked for clipping, and on a real display the window's frame is checked against the
screen.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractScrollArea,
    QApplication,
    QComboBox,
    QLabel,
    QLineEdit,
    QWidget,
)

from studio.gui.widgets.flow import ElidedLabel

SLACK = 2  # px: styles round hints differently from geometry


def _scroll_areas_of(w: QWidget) -> list[QAbstractScrollArea]:
    """The scroll areas whose content holds ``w`` (innermost first): out of their viewport is scrolled away."""
    out, p = [], w.parentWidget()
    while p is not None:
        if isinstance(p, QAbstractScrollArea) and p.viewport() is not None and p.viewport().isAncestorOf(w):
            out.append(p)
        p = p.parentWidget()
    return out


def _cut_sideways(w: QWidget, area: QAbstractScrollArea) -> str | None:
    """Content wider than a scroll area that cannot scroll sideways: the right part is simply cut off."""
    if area.horizontalScrollBar().isVisible() or isinstance(area, QAbstractItemView):
        return None
    vp = area.viewport()
    left = w.mapTo(vp, QPoint(0, 0)).x()
    if left + w.width() > vp.width() + SLACK and left < vp.width():
        return f"runs {left + w.width() - vp.width()} px past the right edge of a scroll area that cannot scroll"
    return None


def clipped_controls(window: QWidget) -> list[str]:
    """Visible controls narrower than their text needs, or sticking out of the window (not scrolled away)."""
    bad: list[str] = []
    win_rect = QRect(QPoint(0, 0), window.size())
    for w in window.findChildren(QWidget):
        if not w.isVisibleTo(window) or not w.isVisible() or w.width() <= 0:
            continue
        name = f"{type(w).__name__}('{_text(w)[:40]}') on {_owner(w)}"
        if isinstance(w, QAbstractButton) and _text(w):
            if w.width() + SLACK < w.minimumSizeHint().width():
                bad.append(f"{name}: {w.width()} px wide, its text needs {w.minimumSizeHint().width()}")
        elif isinstance(w, QLabel) and not isinstance(w, ElidedLabel) and w.text() and w.pixmap().isNull():
            if not w.wordWrap() and w.width() + SLACK < w.minimumSizeHint().width():
                bad.append(f"{name}: {w.width()} px wide, its text needs {w.minimumSizeHint().width()}")
        elif isinstance(w, QComboBox | QLineEdit):
            if w.width() + SLACK < w.minimumSizeHint().width():
                bad.append(f"{name}: {w.width()} px wide, needs {w.minimumSizeHint().width()}")
        else:
            continue
        areas = _scroll_areas_of(w)
        if areas:
            cut = next((c for c in (_cut_sideways(w, a) for a in areas) if c), None)
            if cut:
                bad.append(f"{name}: {cut}")
        else:
            r = QRect(w.mapTo(window, QPoint(0, 0)), w.size())
            if not win_rect.contains(r.adjusted(SLACK, SLACK, -SLACK, -SLACK)):
                bad.append(f"{name}: at {r.x()},{r.y()} {r.width()}x{r.height()}, outside the window")
    return bad


def _text(w: QWidget) -> str:
    for attr in ("text", "currentText"):
        f = getattr(w, attr, None)
        if callable(f):
            return str(f())
    return ""


def _owner(w: QWidget) -> str:
    p: QWidget | None = w
    while p is not None:
        pid = getattr(p, "page_id", None)
        if isinstance(pid, str):
            return f"page {pid}"
        p = p.parentWidget()
    return "the window"


def save_shot(window: QWidget, path: Path) -> Path:
    """The window as drawn (offscreen), or the whole X screen with the window manager's frame (real display)."""
    QApplication.processEvents()
    platform = QApplication.platformName()
    if platform == "xcb" and shutil.which("import"):
        subprocess.run(["import", "-window", "root", str(path)], check=True, timeout=30)
    elif platform == "xcb":  # no ImageMagick: the X root window through Qt, the same whole-screen picture
        screen = window.screen() or QApplication.primaryScreen()
        if not screen.grabWindow(0).save(str(path)):
            raise RuntimeError(f"could not grab the X screen into {path}")
    else:
        window.grab().save(str(path))
    return path
