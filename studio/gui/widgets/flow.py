"""Rows that wrap instead of widening the window: a flow layout and a label that elides long text.

A button row or a legend in a QHBoxLayout makes its page as wide as the sum of its items, and that sum is what
pushed the window past a laptop screen. A FlowLayout is only as wide as its widest item and wraps onto more lines;
an ElidedLabel (long paths, status lines) is as narrow as its minimum and shows the whole text in its tooltip.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QMargins, QObject, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QPainter, QResizeEvent
from PySide6.QtWidgets import QLabel, QLayout, QLayoutItem, QSizePolicy, QWidget, QWidgetItem


class FlowLayout(QLayout):
    """Left-to-right items that wrap onto the next line when the row is too narrow (Qt's flow layout example)."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 6, margins: int = 0) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing
        self.setContentsMargins(QMargins(margins, margins, margins, margins))

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 (Qt override)
        self._items.append(item)

    def add_widgets(self, *widgets: QWidget) -> FlowLayout:
        for w in widgets:
            self.addWidget(w)
        return self

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return self._do_layout(QRect(0, 0, width, 0), apply=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802
        super().setGeometry(rect)
        self._do_layout(rect, apply=True)

    def sizeHint(self) -> QSize:  # noqa: N802
        """One line of everything: what the row would like when there is room."""
        m = self.contentsMargins()
        visible = [i for i in self._items if not _hidden(i)]
        w = sum(i.sizeHint().width() for i in visible) + self._spacing * max(0, len(visible) - 1)
        h = max((i.sizeHint().height() for i in visible), default=0)
        return QSize(w + m.left() + m.right(), h + m.top() + m.bottom())

    def minimumSize(self) -> QSize:  # noqa: N802
        """The widest single item: the row never asks for more than that."""
        size = QSize()
        for item in self._items:
            if not _hidden(item):
                size = size.expandedTo(item.minimumSize())
        m = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    def _do_layout(self, rect: QRect, apply: bool) -> int:
        """Items left to right, wrapped; each centred on its line's height (a label beside buttons sat high)."""
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        x, y, line_h = area.x(), area.y(), 0
        line: list[tuple[QLayoutItem, int, int, int]] = []  # item, x, width, height on the current line

        def place() -> None:
            for it, ix, iw, ih in line:
                it.setGeometry(QRect(QPoint(ix, y + (line_h - ih) // 2), QSize(iw, ih)))
            line.clear()

        for item in self._items:
            if _hidden(item):
                continue
            hint = item.sizeHint()
            w = min(hint.width(), max(area.width(), item.minimumSize().width()))
            if x > area.x() and x + w > area.right() + 1:
                if apply:
                    place()
                x, y, line_h = area.x(), y + line_h + self._spacing, 0
            line.append((item, x, w, hint.height()))
            x += w + self._spacing
            line_h = max(line_h, hint.height())
        if apply:
            place()
        return y + line_h - rect.y() + m.bottom()

def _hidden(item: QLayoutItem) -> bool:
    w = item.widget()
    return isinstance(item, QWidgetItem) and w is not None and w.isHidden()


def flow_row(*widgets: QWidget, spacing: int = 6) -> QWidget:
    """A widget holding ``widgets`` in a FlowLayout (to drop into a box layout or a form row)."""
    host = QWidget()
    FlowLayout(host, spacing=spacing).add_widgets(*widgets)
    sp = host.sizePolicy()
    sp.setHeightForWidth(True)
    sp.setHorizontalPolicy(QSizePolicy.Policy.Preferred)
    host.setSizePolicy(sp)
    return host


class ElidedLabel(QLabel):
    """A one-line label that elides in the middle (paths keep their file name) and tooltips the full text."""

    def __init__(self, text: str = "", parent: QWidget | None = None, min_width: int = 60,
                 mode: Qt.TextElideMode = Qt.TextElideMode.ElideMiddle) -> None:
        super().__init__(parent)
        self._full = ""
        self._mode = mode
        self._min_width = min_width
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)  # Ignored would drop the minimum
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802
        self._full = text or ""
        self.setToolTip(self._full if self._full else "")
        super().setText(self._full)
        self.updateGeometry()
        self.update()

    def full_text(self) -> str:
        return self._full

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(self._min_width, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:  # noqa: N802
        # the whole text plus the label's padding and frame (a QSS ``padding: 0 10px`` in the status bar elided a
        # short job title that had room to spare when only the text's advance was asked for)
        extra = self.width() - self.contentsRect().width()  # frame + margins + padding, whatever the width
        return QSize(self.fontMetrics().horizontalAdvance(self._full) + 8 + extra, super().sizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.update()

    def paintEvent(self, _event) -> None:  # noqa: N802, ANN001
        painter = QPainter(self)
        shown = self.fontMetrics().elidedText(self._full, self._mode, self.contentsRect().width())
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(self.contentsRect(), int(self.alignment() | Qt.AlignmentFlag.AlignVCenter), shown)


class _WrappedHeight(QObject):
    """Event filter: keeps a widget's minimum height at what its layout needs for its current width."""

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        # a resize changes the wrapping; a layout request is new content (a longer text below a form: without
        # it the column kept its old minimum and squeezed the form, moving the buttons under it)
        if event.type() in (QEvent.Type.Resize, QEvent.Type.LayoutRequest) and isinstance(obj, QWidget) \
                and obj.layout() is not None:
            lay = obj.layout()
            need = lay.totalHeightForWidth(obj.width()) if lay.hasHeightForWidth() else -1
            need = max(need, lay.totalMinimumSize().height())
            if need > 0 and need != obj.minimumHeight():
                obj.setMinimumHeight(need)
        return False


def keep_wrapped_height(widget: QWidget) -> QWidget:
    """Make ``widget`` (a column of forms with word-wrapped labels) ask for the height its wrapped text needs.

    A QSplitter does not pass height-for-width on, so a form column inside one was squeezed to its one-line
    height and wrapped hints were drawn over the next row. With this, the column's minimum height follows its
    width, and the page's scroll area scrolls instead.
    """
    keeper = _WrappedHeight(widget)
    widget.installEventFilter(keeper)
    return widget
