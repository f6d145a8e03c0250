"""The inspector's "Optimize…" button: opens the Optimize window (studio.gui.inspector.optimize_dialog) for the
model shown and the current target; the window, and pyqtgraph with it, is created on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QPushButton

translate = QCoreApplication.translate

if TYPE_CHECKING:
    from studio.gui.pages.inspect_page import InspectPage


class OptimizeFlow:
    """The inspector's "Optimize…" button and its window (one per page, kept between searches)."""

    def __init__(self, page: InspectPage) -> None:
        self.page = page
        self.dialog: Any = None  # OptimizeDialog, made on first open
        self.button = QPushButton(translate("OptimizeFlow", "Optimize…"))
        self.button.setToolTip(translate("OptimizeFlow", "search fixes and precisions for the variant the target's own tool builds within an "
                                                         "accuracy budget\nCLI: studio optimize MODEL --target ID --budget cosine>=0.99"))
        self.button.setEnabled(False)
        self.button.clicked.connect(self.open)

    def reset(self) -> None:
        self.button.setEnabled(self.page.model_path is not None)

    def open(self) -> Any:
        page = self.page
        if page.model_path is None:
            return None
        if self.dialog is None:
            from studio.gui.inspector.optimize_dialog import OptimizeDialog  # pyqtgraph: loaded on first use

            self.dialog = OptimizeDialog(page)
        if not self.dialog.running():
            self.dialog.set_model(page.model_path, page.current_target)
        self.dialog.show()
        if QGuiApplication.platformName() != "offscreen":  # headless has no stacking order (and says so)
            self.dialog.raise_()
        return self.dialog


__all__ = ["OptimizeFlow"]
