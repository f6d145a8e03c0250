"""Layout helpers shared by the wizard's steps, so every step has the same margins, heading and spacing."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from studio.gui.theme import set_role
from studio.gui.widgets.layout import muted_label


class Step(QWidget):
    """One wizard step: a heading, a one-line explanation, then the step's own content in ``self.body``."""

    title = "Step"
    nav_title = "Step"

    def __init__(self, intro: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 4, 0, 0)
        outer.setSpacing(10)
        self.heading = QLabel(QCoreApplication.translate("Step", self.title))  # QT_TRANSLATE_NOOP("Step", ...)
        set_role(self.heading, "subheading")
        self.intro = QLabel(intro)
        self.intro.setWordWrap(True)
        set_role(self.intro, "muted")
        outer.addWidget(self.heading)
        outer.addWidget(self.intro)
        self.body = QVBoxLayout()
        self.body.setSpacing(10)
        outer.addLayout(self.body, 1)

    def validate(self) -> bool:
        """Check the step's fields, showing errors in place; True when the wizard may go on."""
        return True


def muted(text: str) -> QLabel:
    return muted_label(text)


def command_label(caption: str, body: QVBoxLayout) -> QLabel:
    """``caption`` (muted) and under it an empty, selectable code label for the equivalent command, both added
    to ``body``; the step fills the label as its fields change."""
    body.addWidget(muted(caption))
    label = QLabel("")
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    set_role(label, "code")
    body.addWidget(label)
    return label
