"""What the GUI tests repeat: a widget shown at a size under qtbot, a main window on a workspace, CSS colours."""

from __future__ import annotations

from typing import Any, TypeVar

W = TypeVar("W")


def shown(qtbot: Any, widget: W, width: int, height: int, *, exposed: bool = True) -> W:
    """``widget`` handed to qtbot (closed after the test), resized and shown; ``exposed``: once it is on screen."""
    qtbot.addWidget(widget)
    widget.resize(width, height)  # type: ignore[attr-defined]
    widget.show()  # type: ignore[attr-defined]
    if exposed:
        qtbot.waitExposed(widget)
    return widget


def main_window(qtbot: Any, workspace: Any, page_specs: list[tuple[str, str]] | None, width: int,
                height: int) -> Any:
    """The light-themed MainWindow on ``workspace`` with ``page_specs`` (None: every page), no saved window state,
    shown at ``width`` x ``height``."""
    from PySide6.QtWidgets import QApplication

    from studio.core.settings import Settings
    from studio.gui.main_window import MainWindow
    from studio.gui.theme import apply_theme

    apply_theme(QApplication.instance(), "light")
    w = MainWindow(workspace, settings=Settings.load(), page_specs=page_specs, restore_state=False)
    return shown(qtbot, w, width, height)


def css_hex(css: str) -> str:
    """'rgb(224, 82, 77)' -> '#e0524d'; any other colour text as it is."""
    if css.startswith("rgb"):
        r, g, b = (int(x) for x in css[css.index("(") + 1:-1].split(",")[:3])
        return f"#{r:02x}{g:02x}{b:02x}"
    return css
