"""The main window's page navigation: pages by id, switching, payloads and problems handed to a page, Esc to
cancel the page's jobs, and the toolbar search that jumps to a page, model or target.

A mixin of :class:`studio.gui.main_window.MainWindow` (uses its ``pages``, ``sidebar``, ``stack``, ``toolbar``,
``jobs``, ``log_panel``, ``flash`` and ``add_problem``).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QScrollArea, QWidget

from studio.core.errors import Problem
from studio.gui.page import Page
from studio.gui.window.language import page_title
from studio.gui.window.search import pick, search_items

translate = QCoreApplication.translate


class PageNavigation:
    pages: list[Any]
    sidebar: Any
    stack: Any
    toolbar: Any
    jobs: Any
    log_panel: Any
    workspace: Any

    def page(self, page_id: str) -> Page | None:
        return next((lp.page for lp in self.pages if lp.page_id == page_id and lp.page is not None), None)

    def page_index(self, page_id: str) -> int:
        return next((i for i, lp in enumerate(self.pages) if lp.page_id == page_id), -1)

    def current_widget(self) -> QWidget | None:
        """The page shown (or its BrokenPage), without the scroll area the window may hold it in."""
        area = self.stack.currentWidget()
        return area.widget() if isinstance(area, QScrollArea) else area

    def current_page(self) -> Page | None:
        w = self.current_widget()
        return w if isinstance(w, Page) else None

    def go_to_index(self, index: int) -> None:
        if 0 <= index < self.sidebar.count():
            self.sidebar.setCurrentRow(index)

    def go_to_page(self, page_id: str) -> bool:
        idx = self.page_index(page_id)
        if idx < 0:
            return False
        self.sidebar.setCurrentRow(idx)
        return True

    def open_page(self, page_id: str, payload: object = None) -> bool:
        """Switch to ``page_id`` and hand it ``payload``; says so in the status bar when it is not installed."""
        if not self.go_to_page(page_id):
            self.flash(translate("PageNavigation", "the {page_id} page is not available in this installation").format(page_id=page_id), 6000)
            self.log_panel.append_log(translate("PageNavigation", "cannot open page '{page_id}' (not installed); "
                                                                  "payload: {payload}").format(page_id=page_id,
                                                                                                payload=payload),
                                      source="studio")
            return False
        page = self.page(page_id)
        if page is not None and payload is not None:
            try:
                page.open_payload(payload)
            except Exception as exc:
                self.add_problem(Problem("error", translate("PageNavigation", "{page} could not open {payload}: "
                                                                              "{error}").format(
                    page=page.title, payload=payload, error=exc),
                                         source=page.title, page=page_id))
        return True

    def open_problem(self, problem: Problem) -> None:
        """Show the page and the node, field or file the problem names; never change what a form holds."""
        if not problem.page or not self.go_to_page(problem.page):
            return
        page = self.page(problem.page)
        if page is not None:
            try:
                page.focus_problem(problem)
            except Exception as exc:
                self.log_panel.append_log(translate("PageNavigation", "{page} could not show the problem: {error}").format(
                    page=page.title, error=exc), source="studio")

    def _page_selected(self, row: int) -> None:
        if 0 <= row < self.stack.count():
            self.stack.setCurrentIndex(row)

    def cancel_current_job(self) -> bool:
        """Esc: cancel the running job(s) started by the page on screen."""
        page = self.current_page()
        if page is None:
            return False
        cancelled = False
        for h in self.jobs.running():
            if h.kind == page.page_id or h.kind.startswith(page.page_id + ":"):
                self.jobs.cancel(h.id)
                cancelled = True
        if cancelled:
            self.flash(translate("PageNavigation", "cancelling {title} job…").format(title=page.title), 4000)
        return cancelled

    # -- search ----------------------------------------------------------------------------------------
    def _update_search_items(self) -> None:
        models = [m.name for m in self.workspace.models] if self.workspace is not None else []
        self.toolbar.search_model.setStringList(search_items([page_title(lp.title) for lp in self.pages], models,
                                                             self.toolbar.targets()))

    def focus_search(self) -> None:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    def run_search(self, text: str) -> bool:
        """Jump to the page, model or target the text names (a completion or a unique substring)."""
        if not text.strip():
            return False
        found = pick(text, self.toolbar.search_model.stringList())
        if not found.kind:
            self.flash(found.message, 4000)
            return False
        kind, value = found.kind, found.value
        ok = False
        if kind == "Page":
            idx = next((i for i, lp in enumerate(self.pages) if value in (page_title(lp.title), lp.title)), -1)
            ok = idx >= 0
            self.go_to_index(idx)
        elif kind == "Model":
            ok = self.model_combo.findData(value) >= 0
            self.select_model(value)
        elif kind == "Target":
            ok = self.target_combo.findData(value) >= 0
            self.select_target(value)
        if ok:
            self.search.clear()
        return ok

