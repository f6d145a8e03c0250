"""The bars around the inspector's graph view: search, colour mode and zoom above it, the legend below it
(verdict counts, dynamic tensors, or the heat scale while colouring by a per-node measure).

Both act on the GraphView they are given and on nothing else; the page decides what the colours mean.
"""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QMenu, QToolButton, QWidget

from studio.gui.graph import palette
from studio.gui.graph.view import GraphView
from studio.gui.inspector.profile_format import heat_legend_pixmap
from studio.gui.widgets.flow import FlowLayout

COLOUR_MODES = ((QT_TRANSLATE_NOOP("Inspector", "Colour: verdict"), "verdict"),
                (QT_TRANSLATE_NOOP("Inspector", "Colour: heat"), "heat"),
                (QT_TRANSLATE_NOOP("Inspector", "Colour: time (profile)"), "profile"))
# the legend's verdict words (studio.gui.graph.palette.VERDICTS), for lupdate
VERDICT_WORDS = (QT_TRANSLATE_NOOP("Verdicts", "supported"), QT_TRANSLATE_NOOP("Verdicts", "risky"),
                 QT_TRANSLATE_NOOP("Verdicts", "unsupported"), QT_TRANSLATE_NOOP("Verdicts", "unknown"),
                 QT_TRANSLATE_NOOP("Verdicts", "none"), QT_TRANSLATE_NOOP("Verdicts", "not inspected"))


