"""GraphView: the native graph widget (layout in a worker thread, smooth pan/zoom, selection, search)."""

from __future__ import annotations

from PySide6.QtCore import (
    QEasingCurve,
    QEvent,
    QPoint,
    QPointF,
    QRectF,
    Qt,
    QTimer,
    QVariantAnimation,
    Signal,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QFrame, QGraphicsScene, QGraphicsView, QToolTip, QWidget

from studio.gui.graph import palette
from studio.gui.graph.expansion import Expansion, wants_hierarchy
from studio.gui.graph.font_note import FontNote
from studio.gui.graph.layout_worker import RUNNING, LayoutWorker, forget_finished
from studio.gui.graph.lod import FIT_MAX, LOD_NAME, LOD_OVERVIEW
from studio.gui.graph.model import KIND_GROUP, GraphData
from studio.gui.graph.scene import GraphGeometry, GraphScene
from studio.gui.graph.view_groups import GroupsMixin

MIN_SCALE, MAX_SCALE = 0.0004, 4.0


class GraphView(GroupsMixin, QGraphicsView):
    sig_node_selected = Signal(str)  # node name chosen by the user ("" when cleared)
    sig_node_activated = Signal(str)  # double click
    sig_layout_ready = Signal(object)  # GraphGeometry
    sig_layout_failed = Signal(str)
    sig_group_selected = Signal(str)  # a collapsed group's path
    sig_expansion_changed = Signal()  # groups opened or closed (a new layout is on its way)

    def __init__(self, parent: QWidget | None = None, theme: str | None = None) -> None:
        super().__init__(parent)
        self._theme = theme or palette.current_theme()
        self.setScene(QGraphicsScene(self))
        self.gscene: GraphScene | None = None
        self.graph: GraphData | None = None  # what is drawn: the base graph, or its visible units with groups
        self._at_fit = False  # the view shows Fit and nobody zoomed since: a resize fits again
        self.base_graph: GraphData | None = None
        self.expansion: Expansion | None = None
        self._focus: tuple[str, str] | None = None  # ("node", name) | ("group", path) to show after a relayout
        self._build_groups = False
        self.layout_reason = "model"  # what the last layout was for: "model" (a new graph) or "expansion"
        self._match_names: list[str] = []  # search matches, by name (unit indices change with the groups)
        self._ring_names: list[str] = []  # highlight()'s nodes, by name
        self._generation = 0
        self._workers: list[LayoutWorker] = []
        self._message = self.tr("Open an ONNX model to see its graph")
        self._pending: dict[str, object] = {}
        self._selected: int | None = None
        self._matches: list[int] = []
        self._match_pos = -1
        self._press: QPoint | None = None
        self._anim = QVariantAnimation(self)
        self._anim.setDuration(320)
        self._anim.setEasingCurve(QEasingCurve.Type.OutCubic)
        self._anim.valueChanged.connect(self._animate_to)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.MinimalViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontAdjustForAntialiasing, True)
        self.setCacheMode(QGraphicsView.CacheModeFlag.CacheBackground)
        self.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        self.setMouseTracking(True)
        self.setBackgroundBrush(QColor(palette.CANVAS[self._theme][0]))
        self.font_note = FontNote(self)  # names with characters no installed font has (tofu otherwise)

    # ---- loading ---------------------------------------------------------------------------------------
    def set_graph(self, graph: GraphData | None, grouped: bool | None = None) -> None:
        """Lay ``graph`` out in a worker; the view shows a message until ``sig_layout_ready``. ``grouped``:
        show module groups (None: for models above hierarchy.FLAT_LIMIT nodes), else one flat layered graph."""
        self._generation += 1
        self.graph = self.base_graph = graph
        on = wants_hierarchy(graph) if grouped is None and graph is not None else bool(grouped)
        self.expansion = None  # a grouped model's hierarchy is built by the layout worker (set when ready)
        self._build_groups = graph is not None and on
        self._focus, self.layout_reason = None, "model"
        self._selected, self._matches, self._match_pos, self._match_names = None, [], -1, []
        self._ring_names = []
        old = self.scene()
        self.gscene = None
        self.setScene(QGraphicsScene(self))
        if old is not None:
            old.deleteLater()
        if graph is None:
            self._message = self.tr("Open an ONNX model to see its graph")
            self.viewport().update()
            return
        self._message = self.tr("Laying out {n:,} nodes…").format(n=len(graph.nodes))
        self.viewport().update()
        self.font_note.check(n.name for n in graph.nodes)
        self._start_worker(graph)

    def _relayout(self, focus: tuple[str, str] | None) -> None:
        """Lay the visible graph out again after groups opened or closed; ``focus`` is shown when it is done."""
        if self.base_graph is None:
            return
        self._generation += 1
        self._focus = focus
        self.layout_reason = "expansion"
        self._start_worker(self.base_graph)

    def _start_worker(self, graph: GraphData) -> None:
        worker = LayoutWorker(self._generation, graph, self.expansion,
                              build_groups=self._build_groups and self.expansion is None)
        # bound methods only: a lambda per worker, destroyed with the worker, crashed PySide 6.11 at exit
        worker.sig_ready.connect(self._on_layout_ready)
        worker.sig_failed.connect(self._on_layout_failed)
        worker.finished.connect(forget_finished)
        self._reap()
        self._workers.append(worker)
        RUNNING.add(worker)
        worker.start()

    def set_geometry(self, geometry: GraphGeometry) -> None:
        """Show precomputed geometry at once (used by the benchmark and when re-showing a graph)."""
        self._generation += 1
        self.graph = geometry.graph
        self.base_graph = geometry.graph.base or geometry.graph
        self.expansion = None
        self._build_scene(geometry)

    @property
    def message(self) -> str:  # what the view shows instead of a graph ("Layout failed: ..."); "" once drawn
        return self._message

    @property
    def ready(self) -> bool:
        return self.gscene is not None

    @property
    def busy(self) -> bool:
        return any(w.isRunning() for w in self._workers)

    def wait_idle(self, ms: int = 30000) -> None:
        for w in list(self._workers):
            w.wait(ms)

    def _reap(self) -> None:
        """Forget workers that have finished (the one that just reported finishes a moment later)."""
        for w in list(self._workers):
            if w.isFinished():
                self._workers.remove(w)
                RUNNING.discard(w)
                w.deleteLater()
        forget_finished()

    def _on_layout_failed(self, generation: int, message: str) -> None:
        QTimer.singleShot(50, self._reap)
        if generation == self._generation:
            self._message = self.tr("Layout failed: {message}").format(message=message)
            self.viewport().update()
            self.sig_layout_failed.emit(message)

    def _on_layout_ready(self, generation: int, geometry: GraphGeometry) -> None:
        QTimer.singleShot(50, self._reap)
        if generation != self._generation:
            return  # a newer graph was set meanwhile
        if getattr(geometry, "expansion", None) is not None:
            self.expansion = geometry.expansion
        self._build_scene(geometry)

    def _build_scene(self, geometry: GraphGeometry) -> None:
        old = self.scene()
        first = self.gscene is None or self.graph is None or self.graph.base is None and geometry.graph.base is None
        keep_scale = self.transform().m11()
        self.graph = geometry.graph
        scene = GraphScene(geometry, self._theme, self, expansion=self.expansion)
        self.gscene = scene
        self.setScene(scene)
        if old is not None and old is not scene:
            old.deleteLater()
        self._message = ""
        for key, value in self._pending.items():
            getattr(scene, key)(value)
        names = self._match_names or self._ring_names
        self._matches = sorted({i for i in (self.graph.index_of(n) for n in names) if i is not None})
        focus, self._focus = self._focus, None
        if focus is None and first:
            self._initial_view()
        else:
            self._set_scale(keep_scale)
            self._show_focus(focus)
        self.sig_layout_ready.emit(geometry)

    def _initial_view(self) -> None:
        """The whole top level, as Fit shows it: boxes too small for their own text are named by the label layer
        at a legible size (the view once opened at the top of the graph, half of it out of sight)."""
        assert self.gscene is not None
        self.resetTransform()
        self.fit_all()

    # ---- state from the page ---------------------------------------------------------------------------
    def _apply(self, method: str, value: object) -> None:
        self._pending[method] = value  # kept so a later relayout (new model) starts in the same state
        if self.gscene is not None:
            getattr(self.gscene, method)(value)

    def set_verdicts(self, verdicts: dict[str, str] | None) -> None:
        self._apply("set_verdicts", dict(verdicts or {}))

    def set_dynamic(self, tensors: set[str] | None) -> None:
        self._apply("set_dynamic", set(tensors or ()))

    def set_heat(self, values: dict[str, float] | None, reduce: str = "sum") -> None:
        """Per-node numbers; a collapsed group shows their sum (time) or, ``reduce="max"``, the largest."""
        self._apply("set_heat", (dict(values), reduce) if values else None)

    def set_rollup_words(self, words: dict[str, str] | None) -> None:
        """Which colours the groups count and their words (verdicts by default)."""
        self._apply("set_rollup_words", dict(words) if words else None)

    def set_theme(self, theme: str) -> None:
        self._theme = theme
        self.setBackgroundBrush(QColor(palette.CANVAS[theme][0]))
        if self.gscene is not None:
            self.gscene.set_theme(theme)

    def clear_state(self) -> None:
        """Forget verdicts/dynamic/heat (a different model is coming)."""
        self._pending.clear()

    # ---- selection and navigation ----------------------------------------------------------------------
    @property
    def selected_name(self) -> str | None:
        if self._selected is None or self.graph is None or self.graph.nodes[self._selected].kind == KIND_GROUP:
            return None
        return self.graph.nodes[self._selected].name

    def select(self, name: str | None, *, center: bool = True, animate: bool = True, emit: bool = False,
               reveal: bool = True) -> bool:
        """Select a node by name (nested-graph names select their owner); False when it is not in the graph.
        A node hidden in a collapsed group opens the way to it (``reveal``), else its group is selected."""
        if self.gscene is None or self.graph is None:
            return False
        idx = self.graph.index_of(name) if name else None
        if name and idx is None:
            return False
        if name and reveal and self._reveal(name):
            return True  # hidden in a collapsed group: opened, the selection follows the new layout
        self._set_selected(idx)
        if idx is not None and center:
            self.center_on(idx, animate=animate)
        if emit:
            self.sig_node_selected.emit(self.graph.nodes[idx].name if idx is not None else "")
        return True

    def _set_selected(self, idx: int | None) -> None:
        self._selected = idx
        if self.gscene is not None:
            self.gscene.overlay.set_state(idx, self._matches)

    def center_on(self, idx: int, *, animate: bool = True, readable: bool = True) -> None:
        """Bring node ``idx`` to the middle; zooms in first when names would not be legible."""
        assert self.gscene is not None
        target = self.gscene.geometry.rect_of(idx).center()
        if readable and self.transform().m11() < LOD_NAME:
            anchor = self.transformationAnchor()
            self.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
            self._set_scale(1.0)
            self.setTransformationAnchor(anchor)
            animate = False
        self._anim.stop()
        if animate and self.isVisible():
            self._anim.setStartValue(self.mapToScene(self.viewport().rect().center()))
            self._anim.setEndValue(target)
            self._anim.start()
        else:
            self.centerOn(target)

    def _animate_to(self, value: QPointF) -> None:
        self.centerOn(value)

    def view_center(self) -> QPointF:
        return self.mapToScene(self.viewport().rect().center())

    def search(self, text: str) -> list[str]:
        """Highlight nodes matching ``text`` (name, op type or tensor) and select the first one."""
        if self.graph is None:
            return []
        base = self.base_graph or self.graph
        self._match_names = [base.nodes[i].name for i in base.search(text)] if text.strip() else []
        self._ring_names = []
        self._matches = [i for i in (self.graph.index_of(n) for n in self._match_names) if i is not None]
        self._match_pos = -1
        if self.gscene is not None:
            self.gscene.overlay.set_state(self._selected, self._matches)
        if self._match_names:
            self.next_match()
        return list(self._match_names)

    def next_match(self, step: int = 1) -> str | None:
        """Go to the next match (in a collapsed group: open it first, the selection follows the layout)."""
        if not self._match_names or self.graph is None:
            return None
        self._match_pos = (self._match_pos + step) % len(self._match_names)
        name = self._match_names[self._match_pos]
        if self._reveal(name):
            return name
        idx = self.graph.index_of(name)
        if idx is None:
            return None
        self._set_selected(idx)
        self.center_on(idx)
        self.sig_node_selected.emit(name)
        return name

    def highlight(self, names: list[str]) -> None:
        """Ring these nodes like search matches (e.g. every node a grouped finding names)."""
        if self.graph is None:
            return
        idx = [self.graph.index_of(n) for n in names]
        self._matches = [i for i in idx if i is not None]
        self._match_names, self._match_pos, self._ring_names = [], -1, list(names)
        if self.gscene is not None:
            self.gscene.overlay.set_state(self._selected, self._matches)

    @property
    def match_position(self) -> tuple[int, int]:
        return (self._match_pos + 1, len(self._match_names))

    # ---- zoom ------------------------------------------------------------------------------------------
    def set_scale(self, s: float) -> None:
        """Zoom to an absolute scale (clamped to the view's range), with the level of detail to match."""
        self._set_scale(s)

    def _show_scrollbars(self, on: bool) -> None:
        """Scroll bars only off Fit. At Fit the whole graph is in view; with bars "as needed" a size on the edge
        looped: a bar appeared, the viewport shrank, Fit zoomed out, the bar went, the viewport grew, Fit zoomed
        in... (a clean-clone run under load hung in a test's teardown on it)."""
        policy = Qt.ScrollBarPolicy.ScrollBarAsNeeded if on else Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        if self.verticalScrollBarPolicy() != policy:
            self.setVerticalScrollBarPolicy(policy)
            self.setHorizontalScrollBarPolicy(policy)

    def _set_scale(self, s: float) -> None:
        self._at_fit = False
        self._show_scrollbars(True)
        s = max(MIN_SCALE, min(MAX_SCALE, s))
        cur = self.transform().m11()
        if cur > 0:
            self.scale(s / cur, s / cur)
        self.sync_level_of_detail()

    def sync_level_of_detail(self) -> None:
        """Switch the scene between tiles and overview groups for the current zoom (call after zooming)."""
        if self.gscene is not None:
            self.gscene.set_overview(self.transform().m11() < LOD_OVERVIEW)
            self.gscene.sync_frames(self.transform().m11())

    @property
    def zoom(self) -> float:
        return self.transform().m11()

    def zoom_by(self, factor: float) -> None:
        self._set_scale(self.zoom * factor)

    def fit_all(self) -> None:
        """The whole graph in the view (boxes too small for their text are named by the label layer)."""
        if self.gscene is not None:
            self._show_scrollbars(False)
            x0, y0, x1, y1 = self.gscene.geometry.layout.bounds
            self.fitInView(QRectF(x0, y0, x1 - x0, y1 - y0).adjusted(-40, -30, 40, 30),
                           Qt.AspectRatioMode.KeepAspectRatio)
            if self.zoom > FIT_MAX:  # a tiny graph: do not blow the boxes up
                self._set_scale(FIT_MAX)
                self._show_scrollbars(False)
            self.sync_level_of_detail()
            self._at_fit = True

    def wheelEvent(self, event: QWheelEvent) -> None:
        if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            super().wheelEvent(event)  # shift + wheel scrolls
            return
        delta = event.angleDelta().y() or event.pixelDelta().y()
        if delta:
            self.zoom_by(1.0015 ** delta)
        event.accept()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_by(1.25)
        elif key == Qt.Key.Key_Minus:
            self.zoom_by(0.8)
        elif key == Qt.Key.Key_F:
            self.fit_all()
        elif key == Qt.Key.Key_0:
            self._set_scale(1.0)
        elif key == Qt.Key.Key_Escape:
            self._set_selected(None)
            self.sig_node_selected.emit("")
        elif key in (Qt.Key.Key_Right, Qt.Key.Key_Return, Qt.Key.Key_Enter) and self._selected_group():
            self.expand(self._selected_group() or "")
        elif key in (Qt.Key.Key_Left, Qt.Key.Key_Backspace) and self._enclosing_frame():
            self.collapse(self._enclosing_frame() or "")
        else:
            super().keyPressEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self._at_fit:  # a splitter or dock moved while the view showed Fit: it still does
            self.fit_all()
        if self.font_note.isVisible():
            self.font_note.place()

    # ---- mouse -----------------------------------------------------------------------------------------
    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._press = event.position().toPoint()
        self._anim.stop()
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        super().mouseReleaseEvent(event)
        if self._press is None or event.button() != Qt.MouseButton.LeftButton:
            return
        moved = (event.position().toPoint() - self._press).manhattanLength()
        self._press = None
        if moved <= 4:
            self.click_at(event.position().toPoint())
            event.accept()  # the click was the view's: selection

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        pos = event.position().toPoint()
        group = self.group_at(pos)
        if group is not None:
            self.expand(group)
            return
        idx = self.node_at(pos)
        if idx is not None and self.graph is not None:
            self.center_on(idx)
            self.sig_node_activated.emit(self.graph.nodes[idx].name)
        elif self.frame_at(pos) is not None:  # on an open group's box, off its nodes: close it
            self.collapse(self.frame_at(pos) or "")

    def node_at(self, pos: QPoint) -> int | None:
        if self.gscene is None:
            return None
        return self.gscene.node_at(self.mapToScene(pos))

    def click_at(self, pos: QPoint) -> None:
        """What a left click does: select the node under ``pos`` (or clear) and tell listeners."""
        idx = self.node_at(pos)
        self._set_selected(idx)
        if self.graph is not None:
            group = self.graph.nodes[idx].kind == KIND_GROUP if idx is not None else False
            self.sig_node_selected.emit(self.graph.nodes[idx].name if idx is not None and not group else "")
            self.sig_group_selected.emit(self.graph.nodes[idx].scope if group and idx is not None else "")

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and self.graph is not None:
            help_event = QHelpEvent(event)  # type: ignore[call-overload]
            idx = self.node_at(help_event.pos())
            if idx is None:
                QToolTip.hideText()
            else:
                QToolTip.showText(help_event.globalPos(), self.tooltip_for(idx), self)
            return True
        return super().viewportEvent(event)

    # ---- painting --------------------------------------------------------------------------------------
    def drawForeground(self, painter: QPainter, rect: QRectF) -> None:
        if not self._message:
            return
        painter.save()
        painter.resetTransform()
        font = QFont()
        font.setPointSizeF(11)
        painter.setFont(font)
        painter.setPen(QColor(palette.TEXT[self._theme][1]))
        painter.drawText(self.viewport().rect(), Qt.AlignmentFlag.AlignCenter, self._message)
        painter.restore()

