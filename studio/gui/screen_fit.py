"""Keep the window on the screen it opens on: first-run size, restored geometry and dock widths, clamped.

The first version opened 1,400 px wide whatever the screen, and a geometry saved on a large monitor came back
off-screen on a laptop. Everything here reads the screen's *available* geometry (without panels and docks).
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QGuiApplication, QResizeEvent, QScreen
from PySide6.QtWidgets import QFrame, QScrollArea, QSplitter, QStackedWidget, QWidget

PREFERRED = QSize(1400, 860)  # what the window would like on a large screen
SCREEN_SHARE = (0.94, 0.90)  # of the available width and height (room for a title bar) on smaller screens


def available_geometry(widget: QWidget | None = None) -> QRect:
    screen: QScreen | None = widget.screen() if widget is not None else None
    screen = screen or QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else QRect(0, 0, PREFERRED.width(), PREFERRED.height())


def first_run_size(avail: QRect) -> QSize:
    """PREFERRED where it fits, else most of the screen."""
    if not has_real_screen():
        return QSize(PREFERRED)
    return QSize(min(PREFERRED.width(), int(avail.width() * SCREEN_SHARE[0])),
                 min(PREFERRED.height(), int(avail.height() * SCREEN_SHARE[1])))


def has_real_screen() -> bool:
    """False on Qt's offscreen/minimal platforms, whose fixed 800x600 'screen' is no screen a person has."""
    return QGuiApplication.platformName() not in ("offscreen", "minimal")


def clamp_to_screen(win: QWidget) -> None:
    """Shrink ``win`` to the available geometry of its screen (frame included) and move it fully inside."""
    if not has_real_screen():
        return
    avail = available_geometry(win)
    frame = win.frameGeometry()
    extra_w, extra_h = frame.width() - win.width(), frame.height() - win.height()
    w = min(win.width(), avail.width() - extra_w)
    h = min(win.height(), avail.height() - extra_h)
    if (w, h) != (win.width(), win.height()):
        win.resize(max(w, 1), max(h, 1))
    frame = win.frameGeometry()
    x = min(max(frame.x(), avail.left()), avail.right() + 1 - frame.width())
    y = min(max(frame.y(), avail.top()), avail.bottom() + 1 - frame.height())
    if (x, y) != (frame.x(), frame.y()):
        win.move(max(x, avail.left()), max(y, avail.top()))


def dock_width(window_width: int) -> int:
    """Right-hand docks take about a fifth of the window: 240-340 px."""
    return max(240, min(340, window_width // 5))


class PageScroller(QScrollArea):
    """A page in a vertical scroll area: a tall form scrolls on a short screen instead of growing the window.

    Widths are not scrolled: the area is as wide as the page's minimum, and every page is laid out to fit
    1280 px (tests/gui/test_fit_screen.py checks it).
    """

    MIN_HEIGHT = 200

    def __init__(self, page: QWidget) -> None:
        super().__init__()
        self.setWidget(page)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        page = self.widget()
        bar = self.verticalScrollBar().sizeHint().width()
        width = page.minimumSizeHint().expandedTo(page.minimumSize()).width() if page is not None else 0
        return QSize(width + bar, self.MIN_HEIGHT)

    def sizeHint(self) -> QSize:  # noqa: N802
        page = self.widget()
        return page.sizeHint() if page is not None else super().sizeHint()


class CurrentPageStack(QStackedWidget):
    """A QStackedWidget as big as its current page, not its biggest one.

    Why: in a PageScroller, the plain stack asked for the tallest step (the export wizard's Options), so the short
    Source step showed a scroll bar that scrolled into blank space.
    """

    def __init__(self) -> None:
        super().__init__()
        self.currentChanged.connect(lambda _i: self.updateGeometry())

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        page = self.currentWidget()
        return page.sizeHint() if page is not None else super().sizeHint()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        page = self.currentWidget()
        if page is None:
            return super().minimumSizeHint()
        return page.minimumSizeHint().expandedTo(page.minimumSize())

    def heightForWidth(self, width: int) -> int:  # noqa: N802 (Qt override; QScrollArea asks it of a resizable page)
        page = self.currentWidget()
        if page is None:
            return super().heightForWidth(width)
        h = page.heightForWidth(width) if page.hasHeightForWidth() else -1
        return h if h >= 0 else self.minimumSizeHint().height()


class AdaptiveSplitter(QSplitter):
    """Two panes side by side when the width holds both minimums, one above the other when it does not.

    Why: beside the Jobs and Log docks a 1366 px screen leaves ~900 px for a page; a form plus a panel that
    need 1000 px side by side would be cut at the right (a PageScroller scrolls only vertically). The width
    asked for is the widest pane's, so the page can always fit; the height follows the orientation.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.setChildrenCollapsible(False)

    def _min_width(self, i: int) -> int:
        w = self.widget(i)
        return w.minimumSizeHint().expandedTo(w.minimumSize()).width()

    def side_by_side_width(self) -> int:
        """The width both panes need next to each other (handles included)."""
        n = self.count()
        return sum(self._min_width(i) for i in range(n)) + self.handleWidth() * max(0, n - 1)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        hint = super().minimumSizeHint()
        widest = max((self._min_width(i) for i in range(self.count())), default=0)
        return QSize(widest, hint.height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        want = (Qt.Orientation.Horizontal if event.size().width() >= self.side_by_side_width()
                else Qt.Orientation.Vertical)
        if want != self.orientation():
            self.setOrientation(want)
            self.updateGeometry()
        super().resizeEvent(event)
