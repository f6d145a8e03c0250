"""The menu bar and the window-wide shortcuts (Ctrl+1..9 pages, Ctrl+F search, Esc cancels the page's job)."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QAction, QActionGroup, QKeySequence, QShortcut
from PySide6.QtWidgets import QMenu

from studio.gui.theme import THEMES


def build_menus(w: Any) -> None:
    """File / View / Help on the main window ``w``; sets w.act_new_ws, act_open_ws, recent_menu, theme_actions."""
    mb = w.menuBar()
    f = mb.addMenu("&File")
    w.act_new_ws = f.addAction("New workspace…", w.new_workspace_dialog)
    w.act_new_ws.setShortcut(QKeySequence("Ctrl+N"))
    w.act_open_ws = f.addAction("Open workspace…", w.open_workspace_dialog)
    w.act_open_ws.setShortcut(QKeySequence("Ctrl+O"))
    w.recent_menu = QMenu("Recent workspaces", w)
    f.addMenu(w.recent_menu)
    f.addSeparator()
    f.addAction("Add model folder…", w.add_model_folder_dialog)
    f.addAction("Add ONNX file…", w.add_onnx_dialog)
    f.addSeparator()
    quit_act = f.addAction("Quit", w.close)
    quit_act.setShortcut(QKeySequence("Ctrl+Q"))
    v = mb.addMenu("&View")
    group = QActionGroup(w)
    w.theme_actions: dict[str, QAction] = {}
    for name in THEMES:
        act = v.addAction(f"{name.title()} theme", lambda n=name: w.set_theme(n))
        act.setCheckable(True)
        group.addAction(act)
        w.theme_actions[name] = act
    toggle = v.addAction("Toggle theme", w.toggle_theme)
    toggle.setShortcut(QKeySequence("Ctrl+Shift+L"))
    v.addSeparator()
    v.addAction(w.jobs_dock.toggleViewAction())
    v.addAction(w.log_dock.toggleViewAction())
    v.addSeparator()
    v.addAction("Plugins…", w.show_plugins)
    h = mb.addMenu("&Help")
    sc = h.addAction("Keyboard shortcuts", w.show_shortcuts)
    sc.setShortcut(QKeySequence("F1"))
    h.addAction("About Deployment Studio", w.about)


def build_shortcuts(w: Any) -> list[QShortcut]:
    shortcuts: list[QShortcut] = []
    for i in range(9):
        s = QShortcut(QKeySequence(f"Ctrl+{i + 1}"), w)
        s.activated.connect(lambda i=i: w.go_to_index(i))
        shortcuts.append(s)
    for keys, slot in (("Ctrl+F", w.focus_search), ("Esc", w.cancel_current_job)):
        s = QShortcut(QKeySequence(keys), w)
        s.activated.connect(slot)
        shortcuts.append(s)
    return shortcuts