class GraphToolbar(QWidget):
    """Search box with match count and steps, the colour-mode combo, zoom and fit buttons."""

    sig_colour_mode_changed = Signal(str)  # "verdict", "heat" or "profile"
    sig_load_node_data = Signal()  # "Colour by node data…" (Model Explorer's format)
    sig_export_node_data = Signal()

    def __init__(self, view: GraphView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = view
        self.setObjectName("graphToolbar")
        h = QHBoxLayout(self)
        h.setContentsMargins(6, 6, 6, 6)
        h.setSpacing(6)
        self.search_edit = QLineEdit()
        self.search_edit.setPlaceholderText(self.tr("Search node, op type or tensor  (Enter: next match)"))
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.returnPressed.connect(self._search_enter)
        back = QShortcut(QKeySequence("Shift+Return"), self.search_edit, context=Qt.ShortcutContext.WidgetShortcut)
        back.activated.connect(lambda: self.step_match(-1))  # as the previous-match button's tooltip says
        self.search_edit.textChanged.connect(lambda _t: self._search_timer.start())
        self._search_timer = QTimer(self)  # typing searches once it pauses, not on every key
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(250)
        self._search_timer.timeout.connect(lambda: self.search(self.search_edit.text()))
        h.addWidget(self.search_edit, 1)
        self.match_label = QLabel("")
        self.match_label.setProperty("role", "muted")
        self.match_label.setMinimumWidth(70)
        h.addWidget(self.match_label)
        self.prev_button, self.next_button = QToolButton(), QToolButton()
        self.prev_button.setText("▲")
        self.prev_button.setToolTip(self.tr("Previous match (Shift+Enter)"))
        self.next_button.setText("▼")
        self.next_button.setToolTip(self.tr("Next match (Enter)"))
        self.prev_button.clicked.connect(self.previous_match)
        self.next_button.clicked.connect(self.next_match)
        h.addWidget(self.prev_button)
        h.addWidget(self.next_button)
        h.addSpacing(10)
        self.color_mode = QComboBox()
        for label, mode in COLOUR_MODES:
            self.color_mode.addItem(QCoreApplication.translate("Inspector", label), mode)
        self.color_mode.model().item(1).setEnabled(False)
        self.color_mode.model().item(2).setEnabled(False)
        self.color_mode.setToolTip(self.tr("Verdicts for the current target, or heat by a per-node measure: the profiled "
                                           "time of each node (run Profile first)"))
        self.color_mode.currentIndexChanged.connect(
            lambda _i: self.sig_colour_mode_changed.emit(self.color_mode.currentData()))
        h.addWidget(self.color_mode)
        self.fit_button = QToolButton()
        self.fit_button.setText(self.tr("Fit"))
        self.fit_button.setToolTip(self.tr("Show the whole graph (F)"))
        self.fit_button.clicked.connect(view.fit_all)
        self.zoom_in_button, self.zoom_out_button = QToolButton(), QToolButton()
        self.zoom_in_button.setText("+")
        self.zoom_out_button.setText("−")
        self.zoom_in_button.clicked.connect(lambda: view.zoom_by(1.25))
        self.zoom_out_button.clicked.connect(lambda: view.zoom_by(0.8))
        for b in (self.zoom_out_button, self.zoom_in_button, self.fit_button):
            h.addWidget(b)
        self.groups_button = self._groups_menu(view)
        h.addWidget(self.groups_button)

    def _groups_menu(self, view: GraphView) -> QToolButton:
        """Module groups: open / close all, open to a depth, or the flat graph (Netron's single level)."""
        button = QToolButton()
        button.setText(self.tr("Groups ▾"))
        button.setStyleSheet("QToolButton::menu-indicator { image: none; width: 0px; }")
        button.setToolTip(self.tr("Nodes grouped by the module that made them (double-click a group to open it, "
                                  "double-click its box to close it; → and ← on the selection)"))
        button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(button)
        self.group_toggle = QAction(self.tr("Group by module"), menu, checkable=True)
        self.group_toggle.setChecked(True)
        self.group_toggle.toggled.connect(self._set_grouped)
        menu.addAction(self.group_toggle)
        menu.addSeparator()
        self.open_all_action = menu.addAction(self.tr("Open all groups"), view.expand_all)
        self.close_all_action = menu.addAction(self.tr("Close all groups"), view.collapse_all)
        self.depth_actions = [menu.addAction(self.tr("Open to depth {d}").format(d=d), lambda d=d: view.expand_to_depth(d))
                              for d in (1, 2, 3)]
        menu.addSeparator()  # the same picture in Google's Model Explorer, and back
        menu.addAction(self.tr("Colour by node data (Model Explorer)…"), self.sig_load_node_data.emit)
        menu.addAction(self.tr("Export overlays as node data…"), self.sig_export_node_data.emit)
        button.setMenu(menu)
        menu.aboutToShow.connect(self._sync_groups_menu)
        return button

    def _sync_groups_menu(self) -> None:
        grouped = self.view.grouped
        for a in (self.open_all_action, self.close_all_action, *self.depth_actions):
            a.setEnabled(grouped)
        depth = self.view.expansion.max_depth() if self.view.expansion is not None else 0
        for d, a in enumerate(self.depth_actions, start=1):
            a.setVisible(d < depth)
        self.group_toggle.blockSignals(True)
        self.group_toggle.setChecked(grouped)
        self.group_toggle.blockSignals(False)

    def _set_grouped(self, on: bool) -> None:
        """The same model, grouped or as one flat layered graph (the page's overlays are kept)."""
        base = self.view.base_graph
        if base is not None and on != self.view.grouped:
            self.view.set_graph(base, grouped=on)

    # ---- search ----------------------------------------------------------------------------------------
    def search(self, text: str) -> list[str]:
        """Select the first match of ``text`` in the graph; the names of all matches, best first."""
        names = self.view.search(text)
        if not text.strip():
            self.match_label.setText("")
        elif not names:
            self.match_label.setText(self.tr("no match"))
        else:
            pos, total = self.view.match_position
            self.match_label.setText(f"{pos} / {total}")
        return names

    def next_match(self) -> None:
        self.step_match(1)

    def previous_match(self) -> None:
        self.step_match(-1)

    def step_match(self, step: int) -> None:
        """Move the selection ``step`` matches on (wrapping) and show where it is."""
        if self.view.next_match(step) is not None:
            pos, total = self.view.match_position
            self.match_label.setText(f"{pos} / {total}")

    def _search_enter(self) -> None:
        if self._search_timer.isActive():  # Enter while the typed text is not searched yet: search it now
            self._search_timer.stop()
            self.search(self.search_edit.text())
        else:
            self.step_match(1)

    # ---- colour mode -----------------------------------------------------------------------------------
    def set_mode_available(self, mode: str, available: bool, label: str | None = None) -> None:
        """Enable or disable one colour mode (heat and profile need values first); ``label`` renames it."""
        i = self.color_mode.findData(mode)
        self.color_mode.model().item(i).setEnabled(available)
        if label is not None:
            self.color_mode.setItemText(i, label)

    def set_mode(self, mode: str) -> None:
        self.color_mode.setCurrentIndex(self.color_mode.findData(mode))

    def mode(self) -> str:
        return str(self.color_mode.currentData())


class GraphLegend(QWidget):
    """Verdict colours with the current target's counts, the dynamic-tensor mark, the heat scale, graph size."""

    def __init__(self, theme: str = "light", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.theme = theme
        h = FlowLayout(self, spacing=10, margins=4)
        self.legend_labels: dict[str, QLabel] = {}
        for v in ("supported", "risky", "unsupported", "unknown"):
            lab = QLabel()
            lab.setTextFormat(Qt.TextFormat.RichText)
            self.legend_labels[v] = lab
            h.addWidget(lab)
        self.set_counts(None)
        dyn = QLabel(self.tr("<span style='color:{value}; font-size:12pt'>━</span> dynamic"
                             "&nbsp;<span style='color:{value}'>●</span> source").format(value=palette.DYNAMIC[theme]))
        dyn.setToolTip(self.tr("━ an edge carrying a tensor with a dynamic dim; ● a node that produces one"))
        h.addWidget(dyn)
        # heat scale (shown instead of the verdict counts while colouring by time)
        self.heat_legend = QWidget()
        hl = QHBoxLayout(self.heat_legend)
        hl.setContentsMargins(0, 0, 0, 0)
        hl.setSpacing(6)
        self.heat_title = QLabel(self.tr("time per node"))
        hl.addWidget(self.heat_title)
        self.heat_min_label = QLabel(self.tr("0 ms"))
        self.heat_min_label.setProperty("role", "muted")
        hl.addWidget(self.heat_min_label)
        bar = QLabel()
        bar.setPixmap(heat_legend_pixmap(120, 10))
        hl.addWidget(bar)
        self.heat_max_label = QLabel("")
        self.heat_max_label.setProperty("role", "muted")
        hl.addWidget(self.heat_max_label)
        none = palette.verdict_colors(theme)["none"][0]
        self.heat_none_label = QLabel(self.tr("<span style='color:{none}; font-size:12pt'>■</span> no kernel time").format(none=none))
        self.heat_none_label.setToolTip(self.tr("fused, constant-folded or removed by ONNX Runtime's optimizer: a fused "
                                                "node's time is counted on the node it was fused into"))
        hl.addWidget(self.heat_none_label)
        self.heat_legend.hide()
        h.addWidget(self.heat_legend)
        self.verdict_widgets: list[QWidget] = [*self.legend_labels.values(), dyn]
        self.graph_info = QLabel("")  # the graph's size, said in the legend's tooltip (Statistics has it too)
        self.graph_info.setProperty("role", "muted")
        self.graph_info.hide()

    def set_counts(self, counts: dict[str, int] | None) -> None:
        """Node counts per verdict for the current target (None: the colours alone, before inspection)."""
        colors = palette.verdict_colors(self.theme)
        for v, lab in self.legend_labels.items():
            count = f" <b>{counts.get(v, 0):,}</b>" if counts is not None else ""
            lab.setText(f"<span style='color:{colors[v][0]}; font-size:12pt'>■</span> "
                        f"{QCoreApplication.translate('Verdicts', v)}{count}")

    def show_scale(self, scale: tuple[str, str, str] | None, no_time: bool = False) -> None:
        """(title, low, high) of the heat shown instead of the verdicts; None shows the verdicts again.
        ``no_time`` adds the swatch of nodes without kernel time (profile colouring)."""
        for w in self.verdict_widgets:
            w.setVisible(scale is None)
        self.heat_legend.setVisible(scale is not None)
        if scale is not None:
            title, low, high = scale
            self.heat_title.setText(title)
            self.heat_min_label.setText(low)
            self.heat_max_label.setText(high)
            self.heat_none_label.setVisible(no_time)

    def set_graph_size(self, nodes: int, edges: int) -> None:
        self.graph_info.setText(self.tr("{nodes:,} nodes · {edges:,} edges").format(nodes=nodes, edges=edges))
        self.setToolTip(self.graph_info.text())

    def set_layout_time(self, seconds: float, engine: str) -> None:
        """How long the layout took, after the graph's size in the legend's tooltip (the legend stays one line)."""
        self.setToolTip(self.tr("{text}; layout {seconds:.2f} s ({engine})").format(text=self.graph_info.text(), seconds=seconds, engine=engine))


__all__ = ["COLOUR_MODES", "GraphToolbar", "GraphLegend"]
