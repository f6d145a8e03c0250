"""The menu bar and the window-wide shortcuts (Ctrl+1..9 pages, Ctrl+F search, Esc cancels the page's job).

``build_menus`` runs again when the language changes (studio.gui.window.language): the menu bar is cleared and
rebuilt, so every title is translated by the same code that made it."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QAction, QActionGroup, QKeySequence, QShortcut
from PySide6.QtWidgets import QMenu

from studio.gui import i18n
from studio.gui.theme import THEMES

translate = QCoreApplication.translate


def theme_title(name: str) -> str:
    return {"light": translate("MainWindow", "Light theme"),
            "dark": translate("MainWindow", "Dark theme")}.get(name, f"{name.title()} theme")


def build_menus(w: Any) -> None:
    """File / View / Help on the main window ``w``; sets w.act_new_ws, act_open_ws, recent_menu, theme_actions,
    language_actions."""
    mb = w.menuBar()
    mb.clear()
    f = mb.addMenu(translate("MainWindow", "&File"))
    w.act_new_ws = f.addAction(translate("MainWindow", "New workspace…"), w.new_workspace_dialog)
    w.act_new_ws.setShortcut(QKeySequence("Ctrl+N"))
    w.act_open_ws = f.addAction(translate("MainWindow", "Open workspace…"), w.open_workspace_dialog)
    w.act_open_ws.setShortcut(QKeySequence("Ctrl+O"))
    w.recent_menu = QMenu(translate("MainWindow", "Recent workspaces"), w)
    f.addMenu(w.recent_menu)
    f.addSeparator()
    f.addAction(translate("MainWindow", "Add model folder…"), w.add_model_folder_dialog)
    f.addAction(translate("MainWindow", "Add ONNX file…"), w.add_onnx_dialog)
    f.addSeparator()
    quit_act = f.addAction(translate("MainWindow", "Quit"), w.close)
    quit_act.setShortcut(QKeySequence("Ctrl+Q"))
    v = mb.addMenu(translate("MainWindow", "&View"))
    group = QActionGroup(w)
    w.theme_actions: dict[str, QAction] = {}
    for name in THEMES:
        act = v.addAction(theme_title(name), lambda n=name: w.set_theme(n))
        act.setCheckable(True)
        group.addAction(act)
        w.theme_actions[name] = act
    toggle = v.addAction(translate("MainWindow", "Toggle theme"), w.toggle_theme)
    toggle.setShortcut(QKeySequence("Ctrl+Shift+L"))
    v.addSeparator()
    v.addMenu(_language_menu(w))
    v.addSeparator()
    v.addAction(w.jobs_dock.toggleViewAction())
    v.addAction(w.log_dock.toggleViewAction())
    v.addSeparator()
    v.addAction(translate("MainWindow", "Plugins…"), w.show_plugins)
    h = mb.addMenu(translate("MainWindow", "&Help"))
    sc = h.addAction(translate("MainWindow", "Keyboard shortcuts"), w.show_shortcuts)
    sc.setShortcut(QKeySequence("F1"))
    h.addAction(translate("MainWindow", "About Deployment Studio"), w.about)


def _language_menu(w: Any) -> QMenu:
    """View > Language: System (the locale's), then each language under its own name."""
    menu = QMenu(translate("MainWindow", "Language"), w)
    menu.setObjectName("language-menu")
    group = QActionGroup(menu)
    w.language_actions = {}
    for code, label in ((i18n.SYSTEM, translate("MainWindow", "System")), *i18n.LANGUAGES.items()):
        act = menu.addAction(label, lambda c=code: w.set_language(c))
        act.setCheckable(True)
        act.setData(code)
        group.addAction(act)
        w.language_actions[code] = act
    chosen = w.language_actions.get(i18n.saved_language(w.settings))
    if chosen is not None:
        chosen.setChecked(True)
    return menu


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
